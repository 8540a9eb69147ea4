"""Data types of the convolution driver: --dt, --bia-dt, the DNNL 1.x --cfg spellings, and
which SRC:WEI:DST combinations the spec supports in each direction (benchdnn reference 3.1
and 8; the spec's "Data Types" table).

Pure Python and free of the kernel core: options are parsed, and cases classified, before
anything runs. Directions are given by name ("FWD_B" ... "BWD_WB"); the driver's Dir
members are accepted too (not BWD_DW, which the driver rejects first). For backward data
SRC and DST name diff_src and diff_dst; for the weights update WEI names diff_weights and
the bias diff_bias.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...common import dt_names
from ...errors import UsageError
from ...status import Reason, Status

INT8 = ("s8", "u8")

DIRECTIONS = ("FWD_B", "FWD_D", "FWD_I", "BWD_D", "BWD_W", "BWD_WB")
FORWARD = ("FWD_B", "FWD_D", "FWD_I")
WITH_BIAS = ("FWD_B", "BWD_WB")


# Every data type name --dt and --bia-dt accept: benchdnn's, and undef.
DT_NAMES = dt_names.DT_NAMES + ("undef",)


def _name(item: str, option: str, text: str) -> str:
    return dt_names.parse_name(item, option, text, undef=True)


def parse_dt(text: str) -> tuple[str, str, str]:
    """--dt=SRC[:WEI:DST]: one name is used for all three."""
    names = [_name(item, "dt", text) for item in text.split(":")]
    if len(names) == 1:
        names *= 3
    if len(names) != 3:
        raise UsageError(f"--dt={text}: `dt` option expects either a single input or three "
                         f"inputs in SRC, WEI, DST order. Current size is: {len(names)}.")
    return names[0], names[1], names[2]


def parse_bia_dt(text: str) -> str:
    """--bia-dt=NAME; `undef` (the default) lets the direction decide (effective_bia_dt)."""
    return _name(text, "bia-dt", text)


def is_int8(dt: tuple[str, str, str]) -> bool:
    """Integer src and weights: the s32-accumulating int8 convolution."""
    return dt[0] in INT8 and dt[1] in INT8


def has(dt: tuple[str, str, str], name: str) -> bool:
    return name in dt


def acc_dt(dt: tuple[str, str, str]) -> str:
    """What the convolution accumulates in (benchdnn 1.x cfg: s32 for int8, else f32)."""
    if is_int8(dt):
        return "s32"
    return "f64" if dt[1] == "f64" else "f32"


def _direction(direction: Any) -> str:
    name = getattr(direction, "value", direction)
    if name not in DIRECTIONS:
        raise ValueError(f"not a convolution direction: {direction!r}")
    return name


# --- --bia-dt ------------------------------------------------------------------------------
# A bias exists on FWD_B and BWD_WB only. Left undef there, it is f32 (f64 with f64 weights),
# as benchdnn forces it, whatever the other data types: the f16 and bf16 rows of the table
# also allow f32 bias. Elsewhere --bia-dt has nothing to describe and is ignored.

def effective_bia_dt(direction: Any, dt: tuple[str, str, str], bia_dt: str = "undef") -> str:
    """The bias data type the case runs with; `undef` when the direction has no bias."""
    if _direction(direction) not in WITH_BIAS:
        return "undef"
    if bia_dt != "undef":
        return bia_dt
    return "f64" if dt[1] == "f64" else "f32"


def bia_dt_option(direction: Any, dt: tuple[str, str, str], bia_dt: str) -> str:
    """The repro's `--bia-dt=X`, or "": printed only when the direction has a bias and X is
    not what undef gives anyway (so both spellings of one case print alike)."""
    if bia_dt == "undef" or effective_bia_dt(direction, dt) in (bia_dt, "undef"):
        return ""
    return f"--bia-dt={bia_dt}"


# --- DNNL 1.x --cfg ------------------------------------------------------------------------
# A cfg is only another spelling of --dt (and, for f32_wino, --alg=wino): the repro prints
# those, never --cfg. NAME spells SRC, WEI and DST one after the other.

@dataclasses.dataclass(frozen=True)
class Cfg:
    name: str
    dt: tuple[str, str, str]
    alg: str | None = None         # None: the cfg says nothing about --alg

    @property
    def acc(self) -> str:
        return acc_dt(self.dt)

    def __str__(self) -> str:
        return self.name


def _cfg(name: str, src: str, wei: str | None = None, dst: str | None = None,
         alg: str | None = None) -> Cfg:
    return Cfg(name, (src, wei or src, dst or src), alg)


CFGS: dict[str, Cfg] = {c.name: c for c in (
    _cfg("f32", "f32"),
    _cfg("f64", "f64"),
    _cfg("f32f32s8", "f32", "f32", "s8"),
    _cfg("u8s8f32", "u8", "s8", "f32"),
    _cfg("u8s8s32", "u8", "s8", "s32"),
    _cfg("u8s8s8", "u8", "s8", "s8"),
    _cfg("u8s8u8", "u8", "s8", "u8"),
    _cfg("s8s8f32", "s8", "s8", "f32"),
    _cfg("s8s8s32", "s8", "s8", "s32"),
    _cfg("s8s8s8", "s8", "s8", "s8"),
    _cfg("s8s8u8", "s8", "s8", "u8"),
    _cfg("f32_wino", "f32", alg="wino"),
    _cfg("f16", "f16"),
    _cfg("f16f16s8", "f16", "f16", "s8"),
    _cfg("bf16bf16bf16", "bf16"),
    _cfg("bf16bf16f32", "bf16", "bf16", "f32"),
    _cfg("bf16f32bf16", "bf16", "f32", "bf16"),     # weights update into f32 diff_weights
    _cfg("f32bf16bf16", "f32", "bf16", "bf16"),     # backward data into f32 diff_src
)}


def parse_cfg(text: str) -> Cfg:
    """--cfg=NAME (DNNL 1.x)."""
    if text not in CFGS:
        raise UsageError(f"--cfg={text}: unknown configuration `{text}`; expected one of "
                         f"{', '.join(CFGS)}")
    return CFGS[text]


# --- Which combinations run ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class DtRow:
    directions: tuple[str, ...]
    src: tuple[str, ...]
    wei: tuple[str, ...]
    dst: tuple[str, ...]
    bia: tuple[str, ...]

    def matches(self, direction: str, dt: tuple[str, str, str]) -> bool:
        return (direction in self.directions and dt[0] in self.src and dt[1] in self.wei
                and dt[2] in self.dst)


_BWD_D, _BWD_W = ("BWD_D",), ("BWD_W", "BWD_WB")

# The spec's "Data Types" table, one row per line.
SUPPORTED = (
    # f32: full precision, in every direction.
    DtRow(DIRECTIONS, ("f32",), ("f32",), ("f32",), ("f32",)),
    # f16: half-precision forward; dst (benchdnn's f16:f16:f32) and bias may stay f32.
    DtRow(FORWARD, ("f16",), ("f16",), ("f16", "f32"), ("f16", "f32")),
    # int8: s32 accumulation, the result requantized to 8 bits or kept as s32/f32; bf16
    # and f16 too (benchdnn's s8:s8:bf16, u8:s8:f16; oneDNN's CPU skips the f16 ones,
    # the epilogue here stores f16 as it does for the f16 rows).
    DtRow(FORWARD, INT8, ("s8",), ("u8", "s8", "s32", "f32", "bf16", "f16"),
          ("u8", "s8", "s32", "f32")),
    # bf16 forward; dst and bias may stay f32.
    DtRow(FORWARD, ("bf16",), ("bf16",), ("f32", "bf16"), ("f32", "bf16")),
    # f32 activations with bf16 or f16 weights (benchdnn's f32:bf16:f32, f32:f16:f32):
    # the weights widen exactly to f32 and the convolution is f32.
    DtRow(FORWARD + _BWD_D, ("f32",), ("bf16", "f16"), ("f32",), ("f32",)),
    # bf16 backward data; diff_src may stay f32.
    DtRow(_BWD_D, ("f32", "bf16"), ("bf16",), ("bf16",), ()),
    # bf16 weights update; diff_weights and diff_bias may stay f32.
    DtRow(_BWD_W, ("bf16",), ("f32", "bf16"), ("bf16",), ("f32", "bf16")),
    # f16 backward (benchdnn's --dt=f16 on BWD_D, BWD_W, BWD_WB), as bf16's.
    DtRow(_BWD_D, ("f32", "f16"), ("f16",), ("f16",), ()),
    DtRow(_BWD_W, ("f16",), ("f32", "f16"), ("f16",), ("f32", "f16")),
    # f64 in every direction, with an f64 bias: double precision end to end (no post-ops,
    # scales or zero points: attr_unsupported).
    DtRow(DIRECTIONS, ("f64",), ("f64",), ("f64",), ("f64",)),
)

# benchdnn's known-unsupported conv CPU combinations (reference 8): SKIPPED, not failures.
KNOWN_UNSUPPORTED = (
    lambda s, w, d: s == "f32" and w == "f32" and d in INT8,    # f32:f32 into an int8 dst
    lambda s, w, d: s == "bf16" and w == "bf16" and d in INT8,  # bf16:bf16 into an int8 dst
    lambda s, w, d: w == "f16" and d not in ("f32", "f16"),     # f16 weights: f32/f16 dst only
    # int8 into an f16 dst (the s8-weights ones run here: SUPPORTED is checked first)
    lambda s, w, d: s in INT8 and w in INT8 and d == "f16",
)


def classify(direction: Any, dt: tuple[str, str, str],
             bia_dt: str = "undef") -> tuple[Status, str] | None:
    """None when the spec supports this combination in this direction; otherwise
    (SKIPPED, "Case not supported") for benchdnn's known-unsupported combinations and
    (UNIMPLEMENTED, why) for the rest. `bia_dt` is --bia-dt as given."""
    name = _direction(direction)
    spelled = f"--dt={':'.join(dt)}"
    rows = [r for r in SUPPORTED if r.matches(name, dt)]
    if rows:
        bia = effective_bia_dt(name, dt, bia_dt)
        allowed = sorted({b for r in rows for b in r.bia})
        if bia == "undef" or bia in allowed:
            return None
        reason = (f"--bia-dt={bia} with {spelled} on {name}: the bias of this combination "
                  f"is one of {', '.join(allowed)}")
        return Status.UNIMPLEMENTED, reason
    if any(rule(*dt) for rule in KNOWN_UNSUPPORTED):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    reason = f"{spelled} on {name}: not a data-type combination the convolution kernels run"
    return Status.UNIMPLEMENTED, reason


def attr_unsupported(direction: Any, dt: tuple[str, str, str], *, oscale: Any = None,
                     scales: Any = None,
                     zero_points: Any = None) -> tuple[Status, str] | None:
    """Attributes (benchdnn_py.common.attr objects; falsy = not given) this case cannot take.

    The spec allows the output scale on int8 forward convolutions only; scales and zero
    points, which quantize the same int8 path, get the same rule. Then benchdnn's known
    unsupported list (reference 8): any weights zero point, a src zero point not in s32,
    a per-channel dst scale -> SKIPPED."""
    name = _direction(direction)
    for option, value in (("--attr-oscale", oscale), ("--attr-scales", scales),
                          ("--attr-zero-points", zero_points)):
        if value and not (name in FORWARD and is_int8(dt)):
            reason = (f"{option}={value} with --dt={':'.join(dt)} on {name}: for int8 "
                      f"forward convolutions only")
            return Status.UNIMPLEMENTED, reason
    zp_src = zero_points.get("src") if zero_points else None
    dst_scale = scales.get("dst") if scales else None
    if ((zero_points and zero_points.get("wei")) or (zp_src and zp_src.dt != "s32")
            or (dst_scale and not dst_scale.is_common)):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    return None


# Depthwise fusion (the spec's "Depthwise Post-op" types), by the 1x1 convolution's output
# type (the intermediate the depthwise step reads): the depthwise weights' type and the
# depthwise outputs allowed, the default (no DST_DT) being the convolution's own dst type.
# The depthwise bias is f32 in every row.
DW_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "f32": ("f32", ("f32",)),
    "bf16": ("bf16", ("bf16", "f32")),
    "u8": ("s8", ("u8", "s8", "s32", "f32")),
    "s8": ("s8", ("u8", "s8", "s32", "f32")),
}
DW_BIA_DT = "f32"


def dw_types(dst_dt: str, dw_dst_dt: str) -> tuple[str, str, str] | None:
    """(weights, bias, output) types of a depthwise step after a convolution writing
    dst_dt, with DST_DT dw_dst_dt ("" for the default); None when the spec has no such
    combination."""
    row = DW_TYPES.get(dst_dt)
    out = dw_dst_dt or dst_dt
    if row is None or out not in row[1]:
        return None
    return row[0], DW_BIA_DT, out
