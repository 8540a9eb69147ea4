"""Per-data-type numbers of the eltwise driver, each with its reason (benchdnn reference
9.2, 6.7, 6.8). Only f32 has a row; any other --dt is UNIMPLEMENTED.

The per-algorithm thresholds are the eltwise table's (benchdnn_py/eltwise.py), shared with
the convolution post-ops.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import eltwise, fill

# Every data type name --dt accepts (a `dnnl_` prefix is also accepted).
DT_NAMES = ("f32", "bf16", "f16", "f64", "s32", "s8", "u8", "f8_e5m2", "f8_e4m3")


@dataclasses.dataclass(frozen=True)
class DtCfg:
    perf: tuple[float, float]      # performance-mode fill range (reals)


CFG: dict[str, DtCfg] = {
    # ordinary finite values: the speed of the libm paths must not depend on them
    "f32": DtCfg(perf=(-1024.0, 1024.0)),
}

# backward of the _dst forms reads a dst that is exact in f32, so the table's relaxed
# forward thresholds (4e-5, for the lossy forward evaluation) do not apply (benchdnn 6.7)
_STRICT_BWD = {"elu_dst", "tanh_dst"}
STRICT_TRH = 4e-6


def threshold(name: str, backward: bool) -> float:
    if backward and name in _STRICT_BWD:
        return STRICT_TRH
    return eltwise.ALGS[name].trh


def zero_trust_percent(name: str, alpha: float, beta: float, backward: bool) -> float:
    """65 % by default (many algorithms map half the inputs to 0, e.g. relu); 100 % (never
    mistrusted) where the result is legitimately all or mostly zeros: linear with alpha 0,
    clip with alpha = beta = 0 or any clip backward (zero outside the interval), pow with
    alpha 0 or, backward, beta 0 (benchdnn 6.8)."""
    base = name.removesuffix("_dst")
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
