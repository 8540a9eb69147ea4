"""The eltwise reference and benchdnn's cancellation-zone check (reference 9.2).

The formulas are the eltwise table's (benchdnn_py/eltwise.py), evaluated in double. The
check: where the f32 evaluation of a formula subtracts nearly equal numbers, its relative
error is unbounded while its absolute error stays tiny, so there a point passes when
|exp - got| <= trh (scaled by |diff_dst| backward, which multiplies the derivative).
"""

from __future__ import annotations

import numpy as np

from ...common import eltwise
from ...common.check import FLT_EPSILON


def forward(name: str, src: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return eltwise.apply(name, src, alpha, beta)


def backward(name: str, x: np.ndarray, diff_dst: np.ndarray, alpha: float,
             beta: float, f64: bool = False) -> np.ndarray:
    """x is src, or the forward's dst for the _dst variants; f64: the kernels compute in
    double (else in f32)."""
    return eltwise.apply_bwd(name, x, diff_dst, alpha, beta, f32_compute=not f64)


def cancellation_zone(name: str, src: np.ndarray, alpha: float, backward: bool,
                      trh: float, eps: float = FLT_EPSILON) -> np.ndarray:
    """Where the kernel's formula loses relative accuracy by cancellation (benchdnn's
    list): comp_err = 2*eps/trh (eps: the computation's epsilon) is the smallest result
    relative to its terms that the threshold can still resolve."""
    x = np.asarray(src, np.float64)
    comp_err = 2 * eps / trh
    neg = np.signbit(x)
    base = name.removesuffix("_dst")
    none = np.zeros(x.shape, bool)
    with np.errstate(all="ignore"):
        if base == "elu" and not backward:
            return neg & (np.abs(np.expm1(x)) <= comp_err)
        if base == "gelu_tanh":
            k, c = np.sqrt(2 / np.pi), 0.044715
            v = np.tanh(k * x * (1 + c * x * x))
            zone = np.abs(1 + v) <= comp_err
            if backward:
                dg = k * (1 + 3 * c * x * x)
                zone |= neg & (np.abs(1 + x * (1 - v) * dg) <= 4 * comp_err)
            return zone
        if base == "gelu_erf" and backward:
            # 0.5 erfc(-x/sqrt2) + x phi(x): the two terms cancel near x ~ -0.75
            term = np.abs(x) * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
            total = np.abs(eltwise.ALGS["gelu_erf"].bwd(x, alpha, 0.0))
            return neg & (total <= comp_err * term)
        if base == "tanh" and backward:
            return 1 - np.tanh(x) ** 2 <= comp_err
        if base == "soft_relu" and not backward:
            return np.signbit(alpha * x) & (np.log1p(np.exp(alpha * x)) <= 10 * comp_err)
        if base == "mish" and not backward:
            return neg & (np.abs(x * np.tanh(np.log1p(np.exp(x)))) <= comp_err)
        if base == "logistic" and backward:
            return ~neg & (1 / (1 + np.exp(x)) <= comp_err)
        if base == "swish":
            ax = alpha * x
            s = 1 / (1 + np.exp(-ax))
            if not backward:
                return np.signbit(ax) & (np.abs(x * s) <= comp_err)
            # s (1 + ax (1 - s)): the terms cancel near ax ~ -1.28
            total = np.abs(s * (1 + ax * (1 - s)))
            return np.signbit(ax) & (total <= comp_err * s * np.abs(ax * (1 - s)))
    return none


def count_elems(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n
