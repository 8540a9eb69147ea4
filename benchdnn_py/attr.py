"""Primitive attributes shared by the drivers: --attr-post-ops (benchdnn reference 3.2).

Grammar of one post-op chain (entries joined by `+`, applied in that order):
    sum[:SCALE[:ZERO_POINT[:DT]]]
    NAME[:ALPHA[:BETA[:SCALE]]]        eltwise; SCALE is the DNNL 1.x eltwise scale
    dw:kKsSpP[:DST_DT]                 depthwise fusion; DNNL 1.x spells dw_k3s1p1, dw_k3s2p1
A comma list gives one case per chain; an empty item means no post-ops. Every entry prints
back in the form it was given (benchdnn's short forms, numbers as %g).
"""

from __future__ import annotations

import dataclasses
import re

from . import eltwise
from .errors import UsageError

DTS = ("f32", "bf16", "f16", "s32", "s8", "u8")


@dataclasses.dataclass(frozen=True)
class Sum:
    scale: float = 1.0
    zero_point: int = 0
    dt: str = ""

    def __str__(self) -> str:
        if self.dt:
            return f"sum:{self.scale:g}:{self.zero_point}:{self.dt}"
        if self.zero_point:
            return f"sum:{self.scale:g}:{self.zero_point}"
        return f"sum:{self.scale:g}" if self.scale != 1.0 else "sum"


@dataclasses.dataclass(frozen=True)
class Eltwise:
    name: str
    alpha: float = 0.0
    beta: float = 0.0
    scale: float = 1.0       # DNNL 1.x eltwise scale (int8 only, per the spec)

    def __str__(self) -> str:
        if self.scale != 1.0:
            return f"{self.name}:{self.alpha:g}:{self.beta:g}:{self.scale:g}"
        if self.beta != 0.0:
            return f"{self.name}:{self.alpha:g}:{self.beta:g}"
        if self.alpha != 0.0:
            return f"{self.name}:{self.alpha:g}"
        return self.name


@dataclasses.dataclass(frozen=True)
class Depthwise:
    k: int
    s: int
    p: int
    dst_dt: str = ""
    legacy: bool = False     # spelled dw_kKsSpP (DNNL 1.x)

    def __str__(self) -> str:
        if self.legacy:
            return f"dw_k{self.k}s{self.s}p{self.p}"
        return f"dw:k{self.k}s{self.s}p{self.p}" + (f":{self.dst_dt}" if self.dst_dt else "")


Entry = Sum | Eltwise | Depthwise


@dataclasses.dataclass(frozen=True)
class PostOps:
    entries: tuple[Entry, ...] = ()

    def __str__(self) -> str:
        return "+".join(str(e) for e in self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def eltwise(self) -> tuple[Eltwise, ...]:
        return tuple(e for e in self.entries if isinstance(e, Eltwise))


def _number(text: str, entry: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"--attr-post-ops: `{text}` in `{entry}` is not a number "
                         f"(expected the {what})") from None


_DW = re.compile(r"k(\d+)s(\d+)p(\d+)$")


def _entry(text: str) -> Entry:
    if text.endswith(":"):
        raise UsageError(f"--attr-post-ops: dangling `:` at the end of `{text}`")
    head, *fields = text.split(":")
    if head == "sum":
        if len(fields) > 3:
            raise UsageError(f"--attr-post-ops: `{text}` has too many fields; expected "
                             f"sum[:SCALE[:ZERO_POINT[:DT]]]")
        scale = _number(fields[0], text, "sum scale") if fields else 1.0
        zp = fields[1] if len(fields) > 1 else "0"
        if not re.fullmatch(r"[+-]?\d+", zp):
            raise UsageError(f"--attr-post-ops: zero point `{zp}` in `{text}` must be an "
                             f"integer")
        dt = fields[2] if len(fields) > 2 else ""
        if dt and dt not in DTS:
            raise UsageError(f"--attr-post-ops: data type `{dt}` in `{text}`; expected one "
                             f"of {', '.join(DTS)}")
        return Sum(scale, int(zp), dt)
    legacy = re.fullmatch(r"dw_k(\d+)s(\d+)p(\d+)", text)
    if legacy:
        return Depthwise(*map(int, legacy.groups()), legacy=True)
    if head == "dw":
        m = _DW.match(fields[0]) if fields else None
        if not m or len(fields) > 2 or (len(fields) == 2 and fields[1] not in DTS):
            raise UsageError(f"--attr-post-ops: `{text}`: expected dw:kKsSpP[:DST_DT], "
                             f"for example dw:k3s1p1")
        return Depthwise(*map(int, m.groups()), dst_dt=fields[1] if len(fields) == 2 else "")
    found = eltwise.lookup(head)
    if found is None:
        raise UsageError(f"--attr-post-ops: unknown post-op `{head}` in `{text}`; expected "
                         f"sum, dw:kKsSpP, or an eltwise algorithm: "
                         f"{', '.join(sorted(eltwise.ALGS))}")
    if len(fields) > 3:
        raise UsageError(f"--attr-post-ops: `{text}` has too many fields; expected "
                         f"NAME[:ALPHA[:BETA[:SCALE]]]")
    what = ("alpha", "beta", "scale")
    values = [_number(f, text, w) for f, w in zip(fields, what)]
    name = found[0]
    return Eltwise(name, *values)


def parse_post_ops(text: str) -> PostOps:
    """One chain (no commas); the empty string is no post-ops."""
    if text == "":
        return PostOps()
    return PostOps(tuple(_entry(part) for part in text.split("+")))
