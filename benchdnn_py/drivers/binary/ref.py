"""The binary reference: OP of the scaled sources in double, broadcast to dst's dims, then
the post-op chain in f32 steps (common/post_ops.py, the kernels' definition of it)."""

from __future__ import annotations

import numpy as np

from ...common import post_ops
from ...common.attr import PostOps

# OP in double, as oneDNN defines it; the comparisons give 1 or 0.
OPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum,
    "ge": np.greater_equal, "gt": np.greater, "le": np.less_equal, "lt": np.less,
    "eq": np.equal, "ne": np.not_equal,
}


def forward(alg: str, src0: np.ndarray, src1: np.ndarray, src2: np.ndarray | None,
            scales: tuple[float, float], chain: PostOps, inputs: dict[str, np.ndarray],
            prior: np.ndarray | None) -> np.ndarray:
    """dst's values (double without a chain, else f32): src0 and src1 logical, of their
    own dims (size 1 where broadcast), src2 select's condition (src0's dims)."""
    a = float(scales[0]) * np.asarray(src0, np.float64)
    b = float(scales[1]) * np.asarray(src1, np.float64)
    if alg == "select":
        out = np.where(np.asarray(src2) != 0, a, b)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = OPS[alg](a, b).astype(np.float64)
    if not chain:
        return out
    return post_ops.chain_reference(out, chain, inputs, prior)
