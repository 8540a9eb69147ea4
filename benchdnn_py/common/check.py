"""Point-wise comparison of a result against the reference (benchdnn reference 6.6, 6.8).

Every element is checked. A point passes if any of these holds, in order:
  1. the reference (in f32) equals the result exactly;
  2. the reference is NaN and the output type is an integer (NaN -> int is unspecified);
  3. |exp| <= 1e-5 and |exp - got| < FLT_EPSILON (tiny values; DBL_EPSILON for f64);
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
saturation then nearest even for integers. An f64 output is compared in double throughout
(exp is the reference itself): rounding either side to f32 would hide an error below
f32's precision. (Rules 7, 11, 12, 14 and 15 concern binary
post-ops, fast-ref and GPUs, which benchdnn-py does not have.) Then zero trust: a result
that passed but is mostly zeros proves little, so it is reported MISTRUSTED when more than
``zero_trust_percent`` of at least 10 outputs are exactly 0.

--check=sampled:N applies the same rules to N points of each compared tensor, drawn
uniformly without replacement (draw_points); the reference computes only those.

An output in a layout with more memory than points (layout.py) gets two more checks
(memory_faults, reference 6.5): the padded tail of a blocked layout holds zeros, and the
positions that belong to no point (gaps of non-dense strides, the elements before an
offset) are left as they were.
"""

from __future__ import annotations

import dataclasses
import hashlib

import ml_dtypes
import numpy as np

from ..errors import UsageError

FLT_EPSILON = float(np.finfo(np.float32).eps)
FLT_TINY = float(np.finfo(np.float32).tiny)   # the smallest normal f32
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
    norm_fallback: bool = False  # Winograd: failing points pass if the L2 relative error
                                 #   over the tensor is within trh (reference 6.7)


# Integer output types: the saturation bounds (as floats) exp is clamped to.
INT_RANGES = {"s8": (-128.0, 127.0), "u8": (0.0, 255.0), "s32": (-2.0**31, 2.0**31),
              "s4": (-8.0, 7.0), "u4": (0.0, 15.0)}
# The 8-bit floats round twice, as oneDNN defines them: f32 -> f16, then to 8 bits.
F8_TYPES = {"f8_e5m2": ml_dtypes.float8_e5m2, "f8_e4m3": ml_dtypes.float8_e4m3fn}
F4_E2M1_MAX = 6.0
# The smallest normal value of the reduced floating types (rule 4b).
SMALLEST_NORMAL = {"f16": 2.0**-14, "bf16": 2.0**-126, "f8_e5m2": 2.0**-14,
                   "f8_e4m3": 2.0**-6}
S32_SATURATED = 2.0**31
S32_LARGEST_STORED = 2147483520.0


# --check=sampled without :N. benchdnn users want a large problem checked in seconds, and
# the reference costs one dot product per point: 10,000 points are 10,000 of them whatever
# the problem's size (a ResNet-50 backward-weights point at mb16 and 56x56 sums 50,176
# products, half a billion in all, about a second). What it finds: a defect that corrupts a
# share f of the outputs escapes every drawn point with probability (1 - f)^10000, about
# e^(-10000 f): an edge column of a 56-wide output (f = 1/56) or one wrong channel of 256
# is caught for certain, one wrong channel of 2048 with probability 0.992, and a defect
# touching a handful of points most likely not; that is what --check=full is for.
DEFAULT_SAMPLED_POINTS = 10_000


@dataclasses.dataclass(frozen=True)
class Check:
    """--check: every output point (points None) or sampled:N, N points per compared
    tensor (all of them when the tensor has no more)."""

    points: int | None = None

    @property
    def sampled(self) -> bool:
        return self.points is not None

    def __str__(self) -> str:
        return "full" if self.points is None else f"sampled:{self.points}"


FULL = Check()


def parse_check(text: str) -> Check:
    """``full``, ``sampled`` or ``sampled:N`` (N >= 1); str() gives it back canonically."""
    kind, sep, count = text.partition(":")
    kind = kind.strip().lower()
    if kind == "full" and not sep:
        return FULL
    if kind == "sampled" and not sep:
        return Check(DEFAULT_SAMPLED_POINTS)
    if kind == "sampled" and count.isascii() and count.isdigit() and int(count) > 0:
        return Check(int(count))
    raise UsageError(f"--check={text}: expected full, sampled or sampled:N with N a "
                     f"positive number of points (e.g. --check=sampled:1000)")


_MASK64 = (1 << 64) - 1


def _splitmix64(seed: int, n: int) -> np.ndarray:
    """n pseudo-random 64-bit words: the splitmix64 sequence of seed (Steele, Lea and
    Flood's finalizer over a Weyl sequence). Written out here, not numpy's generators,
    so that a draw depends on this code alone, never on the numpy version."""
    with np.errstate(over="ignore"):
        z = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             + np.uint64(seed & _MASK64))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def draw_points(size: int, n: int, seed_text: str) -> np.ndarray:
    """n distinct linear offsets in [0, size), ascending (int64), every n-subset equally
    likely; all of them when n >= size. A pure function of its arguments: the seed is the
    SHA-1 of seed_text (a case's canonical repro), so a rerun checks the same points.

    Floyd's algorithm: for j = size-n .. size-1 take t uniform in [0, j], keep t unless
    already kept, then keep j. (t is a 64-bit word modulo j+1: the bias, below j/2^64,
    is immaterial.) O(n) time and memory, whatever the size."""
    if n >= size:
        return np.arange(size, dtype=np.int64)
    seed = int.from_bytes(hashlib.sha1(seed_text.encode("utf-8")).digest()[:8], "big")
    js = np.arange(size - n, size, dtype=np.uint64)
    picks = (_splitmix64(seed, n) % (js + np.uint64(1))).tolist()
    chosen: set[int] = set()
    for j, t in zip(range(size - n, size), picks):
        chosen.add(j if t in chosen else t)
    return np.array(sorted(chosen), dtype=np.int64)


def round_to_dt(x: np.ndarray, dt: str) -> np.ndarray:
    """f32 values rounded to the nearest value of dt (ties to even), as f32. Integers
    saturate first; NaN stays NaN (rule 2 covers it)."""
    if dt in INT_RANGES:
        lo, hi = INT_RANGES[dt]
        return np.rint(np.clip(x, lo, hi)).astype(np.float32)
    if dt == "bf16":
        return x.astype(ml_dtypes.bfloat16).astype(np.float32)
    if dt == "f16":
        with np.errstate(over="ignore"):   # past f16's range is inf, as IEEE rounds it
            return x.astype(np.float16).astype(np.float32)
    if dt in F8_TYPES:   # e5m2: past its range is inf; e4m3 (no inf): NaN
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(np.float16).astype(F8_TYPES[dt]).astype(np.float32)
    if dt == "f4_e2m1":  # saturates at 6; Inf and NaN give 6 with their sign (oneDNN's)
        x = np.asarray(x, np.float32)
        wide = np.isnan(x) | (np.abs(x) >= F4_E2M1_MAX)
        with np.errstate(invalid="ignore"):
            near = np.where(wide, 0, x).astype(ml_dtypes.float4_e2m1fn).astype(np.float32)
        return np.where(wide, np.copysign(np.float32(F4_E2M1_MAX), x), near)
    return x


@dataclasses.dataclass
class Verdict:
    kind: str
    total: int
    errors: int
    zeros: int
    mistrusted: bool
    failing: np.ndarray          # indexes of the failing compared points, ascending
    exp_f32: np.ndarray          # flattened reference in f32
    exp: np.ndarray              # flattened reference rounded to the output type
    got: np.ndarray              # flattened result
    trh: float
    zero_trust_percent: float
    # --check=sampled: the linear offset in the tensor of each compared point (failing
    # indexes into it), and the tensor's size; None and total when every point is compared.
    points: np.ndarray | None = None
    size: int = 0

    @property
    def failed(self) -> bool:
        return self.errors > 0

    def offset(self, i: int) -> int:
        """The tensor offset of compared point i."""
        return int(self.points[i]) if self.points is not None else int(i)

    def keep_failing(self, failing: np.ndarray) -> "Verdict":
        """This verdict with only these of its failing points still failing (a driver's
        own check passed the others), its zero trust judged again."""
        if failing.size == self.failing.size:
            return self
        mistrusted = (failing.size == 0 and self.total >= 10
                      and 100.0 * self.zeros / self.total > self.zero_trust_percent)
        return dataclasses.replace(self, errors=int(failing.size), failing=failing,
                                   mistrusted=mistrusted)


def compare(ref: np.ndarray, got: np.ndarray, setup: CompareSetup,
            points: np.ndarray | None = None, size: int | None = None) -> Verdict:
    """ref: the reference (any float type); got: the implementation's result (same shape,
    of setup.dt's numpy type). With points (a sampled check), ref and got hold the values
    at those linear offsets of a tensor of size elements."""
    if ref.shape != got.shape:
        raise ValueError(f"shape mismatch: reference {ref.shape}, result {got.shape}")
    # the type the comparison computes in (the "f32" of the names below)
    ftype = np.float64 if setup.dt == "f64" else np.float32
    with np.errstate(invalid="ignore", over="ignore"):   # huge references become +-inf
        exp_f32 = ref.astype(ftype).ravel()
        exp = round_to_dt(exp_f32, setup.dt).astype(ftype)
        got_f = got.astype(ftype).ravel()
        diff = np.abs(exp - got_f)
        abs_exp = np.abs(exp)
        small = abs_exp <= TINY
        rel = np.where(abs_exp > np.finfo(ftype).tiny, diff / np.where(abs_exp > 0, abs_exp, 1),
                       diff)
        ok = exp_f32 == got_f                                            # rule 1
        if setup.integral:
            ok |= np.isnan(exp_f32)                                      # rule 2
        ok |= small & (diff < np.finfo(ftype).eps)                       # rule 3
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
    if failing.size and setup.norm_fallback and l2_rel_error(exp, got_f) <= setup.trh:
        failing = failing[:0]
    zeros = int(np.count_nonzero(got_f == 0))
    total = got_f.size
    mistrusted = (failing.size == 0 and total >= 10
                  and 100.0 * zeros / total > setup.zero_trust_percent)
    return Verdict(setup.kind, total, int(failing.size), zeros, mistrusted, failing, exp_f32,
                   exp, got_f, setup.trh, setup.zero_trust_percent, points,
                   total if size is None else size)


def l2_rel_error(exp: np.ndarray, got: np.ndarray) -> float:
    """||exp - got||_2 / ||exp||_2 over the points whose reference is finite (the norm
    fallback of Winograd cases, reference 6.7), in double."""
    keep = np.isfinite(exp)
    e, g = exp[keep].astype(np.float64), got[keep].astype(np.float64)
    norm = np.linalg.norm(e)
    diff = np.linalg.norm(e - g)
    if norm == 0:
        return 0.0 if diff == 0 else float("inf")
    return float(diff / norm)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def has_gaps(lay) -> bool:
    """Whether a layout's buffer holds positions that belong to no point (padding aside),
    which memory_faults then needs the pre-execution contents of."""
    return lay.size != lay.padded_nelems


def memory_faults(kind: str, lay, out: np.ndarray,
                  before: np.ndarray | None) -> tuple[str, list[str]] | None:
    """(reason, diagnostics) when the output buffer out, in layout lay (layout.Layout),
    breaks the memory checks of the module docstring, else None. Padding must be +0 bit
    for bit. before: the buffer as it was before execution, needed when has_gaps(lay)."""
    pad = lay.padding_offsets()
    bad_pad = np.sort(pad[_bits(out[pad]) != 0])
    if bad_pad.size:
        return (f"padded tail not zero at {bad_pad.size} of {pad.size} points",
                [f"[PADDING][{kind}] not zero at offsets "
                 f"{', '.join(map(str, bad_pad[:MAX_PRINTED_POINTS]))}"])
    if not has_gaps(lay):
        return None
    owned = np.zeros(out.size, bool)
    owned[lay.offset_table().ravel()] = True
    owned[pad] = True
    changed = np.flatnonzero(~owned & (_bits(out) != _bits(before)))
    if changed.size:
        return (f"wrote {changed.size} points outside the tensor (strides' gaps)",
                [f"[GAPS][{kind}] written at offsets "
                 f"{', '.join(map(str, changed[:MAX_PRINTED_POINTS]))}"])
    return None


def _rel(exp: float, diff: float) -> float:
    return diff / abs(exp) if abs(exp) > FLT_TINY else diff


def diagnostics(verdict: Verdict, logical_shape: tuple[int, ...], verbose: int) -> list[str]:
    """benchdnn's failure lines (reference 5.2): failing points with logical coordinates,
    then the comparison statistics; the trust line at -v2 when mistrusted."""
    lines: list[str] = []
    if verdict.failed:
        limit = None if verbose >= 10 else MAX_PRINTED_POINTS
        # an f64 comparison's values to the last digit: they differ beyond 6 of them
        fmt = "24.17g" if verdict.got.dtype == np.float64 else "12g"
        for i in verdict.failing[:limit]:
            off = verdict.offset(i)
            idx = ":".join(str(int(c)) for c in np.unravel_index(off, logical_shape))
            e32, e, g = (float(verdict.exp_f32[i]), float(verdict.exp[i]),
                         float(verdict.got[i]))
            d = abs(e - g)
            lines.append(f"[{off:4d}][{verdict.kind}][{idx}] exp_f32:{e32:{fmt}} "
                         f"exp:{e:{fmt}} got:{g:{fmt}} diff:{d:8g} rdiff:{_rel(e, d):8g}")
    if verdict.failed or verbose >= 6:
        lines.append(_stats_line(verdict))
    if verdict.points is not None and (verdict.failed or verbose >= 2):
        # A sampled pass proves less than a full one: say so wherever statistics print.
        lines.append(f"[COMPARE_SAMPLED][{verdict.kind}]: checked {verdict.total} of "
                     f"{verdict.size} points (--check=sampled)")
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
