"""Sum problem descriptors: dims joined by `x`, optionally named (common/dims.py), and the
per-source options, one item per source joined by `:` (`--sdt=f32:s8`, `--stag=abx:axb`,
`--scales=0.25:2`): the number of sources is --sdt's, and a single tag or scale applies to
every source, as in benchdnn."""

from __future__ import annotations

from ...common import dt_names
from ...common.dims import Dims, parse_dims
from ...engine.options import ascii_number
from ...errors import ProblemError, UsageError

__all__ = ["Dims", "parse_dims", "parse_sdt", "parse_scales", "per_source"]


def parse_sdt(text: str) -> tuple[str, ...]:
    items = text.split(":")
    if len(items) < 2:
        raise UsageError(f"--sdt={text}: a sum takes two sources or more (DT:DT[:DT...])")
    return tuple(dt_names.parse_name(i, "sdt", text) for i in items)


def parse_scales(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(ascii_number(item)) for item in text.split(":"))
    except ValueError:
        raise UsageError(f"--scales={text}: expected numbers joined by `:` "
                         "(0.25:2)") from None


def per_source(values: tuple, n: int, option: str) -> tuple:
    """values for n sources: one value applies to all; otherwise one per source, else a
    ProblemError naming the option."""
    if len(values) == 1:
        return values * n
    if len(values) != n:
        text = ":".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
        raise ProblemError(f"--{option}={text}: {len(values)} items for {n} sources (--sdt)")
    return values
