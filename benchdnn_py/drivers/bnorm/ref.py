"""The batch normalization reference: oneDNN's formulas per channel, in double, on the
logical tensors viewed as (mb, C, spatial) (nothing is rounded to f32 on the way).

Statistics: mean m = sum x / N and the biased variance v = sum (x - m)^2 / N over the N =
mb x spatial points of a channel. Forward: y = g (x - m) / sqrt(v + eps) + b, plus src1
(add + relu), then relu (negative results become 0). Backward, with dd' = diff_dst where
the forward's relu kept the point and 0 elsewhere, and x^ = (x - m) / sqrt(v + eps):
diff_shift = sum dd', diff_scale = sum dd' x^, diff_src = g / sqrt(v + eps) (dd' -
(diff_shift + x^ diff_scale) / N), or g / sqrt(v + eps) dd' with global stats;
diff_src1 = dd'."""

from __future__ import annotations

import numpy as np


def _per_channel(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64)[None, :, None]


def stats(src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, variance) per channel of src (mb, C, sp)."""
    x = np.asarray(src, np.float64)
    n = max(x.shape[0] * x.shape[2], 1)
    m = x.sum(axis=(0, 2)) / n
    d = x - m[None, :, None]
    return m, (d * d).sum(axis=(0, 2)) / n


def forward(src: np.ndarray, mean: np.ndarray, var: np.ndarray, eps: float,
            scale: np.ndarray | None, shift: np.ndarray | None, src1: np.ndarray | None,
            relu: bool) -> np.ndarray:
    x = np.asarray(src, np.float64)
    y = (x - _per_channel(mean)) / np.sqrt(_per_channel(var) + eps)
    if scale is not None:
        y = y * _per_channel(scale)
    if shift is not None:
        y = y + _per_channel(shift)
    if src1 is not None:
        y = y + np.asarray(src1, np.float64)
    if relu:
        y = np.where(y < 0, 0.0, y)
    return y


def backward(src: np.ndarray, mean: np.ndarray, var: np.ndarray, eps: float,
             diff_dst: np.ndarray, scale: np.ndarray | None, kept: np.ndarray | None,
             glob: bool) -> dict[str, np.ndarray]:
    """diff_src, diff_scale, diff_shift and diff_src1 (dd'); kept: the relu's decisions
    (None: no relu)."""
    x = np.asarray(src, np.float64)
    g = np.asarray(diff_dst, np.float64)
    if kept is not None:
        g = np.where(kept, g, 0.0)
    r = 1.0 / np.sqrt(_per_channel(var) + eps)
    xhat = (x - _per_channel(mean)) * r
    d_shift = g.sum(axis=(0, 2))
    d_scale = (g * xhat).sum(axis=(0, 2))
    gamma = _per_channel(scale) if scale is not None else 1.0
    n = max(x.shape[0] * x.shape[2], 1)
    ds = g if glob else g - (d_shift[None, :, None] + xhat * d_scale[None, :, None]) / n
    return {"diff_src": gamma * r * ds, "diff_scale": d_scale, "diff_shift": d_shift,
            "diff_src1": g}
