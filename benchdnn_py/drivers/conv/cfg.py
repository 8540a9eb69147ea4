"""Per-data-type numbers of the convolution driver: one row per type, every number with
its reason (benchdnn reference 6.2, 6.3, 6.6, 6.7).

Only f32 has a row: it is the one type the kernel core implements today. Any other --dt
is reported UNIMPLEMENTED by the driver instead of being run on numbers nobody chose.
"""

from __future__ import annotations

import dataclasses

# Every data type name --dt accepts (benchdnn's list; a `dnnl_` prefix is also accepted).
DT_NAMES = ("f32", "bf16", "f16", "f64", "s32", "s8", "u8", "s4", "u4", "f8_e5m2", "f8_e4m3",
            "f4_e2m1", "e8m0", "s64", "boolean", "undef")


@dataclasses.dataclass(frozen=True)
class DtCfg:
    digits: int                    # significand bits: integers up to 2**digits are exact
    src: tuple[int, int]           # correctness fill ranges (closed integer intervals)
    wei: tuple[int, int]
    bia: tuple[int, int]
    dst: tuple[int, int]           # prior dst contents (sum post-op) and diff_dst
    perf: tuple[float, float]      # performance-mode fill range (reals)
    trh: float                     # threshold of direct convolution


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(
        digits=24,                 # IEEE binary32 has a 24-bit significand
        src=(-32, 32),             # wide enough to exercise real products, small enough that
        wei=(-32, 32),             #   2**24 / (32 * 32) = 16384 terms accumulate exactly
        bia=(-8, 8),               # bias only shifts the exact sum
        dst=(-8, 8),               # benchdnn's range for the prior dst
        perf=(-1024.0, 1024.0),    # ordinary finite values; speed must not depend on them
        trh=0.0,                   # integer data: every partial sum is exact, so any order
    ),                             #   of summation must match the reference bit for bit
}

ACC_DIGITS = 24                    # kernels accumulate in f32


def density(cfg: DtCfg, n_acc: int, range_a: tuple[int, int], range_b: tuple[int, int]) -> float:
    """Share of non-zero values in the sparse operand so that every partial sum of n_acc
    products of values from range_a and range_b stays an exact integer (reference 6.3)."""
    safe_digits = min(cfg.digits, ACC_DIGITS)
    biggest = max(map(abs, range_a)) * max(map(abs, range_b))
    safe_n_acc = 2**safe_digits // biggest
    return min(1.0, safe_n_acc / max(n_acc, 1))


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
