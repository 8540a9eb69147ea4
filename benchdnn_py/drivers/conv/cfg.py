"""Per-data-type numbers of the convolution driver: one row per type, every number with
its reason (benchdnn reference 6.2, 6.3, 6.6, 6.7). Which combinations of types run is
dt.py's table; the ranges of a case come from its types through fill_ranges below.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class DtCfg:
    digits: int                    # significand bits: integers up to 2**digits are exact
    src: tuple[int, int]           # correctness fill ranges (closed integer intervals)
    wei: tuple[int, int]
    bia: tuple[int, int]
    dst: tuple[int, int]           # prior dst contents (sum post-op) and diff_dst
    perf: tuple[float, float]      # performance-mode fill range (reals)
    trh: float                     # threshold of direct convolution
    dw_wei: tuple[int, int]        # depthwise fusion's weights, when of this type
    # --alg=wino (reference 6.7, 6.2 adjustment 5): None where no Winograd row computes
    # the type. The transforms' fractions make the sums inexact, so the threshold is relative
    # (with the L2 norm fallback of check.compare), and the legacy fill keeps every output
    # far from zero (positive weights, mostly positive data): no cancellation to amplify.
    wino_trh: float | None = None
    wino_src: tuple[int, int] | None = None
    wino_wei: tuple[int, int] | None = None


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(
        digits=24,                 # IEEE binary32 has a 24-bit significand
        src=(-32, 32),             # wide enough to exercise real products, small enough that
        wei=(-32, 32),             #   2**24 / (32 * 32) = 16384 terms accumulate exactly
        bia=(-8, 8),               # bias only shifts the exact sum
        dst=(-8, 8),               # benchdnn's range for the prior dst
        perf=(-1024.0, 1024.0),    # ordinary finite values; speed must not depend on them
        trh=0.0,                   # integer data: every partial sum is exact, so any order
                                   #   of summation must match the reference bit for bit
        dw_wei=(-4, 4),            # 9 taps over 1x1 outputs far below 2**24 / 36: exact
        wino_trh=2e-5,             # benchdnn's f32 Winograd threshold: a few ulps per tile of
                                   #   the transforms' rounding (measured max 2e-6 here)
        wino_src=(-16, 128),       # benchdnn's legacy Winograd ranges (reference 6.2,
        wino_wei=(2, 64),          #   adjustment 5)
    ),
    "f64": DtCfg(
        digits=53,                 # IEEE binary64: the kernels multiply and add in double
        src=(-4096, 4096),         # products up to 2**24: sums pass f32's exact integers
        wei=(-4096, 4096),         #   within a few terms (so an f32 computation shows),
        bia=(-8, 8),               #   while double holds 2**29 such terms exactly; the
        dst=(-4096, 4096),         #   reference's f32 inputs hold these values exactly
        perf=(-1024.0, 1024.0),
        trh=0.0,                   # integer data: exact sums in any order, bit for bit
        dw_wei=(0, 0),             # no depthwise fusion in f64
    ),
    "bf16": DtCfg(
        digits=8,                  # 8-bit significand: integers up to 256 are exact
        src=(-4, 4), wei=(-4, 4),  # small, so products stay exact and sums few-bit
        bia=(-8, 8), dst=(-4, 4),
        perf=(-32.0, 32.0),        # benchdnn's bf16 perf range
        trh=0.0,                   # exact after rounding the reference to bf16
        dw_wei=(-2, 2),            # bf16 1x1 outputs times these: exact f32 products and sums
    ),
    "f16": DtCfg(
        digits=11,                 # 11-bit significand
        src=(-4, 4), wei=(-2, 2),  # f16 weights kept smaller: 2**11 / (4 * 2) = 256 terms
        bia=(-8, 8), dst=(-4, 4),
        perf=(-8.0, 8.0),          # stays far from f16 overflow (65504)
        trh=0.0,
        dw_wei=(-2, 2),            # (no depthwise fusion after f16; kept for the table)
    ),
    "s8": DtCfg(
        digits=7,                  # 7 value bits
        src=(-4, 4), wei=(-4, 4),
        bia=(-8, 8), dst=(-4, 4),
        perf=(-32.0, 32.0),
        trh=0.0,                   # integer arithmetic: exact, then saturated
        dw_wei=(-1, 1),            # the int8 1x1 outputs span much of their type: 9 taps
    ),                             #   of {-1, 0, 1} leave most depthwise outputs unsaturated
    "u8": DtCfg(
        digits=8,
        src=(0, 8), wei=(0, 8),    # unsigned; wei unused (weights are s8)
        bia=(0, 8), dst=(0, 160),  # a prior u8 dst spans more of the type
        perf=(0.0, 64.0),
        trh=0.0,
        dw_wei=(0, 0),             # never a weights type
    ),
    "s32": DtCfg(
        digits=31,                 # s32 accumulation
        src=(0, 0), wei=(0, 0),    # never a src or weights type
        bia=(-8, 8), dst=(-128, 128),
        perf=(-1024.0, 1024.0),
        trh=0.0,
        dw_wei=(0, 0),             # never a weights type
    ),
}

# Accumulator digits: the kernels accumulate floats in f32 (f64 in double) and int8 in s32.
ACC_DIGITS = {"f32": 24, "s32": 31, "f64": 53}
ONE_BYTE = ("s8", "u8")
FOUR_BYTES = ("f32", "s32")


@dataclasses.dataclass(frozen=True)
class FillRanges:
    """The correctness fill of one case (reference 6.2, 6.3): ranges per tensor, the
    weights' multiplier, and the sparse operand's density."""

    src: tuple[int, int]
    wei: tuple[int, int]
    bia: tuple[int, int]
    dst: tuple[int, int]
    wei_mult: int           # s8 src with s8 weights: weights drawn in [-2, 2], times 2
    density: float


def fill_ranges(dt: tuple[str, str, str], bia_dt: str, out_dt: str, n_acc: int,
                sparse_pair: tuple[str, str], wino: bool = False) -> FillRanges:
    """Ranges for SRC:WEI:DST types dt, output type out_dt (dst forward, diff_src
    backward data, diff_weights backward weights) and the two tensors multiplied along
    the n_acc-long chain (names among src, wei, dst); wino: a Winograd case (the type's
    wino_src and wino_wei)."""
    src_t, wei_t, dst_t = dt
    src, wei = CFG[src_t].src, CFG[wei_t].wei
    wei_mult = 1
    if src_t == "u8" and wei_t in ONE_BYTE and dst_t in FOUR_BYTES:
        src = (0, 160)      # adjustment 1: exercise full u8 loads
    if src_t == "s8" and wei_t == "s8":
        wei, wei_mult = (-2, 2), 2   # adjustment 2: even weights {-4, -2, 0, 2, 4}
    if wino and CFG[src_t].wino_src is not None:
        src, wei = CFG[src_t].wino_src, CFG[src_t].wino_wei
    ranges = {"src": src, "wei": wei, "dst": CFG[dst_t].dst}
    acc = "s32" if src_t in ONE_BYTE and wei_t in ONE_BYTE else "f64" if wei_t == "f64" else "f32"
    safe_digits = min(CFG[out_dt].digits, ACC_DIGITS[acc])
    biggest = max(map(abs, ranges[sparse_pair[0]])) * max(map(abs, ranges[sparse_pair[1]]))
    safe_n_acc = max(2**safe_digits // biggest, 1)
    density = min(1.0, safe_n_acc / max(n_acc, 1))
    if wei_t in ONE_BYTE and out_dt != "s32":
        density = min(1.0, 3 * density)   # bump to hit saturation of narrow outputs
    bia = CFG[bia_dt].bia if bia_dt in CFG else (0, 0)
    dst = CFG[dst_t].dst
    if wino and CFG[src_t].wino_src is not None:
        dst = wino_addend_range(src, wei, n_acc)
        bia = dst if bia_dt in CFG else bia
    return FillRanges(src, wei, bia, dst, wei_mult, density)


# The largest addend range on a Winograd case: integers of f32 stay exact to 2**24.
WINO_ADDEND_MAX = 2**22


def wino_addend_range(src: tuple[int, int], wei: tuple[int, int],
                      n_acc: int) -> tuple[int, int]:
    """The bias and prior-dst range of a Winograd case: +-1/16 of its mean output (a
    power of two, at least benchdnn's 8). Winograd's fill makes outputs large (n_acc x
    mean src x mean wei: 1.3e5 at 8 input channels, 1e6 at 64), and its threshold is
    relative, so an addend of +-8 is lost under it (8e-6 of an output at 64 channels
    against 2e-5): a dropped bias or sum scale passed. At 1/16 the addend moves every
    output by far more than the threshold, and keeps it far from zero."""
    mean = n_acc * (src[0] + src[1]) / 2 * (wei[0] + wei[1]) / 2
    r = 8
    while r * 2 <= min(mean / 16, WINO_ADDEND_MAX):
        r *= 2
    return (-r, r)


def eps(dt: str) -> float:
    """Machine epsilon of an output type (0 for integers), for the compare rules."""
    return {"f32": 1.1920929e-07, "f64": 2.0**-52, "bf16": 7.8125e-3,
            "f16": 9.765625e-4}.get(dt, 0.0)


# Zero trust (reference 6.8): a passing result with more than this share of exact zeros is
# MISTRUSTED. Each is (1 - trust) * 100 for the tensor's trust:
def dst_zero_trust_percent(output_exceeds_input: bool) -> float:
    """dst: trust 0.3, halved when an output spatial size exceeds the input one (the
    padding ring then legitimately produces bias-only, often zero, points)."""
    return (1 - 0.3 / (2 if output_exceeds_input else 1)) * 100


def src_zero_trust_percent(strides: tuple[int, int, int]) -> float:
    """diff_src: trust 0.3 / (sd*sh*sw); with strides, whole input rows get no gradient."""
    return (1 - 0.3 / (strides[0] * strides[1] * strides[2])) * 100


def wei_zero_trust_percent(k: tuple[int, int, int], in_points: int, out_points: int) -> float:
    """diff_wei: trust 0.3 scaled by how many taps can see real data at all (small images
    under big kernels leave some taps only padding)."""
    taps = k[0] * k[1] * k[2]
    return (1 - 0.3 / (taps / min(taps, in_points, out_points))) * 100


BIA_ZERO_TRUST_PERCENT = 20.0      # diff_bias: trust 0.8; a sum over a whole channel is
                                   #   rarely exactly 0
