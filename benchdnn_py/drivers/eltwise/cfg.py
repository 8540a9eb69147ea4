"""Per-data-type numbers of the eltwise driver, each with its reason (benchdnn reference
9.2, 6.4, 6.7, 6.8): one row per type that has an implementation; any other --dt is
UNIMPLEMENTED.

The f32 thresholds are per algorithm, the eltwise table's (benchdnn_py/eltwise.py, shared
with the convolution post-ops); f64's are the same bounds in ulps of double; a narrower
type's is its machine epsilon.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import core
from ...common import check, eltwise, fill

@dataclasses.dataclass(frozen=True)
class DtCfg:
    perf: tuple[float, float]      # performance-mode fill range (reals, then rounded)
    eps: float                     # machine epsilon: the threshold of a rounded result
    integral: bool = False         # integers: saturated, forward only


CFG: dict[str, DtCfg] = {
    # ordinary finite values: the speed of the libm paths must not depend on them; eps is
    # unused (the per-algorithm thresholds apply)
    "f32": DtCfg(perf=(-1024.0, 1024.0), eps=2.0**-23),
    # computed in double by the kernel and the reference alike: the f32 table's bounds,
    # scaled from f32's ulp to double's (F64_SCALE); eps is unused
    "f64": DtCfg(perf=(-1024.0, 1024.0), eps=2.0**-52),
    # the f32 result (a few f32 ulps off) rounds to the exact result's bf16 value, or to
    # its neighbour next to a tie: at most one bf16 ulp, eps relative (reference 6.7)
    "bf16": DtCfg(perf=(-32.0, 32.0), eps=2.0**-7),
    # as bf16, with f16's 11-bit significand; perf range far from f16 overflow (65504)
    "f16": DtCfg(perf=(-8.0, 8.0), eps=2.0**-10),
    # integers: exact after saturation and rounding to nearest even (threshold 0; a tie
    # the f32 evaluation lands on the other side of is the compare's off-by-one rule)
    "s32": DtCfg(perf=(-1024.0, 1024.0), eps=0.0, integral=True),
    "s8": DtCfg(perf=(-32.0, 32.0), eps=0.0, integral=True),
    "u8": DtCfg(perf=(0.0, 64.0), eps=0.0, integral=True),
    # 8-bit floats, as bf16's rule with their 3- and 4-bit significands (benchdnn's
    # epsilon_dt); perf ranges inside e4m3's (448)
    "f8_e5m2": DtCfg(perf=(-8.0, 8.0), eps=2.0**-2),
    "f8_e4m3": DtCfg(perf=(-8.0, 8.0), eps=2.0**-3),
}

def logical_dtype(dt: str) -> type:
    """The type the driver holds a case's values in for the reference: f32 holds every
    type's values exactly but f64's results."""
    return np.float64 if dt == "f64" else np.float32


# Integer tensors take the piecewise-linear algorithms (oneDNN's integer eltwise set),
# forward only: their results are meaningful integers; a transcendental one rounded to an
# integer, or a gradient, is not.
INT_ALGS = frozenset({"relu", "relu_dst", "linear", "clip", "clip_v2", "clip_v2_dst"})


def not_supported(name: str, dt: str, backward: bool) -> str | None:
    """Why the type does not take this algorithm or direction (SKIPPED, Case not
    supported), or None."""
    if not CFG[dt].integral:
        return None
    if backward:
        return f"{dt} has no backward (gradients are not integers)"
    if name not in INT_ALGS:
        return f"{dt} takes only {', '.join(sorted(INT_ALGS))}"
    return None

# backward of the _dst forms reads a dst that is exact in f32, so the table's relaxed
# forward thresholds (4e-5, for the lossy forward evaluation) do not apply (benchdnn 6.7)
_STRICT_BWD = {"elu_dst", "tanh_dst"}
STRICT_TRH = 4e-6
# f64 thresholds: the f32 ones as multiples of f32's epsilon, in multiples of double's
F64_SCALE = 2.0**-52 / 2.0**-23


def threshold(name: str, backward: bool, dt: str = "f32") -> float:
    if dt not in ("f32", "f64"):
        return CFG[dt].eps
    trh = STRICT_TRH if backward and name in _STRICT_BWD else eltwise.ALGS[name].trh
    return trh * F64_SCALE if dt == "f64" else trh


def zero_trust_percent(name: str, alpha: float, beta: float, backward: bool,
                       dt: str = "f32") -> float:
    """65 % by default (many algorithms map half the inputs to 0, e.g. relu); 100 % (never
    mistrusted) where the result is legitimately all or mostly zeros: linear with alpha 0,
    clip with alpha = beta = 0 or any clip backward (zero outside the interval), pow with
    alpha 0 or, backward, beta 0, and integer types (the fill's small reals round to 0)
    (benchdnn 6.8)."""
    base = name.removesuffix("_dst")
    if CFG[dt].integral:
        return 100.0
    if base == "linear" and alpha == 0:
        return 100.0
    if base in ("clip", "clip_v2") and ((alpha == 0 and beta == 0) or backward):
        return 100.0
    if base == "pow" and (alpha == 0 or (backward and beta == 0)):
        return 100.0
    return 65.0


# The fill's variants (benchdnn 9.2): element i takes variant i mod 13 (mod 15 for log, to
# add +-Inf). Besides small integers and small reals of both signs, the hard zones: 88+
# (exp overflows past log(FLT_MAX) ~ 88.72), 22+ and 44+ (where tanh, logistic and mish
# saturate in f32), and the parameters alpha and beta themselves (the kinks of relu, clip,
# hardsigmoid).
N_VARIANTS, N_VARIANTS_LOG = 13, 15


def fill_values(n: int, kind: fill.Kind, name: str, alpha: float, beta: float) -> np.ndarray:
    ints = fill.int_fill(n, kind, 0, 10)
    reals = fill.real_fill(n, kind, 0.0, 0.09)
    variants = (
        lambda i, r: i, lambda i, r: -i, lambda i, r: r, lambda i, r: -r,
        lambda i, r: 10 * i, lambda i, r: -10 * i, lambda i, r: 10 * r, lambda i, r: -10 * r,
        lambda i, r: 88 + 10 * r, lambda i, r: 22 + 10 * r, lambda i, r: 44 + 10 * r,
        lambda i, r: alpha, lambda i, r: beta, lambda i, r: np.inf, lambda i, r: -np.inf)
    count = N_VARIANTS_LOG if name == "log" else N_VARIANTS
    out = np.empty(n, np.float32)
    for v in range(count):
        # f32 arithmetic on f32 inputs: each value is rounded to f32 once, as benchdnn's
        out[v::count] = variants[v](ints[v::count], reals[v::count])
    out[out == 0] = 0.0          # -0 becomes +0
    return out


def perf_values(n: int, kind: fill.Kind, dt: str) -> np.ndarray:
    return fill.real_fill(n, kind, *CFG[dt].perf)


def to_dt(values: np.ndarray, dt: str) -> np.ndarray:
    """f32 values as a tensor of dt: nearest even, integers saturated first (reference 9.2:
    the fill is rounded to the type; f64 holds them exactly), -0 replaced by +0."""
    out = check.round_to_dt(values.astype(np.float32), dt).astype(core.numpy_dtype(dt))
    out[out == 0] = 0
    return out
