"""Inner product descriptors (``mb2ic2048oc1000``, ``mb16ic64ih7oc1000``): benchdnn's ip
grammar, `mbX icX idX ihX iwX ocX nNAME` in any order with `_` between entries ignored,
mb 2 when not given. The spatial sizes give the rank: id makes 3D (ih and iw equal to it
when both are missing; one of them alone is an error), ih 2D (iw equal to it when
missing), iw 1D, none 0D (src mb x ic).

An inner product is the convolution whose kernel covers its whole input: weights
oc x ic x (the input's spatial sizes), one output point, no padding, unit stride. The
parsed descriptor is that convolution (IpDesc, a ConvDesc), so the convolution's
tensors, fill, reference and kernels apply as they stand; it prints in ip's grammar.
"""

from __future__ import annotations

import dataclasses
import functools

from ...common.window import ConvDesc, lex
from ...errors import ProblemError

KEYS = ("mb", "ic", "id", "ih", "iw", "oc")
DEFAULT_MB = 2
_ONE = (1, 1, 1)


@dataclasses.dataclass(frozen=True)
class IpDesc(ConvDesc):
    """The convolution an inner product is (ndims 2 for 0D: no spatial axes)."""

    def format(self, canonical: bool = False) -> str:
        return format_ip(self, canonical)

    def __str__(self) -> str:
        return format_ip(self)


@functools.lru_cache(maxsize=4096)
def parse_ip(text: str) -> IpDesc:
    """Parses one descriptor; raises ProblemError naming what is wrong."""
    if not text:
        raise ProblemError("empty problem descriptor")
    values, name, _ = lex(text, KEYS)
    for key in ("ic", "oc"):
        if values.get(key, 0) <= 0:
            raise ProblemError(f"`{key}` in `{text}` was not specified or set to 0: expected "
                               f"a positive `{key}`")
    d, h, w = (values.get(k, 0) for k in ("id", "ih", "iw"))
    if d:
        if not h and not w:
            h = w = d
        elif not h or not w:
            raise ProblemError(f"`{text}` gives id and only one of ih, iw: a 3D inner product "
                               "takes both or neither (then both equal id)")
        ndims = 5
    elif h:
        w = w or h
        ndims = 4
    else:
        ndims = 3 if w else 2
    i = (d or 1, h or 1, w or 1)
    return IpDesc(g=1, has_groups=False, mb=values.get("mb", DEFAULT_MB), ic=values["ic"],
                  oc=values["oc"], i=i, o=_ONE, k=i, s=_ONE, p=(0, 0, 0), dil=(0, 0, 0),
                  ndims=ndims, name=name, kind="ip")


def format_ip(desc: ConvDesc, canonical: bool = False) -> str:
    """benchdnn's printing: mb when not 2 (always in canonical form), the spatial sizes of
    the rank, ih and iw collapsed into id (3D) or iw into ih (2D) when equal, unless
    canonical."""
    d, h, w = desc.i
    parts = [f"mb{desc.mb}"] if canonical or desc.mb != DEFAULT_MB else []
    parts.append(f"ic{desc.ic}")
    if desc.ndims == 5:
        parts.append(f"id{d}" if d == h == w and not canonical else f"id{d}ih{h}iw{w}")
    elif desc.ndims == 4:
        parts.append(f"ih{h}" if h == w and not canonical else f"ih{h}iw{w}")
    elif desc.ndims == 3:
        parts.append(f"iw{w}")
    parts.append(f"oc{desc.oc}")
    if desc.name:
        parts.append("n" + desc.name)
    return "".join(parts)
