"""The pooling reference and operation count.

The reference itself is C (kernels/pool/pool_ref.c): the formulas as plain loops in
double, sharing no code with the fast kernels; backward finds the maximum in src again, so
it never trusts the implementation's workspace. The test suite checks it against an
independent NumPy formulation (tests/drivers/pool/test_ref.py).
"""

from __future__ import annotations

import numpy as np

from ... import core
from ...core import PoolAlg, PoolShape
from .desc import PoolDesc


def forward(shape: PoolShape, alg: PoolAlg, src: np.ndarray) -> np.ndarray:
    return core.ref_pool_fwd(shape, alg, src)


def backward(shape: PoolShape, alg: PoolAlg, src: np.ndarray,
             diff_dst: np.ndarray) -> np.ndarray:
    return core.ref_pool_bwd(shape, alg, src, diff_dst)


def has_empty_window(desc: PoolDesc) -> bool:
    """Whether some window lies entirely in padding (along any axis no tap is inside)."""
    for o, i, k, s, p, d in zip(desc.o, desc.i, desc.k, desc.s, desc.p, desc.dil):
        for oo in range(o):
            if not any(0 <= oo * s - p + kk * (d + 1) < i for kk in range(k)):
                return True
    return False


def count_ops(desc: PoolDesc) -> int:
    """Operations of one execution: one per tap of every window (benchdnn's count)."""
    return (desc.mb * desc.ic * desc.o[0] * desc.o[1] * desc.o[2]
            * desc.k[0] * desc.k[1] * desc.k[2])
