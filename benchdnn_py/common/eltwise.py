"""The eltwise algorithms: one table of forward formulas (oneDNN's definitions, computed in
double for references), their parameters, tolerances and comparison flags, and the
backward formulas. The conv post-op reference and the eltwise driver use the same rows.

Tolerances (threshold on the relative difference, f32 output) follow benchdnn's eltwise
table (reference 6.7): 4e-6 for formulas that f32 libm evaluates to within a few ulps, 4e-5
for those whose f32 evaluation loses more (cancellation in tanh/exp based forms, log near 1).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from .. import core

Formula = Callable[[np.ndarray, float, float], np.ndarray]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erfc_scalar = np.vectorize(math.erfc, otypes=[np.float64])
# Points per call of the vectorized erfc: it makes a Python float per point (about 32
# bytes each), so a large tensor goes through it in pieces.
_ERFC_CHUNK = 1 << 16


def _erfc(x) -> np.ndarray:
    """libm's erfc of every element, in double."""
    x = np.asarray(x, np.float64)
    flat, out = x.reshape(-1), np.empty(x.shape, np.float64)
    out_flat = out.reshape(-1)
    for start in range(0, flat.size, _ERFC_CHUNK):
        out_flat[start:start + _ERFC_CHUNK] = _erfc_scalar(flat[start:start + _ERFC_CHUNK])
    return out


def _soft_plus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _clip(x, a, b):
    return np.where(x > b, b, np.where(x <= a, a, x))


def _clip_v2(x, a, b):
    return np.where(x >= b, b, np.where(x <= a, a, x))


@dataclasses.dataclass(frozen=True)
class Alg:
    code: int                   # the C core's BDNN_ELT_* value
    fwd: Formula                # dst = f(src; alpha, beta), float64
    params: str                 # which of alpha, beta the formula uses: "", "a", "ab"
    trh: float                  # relative tolerance of an f32 result
    reason: str                 # why that tolerance
    nan_inf_possible: bool = False   # may legally produce NaN/Inf (compare rule 5)
    # diff_src = diff_dst * bwd(x; alpha, beta), float64; x is src, or dst when
    # bwd_from_dst (the _dst variants). None: no backward (round). Filled from BWD below.
    bwd: Formula | None = None
    bwd_from_dst: bool = False



def zeroes_negatives(name: str, alpha: float) -> bool:
    """benchdnn's list of post-ops after which many exact zeros in dst are expected, so zero
    trust is relaxed (reference 6.8): abs, and relu/elu/clip/clip_v2 with alpha 0."""
    base = name.removesuffix("_dst")
    return base == "abs" or (base in ("relu", "elu", "clip", "clip_v2") and alpha == 0)


_LIBM = "f32 libm evaluates it within a few ulps"
_LOSSY = "f32 evaluation loses digits (cancellation in exp/tanh forms)"

ALGS: dict[str, Alg] = {
    "abs": Alg(core.EltAlg.ABS, lambda x, a, b: np.abs(x), "", 4e-6, "exact in f32"),
    "clip": Alg(core.EltAlg.CLIP, _clip, "ab", 4e-6, "exact in f32"),
    "clip_v2": Alg(core.EltAlg.CLIP_V2, _clip_v2, "ab", 4e-6, "exact in f32"),
    "clip_v2_dst": Alg(core.EltAlg.CLIP_V2, _clip_v2, "ab", 4e-6, "exact in f32"),
    "elu": Alg(core.EltAlg.ELU, lambda x, a, b: np.where(x > 0, x, a * np.expm1(x)),
               "a", 4e-5, _LOSSY),
    "elu_dst": Alg(core.EltAlg.ELU, lambda x, a, b: np.where(x > 0, x, a * np.expm1(x)),
                   "a", 4e-5, _LOSSY),
    "exp": Alg(core.EltAlg.EXP, lambda x, a, b: np.exp(x), "", 4e-6, _LIBM, True),
    "exp_dst": Alg(core.EltAlg.EXP, lambda x, a, b: np.exp(x), "", 4e-6, _LIBM, True),
    # 0.5 s (1 + erf(s / sqrt 2)) and 0.5 s (1 + tanh z), written as 0.5 s erfc(-s / sqrt 2)
    # and s / (1 + e^-2z): the same functions without cancellation for negative s.
    "gelu_erf": Alg(core.EltAlg.GELU_ERF,
                    lambda x, a, b: 0.5 * x * _erfc(-x / math.sqrt(2.0)), "", 4e-6, _LIBM),
    "gelu_tanh": Alg(core.EltAlg.GELU_TANH,
                     lambda x, a, b: x / (1.0 + np.exp(-2.0 * _SQRT_2_OVER_PI
                                                       * (x + 0.044715 * x ** 3))),
                     "", 4e-5, _LOSSY),
    "hardsigmoid": Alg(core.EltAlg.HARDSIGMOID,
                       lambda x, a, b: np.maximum(0.0, np.minimum(1.0, a * x + b)), "ab", 4e-6,
                       "one multiply-add, then clamping"),
    "hardswish": Alg(core.EltAlg.HARDSWISH,
                     lambda x, a, b: x * np.maximum(0.0, np.minimum(1.0, a * x + b)), "ab",
                     4e-6, "two roundings"),
    "linear": Alg(core.EltAlg.LINEAR, lambda x, a, b: a * x + b, "ab", 4e-6,
                  "two roundings"),
    "log": Alg(core.EltAlg.LOG, lambda x, a, b: np.log(x), "", 4e-5,
               "log near 1 has a tiny result, so its relative error grows", True),
    "logistic": Alg(core.EltAlg.LOGISTIC, lambda x, a, b: 1.0 / (1.0 + np.exp(-x)), "",
                    4e-6, _LIBM),
    "logistic_dst": Alg(core.EltAlg.LOGISTIC, lambda x, a, b: 1.0 / (1.0 + np.exp(-x)),
                        "", 4e-6, _LIBM),
    "mish": Alg(core.EltAlg.MISH, lambda x, a, b: x * np.tanh(_soft_plus(x)), "", 4e-5,
                _LOSSY),
    "pow": Alg(core.EltAlg.POW, lambda x, a, b: a * np.power(x, b), "ab", 4e-6, _LIBM,
               True),
    "relu": Alg(core.EltAlg.RELU, lambda x, a, b: np.where(x > 0, x, a * x), "a", 4e-6,
                "exact, or one multiply"),
    "relu_dst": Alg(core.EltAlg.RELU, lambda x, a, b: np.where(x > 0, x, a * x), "a",
                    4e-6, "exact, or one multiply"),
    "round": Alg(core.EltAlg.ROUND, lambda x, a, b: np.rint(x), "", 4e-6,
                 "exact (half to even)"),
    "soft_relu": Alg(core.EltAlg.SOFT_RELU, lambda x, a, b: _soft_plus(a * x) / a, "a",
                     4e-5, _LOSSY),
    "sqrt": Alg(core.EltAlg.SQRT, lambda x, a, b: np.sqrt(x), "", 4e-6,
                "correctly rounded in f32", True),
    "sqrt_dst": Alg(core.EltAlg.SQRT, lambda x, a, b: np.sqrt(x), "", 4e-6,
                    "correctly rounded in f32", True),
    "square": Alg(core.EltAlg.SQUARE, lambda x, a, b: x * x, "", 4e-6, "one rounding",
                  True),
    "swish": Alg(core.EltAlg.SWISH, lambda x, a, b: x / (1.0 + np.exp(-a * x)), "a",
                 4e-5, _LOSSY),
    "tanh": Alg(core.EltAlg.TANH, lambda x, a, b: np.tanh(x), "", 4e-5, _LOSSY),
    "tanh_dst": Alg(core.EltAlg.TANH, lambda x, a, b: np.tanh(x), "", 4e-5, _LOSSY),
}
ALIASES = {"srelu": "soft_relu"}


# The derivatives below avoid the textbook forms that cancel in double (1 - s for the
# logistic s near 1, 1 - tanh^2, 1 +- tanh): the f64 kernels are held to a few ulps of
# double, which the reference must itself meet.

def _logistic(x):
    e = np.exp(-np.abs(x))                      # no overflow, no 1 - s
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sech2(x):
    return 1.0 / np.cosh(x) ** 2                # 1 - tanh(x)^2 (cosh overflows to inf: 0)


def _gelu_tanh_bwd(x, a, b):
    k, c = _SQRT_2_OVER_PI, 0.044715
    g = k * x * (1.0 + c * x * x)
    one_plus_t, one_minus_t = 2.0 / (1.0 + np.exp(-2.0 * g)), 2.0 / (1.0 + np.exp(2.0 * g))
    return 0.5 * one_plus_t * (1.0 + x * one_minus_t * k * (1.0 + 3.0 * c * x * x))


def _mish_bwd(x, a, b):
    sp = _soft_plus(x)
    return np.tanh(sp) + x * _sech2(sp) * _logistic(x)


def _hardswish_bwd(x, a, b):
    v = a * x + b
    return np.where(v <= 0, 0.0, np.where(v >= 1, 1.0, 2.0 * a * x + b))


def _pow_bwd(x, a, b):
    return np.zeros_like(x) if b == 0 else a * b * np.power(x, b - 1.0)


def _swish_bwd(x, a, b):
    s = _logistic(a * x)
    return s + a * x * s * _logistic(-a * x)


# The derivatives (oneDNN's backward formulas), name -> (f'(x), x is dst). Multiplied by
# diff_dst in the driver's reference.
BWD: dict[str, tuple[Formula, bool]] = {
    "abs": (lambda x, a, b: np.sign(x), False),
    "clip": (lambda x, a, b: ((a < x) & (x <= b)).astype(np.float64), False),
    "clip_v2": (lambda x, a, b: ((a < x) & (x < b)).astype(np.float64), False),
    "clip_v2_dst": (lambda x, a, b: ((a < x) & (x < b)).astype(np.float64), True),
    "elu": (lambda x, a, b: np.where(x > 0, 1.0, a * np.exp(x)), False),
    "elu_dst": (lambda x, a, b: np.where(x > 0, 1.0, x + a), True),
    "exp": (lambda x, a, b: np.exp(x), False),
    "exp_dst": (lambda x, a, b: x, True),
    "gelu_erf": (lambda x, a, b: 0.5 * _erfc(-x / math.sqrt(2.0))
                 + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi), False),
    "gelu_tanh": (_gelu_tanh_bwd, False),
    "hardsigmoid": (lambda x, a, b: np.where((a * x + b > 0) & (a * x + b < 1), a, 0.0), False),
    "hardswish": (_hardswish_bwd, False),
    "linear": (lambda x, a, b: np.full_like(x, a), False),
    "log": (lambda x, a, b: 1.0 / x, False),
    "logistic": (lambda x, a, b: _logistic(x) * _logistic(-x), False),
    "logistic_dst": (lambda x, a, b: x * (1.0 - x), True),
    "mish": (_mish_bwd, False),
    "pow": (_pow_bwd, False),
    "relu": (lambda x, a, b: np.where(x > 0, 1.0, a), False),
    "relu_dst": (lambda x, a, b: np.where(x > 0, 1.0, a), True),
    "soft_relu": (lambda x, a, b: _logistic(a * x), False),
    "sqrt": (lambda x, a, b: 0.5 / np.sqrt(x), False),
    "sqrt_dst": (lambda x, a, b: 0.5 / x, True),
    "square": (lambda x, a, b: 2.0 * x, False),
    "swish": (_swish_bwd, False),
    "tanh": (lambda x, a, b: _sech2(x), False),
    "tanh_dst": (lambda x, a, b: (1.0 - x) * (1.0 + x), True),
}
ALGS = {name: dataclasses.replace(alg, bwd=BWD[name][0], bwd_from_dst=BWD[name][1])
        if name in BWD else alg for name, alg in ALGS.items()}


def lookup(name: str) -> tuple[str, Alg] | None:
    """The canonical name and row for NAME (also with an `eltwise_` prefix), or None."""
    key = name.removeprefix("eltwise_")
    key = ALIASES.get(key, key)
    return (key, ALGS[key]) if key in ALGS else None


def apply(name: str, x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """The forward formula in float64 (the reference's own evaluation)."""
    with np.errstate(all="ignore"):
        return ALGS[name].fwd(np.asarray(x, np.float64), alpha, beta)


# Derivatives that kernels computing in f32 (every type but f64) hold as an f32 value
# before the product with diff_dst: e^x overflows to inf past ~88.72 there, where a double
# would not, and the product must see that inf.
F32_DERIVATIVES = frozenset({"exp"})


def apply_bwd(name: str, x: np.ndarray, diff_dst: np.ndarray, alpha: float,
              beta: float, f32_compute: bool = True) -> np.ndarray:
    """diff_src = diff_dst * f'(x) in float64; x is src, or dst for the _dst variants.
    f32_compute: the kernels compute in f32 (F32_DERIVATIVES apply)."""
    alg = ALGS[name]
    if alg.bwd is None:
        raise ValueError(f"{name} has no backward formula")
    with np.errstate(all="ignore"):
        d = alg.bwd(np.asarray(x, np.float64), alpha, beta)
        if f32_compute and name in F32_DERIVATIVES:
            d = d.astype(np.float32).astype(np.float64)
        return np.asarray(diff_dst, np.float64) * d
