"""Batch files: tokenizing and finding them (benchdnn reference section 4).

A batch file is whitespace-separated tokens fed to the same argument loop as the command
line. ``#`` at the start of a token comments out the rest of its line; a token ending in
``\\`` is glued to the next token with no space (a lone ``\\`` glues its neighbours), which
is how long option lists are split over lines.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from . import shipped


def tokenize(text: str) -> list[str]:
    return [token for token, _ in tokenize_lines(text)]


def tokenize_lines(text: str) -> list[tuple[str, int]]:
    """The tokens with the (1-based) line each starts on: a token glued across lines by a
    trailing backslash is its first line's."""
    tokens: list[tuple[str, int]] = []
    glue = False
    for number, line in enumerate(text.splitlines(), start=1):
        for token in line.split():
            if token.startswith("#"):
                break
            continues = token.endswith("\\")
            if continues:
                token = token[:-1]
            if glue and tokens:
                tokens[-1] = (tokens[-1][0] + token, tokens[-1][1])
            elif token:
                tokens.append((token, number))
            glue = continues
    return tokens


def find(name: str, including_dir: Path | None, seen_dirs: list[Path],
         option: str = "batch", what: str = "batch file") -> Path:
    """Resolves ``--batch=NAME`` (or another OPTION naming a file, WHAT it is): next to
    the including file, as given (relative to the working directory), beside any batch
    file opened before, then among the shipped files (`problems/shapes_resnet_50` or
    `shapes_resnet_50` from any directory)."""
    given = Path(name)
    candidates: list[Path] = []
    if including_dir is not None and not given.is_absolute():
        candidates.append(including_dir / given)
    candidates.append(given)
    if not given.is_absolute():
        candidates += [d / given for d in seen_dirs]
        candidates += [d / given for d in shipped.search_dirs()]
    for path in candidates:
        if path.is_file():
            return path
    raise UsageError(f"--{option}={name}: cannot open {what} `{name}` (looked in: "
                     f"{', '.join(str(p) for p in dict.fromkeys(candidates))})")


def read(path: Path) -> list[tuple[str, int]]:
    """The file's tokens, each with its line number."""
    try:
        return tokenize_lines(path.read_text())
    except OSError as exc:
        raise UsageError(f"--batch={path}: cannot read batch file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"--batch={path}: not a text file") from None
