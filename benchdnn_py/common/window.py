"""Sliding-window problem descriptors: parse, deduce, print (benchdnn grammar, reference
2). One grammar for convolution, deconvolution (each with its output-size formulas) and
pooling (without g and oc), and the graph cases built on convolutions.

A descriptor such as ``mb1ic64ih56oc64kh3ph1`` names one problem. Parsing follows benchdnn
exactly: keys in any order (last one wins), optional single ``_`` separators, ``n`` starts
the name, which runs to the end of the token. Missing output sizes and paddings are deduced
with C integer arithmetic (truncation toward zero), 1D/2D/3D is detected from the output
sizes, and h/w values are propagated for square and cubic problems. One addition: a
trailing ``_dw`` marks a depthwise problem (g = ic = oc).

Printing gives the short form (only what differs from the defaults, square/cubic axes
folded) or, with ``canonical=True``, every field. Parsing the printed text gives the same
problem back.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Callable

from ..errors import ProblemError

AXES = ("d", "h", "w")
# benchdnn tries the keys in this order on every pass over the token.
KEYS = ("g", "mb", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd", "kh", "kw",
        "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw")
DEFAULT_MB = 2
_VALUE = re.compile(r"[+-]?[0-9]+")
_UNSET = -1


def c_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as C does (Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def effective_kernel(k: int, dil: int) -> int:
    return (k - 1) * (dil + 1) + 1


@dataclasses.dataclass(frozen=True)
class Formulas:
    """Output size and padding deduction of one primitive kind (reference 2.3)."""

    out: Callable[[int, int, int, int, int], int]          # (i, k, s, p, dil) -> o
    pad: Callable[[int, int, int, int, int], int]          # (o, i, k, s, dil) -> p
    pad_r: Callable[[int, int, int, int, int, int], int]   # (o, i, k, s, p, dil) -> p_r
    # a dilation alone makes its axis present (benchdnn's conv and deconv; not pooling,
    # whose `ih6oh7_kh2ph1_dh4dw4` is square: w takes h's sizes and dilation)
    dilation_marks_axis: bool = True


_CONV = dict(
    out=lambda i, k, s, p, d: c_div(i - effective_kernel(k, d) + 2 * p, s) + 1,
    pad=lambda o, i, k, s, d: c_div((o - 1) * s - i + effective_kernel(k, d), 2),
    pad_r=lambda o, i, k, s, p, d: (o - 1) * s - i + effective_kernel(k, d) - p,
)
FORMULAS = {
    "conv": Formulas(**_CONV),
    "pool": Formulas(**_CONV, dilation_marks_axis=False),
    # an inner product: the convolution whose kernel covers the input (one output point)
    "ip": Formulas(**_CONV),
    "deconv": Formulas(
        out=lambda i, k, s, p, d: (i - 1) * s + (k - 1) * (d + 1) - 2 * p + 1,
        pad=lambda o, i, k, s, d: c_div((i - 1) * s - o + effective_kernel(k, d), 2),
        pad_r=lambda o, i, k, s, p, d: (i - 1) * s - o + effective_kernel(k, d) - p,
    ),
}


@dataclasses.dataclass(frozen=True)
class ConvDesc:
    """A fully deduced problem. Spatial fields are (d, h, w) triples; axes below the rank
    hold neutral values (size 1, stride 1, padding 0, dilation 0)."""

    g: int
    has_groups: bool
    mb: int
    ic: int
    oc: int
    i: tuple[int, int, int]
    o: tuple[int, int, int]
    k: tuple[int, int, int]
    s: tuple[int, int, int]
    p: tuple[int, int, int]
    dil: tuple[int, int, int]
    ndims: int          # 3 (1D), 4 (2D) or 5 (3D), counting mb and channels
    name: str = ""
    kind: str = "conv"

    @property
    def p_r(self) -> tuple[int, int, int]:
        """Right/bottom/back padding, derived (may be negative)."""
        f = FORMULAS[self.kind].pad_r
        return tuple(f(o, i, k, s, p, d) for o, i, k, s, p, d in  # type: ignore[return-value]
                     zip(self.o, self.i, self.k, self.s, self.p, self.dil))

    @property
    def spatial_axes(self) -> tuple[int, ...]:
        """Indexes into the (d, h, w) triples of the axes this problem has."""
        return tuple(range(5 - self.ndims, 3))

    def with_mb(self, mb: int) -> "ConvDesc":
        return dataclasses.replace(self, mb=mb)

    def format(self, canonical: bool = False) -> str:
        return format_desc(self, canonical)

    def __str__(self) -> str:
        return format_desc(self)


def lex(text: str, keys: tuple[str, ...] = KEYS) -> tuple[dict[str, int], str, bool]:
    """Splits a descriptor into key values, the name, and the depthwise flag (keys: the
    grammar's keys; `_dw` only where they include g)."""
    values: dict[str, int] = {}
    name = ""
    depthwise = False
    pos = 0
    while pos < len(text):
        start = pos
        matched = False
        if "g" in keys and text.startswith("dw", pos) and pos > 0 and text[pos - 1] == "_" and (
                pos + 2 == len(text) or text[pos + 2] in "_n"):
            depthwise, matched, pos = True, True, pos + 2
        for key in keys:
            if not text.startswith(key, pos):
                continue
            m = _VALUE.match(text, pos + len(key))
            if not m:
                raise ProblemError(f"no value found for `{key}` in `{text}`: expected "
                                   f"`{key}` followed by an integer")
            value = int(m.group())
            if value < 0:
                raise ProblemError(f"`{key}{m.group()}` in `{text}`: `{key}` must not be "
                                   f"negative")
            values[key] = value
            matched = True
            pos = m.end()
        if pos < len(text) and text[pos] == "n":
            name = text[pos + 1:]
            break
        if pos < len(text) and text[pos] == "_":
            pos += 1
        if not matched:
            raise ProblemError(f"unrecognized pattern in `{text}` starting from "
                               f"`{text[start:]}`: expected one of the keys "
                               f"{' '.join(keys)}, `_` between entries, or n\"name\"")
    return values, name, depthwise


# A batch repeats each descriptor under many option sets (directions, types, formats,
# instruction sets), and the parent and the worker each parse every case's: the parsed,
# frozen result is kept (errors are not, so each bad case still reports its own).
@functools.lru_cache(maxsize=4096)
def parse_desc(text: str, kind: str = "conv") -> ConvDesc:
    """Parses and deduces one descriptor; raises ProblemError naming what is wrong."""
    if not text:
        raise ProblemError("empty problem descriptor")
    values, name, depthwise = lex(text)
    formulas = FORMULAS[kind]

    def get(key: str, default: int) -> int:
        return values.get(key, default)

    def missing(key: str) -> ProblemError:
        return ProblemError(f"`{key}` in `{text}` was not specified or set to 0: expected a "
                            f"positive `{key}`")

    has_groups = "g" in values
    g = get("g", 1)
    ic, oc = get("ic", 0), get("oc", 0)
    if depthwise:
        if has_groups and g != ic:
            raise ProblemError(f"`_dw` in `{text}` makes g equal to ic, but g{g} != ic{ic}")
        if "oc" in values and oc != ic:
            raise ProblemError(f"`_dw` in `{text}` needs oc equal to ic (one output channel "
                               f"per input channel), got ic{ic} oc{oc}")
        g, oc, has_groups = ic, ic, True
    for key, value in (("g", g), ("ic", ic), ("oc", oc)):
        if value <= 0:
            raise missing(key)
    for ax in AXES:
        if get("s" + ax, 1) <= 0:
            raise missing("s" + ax)

    size = {f: [get(f + ax, 0) for ax in AXES] for f in "iok"}
    stride = [get("s" + ax, 1) for ax in AXES]
    pad = [get("p" + ax, _UNSET) for ax in AXES]
    dil = [get("d" + ax, 0) for ax in AXES]

    def present(a: int) -> bool:
        return not (size["i"][a] == size["k"][a] == size["o"][a] == 0
                    and (dil[a] == 0 or not formulas.dilation_marks_axis)
                    and stride[a] == 1 and pad[a] < 1)

    presence = [present(a) for a in range(3)]
    for a, ax in enumerate(AXES):
        if not presence[a]:
            continue
        for f in "ik":
            if size[f][a] <= 0:
                raise missing(f + ax)
        i, k, s, d = size["i"][a], size["k"][a], stride[a], dil[a]
        if size["o"][a] == 0:
            if pad[a] == _UNSET:
                pad[a] = 0
            size["o"][a] = formulas.out(i, k, s, pad[a], d)
            if size["o"][a] <= 0:
                raise ProblemError(
                    f"`o{ax}` was not given and the other sizes of `{text}` give "
                    f"o{ax}={size['o'][a]}: the kernel (with dilation and padding) must fit "
                    f"in the input")
        elif pad[a] == _UNSET:
            pad[a] = formulas.pad(size["o"][a], i, k, s, d)
            if pad[a] < 0:
                raise ProblemError(
                    f"`o{ax}{size['o'][a]}` in `{text}` is too small for the input and "
                    f"kernel: it would need a negative p{ax}={pad[a]}")

    od, oh, ow = size["o"]
    if od:
        ndims = 5
    elif oh:
        ndims = 4
    elif ow:
        ndims = 3
    else:
        raise ProblemError(f"`{text}` has no spatial dimension: expected at least one of "
                           f"iw/ow/kw (1D), ih/oh/kh (2D) or id/od/kd (3D)")

    def copy_axis(src: int, dst: int) -> None:
        for arr in (size["i"], size["o"], size["k"], stride, pad, dil):
            arr[dst] = arr[src]

    if ndims == 5:
        if not presence[1] and not presence[2]:
            copy_axis(0, 1)
            copy_axis(0, 2)
        elif not (presence[1] and presence[2]):
            raise ProblemError(f"`{text}` is 3D but gives only one of h and w: expected all "
                               f"`h` and `w` sizes or none of them (cubic problem)")
    elif ndims == 4:
        if not presence[2]:
            copy_axis(1, 2)
        # A 2D problem has no depth.
        size["i"][0] = size["o"][0] = size["k"][0] = stride[0] = 1
        pad[0] = dil[0] = 0
    else:
        for a in (0, 1):
            size["i"][a] = size["o"][a] = size["k"][a] = stride[a] = 1
            pad[a] = dil[a] = 0

    return ConvDesc(g=g, has_groups=has_groups, mb=get("mb", DEFAULT_MB), ic=ic, oc=oc,
                    i=tuple(size["i"]), o=tuple(size["o"]), k=tuple(size["k"]),
                    s=tuple(stride), p=tuple(pad), dil=tuple(dil), ndims=ndims, name=name,
                    kind=kind)


def printed_axes(desc: ConvDesc, canonical: bool) -> tuple[int, ...]:
    fields = (desc.o, desc.i, desc.k, desc.s, desc.p, desc.dil)
    if desc.ndims == 5:
        cubic = all(f[0] == f[1] == f[2] for f in fields)
        return (0,) if cubic and not canonical else (0, 1, 2)
    if desc.ndims == 4:
        square = all(f[1] == f[2] for f in fields)
        return (1,) if square and not canonical else (1, 2)
    return (2,)


def format_desc(desc: ConvDesc, canonical: bool = False) -> str:
    axes = printed_axes(desc, canonical)

    def group(prefix: str, values: tuple[int, int, int]) -> str:
        return "".join(f"{prefix}{AXES[a]}{values[a]}" for a in axes)

    parts = []
    if desc.has_groups or canonical:
        parts.append(f"g{desc.g}")
    if desc.mb != DEFAULT_MB or canonical:
        parts.append(f"mb{desc.mb}")
    parts += [f"ic{desc.ic}", group("i", desc.i), f"oc{desc.oc}", group("o", desc.o),
              group("k", desc.k)]
    if canonical or any(s != 1 for s in desc.s):
        parts.append(group("s", desc.s))
    parts.append(group("p", desc.p))
    if canonical or any(d != 0 for d in desc.dil):
        parts.append(group("d", desc.dil))
    if desc.name:
        parts.append("n" + desc.name)
    return "".join(parts)
