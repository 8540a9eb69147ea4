"""The softmax reference: oneDNN's formulas over the axis, in double, on the logical
tensors (benchdnn's reference computes the same steps; here nothing is rounded to f32).

Forward, per line with maximum m (at least the most negative finite value, as the kernels
start from it) and s = sum e^(x - m): softmax e^(x - m) / s (0 everywhere when s is 0),
log-softmax (x - m) - ln s. Backward data, from the forward's dst d and diff_dst g:
softmax d (g - sum(g d)), log-softmax g - e^d sum(g)."""

from __future__ import annotations

import numpy as np

LOWEST = -float(np.finfo(np.float32).max)


def forward(log: bool, src: np.ndarray, axis: int, lowest: float = LOWEST) -> np.ndarray:
    x = np.asarray(src, np.float64)
    m = np.maximum(x.max(axis=axis, keepdims=True), lowest)
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = x - m
        s = np.exp(shifted).sum(axis=axis, keepdims=True)
        if log:
            with np.errstate(divide="ignore"):
                return shifted - np.log(s)
        return np.exp(shifted) * np.where(s != 0, 1.0 / np.where(s != 0, s, 1.0), 1.0)


def backward(log: bool, dst: np.ndarray, diff_dst: np.ndarray, axis: int) -> np.ndarray:
    d = np.asarray(dst, np.float64)
    g = np.asarray(diff_dst, np.float64)
    if log:
        with np.errstate(over="ignore", invalid="ignore"):
            return g - np.exp(d) * g.sum(axis=axis, keepdims=True)
    return d * (g - (g * d).sum(axis=axis, keepdims=True))
