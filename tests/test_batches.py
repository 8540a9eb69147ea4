"""Every shipped batch and problem file reads without a usage error under its driver, and
every batch only names files that exist (checked by planning it, which resolves every
--batch)."""

from pathlib import Path

import pytest

from benchdnn_py.drivers import DRIVERS
from benchdnn_py.engine import harness

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p for d in ("batches", "problems") for p in (ROOT / d).iterdir() if p.is_file())


def driver_of(path: Path) -> str:
    """The driver a file is named for (``<driver>_*``, ``shapes_<driver>_*``,
    ``perf_<driver>*``; the longest name that fits, so deconv is not conv), else conv."""
    fits = [name for name in DRIVERS
            if any(path.name.startswith(p + name) for p in ("", "shapes_", "perf_"))]
    return max(fits, key=len, default="conv")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_file_plans(path):
    plan = harness.plan([f"--{driver_of(path)}", f"--batch={path}"])
    assert plan.cases, path
    assert plan.warnings == []


def test_every_driver_has_a_ci_batch_that_ci_runs():
    names = {p.name for p in (ROOT / "batches").iterdir()}
    ci_script = (ROOT / ".ci" / "run").read_text()
    for name in DRIVERS:
        assert f"{name}_ci" in names, name
        assert f"batches/{name}_ci" in ci_script, name


def test_batches_start_with_reset():
    for path in (ROOT / "batches").iterdir():
        first = next(l for l in path.read_text().splitlines() if l.strip() and not l.startswith("#"))
        assert first == "--reset", path
