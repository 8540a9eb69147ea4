"""Per-data-type numbers of the bnorm driver, each with its reason, and its fill
(benchdnn's batch normalization method).

The fill makes the statistics exact: per channel, src points come in pairs around the
channel's mean m (x = m (1 + f) and m (1 - f), f with `flex` bits), so any order of
summation gives N m exactly, and the squares of the deviations are exact too (alg_1). A
sequence too long for that (`flex` below 3 bits once log2(N) bits are set aside for the
sums) takes mean 0 and a sparse src instead (alg_0), whose few non-zero pairs keep the
sums exact. With global stats (G) src holds small integers and the statistics are given.
Scale and shift are powers of two (0 for a third of the shifts), so that a wrong channel
shows. Backward's diff_dst is a sparse set of integers in [-2, 2] (benchdnn's: at least
5 % non-zero): a gradient sums all of them, and integers keep the sums short and exact.

Thresholds are benchdnn's: 6e-7 for the data tensors (dst, diff_src, diff_src1) and 5e-6
for the backward diff_scale and diff_shift, times 2^(24 - p) for a type of p significant
bits; one f32 rounding for mean and variance (exact by the fill but for their final
division by N; benchdnn has 0). Backward falls back on the L2 norm of
the error, as benchdnn allows (its results follow from random-valued sums).
"""

from __future__ import annotations

import dataclasses
import enum
import math

import numpy as np

from ...common import fill


@dataclasses.dataclass(frozen=True)
class DtCfg:
    digits: int                  # significant bits (benchdnn's digits_dt): the fill's bits
    eps: float                   # machine epsilon (the compare's rule 3 and 4b)
    perf: tuple[float, float]    # performance-mode fill range
    integral: bool = False       # s8: inference with global stats only


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(digits=24, eps=2.0**-23, perf=(-4.0, 4.0)),
    "bf16": DtCfg(digits=8, eps=2.0**-7, perf=(-4.0, 4.0)),
    "f16": DtCfg(digits=11, eps=2.0**-10, perf=(-4.0, 4.0)),
    # integers saturate: a range the normalized values stay well inside
    "s8": DtCfg(digits=7, eps=0.0, perf=(-16.0, 16.0), integral=True),
}

# f32's relative thresholds per compared tensor (benchdnn's setup_cmp)
F32_TRH = {
    "DST": 6e-7, "SRC": 6e-7, "SRC_1": 6e-7,    # one normalization: a few roundings
    # exact by the fill up to the final rounding: a library may multiply by 1 / N where
    # the reference divides by N (oneDNN's variance differs by an ulp so)
    "MEAN": 2.0**-23, "VAR": 2.0**-23,
    "SC": 5e-6, "SH": 5e-6,                     # sums over N points of a channel
}


def threshold(kind: str, dt: str) -> float:
    """f32's threshold, scaled to a data type with fewer significant bits (its own
    rounding); mean and variance are f32 whatever dt is."""
    if kind in ("MEAN", "VAR"):
        return F32_TRH[kind]
    return F32_TRH[kind] * 2.0 ** max(0, 24 - CFG[dt].digits)


# Zero trust: benchdnn's 30 %, (100 + 30) / 2 where a relu turns negatives into 0, 99 %
# for bf16 (its fill is mostly the sparse alg_0). Where the reference itself is mostly 0
# by the fill's design (alg_0's sparse src, a sparse diff_dst under global stats), the
# limit moves toward 100 % by that share: base + (100 - base) z for a share z of zeros.
ZERO_TRUST = 30.0
ZERO_TRUST_RELU = (100.0 + ZERO_TRUST) / 2
ZERO_TRUST_BF16 = 99.0


def zero_trust_percent(dt: str, relu: bool, ref_zeros: float) -> float:
    base = ZERO_TRUST_BF16 if dt == "bf16" else ZERO_TRUST_RELU if relu else ZERO_TRUST
    return base + (100.0 - base) * ref_zeros


class CheckAlg(enum.Enum):
    ALG_0 = "alg_0"      # mean 0, sparse src
    ALG_1 = "alg_1"      # mean a power of two, src in pairs around it
    AUTO = "alg_auto"    # alg_1 when the sequence leaves it 3 bits, else alg_0


CHECK_ALGS = {"alg_0": CheckAlg.ALG_0, "alg_1": CheckAlg.ALG_1,
              # (benchdnn fills alg_2 as it fills alg_1)
              "alg_2": CheckAlg.ALG_1, "alg_auto": CheckAlg.AUTO}
MIN_FLEX_BITS = 3


@dataclasses.dataclass(frozen=True)
class FillPlan:
    """benchdnn's cfg_t for a sequence of L points per channel in a type of dt."""

    alg: CheckAlg
    flex_bits: int
    density: float

    @staticmethod
    def of(L: int, dt: str, asked: CheckAlg) -> "FillPlan":
        exact = CFG[dt].digits
        log_l = math.ceil(math.log2(L)) if L > 1 else 0
        free = int((exact - log_l) / 2) - 1          # (C's truncating division)
        want = min(6, exact // 2)
        alg = asked if asked is not CheckAlg.AUTO else (
            CheckAlg.ALG_1 if free >= MIN_FLEX_BITS else CheckAlg.ALG_0)
        flex = want if alg is CheckAlg.ALG_0 else min(exact, free)
        density = 2.0 ** (exact - 2 * flex) / L if alg is CheckAlg.ALG_0 else 1.0
        return FillPlan(alg, flex, density)


def flip_coin(seed: np.ndarray, p: float) -> np.ndarray:
    """benchdnn's deterministic coin: seed times a prime, modulo a larger one, below p."""
    big = 1_000_003
    return (seed.astype(np.int64) * 753_737) % big < p * big


def channel_index(C: int) -> np.ndarray:
    return np.arange(C, dtype=np.int64)


def fill_mean(C: int, plan: FillPlan, glob: bool) -> np.ndarray:
    """0.25 2^(c mod 7), or 0 under alg_0 without global stats."""
    c = channel_index(C)
    if plan.alg is CheckAlg.ALG_0 and not glob:
        return np.zeros(C, np.float32)
    return (0.25 * 2.0 ** (c % 7)).astype(np.float32)


def fill_src(mb: int, C: int, sp: int, mean: np.ndarray, plan: FillPlan, glob: bool,
             dt: str) -> np.ndarray:
    """src as (mb, C, sp) f32 values exact in dt. Point i = n sp + s of channel c has the
    sequence number l = c 478 + i (even for i even): l and l + 1 take the same magnitude
    and opposite signs; an odd sequence ends on the mean itself."""
    L = mb * sp
    c = channel_index(C)[None, :, None]
    i = (np.arange(mb, dtype=np.int64)[:, None, None] * sp
         + np.arange(sp, dtype=np.int64)[None, None, :])
    l = i + c * 239 * 2
    if glob:
        val = ((l % 65) - 32).astype(np.float64)
    else:
        gen = ((l // 2) * 1637) & ((1 << plan.flex_bits) - 1)
        sign = np.where(l % 2 == 0, 1.0, -1.0)
        f = sign * gen / float(1 << plan.flex_bits)
        m = mean.astype(np.float64)[None, :, None]
        if plan.alg is CheckAlg.ALG_0:
            val = np.where(flip_coin((l // 2) * 257, plan.density), f, 0.0)
        else:
            val = m * (1.0 + f)
            if L % 2:
                val = np.where(i == L - 1, m, val)
    return to_dt(np.broadcast_to(val, (mb, C, sp)).astype(np.float32), dt)


def variance(src: np.ndarray, mean: np.ndarray, glob: bool) -> np.ndarray:
    """(c mod 7) 2 with global stats; else the exact biased variance of src (mb, C, sp)
    about mean, rounded once to f32."""
    C = src.shape[1]
    if glob:
        return (2.0 * (channel_index(C) % 7)).astype(np.float32)
    d = src.astype(np.float64) - mean.astype(np.float64)[None, :, None]
    n = src.shape[0] * src.shape[2]
    return ((d * d).sum(axis=(0, 2)) / max(n, 1)).astype(np.float32)


def fill_src1(src: np.ndarray, mean: np.ndarray, spatial: tuple[int, ...], glob: bool,
              dt: str) -> np.ndarray:
    """The add + relu input (mb, C, sp): with global stats small integers; else a power of
    two with the sign the normalized point has (below the mean: negative), so the sum does
    not cancel; 1 where src is 0."""
    mb, C, sp = src.shape
    c = channel_index(C)[None, :, None]
    n = np.arange(mb, dtype=np.int64)[:, None, None]
    s = np.arange(sp, dtype=np.int64)[None, None, :]
    if glob:
        val = (((n * sp + s + c * 478) % 17) - 8).astype(np.float64)
    else:
        coords = np.unravel_index(np.arange(sp), spatial) if spatial else ()
        dhw = sum(np.asarray(k, np.int64) for k in coords) if spatial else 0
        mod = (n + c + np.asarray(dhw)[None, None, :] if spatial else n + c) % 5
        sign = np.where(src < mean[None, :, None], -1.0, 1.0)
        val = np.where(src == 0, 1.0, sign / (2.0 ** (mod + 1)))
    return to_dt(np.broadcast_to(val, (mb, C, sp)).astype(np.float32), dt)


def fill_scale(C: int, glob: bool) -> np.ndarray:
    c = channel_index(C)
    return ((1.0 / 8) * 2.0 ** (c % 7) * (8.0 if glob else 1.0)).astype(np.float32)


def fill_shift(C: int, glob: bool) -> np.ndarray:
    c = channel_index(C)
    return (((c % 3) - 1) * (1.0 / 512) * 2.0 ** (c % 7)
            * (512.0 if glob else 1.0)).astype(np.float32)


DIFF_DST_RANGE = (-2, 2)
MIN_NONZERO = 20          # at least this many non-zero diff_dst values, in expectation
MIN_DENSITY = 0.05


def fill_diff_dst(n: int, dt: str) -> np.ndarray:
    density = max(MIN_DENSITY, min(1.0, MIN_NONZERO / max(n, 1)))
    return to_dt(fill.int_fill(n, fill.Kind.DST, *DIFF_DST_RANGE, density), dt)


# Performance fill: the values do not matter, only that they are ordinary numbers (the
# variance positive). Per-channel arrays reuse the seeds of kinds bnorm has no use for.
PERF_KINDS = {"src": fill.Kind.SRC, "diff_dst": fill.Kind.DST, "src1": fill.Kind.BIA,
              "mean": fill.Kind.SCALES, "var": fill.Kind.WEI, "scale": fill.Kind.DW_WEI,
              "shift": fill.Kind.DW_BIA}


def perf_values(n: int, what: str, dt: str) -> np.ndarray:
    """A data tensor's values in dt's perf range (exact in dt); per-channel f32 arrays in
    [-1, 1), the variance in [0.5, 2)."""
    if what == "var":
        return fill.real_fill(n, PERF_KINDS[what], 0.5, 2.0)
    if what in ("mean", "scale", "shift"):
        return fill.real_fill(n, PERF_KINDS[what], -1.0, 1.0)
    return to_dt(fill.real_fill(n, PERF_KINDS[what], *CFG[dt].perf), dt)


# the fill as a tensor of dt holds it
to_dt = fill.exact_in
