"""Per-data-type numbers of the softmax driver, each with its reason, and its fill
(benchdnn's softmax method, reference 6.4 and 6.7).

Thresholds follow benchdnn's rule: the compared tensor's type (dst forward, diff_src
backward) sets the epsilon; f32 and f64 allow 10 of it, times 5 for log-softmax (its
subtraction of ln s) and 4 backward (a reduction and a product more); bf16 and f16 allow
one epsilon under a relaxed accumulation mode and none under strict (the kernels compute
in f32, so a rounded result must be the reference's); integers and the 8-bit floats none.
Where a threshold is 0, two rescues apply (driver.with_rescues): an absolute difference
below f32's epsilon passes (benchdnn's driver check), and a bf16, f16 or 8-bit float
output passes when it is the rounding of a value within the f32 threshold of the
reference: a result computed in f32 that lies that close to a rounding boundary may round
to its other side; one farther from a boundary may not.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from ...common import check, fill
from .desc import split


@dataclasses.dataclass(frozen=True)
class DtCfg:
    eps: float                     # machine epsilon (benchdnn's epsilon_dt)
    lowest: float                  # the most negative finite value: the fill's floor
    perf: tuple[float, float]      # performance-mode fill range
    bwd_range: int                 # backward fill: values are k / range (dst), k (diff_dst)
    integral: bool = False         # integers: forward only, saturated


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(eps=2.0**-23, lowest=-float(np.finfo(np.float32).max), perf=(-16.0, 16.0),
                 bwd_range=128),
    "f64": DtCfg(eps=2.0**-52, lowest=-float(np.finfo(np.float32).max), perf=(-16.0, 16.0),
                 bwd_range=128),
    # 128 steps of 1/128 are exact in bf16's 8-bit significand
    "bf16": DtCfg(eps=2.0**-7, lowest=float(ml_dtypes.finfo(ml_dtypes.bfloat16).min),
                  perf=(-16.0, 16.0), bwd_range=128),
    # f16 overflows past 65504: 8 steps keep every product and sum small and exact
    "f16": DtCfg(eps=2.0**-10, lowest=-65504.0, perf=(-8.0, 8.0), bwd_range=8),
    "s8": DtCfg(eps=0.0, lowest=-128.0, perf=(-16.0, 16.0), bwd_range=8, integral=True),
    "u8": DtCfg(eps=0.0, lowest=0.0, perf=(0.0, 32.0), bwd_range=8, integral=True),
    # 8-bit floats (forward): 2 and 3 significand bits
    "f8_e5m2": DtCfg(eps=2.0**-2, lowest=-57344.0, perf=(-8.0, 8.0), bwd_range=8),
    "f8_e4m3": DtCfg(eps=2.0**-3, lowest=-448.0, perf=(-8.0, 8.0), bwd_range=8),
}

# Accumulation modes that keep f32 sums: a bf16 or f16 result must round exactly.
STRICT_ACC_MODES = ("strict", "f32")


def threshold(log: bool, backward: bool, dt: str, acc_mode: str) -> float:
    """The relative threshold for a compared tensor of type dt (module docstring)."""
    wide = dt in ("f32", "f64")
    relaxed_half = acc_mode not in STRICT_ACC_MODES and dt in ("bf16", "f16")
    if not (wide or relaxed_half):
        return 0.0
    return (5 if log else 1) * (4 if backward else 1) * (10 if wide else 1) * CFG[dt].eps


def zero_trust_percent(log: bool, backward: bool, axis_size: int, ddt: str) -> float:
    """The share of zero outputs above which a passing case is MISTRUSTED. Forward, all
    but the few top values of a line are the floor, whose e^(x - m) is 0: all but 8 per
    line (all but one for an 8-bit integer dst, which rounds the small ones to 0); log-
    softmax over one element, or into u8 (all negative), is all zeros by right. Backward
    fills give few zeros: 30 %."""
    if backward:
        return 30.0
    if log and (axis_size == 1 or ddt == "u8"):
        return 100.0
    zeros = axis_size - 1 if ddt in ("s8", "u8") else max(0, axis_size - 8)
    return 100.0 * zeros / axis_size


# Forward fill: per line, n1 copies of top + 2, n2 of top + 1 and n3 of top, side by side
# from a drawn start, the rest the floor (the lower of the two types' lowest values). The
# several maxima check that the right one is subtracted, and the lines of top = -88 that it
# is subtracted with its sign; lines of top = 88 overflow e^x unless it is (e^88 is past
# f32's range). An 8-bit integer dst takes fewer top values, which it can tell apart.
TOP = 88
TOP_COUNTS = ((1, 2), (2, 5), (5, 8))
TOP_COUNTS_INT8_DST = ((1, 1), (1, 1), (0, 4))


def fill_forward(dims: tuple[int, ...], axis: int, sdt: str, ddt: str) -> np.ndarray:
    """src (logical f32 values, exact in sdt)."""
    outer, size, inner = split(dims, axis)
    lines = outer * inner
    ranges = TOP_COUNTS_INT8_DST if ddt in ("s8", "u8") else TOP_COUNTS
    counts = np.stack([fill.int_fill(lines, fill.Kind.LINES + k, lo, hi)
                       for k, (lo, hi) in enumerate(ranges)]).astype(np.int64)
    # fewer top values where the line is shorter: the last kind shrinks first
    for k in (2, 1, 0):
        over = counts.sum(axis=0) - size
        counts[k] -= np.clip(over, 0, counts[k])
    total = counts.sum(axis=0)
    start = np.floor(fill.real_fill(lines, fill.Kind.LINES + 3, 0.0, 1.0)
                     * (size - total + 1)).astype(np.int64)
    start = np.minimum(start, size - total)
    # every other line negative, unless sdt holds no negative value
    sign = np.where((np.arange(lines) % 2 == 1) & (CFG[sdt].lowest < 0), -1, 1)
    top = sign * TOP
    rank = np.arange(size)[:, None] - start[None, :]          # (axis, line)
    values = np.full((size, lines), max(CFG[sdt].lowest, CFG[ddt].lowest), np.float64)
    ends = np.cumsum(counts, axis=0)
    for k, bump in enumerate((2, 1, 0)):
        lo = ends[k - 1] if k else 0
        here = (rank >= lo) & (rank < ends[k])
        values = np.where(here, (top + bump)[None, :], values)
    # (axis, outer * inner) -> (outer, axis, inner)
    out = values.reshape(size, outer, inner).transpose(1, 0, 2)
    return to_dt(out.reshape(dims).astype(np.float32), sdt)


# the backward inputs' seeds
BWD_KINDS = {"dst": fill.Kind.DST, "diff_dst": fill.Kind.SRC}


def fill_backward(n: int, tensor: str, dt: str, log: bool) -> np.ndarray:
    """dst (k / range) or diff_dst (k), k uniform in [0, range): exact in dt, so that
    softmax's backward is exact in f32. Signs keep softmax's dst negative and its diff_dst
    positive (diff_dst - sum(diff_dst dst) adds two positive terms), and log-softmax's the
    other way round."""
    r = CFG[dt].bwd_range
    k = fill.int_fill(n, BWD_KINDS[tensor], 0, r - 1)
    is_dst = tensor == "dst"
    sign = (1.0 if is_dst else -1.0) if log else (-1.0 if is_dst else 1.0)
    return (sign * (k / r if is_dst else k)).astype(np.float32)


def perf_values(n: int, kind: fill.Kind, dt: str) -> np.ndarray:
    return to_dt(fill.real_fill(n, kind, *CFG[dt].perf), dt)


# the fill as a tensor of dt holds it
to_dt = fill.exact_in
