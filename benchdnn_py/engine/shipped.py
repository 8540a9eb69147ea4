"""The shape and batch files that ship with the tool (problems/, batches/), found from
any working directory.

A wheel carries them in the package (benchdnn_py/data/); a source checkout or an editable
install has them at the top of the tree, beside the package. ``--batch=``, graph's
``--case=`` and ``benchdnn-py files`` look there after the paths benchdnn itself tries.
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
# The installed copy first: in a wheel the package's parent is site-packages.
_CANDIDATE_ROOTS = (_PACKAGE / "data", _PACKAGE.parent)
KINDS = ("problems", "batches")


@lru_cache(maxsize=None)
def root() -> Path | None:
    """The directory holding problems/ and batches/, or None when neither location has
    them (a package copied without its data)."""
    for candidate in _CANDIDATE_ROOTS:
        if all((candidate / kind).is_dir() for kind in KINDS):
            return candidate
    return None


def search_dirs() -> list[Path]:
    """Where a relative shipped name is looked up: the root (for `problems/NAME` and
    `batches/NAME`), then batches/ and problems/ (for a bare NAME)."""
    top = root()
    return [] if top is None else [top, top / "batches", top / "problems"]


@dataclasses.dataclass(frozen=True)
class ShippedFile:
    name: str          # relative to the root, as --batch= takes it: problems/shapes_vgg_19
    description: str


def listing() -> list[ShippedFile]:
    top = root()
    if top is None:
        return []
    files = sorted(p for kind in KINDS for p in (top / kind).rglob("*") if p.is_file())
    return [ShippedFile(p.relative_to(top).as_posix(), describe(p)) for p in files]


def describe(path: Path) -> str:
    """One line: a graph case's operations, or a text file's first line (by convention a
    one-line summary comment) without its `name:` prefix."""
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
            if "graph" not in data:   # another JSON file (a targets file) describes itself
                return str(data.get("description", ""))
            kinds = [op.get("kind", "?") for op in data["graph"]]
        except (OSError, ValueError, AttributeError, TypeError):
            return "JSON file (unreadable)"
        return "oneDNN Graph JSON case: " + " -> ".join(kinds)
    try:
        with path.open() as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return ""
    if not first.startswith("#"):
        return ""
    text = first.lstrip("#").strip()
    text = re.sub(rf"^{re.escape(path.name)}:\s*", "", text)
    return text.rstrip(".")
