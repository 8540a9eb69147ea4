"""Per-data-type numbers of the reorder driver, each with its reason (benchdnn reference
9.1, 6.7, 6.8).

The correctness fill is a table, not random: element i of src takes entry i mod 10 of
(max, min, 0, 0.25, 0.5, 1, 1.5, 2, 16, 64), rounded and saturated to the data type, so
every reorder meets the type's extremes, exact ties (0.5, 1.5 land on even integers) and
fractions; a sum's prior dst takes entry (i*11/10) mod 10, out of step with src.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...common import fill
from ...common.check import round_to_dt


@dataclasses.dataclass(frozen=True)
class DtCfg:
    lo: float                 # the fill table's min and max
    hi: float
    perf: tuple[float, float] # performance-mode fill range


CFG: dict[str, DtCfg] = {
    # +-2^24: the end of f32's exact integers (a power of two: bf16 holds it too, and
    # rounds the odd neighbours the scales make); perf: ordinary finite values
    "f32": DtCfg(-2.0**24, 2.0**24, (-1024.0, 1024.0)),
    "bf16": DtCfg(-2.0**24, 2.0**24, (-32.0, 32.0)),
    # +-2^11: the end of f16's exact integers (f32 sources past it become Inf: allowed)
    "f16": DtCfg(-2.0**11, 2.0**11, (-8.0, 8.0)),
    # the largest f32 below 2^31: an s32 that survives the f32 step exactly
    "s32": DtCfg(-2147483520.0, 2147483520.0, (-1024.0, 1024.0)),
    # the whole type: every conversion into it saturates at both ends
    "s8": DtCfg(-128.0, 127.0, (-32.0, 32.0)),
    "u8": DtCfg(0.0, 255.0, (0.0, 64.0)),
    # the generic route's types: each whole range, so conversions into them saturate (or
    # overflow: e5m2 to Inf, e4m3 to NaN) and their extremes are read back
    "f8_e5m2": DtCfg(-57344.0, 57344.0, (-8.0, 8.0)),
    "f8_e4m3": DtCfg(-448.0, 448.0, (-8.0, 8.0)),
    "s4": DtCfg(-8.0, 7.0, (-8.0, 7.0)),
    "u4": DtCfg(0.0, 15.0, (0.0, 15.0)),
    "f4_e2m1": DtCfg(-6.0, 6.0, (-6.0, 6.0)),
}
DTS = tuple(CFG)
INTEGRAL = ("s32", "s8", "u8", "s4", "u4")
# Outputs that overflow to Inf or NaN from the fill's extremes (rule 5 compares them).
NAN_OUTPUTS = ("f16", "f8_e5m2", "f8_e4m3")

# Per-point attribute values, entry i of the array taking entry i mod len: scales with a
# factor of 3 among the powers of two (a kernel that multiplies by 1/dst_scale rounds
# differently there), zero points of both signs and 0 (a point whose step is skipped).
SCALE_TABLE = (0.5, 2.0, 0.25, 4.0, 3.0, 1.0, 0.125)
ZP_TABLE = (-1, 2, 0, -3, 5)
# ... for an unsigned zero point type, nonnegative (the same steps, 0 and a skipped one)
ZP_TABLE_UNSIGNED = (1, 2, 0, 3, 5)
# The types an attribute's values may have: every table entry is exact in each (a scale
# of bf16 or f16, a zero point of 4 bits), so the kernels read them as f32 and s32.
SCALE_DTS = ("f32", "bf16", "f16")
ZP_DTS = ("s32", "s8", "u8", "s4", "u4")

ZERO_TRUST_PERCENT = 80.0     # benchdnn's for reorder: 0 and small fractions are in the table
TRH = 0.0                     # a reorder is exact


def table(dt: str) -> np.ndarray:
    c = CFG[dt]
    values = np.array([c.hi, c.lo, 0, 0.25, 0.5, 1, 1.5, 2, 16, 64], np.float32)
    return round_to_dt(values, dt)


def fill_src(n: int, dt: str) -> np.ndarray:
    return table(dt)[np.arange(n) % 10]


def fill_dst(n: int, dt: str) -> np.ndarray:
    return table(dt)[(np.arange(n, dtype=np.int64) * 11 // 10) % 10]


def perf_values(n: int, kind: fill.Kind, dt: str) -> np.ndarray:
    return round_to_dt(fill.real_fill(n, kind, *CFG[dt].perf), dt)


def attr_values(name: str, mask: int, dims: tuple[int, ...], groups: tuple[int, ...] = (),
                dt: str = "") -> np.ndarray:
    """The per-point array of an attribute (core.REORDER_ARGS name) over the dims in
    mask: shaped to broadcast over the tensor (1 along the other dims). groups (AxB, over
    the last two dims, as benchdnn's get_idx): one value per A x B block of points, each
    repeated over its block, since the kernels read a value per point. dt: the zero
    point's type (unsigned ones take nonnegative values)."""
    size = [1] * len(dims)
    if groups:
        size[-2:] = groups
    shape = tuple(n // size[d] if mask >> d & 1 else 1 for d, n in enumerate(dims))
    count = int(np.prod(shape))
    if name == "src_zps":
        values = np.resize(np.array(ZP_TABLE_UNSIGNED if dt.startswith("u") else ZP_TABLE,
                                    np.int32), count).reshape(shape)
    else:
        values = np.resize(np.array(SCALE_TABLE, np.float32), count).reshape(shape)
    for d, k in enumerate(size):
        if k > 1 and mask >> d & 1:
            values = np.repeat(values, k, axis=d)
    return values


def comp_count(dims: tuple[int, ...], mask: int) -> int:
    """The values of a compensation over the dims in mask (oneDNN's extra dst buffer)."""
    return int(np.prod([n for d, n in enumerate(dims) if mask >> d & 1], dtype=np.int64))


def comp_sums(dst: np.ndarray, mask: int) -> np.ndarray:
    """For each point of the mask's dims (logical order), the sum of the s8 dst values
    over the other dims, in int64 (the compensation's S)."""
    axes = tuple(d for d in range(dst.ndim) if not mask >> d & 1)
    return np.rint(dst.astype(np.float64)).sum(axis=axes).astype(np.int64).ravel()
