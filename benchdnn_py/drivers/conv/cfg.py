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

# Zero trust (reference 6.8): at most this share of exact zeros in dst before a passing
# result is MISTRUSTED. Base trust 0.3 -> 70%; halved trust (85%) when an output spatial
# size exceeds the input one, because the padding ring then legitimately adds zeros.
DST_TRUST = 0.3


def density(cfg: DtCfg, n_acc: int) -> float:
    """Share of non-zero values in the sparse input so that partial sums stay exact."""
    safe_digits = min(cfg.digits, ACC_DIGITS)
    safe_n_acc = 2**safe_digits // (max(map(abs, cfg.src)) * max(map(abs, cfg.wei)))
    return min(1.0, safe_n_acc / max(n_acc, 1))


def dst_zero_trust_percent(output_exceeds_input: bool) -> float:
    trust = DST_TRUST / (2 if output_exceeds_input else 1)
    return (1 - trust) * 100
