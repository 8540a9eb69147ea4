"""Pooling problem descriptors: the convolution grammar without g and oc (benchdnn
reference 9.3), parsed and deduced by the window grammar (common/window.py),
printed here without the fields pooling does not have."""

from __future__ import annotations

import dataclasses

from ...common import window
from ...common.window import AXES, DEFAULT_MB, ConvDesc
from ...errors import ProblemError


@dataclasses.dataclass(frozen=True)
class PoolDesc:
    conv: ConvDesc          # with g = 1 and oc = ic (pooling keeps the channels)

    def __getattr__(self, name: str):
        # Only for fields of conv; never while unpickling (conv not set yet) or for dunders.
        if name == "conv" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.conv, name)

    def with_mb(self, mb: int) -> "PoolDesc":
        return PoolDesc(self.conv.with_mb(mb))

    def format(self, canonical: bool = False) -> str:
        d = self.conv
        axes = window.printed_axes(d, canonical)

        def group(prefix: str, values: tuple[int, int, int]) -> str:
            return "".join(f"{prefix}{AXES[a]}{values[a]}" for a in axes)

        parts = [f"mb{d.mb}"] if d.mb != DEFAULT_MB or canonical else []
        parts += [f"ic{d.ic}", group("i", d.i), group("o", d.o), group("k", d.k)]
        if canonical or any(s != 1 for s in d.s):
            parts.append(group("s", d.s))
        parts.append(group("p", d.p))
        if canonical or any(x != 0 for x in d.dil):
            parts.append(group("d", d.dil))
        if d.name:
            parts.append("n" + d.name)
        return "".join(parts)

    __str__ = format


def parse_pool(text: str) -> PoolDesc:
    """Parses with the conv grammar after checking that g and oc are absent; the channel
    count of the conv problem's output is pooling's ic."""
    if not text:
        raise ProblemError("empty problem descriptor")
    values, name, depthwise = window.lex(text)
    for key in ("g", "oc"):
        if key in values:
            raise ProblemError(f"`{key}{values[key]}` in `{text}`: pooling descriptors have "
                               f"no `{key}` (channels pass through)")
    if depthwise:
        raise ProblemError(f"`_dw` in `{text}`: pooling descriptors have no groups")
    # Rebuilt key by key (oc = ic) so that the conv parser deduces sizes and paddings.
    rebuilt = "".join(f"{k}{v}" for k, v in values.items()) + f"oc{values.get('ic', 0)}"
    if name:
        rebuilt += "n" + name
    try:
        conv = window.parse_desc(rebuilt, "pool")
    except ProblemError as exc:
        raise ProblemError(str(exc).replace(f"`{rebuilt}`", f"`{text}`")
                           .replace(f" {rebuilt}", f" {text}")) from None
    return PoolDesc(conv)
