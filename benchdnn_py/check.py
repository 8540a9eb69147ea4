"""Point-wise comparison of a result against the reference (benchdnn reference 6.6, 6.8).

Every element is checked. A point passes if any of these holds, in order:
  1. the reference (in f32) equals the result exactly;
  2. the reference is NaN and the output type is an integer (NaN -> int is unspecified);
  3. |exp| <= 1e-5 and |exp - got| < FLT_EPSILON (tiny values);
  4. the relative difference (absolute for |exp| <= 1e-5) is within the threshold;
 4b. (benchdnn-py) an f16 or bf16 output below the type's smallest normal: the difference
     relative to that smallest normal is within the threshold. Subnormals are evenly
     spaced, so a threshold of eps(dt) then admits the one ulp it admits for normals
     (otherwise a rounding near a tie of an f16 subnormal around 2e-5 would fail at 3e-3).
  5. the operation may legally produce NaN/Inf and both are NaN, or both the same Inf;
  6. s32 output, exp saturated at float(INT_MAX) = 2^31 and 2147483520 <= got < 2^31
     (the largest float below 2^31 is what an f32 -> s32 saturation can store);
  8. with an eltwise post-op: |exp - got| <= max(eps, 2e-5) or rel <= max(eps, 8e-6);
  9. with an eltwise post-op and |exp| > 1e5 or an exp post-op: rel <= max(eps, 5e-6);
 10. f32 output with a dst scale: rel <= max(eps, 1e-5) (division vs reciprocal multiply);
 13. "off by one": integer output, the f32 reference within 9e-6 of a .5 tie, and got the
     other neighbouring integer (which side a tie lands on depends on float rounding).
Here exp is the f32 reference rounded to the output type: nearest even for bf16 and f16,
saturation then nearest even for integers. (Rules 7, 11, 12, 14 and 15 concern binary
post-ops, fast-ref and GPUs, which benchdnn-py does not have.) Then zero trust: a result
that passed but is mostly zeros proves little, so it is reported MISTRUSTED when more than
``zero_trust_percent`` of at least 10 outputs are exactly 0.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

FLT_EPSILON = float(np.finfo(np.float32).eps)
TINY = 1e-5
MAX_PRINTED_POINTS = 10


@dataclasses.dataclass(frozen=True)
class CompareSetup:
    """How one tensor is compared."""

    kind: str                    # tag printed in diagnostics: DST, SRC, WEI, BIA
    trh: float                   # threshold of rule 4
    zero_trust_percent: float    # MISTRUSTED above this share of exact zeros
    integral: bool = False       # output data type is an integer type
    allow_nans: bool = False     # rule 5 applies
    eltwise: bool = False        # an eltwise post-op is in the chain (rule 8)
    exp_post_op: bool = False    # ... and it includes exp (rule 9)
    eps: float = FLT_EPSILON     # machine epsilon of the output type
    dt: str = "f32"              # the output type exp is rounded to
    dst_scale: bool = False      # a dst scale divides the result (rule 10)


# Integer output types: the saturation bounds (as floats) exp is clamped to.
INT_RANGES = {"s8": (-128.0, 127.0), "u8": (0.0, 255.0), "s32": (-2.0**31, 2.0**31)}
# The smallest normal value of the reduced floating types (rule 4b).
SMALLEST_NORMAL = {"f16": 2.0**-14, "bf16": 2.0**-126}
S32_SATURATED = 2.0**31
S32_LARGEST_STORED = 2147483520.0


def round_to_dt(x: np.ndarray, dt: str) -> np.ndarray:
    """f32 values rounded to the nearest value of dt (ties to even), as f32. Integers
    saturate first; NaN stays NaN (rule 2 covers it)."""
    if dt in INT_RANGES:
        lo, hi = INT_RANGES[dt]
        return np.rint(np.clip(x, lo, hi)).astype(np.float32)
    if dt == "bf16":
        return x.astype(ml_dtypes.bfloat16).astype(np.float32)
    if dt == "f16":
        return x.astype(np.float16).astype(np.float32)
    return x


@dataclasses.dataclass
class Verdict:
    kind: str
    total: int
    errors: int
    zeros: int
    mistrusted: bool
    failing: np.ndarray          # linear offsets of failing points, ascending
    exp_f32: np.ndarray          # flattened reference in f32
    exp: np.ndarray              # flattened reference rounded to the output type
    got: np.ndarray              # flattened result
    trh: float
    zero_trust_percent: float

    @property
    def failed(self) -> bool:
        return self.errors > 0


def compare(ref: np.ndarray, got: np.ndarray, setup: CompareSetup) -> Verdict:
    """ref: the reference (any float type); got: the implementation's result (same shape,
    of setup.dt's numpy type)."""
    if ref.shape != got.shape:
        raise ValueError(f"shape mismatch: reference {ref.shape}, result {got.shape}")
    with np.errstate(invalid="ignore", over="ignore"):   # huge references become +-inf
        exp_f32 = ref.astype(np.float32).ravel()
        exp = round_to_dt(exp_f32, setup.dt).astype(np.float32)
        got_f = got.astype(np.float32).ravel()
        diff = np.abs(exp - got_f)
        abs_exp = np.abs(exp)
        small = abs_exp <= TINY
        rel = np.where(abs_exp > np.finfo(np.float32).tiny, diff / np.where(abs_exp > 0, abs_exp, 1),
                       diff)
        ok = exp_f32 == got_f                                            # rule 1
        if setup.integral:
            ok |= np.isnan(exp_f32)                                      # rule 2
        ok |= small & (diff < FLT_EPSILON)                               # rule 3
        ok |= np.where(small, diff, rel) <= setup.trh                    # rule 4
        if setup.dt in SMALLEST_NORMAL:                                  # rule 4b
            floor = SMALLEST_NORMAL[setup.dt]
            ok |= (abs_exp < floor) & (diff <= setup.trh * floor)
        if setup.dt == "s32":                                            # rule 6
            ok |= ((exp == S32_SATURATED) & (got_f >= S32_LARGEST_STORED)
                   & (got_f < S32_SATURATED))
        if setup.dst_scale and setup.dt == "f32":                        # rule 10
            ok |= rel <= max(setup.eps, 1e-5)
        if setup.integral:                                               # rule 13
            tie = np.floor(exp_f32) + 0.5
            near_tie = np.abs(exp_f32 - tie) <= 9e-6
            other = np.where(exp == np.floor(tie), np.ceil(tie), np.floor(tie))
            ok |= near_tie & (got_f == other)
        if setup.allow_nans:                                             # rule 5
            ok |= np.isnan(exp) & np.isnan(got_f)
            ok |= np.isinf(exp) & (exp == got_f)
        if setup.eltwise:                                                # rule 8
            ok |= (diff <= max(setup.eps, 2e-5)) | (rel <= max(setup.eps, 8e-6))
            if setup.exp_post_op:                                        # rule 9
                ok |= rel <= max(setup.eps, 5e-6)
            else:
                ok |= (abs_exp > 1e5) & (rel <= max(setup.eps, 5e-6))
    failing = np.flatnonzero(~ok)
    zeros = int(np.count_nonzero(got_f == 0))
    total = got_f.size
    mistrusted = (failing.size == 0 and total >= 10
                  and 100.0 * zeros / total > setup.zero_trust_percent)
    return Verdict(setup.kind, total, int(failing.size), zeros, mistrusted, failing, exp_f32,
                   exp, got_f, setup.trh, setup.zero_trust_percent)


def _rel(exp: float, diff: float) -> float:
    return diff / abs(exp) if abs(exp) > np.finfo(np.float32).tiny else diff


def diagnostics(verdict: Verdict, logical_shape: tuple[int, ...], verbose: int) -> list[str]:
    """benchdnn's failure lines (reference 5.2): failing points with logical coordinates,
    then the comparison statistics; the trust line at -v2 when mistrusted."""
    lines: list[str] = []
    if verdict.failed:
        limit = None if verbose >= 10 else MAX_PRINTED_POINTS
        for off in verdict.failing[:limit]:
            idx = ":".join(str(int(i)) for i in np.unravel_index(int(off), logical_shape))
            e32, e, g = (float(verdict.exp_f32[off]), float(verdict.exp[off]),
                         float(verdict.got[off]))
            d = abs(e - g)
            lines.append(f"[{int(off):4d}][{verdict.kind}][{idx}] exp_f32:{e32:12g} "
                         f"exp:{e:12g} got:{g:12g} diff:{d:8g} rdiff:{_rel(e, d):8g}")
    if verdict.failed or verbose >= 6:
        lines.append(_stats_line(verdict))
    if (verdict.mistrusted and verbose >= 2) or verbose >= 6:
        lines.append(f"[COMPARE_TRUST][{verdict.kind}]: z:{100.0 * verdict.zeros / max(verdict.total, 1):2.0f}% "
                     f"(>{verdict.zero_trust_percent:2.0f}%) (z: {verdict.zeros}, "
                     f"total: {verdict.total})")
    return lines


def _stats_line(v: Verdict) -> str:
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(v.exp - v.got)
        rel = np.where(np.abs(v.exp) > np.finfo(np.float32).tiny,
                       diff / np.where(v.exp != 0, np.abs(v.exp), 1), diff)

    def nanmax(a: np.ndarray) -> float:
        return float(np.nanmax(a)) if a.size and not np.all(np.isnan(a)) else 0.0
    err = v.failing
    return (f"[COMPARE_STATS][{v.kind}]: trh={v.trh:g} err_max_diff:{nanmax(diff[err]):8g} "
            f"err_max_rdiff:{nanmax(rel[err]):8g} all_max_diff:{nanmax(diff):8g} "
            f"all_max_rdiff:{nanmax(rel):8g}")
