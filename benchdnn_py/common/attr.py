"""Primitive attributes shared by the drivers (benchdnn reference 3.2): --attr-post-ops,
--attr-scales and --attr-zero-points (oneDNN 3.x), --attr-oscale (DNNL 1.x).

Grammar of one post-op chain (entries joined by `+`, applied in that order):
    sum[:SCALE[:ZERO_POINT[:DT]]]
    NAME[:ALPHA[:BETA[:SCALE]]]        eltwise; SCALE is the DNNL 1.x eltwise scale
    dw:kKsSpP[:DST_DT]                 depthwise fusion; DNNL 1.x spells dw_k3s1p1, dw_k3s2p1
    ALG:DT[:MASK[:TAG[:STRIDES]]]      binary with a second input src1 of type DT (ALG add,
                                       mul, ...; binary_ALG too); MASK a policy or mask
    select:DT[.MASK[.TAG]][:MASK2[.TAG2]]   binary select (a third, s8 condition input)
    prelu[:MASK]                       prelu with f32 weights of that policy or mask
A comma list gives one case per chain; an empty item means no post-ops. Every entry prints
back in the form it was given (benchdnn's short forms, numbers as %g).

Scales, zero points and the output scale: see the grammar comments further down, above
ScaleEntry and above OScale. Every parse_* function takes one item of its option's comma
list (the harness splits the list, options.parse_list) and returns one object; the empty
item means "none", and that object is falsy.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Callable

import numpy as np

from ..engine.options import Option, ascii_number, read_bool
from ..errors import UsageError
from ..status import Status
from . import eltwise, layout
from .check import round_to_dt
from .dt_names import DT_NAMES

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


# The binary post-op algorithms (benchdnn's, each also spelled binary_ALG).
BINARY_ALGS = ("add", "div", "eq", "ge", "gt", "le", "lt", "max", "min", "mul", "ne", "select",
               "sub")
# Every policy name benchdnn's str2policy knows (case-insensitive); a mask is an integer.
POLICY_NAMES = ("common", "host_scalar", "mx", "dynamic_fp", "per_oc", "per_ocic", "per_dim_0",
                "per_dim_1", "per_dim_01", "per_dim_2", "per_dim_3", "per_tensor")


@dataclasses.dataclass(frozen=True)
class Broadcast:
    """The shape of a post-op's extra input: a policy name or an integer mask over the
    destination's dimensions (empty: common), a memory tag (empty: any; `grouped`: the
    destination's), and strides (empty: dense)."""

    mask: str = ""
    tag: str = ""
    strides: tuple[int, ...] = ()

    def fields(self) -> list[str]:
        out = [self.mask, self.tag, "x".join(map(str, self.strides))]
        while out and not out[-1]:
            out.pop()
        return out


@dataclasses.dataclass(frozen=True)
class Binary:
    alg: str                       # a BINARY_ALGS name
    dt: str                        # src1's data type ("": not given, which no case runs)
    src1: Broadcast = Broadcast()
    src2: Broadcast | None = None  # select's condition input, when given
    spelled: str = ""              # binary_ALG when so given

    def __str__(self) -> str:
        name = self.spelled or self.alg
        if not self.dt:
            return name
        if self.alg == "select":
            text = ".".join([f"{name}:{self.dt}", *self.src1.fields()])
            return text + (":" + ".".join(self.src2.fields()) if self.src2 else "")
        return ":".join([name, self.dt, *self.src1.fields()])


@dataclasses.dataclass(frozen=True)
class Prelu:
    mask: str = ""                 # a policy name or an integer mask; empty: common

    def __str__(self) -> str:
        return f"prelu:{self.mask}" if self.mask else "prelu"


Entry = Sum | Eltwise | Depthwise | Binary | Prelu


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

    @property
    def extra_inputs(self) -> tuple[Binary | Prelu, ...]:
        """The entries that read a tensor of their own (binary src1, prelu weights)."""
        return tuple(e for e in self.entries if isinstance(e, (Binary, Prelu)))


def _number(text: str, entry: str, what: str) -> float:
    try:
        return float(ascii_number(text))
    except ValueError:
        raise UsageError(f"--attr-post-ops: `{text}` in `{entry}` is not a number "
                         f"(expected the {what})") from None


_DW = re.compile(r"k([0-9]+)s([0-9]+)p([0-9]+)$")


def _mask(text: str, entry: str) -> str:
    low = text.lower()
    if low in POLICY_NAMES:
        return low
    if low.isascii() and low.isdigit():
        return str(int(low))
    raise UsageError(f"--attr-post-ops: policy `{text}` in `{entry}`; expected an integer "
                     f"mask or one of {', '.join(POLICY_NAMES)}")


def _broadcast(fields: list[str], entry: str, what: str) -> Broadcast:
    """MASK[<d>TAG[<d>STRIDES]] already split; `what` names the input in errors."""
    if len(fields) > 3:
        raise UsageError(f"--attr-post-ops: `{entry}` has too many fields for {what}; "
                         f"expected MASK[:TAG[:STRIDES]]")
    mask = _mask(fields[0], entry) if fields else ""
    tag = fields[1] if len(fields) > 1 else ""
    if tag and tag != "grouped":
        try:
            layout.parse_tag(tag)
        except UsageError as exc:
            raise UsageError(f"--attr-post-ops: tag `{tag}` in `{entry}`: {exc}") from None
    strides: tuple[int, ...] = ()
    if len(fields) > 2 and fields[2]:
        if not re.fullmatch(r"[0-9]+(x[0-9]+)*", fields[2]):
            raise UsageError(f"--attr-post-ops: strides `{fields[2]}` in `{entry}`; "
                             f"expected S0xS1x... (integers)")
        strides = tuple(int(v) for v in fields[2].split("x"))
    return Broadcast(mask, tag, strides)


def _binary(alg: str, spelled: str, fields: list[str], text: str) -> Binary:
    if alg == "select":   # select:DT[.MASK[.TAG]][:MASK2[.TAG2]]
        if len(fields) > 2:
            raise UsageError(f"--attr-post-ops: `{text}`: expected "
                             f"select:DT[.MASK[.TAG]][:MASK2[.TAG2]]")
        dt, *src1 = fields[0].split(".") if fields else [""]
        src2 = _broadcast(fields[1].split("."), text, "the condition input") \
            if len(fields) == 2 else None
    else:
        dt, *src1 = fields or [""]   # no DT: parses, and the case says it is missing
        src2 = None
    dt = dt.removeprefix("dnnl_")
    if dt and dt not in DT_NAMES:
        raise UsageError(f"--attr-post-ops: data type `{dt}` in `{text}`; expected one of "
                         f"{', '.join(DT_NAMES)}")
    return Binary(alg, dt, _broadcast(src1, text, "src1"), src2,
                  spelled if spelled != alg else "")


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
        if not re.fullmatch(r"[+-]?[0-9]+", zp):
            raise UsageError(f"--attr-post-ops: zero point `{zp}` in `{text}` must be an "
                             f"integer")
        dt = fields[2] if len(fields) > 2 else ""
        if dt and dt not in DTS:
            raise UsageError(f"--attr-post-ops: data type `{dt}` in `{text}`; expected one "
                             f"of {', '.join(DTS)}")
        return Sum(scale, int(zp), dt)
    legacy = re.fullmatch(r"dw_k([0-9]+)s([0-9]+)p([0-9]+)", text)
    if legacy:
        return Depthwise(*map(int, legacy.groups()), legacy=True)
    if head == "dw":
        m = _DW.match(fields[0]) if fields else None
        if not m or len(fields) > 2 or (len(fields) == 2 and fields[1] not in DTS):
            raise UsageError(f"--attr-post-ops: `{text}`: expected dw:kKsSpP[:DST_DT], "
                             f"for example dw:k3s1p1")
        return Depthwise(*map(int, m.groups()), dst_dt=fields[1] if len(fields) == 2 else "")

    low = head.lower()
    if low.removeprefix("binary_") in BINARY_ALGS:
        return _binary(low.removeprefix("binary_"), low, fields, text)
    if low == "prelu":
        if len(fields) > 1:
            raise UsageError(f"--attr-post-ops: `{text}` has too many fields; expected "
                             f"prelu[:MASK]")
        return Prelu(_mask(fields[0], text) if fields else "")

    found = eltwise.lookup(head)
    if found is None:
        raise UsageError(f"--attr-post-ops: unknown post-op `{head}` in `{text}`; expected "
                         f"sum, dw:kKsSpP, prelu, a binary algorithm "
                         f"({', '.join(BINARY_ALGS)}) or an eltwise algorithm: "
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


# --- Scales and zero points (oneDNN 3.x) -------------------------------------------------
#
#   --attr-scales=ARG:POLICY[:SCALE][:DT[:GROUPS]][+...]       DT f32 by default
#   --attr-zero-points=ARG:POLICY[:ZP][:DT[:GROUPS]][+...]     DT s32 by default
#
# ARG is any argument benchdnn names: src (alias src0), src1, wei, dst, msrcN, and the
# depthwise post-op's attr_post_op_dw_wei and attr_post_op_dw_dst; which of them a case
# takes is its driver's verdict. POLICY is a name below or an integer mask. Exactly the
# single-value policies (common, host_scalar) take a value (SCALE >= 0, or an integer ZP);
# giving one to another policy is an error. DT prints only when it is not the default or
# GROUPS (AxB) follow. Entries print in benchdnn's order, its map order by DNNL_ARG_* id
# (SRC 1, SRC_1 2, DST 17, WEIGHTS 33, MULTIPLE_SRC 1024 + N, ATTR_POST_OP_DW 16384 | DST,
# | WEIGHTS). Each ARG appears at most once.

_ARG_IDS = {"src": 1, "src1": 2, "dst": 17, "wei": 33, "attr_post_op_dw_dst": 16384 | 17,
            "attr_post_op_dw_wei": 16384 | 33}
_ARG_SPELLINGS = {**{a: a for a in _ARG_IDS}, "src0": "src"}
_MSRC = re.compile(r"msrc([0-9]+)")


def _arg_id(arg: str) -> int:
    m = _MSRC.fullmatch(arg)
    return 1024 + int(m[1]) if m else _ARG_IDS[arg]


def _arg_name(text: str) -> str | None:
    m = _MSRC.fullmatch(text)
    return f"msrc{int(m[1])}" if m else _ARG_SPELLINGS.get(text)


MAX_NDIMS = 12                                         # DNNL_MAX_NDIMS

# Policy -> mask of a conv argument without groups (benchdnn get_default_mask/policy2mask).
# per_oc and per_tensor depend on the argument and the tensor: see _Quant.mask_for.
POLICY_MASKS = {
    "common": 0,              # one value for the whole tensor
    "host_scalar": 0,         # the same, passed as a host scalar
    "per_oc": 2,              # channels: dim 1 of src/dst; wei: dim 0 (0 and 1 with groups)
    "per_ocic": 3,            # dims 0 and 1
    "per_tensor": (1 << MAX_NDIMS) - 1,   # a value per element: every dimension
    "per_dim_0": 1 << 0,
    "per_dim_1": 1 << 1,
    "per_dim_01": (1 << 0) | (1 << 1),
    "per_dim_2": 1 << 2,
    "per_dim_3": 1 << 3,
    "mx": (1 << MAX_NDIMS) - 1,           # dynamic quantization: every dimension, as
    "dynamic_fp": (1 << MAX_NDIMS) - 1,   #   per_tensor (mask_for trims it to a tensor)
}
SINGLE_VALUE_POLICIES = ("common", "host_scalar")
SCALE_DTS = ("f32", "f16", "bf16", "e8m0", "f8_e5m2", "f8_e4m3")
ZP_DTS = ("s32", "s8", "u8", "s4", "u4")


def number_text(value: float) -> str:
    """%g like benchdnn, unless six digits would not read back as the same number: a
    repro line must reproduce the case, so then the shortest exact form."""
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


class _Quant:
    """What scale and zero-point entries share: the argument, the policy, its mask."""

    arg: str
    policy: str               # a POLICY_MASKS name, or a decimal integer mask
    dt: str
    groups: tuple[int, ...]

    @property
    def is_common(self) -> bool:
        """One value for the whole tensor (common, or the same as a host scalar)."""
        return self.policy in SINGLE_VALUE_POLICIES

    @property
    def mask(self) -> int:
        """The mask for an argument of a convolution without groups; per_tensor sets every
        dimension's bit (mask_for trims it to a tensor)."""
        return self.mask_for(MAX_NDIMS)

    def mask_for(self, ndims: int, grouped: bool = False) -> int:
        """The mask oneDNN gets for a tensor of `ndims` dimensions; `grouped`: the
        weights carry a groups dimension first (benchdnn policy2mask for conv)."""
        if self.policy.isascii() and self.policy.isdigit():
            return int(self.policy)
        if self.policy in ("per_tensor", "mx", "dynamic_fp"):
            return (1 << ndims) - 1
        if self.policy == "per_oc" and self.arg == "wei":
            return POLICY_MASKS["per_dim_01"] if grouped else POLICY_MASKS["per_dim_0"]
        return POLICY_MASKS[self.policy]

    def _tail(self, value: str, default_dt: str) -> str:
        text = f"{self.arg}:{self.policy}" + (f":{value}" if value else "")
        if self.dt != default_dt or self.groups:
            text += f":{self.dt}"
        if self.groups:
            text += ":" + "x".join(map(str, self.groups))
        return text


@dataclasses.dataclass(frozen=True)
class ScaleEntry(_Quant):
    arg: str
    policy: str
    scale: float | None = None     # common only
    dt: str = "f32"
    groups: tuple[int, ...] = ()

    def __str__(self) -> str:
        return self._tail("" if self.scale is None else number_text(self.scale), "f32")


@dataclasses.dataclass(frozen=True)
class ZeroPointEntry(_Quant):
    arg: str
    policy: str
    zp: int | None = None          # common only
    dt: str = "s32"
    groups: tuple[int, ...] = ()

    def __str__(self) -> str:
        return self._tail("" if self.zp is None else str(self.zp), "s32")


def _canonical_order(entries: tuple) -> tuple:
    args = [e.arg for e in entries]
    if len(set(args)) != len(args):
        raise ValueError(f"one entry per argument, got {args}")
    return tuple(sorted(entries, key=lambda e: _arg_id(e.arg)))


@dataclasses.dataclass(frozen=True)
class _QuantEntries:
    """Entries of one quantization attribute, one per argument, in canonical order."""

    entries: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", _canonical_order(self.entries))

    def __str__(self) -> str:
        return "+".join(str(e) for e in self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def get(self, arg: str):
        """The entry for arg (any of its spellings), or None."""
        arg = _arg_name(arg) or arg
        return next((e for e in self.entries if e.arg == arg), None)


@dataclasses.dataclass(frozen=True)
class Scales(_QuantEntries):
    entries: tuple[ScaleEntry, ...] = ()

    def common_value(self, arg: str) -> float:
        """arg's common scale as its type holds it (f32, or rounded to bf16/f16), 1
        without one."""
        e = self.get(arg)
        if e is None:
            return 1.0
        value = np.array([1.0 if e.scale is None else e.scale], np.float32)
        return float(round_to_dt(value, e.dt)[0]) if e.dt in ("bf16", "f16") \
            else float(value[0])


@dataclasses.dataclass(frozen=True)
class ZeroPoints(_QuantEntries):
    entries: tuple[ZeroPointEntry, ...] = ()


def _is_number(text: str) -> bool:
    try:
        float(ascii_number(text))
    except ValueError:
        return False
    return True


def _scale_value(text: str, where: str) -> float:
    try:
        value = float(ascii_number(text))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"--attr-scales: scale `{text}` in `{where}` must be a finite "
                         f"number >= 0")
    return value


def _zp_value(text: str, where: str) -> int:
    try:
        value = float(ascii_number(text))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value == int(value)):
        raise UsageError(f"--attr-zero-points: zero point `{text}` in `{where}` must be an "
                         f"integer")
    return int(value)


@dataclasses.dataclass(frozen=True)
class _QuantGrammar:
    option: str                     # --attr-scales
    value_name: str                 # SCALE
    parse_value: Callable[[str, str], Any]
    dts: tuple[str, ...]            # the first is the default
    entry: type

    @property
    def usage(self) -> str:
        return f"ARG:POLICY[:{self.value_name}][:DT[:GROUPS]]"


_SCALES = _QuantGrammar("--attr-scales", "SCALE", _scale_value, SCALE_DTS, ScaleEntry)
_ZERO_POINTS = _QuantGrammar("--attr-zero-points", "ZP", _zp_value, ZP_DTS, ZeroPointEntry)

# `+` joins entries, but %g prints big and small numbers as 1e+10: a `+` right after an
# exponent's `e` is a sign (benchdnn glues such pieces back together the same way).
_ENTRY_SEPARATOR = re.compile(r"(?<![eE])\+")


def _policy(text: str, item: str, opt: str) -> str:
    low = text.lower()
    if low in POLICY_MASKS:
        return low
    if low.isascii() and low.isdigit() and int(low) < 1 << MAX_NDIMS:
        return str(int(low))
    raise UsageError(f"{opt}: policy `{text}` in `{item}`; expected one of "
                     f"{', '.join(POLICY_MASKS)}, or an integer mask below {1 << MAX_NDIMS}")


def _groups(text: str, item: str, opt: str) -> tuple[int, int]:
    m = re.fullmatch(r"([0-9]+)x([0-9]+)", text)
    if not m or 0 in (int(m[1]), int(m[2])):
        raise UsageError(f"{opt}: groups `{text}` in `{item}`; expected AxB, two positive "
                         f"integers (for example 1x128)")
    return int(m[1]), int(m[2])


def _quant_entry(item: str, g: _QuantGrammar) -> _Quant:
    opt = g.option
    if item.endswith(":"):
        raise UsageError(f"{opt}: dangling symbol at the end of input `{item}`")
    arg_text, *fields = item.split(":")
    arg = _arg_name(arg_text)
    if arg is None:
        raise UsageError(f"{opt}: argument `{arg_text}` in `{item}`; expected one of "
                         f"src (or src0), src1, wei, dst, msrcN, attr_post_op_dw_wei, "
                         f"attr_post_op_dw_dst")
    if not fields:
        raise UsageError(f"{opt}: `{item}` has no policy; expected {g.usage}")
    policy = _policy(fields.pop(0), item, opt)
    value = None
    if policy in SINGLE_VALUE_POLICIES:
        if not fields:
            raise UsageError(f"{opt}: the {policy} policy in `{item}` needs a "
                             f"{g.value_name}: {arg}:{policy}:{g.value_name}")
        value = g.parse_value(fields.pop(0), item)
    elif fields and _is_number(fields[0]):
        raise UsageError(f"{opt}: `{fields[0]}` in `{item}`: only the common and "
                         f"host_scalar policies take a {g.value_name}, {policy} takes none")
    if len(fields) > 2:
        raise UsageError(f"{opt}: `{item}` has too many fields; expected {g.usage}")
    dt = g.dts[0]
    if fields:
        dt = fields[0].removeprefix("dnnl_")
        if dt not in g.dts:
            raise UsageError(f"{opt}: data type `{fields[0]}` in `{item}`; expected one of "
                             f"{', '.join(g.dts)}")
    groups = _groups(fields[1], item, opt) if len(fields) == 2 else ()
    return g.entry(arg, policy, value, dt, groups)


def _parse_quant(text: str, g: _QuantGrammar) -> tuple:
    entries: list[_Quant] = []
    for item in _ENTRY_SEPARATOR.split(text):
        if not item:
            raise UsageError(f"{g.option}={text}: empty entry; expected {g.usage} entries "
                             f"joined by +")
        entry = _quant_entry(item, g)
        if any(e.arg == entry.arg for e in entries):
            raise UsageError(f"{g.option}={text}: argument `{entry.arg}` is given twice "
                             f"(`{item}`); one entry per argument")
        entries.append(entry)
    return tuple(entries)


def parse_scales(text: str) -> Scales:
    """One item of --attr-scales (no commas); the empty string is no scales."""
    return Scales(_parse_quant(text, _SCALES)) if text else Scales()


def parse_zero_points(text: str) -> ZeroPoints:
    """One item of --attr-zero-points (no commas); the empty string is no zero points."""
    return ZeroPoints(_parse_quant(text, _ZERO_POINTS)) if text else ZeroPoints()


# --- Output scale (DNNL 1.x) -------------------------------------------------------------
#
#   --attr-oscale=POLICY[:SCALE]     POLICY common (SCALE required) or per_oc (SCALE optional)
#
# The spec allows it on int8 forward convolutions only (dt.attr_unsupported checks that).
# For per_oc, SCALE is the starting value of the per-channel scales, as benchdnn 1.x
# documents it; without one the driver chooses them. Prints back as given.

OSCALE_POLICIES = ("common", "per_oc")


@dataclasses.dataclass(frozen=True)
class OScale:
    policy: str = ""               # "" = no output scale
    scale: float | None = None

    def __str__(self) -> str:
        if not self.policy:
            return ""
        return self.policy if self.scale is None else f"{self.policy}:{number_text(self.scale)}"

    def __bool__(self) -> bool:
        return bool(self.policy)

    @property
    def is_common(self) -> bool:
        """One value for the whole tensor (common, or the same as a host scalar)."""
        return self.policy in SINGLE_VALUE_POLICIES

    @property
    def mask(self) -> int:
        """common: 0; per_oc: the dst's channel dimension (1 << 1)."""
        return 0 if self.policy == "common" else 1 << 1


def parse_oscale(text: str) -> OScale:
    """One item of --attr-oscale (no commas); the empty string is no output scale."""
    if not text:
        return OScale()
    if text.endswith(":"):
        raise UsageError(f"--attr-oscale: dangling symbol at the end of input `{text}`")
    policy_text, *fields = text.split(":")
    policy = policy_text.lower()
    if policy not in OSCALE_POLICIES:
        raise UsageError(f"--attr-oscale: policy `{policy_text}` in `{text}`; expected "
                         f"common:SCALE or per_oc[:SCALE]")
    if len(fields) > 1:
        raise UsageError(f"--attr-oscale: `{text}` has too many fields; expected "
                         f"POLICY[:SCALE]")
    if policy == "common" and not fields:
        raise UsageError(f"--attr-oscale: the common policy in `{text}` needs a SCALE: "
                         f"common:SCALE")
    scale = None
    if fields:
        try:
            scale = float(fields[0])
        except ValueError:
            scale = math.nan
        if not (math.isfinite(scale) and scale >= 0):
            raise UsageError(f"--attr-oscale: scale `{fields[0]}` in `{text}` must be a "
                             f"finite number >= 0")
    return OScale(policy, scale)


# --- Modes: scratchpad, fpmath, accumulation, rounding, determinism, dropout ---------------
#
#   --attr-scratchpad=library|user                 who allocates the primitive's scratch memory
#   --attr-fpmath=MODE[:APPLY_TO_INT]              MODE strict, bf16, f16, tf32, any
#   --attr-acc-mode=strict|relaxed|any|f32|s32|f16
#   --attr-rounding-mode=ARG:MODE[:SEED][+...]     MODE environment or stochastic
#   --attr-deterministic=BOOL
#   --attr-dropout=P[:SEED[:TAG[:OFFSET[:HOST_SCALARS]]]]
#
# benchdnn's grammar (reference 3.2), every driver. Each is a comma list (one case per item);
# an empty item is the default, which prints nothing. Modes.unimplemented says which values
# a case runs with.

SCRATCHPAD_MODES = ("library", "user")
FPMATH_MODES = ("strict", "bf16", "f16", "tf32", "any")
ACC_MODES = ("strict", "relaxed", "any", "f32", "s32", "f16")
ROUNDING_MODES = ("environment", "stochastic")
ROUNDING_ARGS = ("dst", "diff_src", "diff_weights")


def _bool(text: str, opt: str, item: str) -> bool:
    value = read_bool(text)
    if value is None:
        raise UsageError(f"{opt}: `{text}` in `{item}` is not a boolean; expected true, "
                         f"false, 1 or 0")
    return value


def _choice(text: str, choices: tuple[str, ...], opt: str, what: str) -> str:
    low = text.lower()
    if low not in choices:
        raise UsageError(f"{opt}={text}: unknown {what}; expected one of {', '.join(choices)}")
    return low


@dataclasses.dataclass(frozen=True)
class Fpmath:
    mode: str = "strict"
    apply_to_int: bool = False

    def __str__(self) -> str:
        return self.mode + (":true" if self.apply_to_int else "")

    def __bool__(self) -> bool:
        return self != Fpmath()


def parse_fpmath(text: str) -> Fpmath:
    if not text:
        return Fpmath()
    mode, *rest = text.split(":", 1)
    mode = _choice(mode, FPMATH_MODES, "--attr-fpmath", "fpmath mode")
    return Fpmath(mode, _bool(rest[0], "--attr-fpmath", text) if rest else False)


@dataclasses.dataclass(frozen=True)
class Rounding:
    entries: tuple[tuple[str, str, int | None], ...] = ()    # (arg, mode, seed)

    def __str__(self) -> str:
        return "+".join(f"{a}:{m}" + (f":{s}" if s is not None else "")
                        for a, m, s in self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def stochastic(self) -> bool:
        return any(m == "stochastic" for _, m, _ in self.entries)


def parse_rounding(text: str) -> Rounding:
    if not text:
        return Rounding()
    entries = []
    for item in text.split("+"):
        arg, *fields = item.split(":")
        if arg.lower() not in ROUNDING_ARGS:
            raise UsageError(f"--attr-rounding-mode: argument `{arg}` in `{text}`; expected "
                             f"one of {', '.join(ROUNDING_ARGS)}")
        if not fields or len(fields) > 2:
            raise UsageError(f"--attr-rounding-mode: `{item}`: expected ARG:MODE[:SEED]")
        mode = _choice(fields[0], ROUNDING_MODES, "--attr-rounding-mode", "rounding mode")
        seed = None
        if len(fields) == 2:
            if not re.fullmatch(r"[+-]?[0-9]+", fields[1]):
                raise UsageError(f"--attr-rounding-mode: seed `{fields[1]}` in `{item}` "
                                 f"must be an integer")
            seed = int(fields[1])
        entries.append((arg.lower(), mode, seed))
    return Rounding(tuple(entries))


@dataclasses.dataclass(frozen=True)
class Dropout:
    text: str = ""          # as given, checked field by field; empty: no dropout

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)

    def _field(self, k: int) -> str | None:
        fields = self.text.split(":")
        return fields[k] if k < len(fields) and fields[k] else None

    @property
    def p(self) -> float:
        """The drop probability, as the f32 the primitive takes."""
        return float(np.float32(self._field(0)))

    @property
    def seed(self) -> int:
        return int(self._field(1) or 0)

    @property
    def mask_tag(self) -> str:
        """The mask's tag: `any` (dst's layout, the default), `undef` (no mask) or a tag."""
        return self._field(2) or "any"

    @property
    def offset(self) -> int:
        return int(self._field(3) or 0)


def parse_dropout(text: str) -> Dropout:
    if not text:
        return Dropout()
    opt = "--attr-dropout"
    fields = text.split(":")
    if len(fields) > 5:
        raise UsageError(f"{opt}={text}: too many fields; expected "
                         f"P[:SEED[:TAG[:OFFSET[:HOST_SCALARS]]]]")
    p = _number(fields[0], text, "dropout probability") if fields[0] else math.nan
    if not 0.0 <= p <= 1.0:
        raise UsageError(f"{opt}={text}: probability `{fields[0]}` must be in [0, 1]")
    if len(fields) > 1 and not re.fullmatch(r"[+-]?[0-9]+", fields[1]):
        raise UsageError(f"{opt}={text}: seed `{fields[1]}` must be an integer")
    if len(fields) > 2 and fields[2] not in ("undef", "any"):   # undef, any: the dst's
        try:
            layout.parse_tag(fields[2])
        except UsageError as exc:
            raise UsageError(f"{opt}={text}: mask tag `{fields[2]}`: {exc}") from None
    if len(fields) > 3 and not (fields[3].isascii() and fields[3].isdigit()):
        raise UsageError(f"{opt}={text}: offset `{fields[3]}` must be an integer >= 0")
    if len(fields) > 4:
        _bool(fields[4], opt, text)
    return Dropout(text)


@dataclasses.dataclass(frozen=True)
class Modes:
    """A case's mode attributes; each prints only when not its default."""

    scratchpad: str = "library"
    fpmath: Fpmath = Fpmath()
    acc_mode: str = "strict"
    rounding: Rounding = Rounding()
    deterministic: bool = False
    dropout: Dropout = Dropout()

    def options(self) -> list[str]:
        """The repro's --attr-... options, in benchdnn's order (MODE_OPTIONS'): those
        whose value is not their option's default."""
        parts = []
        for opt in MODE_OPTIONS:
            value = getattr(self, MODE_FIELDS[opt.name])
            if value != opt.default:
                parts.append(f"--{opt.name}={str(value).lower() if value is True else value}")
        return parts

    def unimplemented(self, backend: str = "native",
                      native: frozenset[str] = frozenset()) -> str | None:
        """Why a case with these modes does not run, or None. The kernels here compute
        every type at its full precision with f32 or s32 accumulators, in a fixed order:
        what strict fpmath and accumulation ask, which every other fpmath and accumulation
        mode allows (they permit a cheaper computation, they do not require one), and
        deterministic. native: what the driver's native primitives also honour:
        "scratchpad" (they run in memory the driver gives them, --attr-scratchpad=user)
        and "dropout". The oneDNN backend does not yet pass the modes to oneDNN."""
        honoured = native if backend == "native" else frozenset()
        if self.scratchpad == "user" and "scratchpad" not in honoured:
            return ("--attr-scratchpad=user: this primitive allocates its work memory "
                    "itself (no user scratchpad)")
        if self.rounding.stochastic:
            return (f"--attr-rounding-mode={self.rounding}: stochastic rounding is not "
                    "implemented")
        if self.dropout and "dropout" not in honoured:
            return f"--attr-dropout={self.dropout}: this primitive takes no dropout"
        if backend != "native" and self.options():
            return (f"{' '.join(self.options())}: the {backend} backend does not pass these "
                    "attributes on yet")
        return None

    def verdict(self, backend: str = "native",
                native: frozenset[str] = frozenset()) -> tuple[Status, str] | None:
        """unimplemented() as a case's verdict."""
        why = self.unimplemented(backend, native)
        return (Status.UNIMPLEMENTED, why) if why else None


def _parse_acc_mode(text: str) -> str:
    return _choice(text, ACC_MODES, "--attr-acc-mode", "accumulation mode") if text \
        else "strict"


def _parse_scratchpad(text: str) -> str:
    return _choice(text, SCRATCHPAD_MODES, "--attr-scratchpad", "scratchpad mode") if text \
        else "library"


def _parse_deterministic(text: str) -> bool:
    return _bool(text, "--attr-deterministic", text) if text else False


# The options, in benchdnn's print order; each sets the Modes field of MODE_FIELDS.
MODE_OPTIONS = (
    Option("attr-scratchpad", _parse_scratchpad, "library",
           "library (default) or user: who allocates the primitive's scratch memory",
           is_list=True),
    Option("attr-fpmath", parse_fpmath, Fpmath(),
           "MODE[:APPLY_TO_INT]: strict (default), bf16, f16, tf32 or any", is_list=True),
    Option("attr-acc-mode", _parse_acc_mode, "strict",
           "strict (default), relaxed, any, f32, s32 or f16", is_list=True),
    Option("attr-rounding-mode", parse_rounding, Rounding(),
           "ARG:MODE[:SEED] joined by +; MODE environment (default) or stochastic",
           is_list=True),
    Option("attr-deterministic", _parse_deterministic, False, "true or false (default)",
           is_list=True),
    Option("attr-dropout", parse_dropout, Dropout(),
           "P[:SEED[:TAG[:OFFSET[:HOST_SCALARS]]]] (default: none)", is_list=True),
)
MODE_FIELDS = {"attr-scratchpad": "scratchpad", "attr-fpmath": "fpmath",
               "attr-acc-mode": "acc_mode", "attr-rounding-mode": "rounding",
               "attr-deterministic": "deterministic", "attr-dropout": "dropout"}


def modes_of(values: Any) -> Modes:
    """The Modes of a case from the harness's option values (missing: defaults)."""
    return Modes(**{field: values[name] for name, field in MODE_FIELDS.items()
                    if name in values})
