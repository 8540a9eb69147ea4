"""The convolution reference and operation count.

The reference itself is C (kernels/conv/conv_ref.c): the spec's formula as plain loops in
double, sharing no code with the fast kernels, computing every output point or
(--check=sampled) a list of them through the same per-point formula. The test suite checks
it against an independent NumPy formulation (tests/drivers/conv/test_ref.py).
"""

from __future__ import annotations

import numpy as np

from ... import core
from .desc import ConvDesc


def compute_ref(shape: core.ConvShape, src: np.ndarray, wei: np.ndarray,
                bias: np.ndarray | None, points: np.ndarray | None = None) -> np.ndarray:
    """dst in double, or its values at points (linear offsets) only."""
    return core.ref_conv_fwd(shape, src, wei, bias, points)


def _taps_in_bounds(o: int, i: int, k: int, s: int, p: int, dil: int) -> int:
    """Number of (output point, kernel tap) pairs along one axis whose input coordinate
    o*s - p + k*(dil+1) lies inside [0, i)."""
    count = 0
    for kk in range(k):
        off = kk * (dil + 1) - p
        # o*s + off in [0, i)  <=>  o in [ceil(-off/s), floor((i-1-off)/s)]
        lo = max(0, (-off + s - 1) // s) if off < 0 else 0
        hi = min(o - 1, (i - 1 - off) // s) if i - 1 - off >= 0 else -1
        count += max(0, hi - lo + 1)
    return count


def count_ops(desc: ConvDesc) -> int:
    """Operations of one execution (reference 7): 2 * mb * oc * ic/g * spatial taps that
    read inside the input (padding taps excluded). Like benchdnn, problems whose valid
    output region is (almost) the whole output, such as 1x1 kernels, count every tap."""
    upper = desc.o[0] * desc.o[1] * desc.o[2]
    lower = 1
    for o, k, d in zip(desc.o, desc.k, desc.dil):
        lower *= o - (k - 1) * (d + 1)
    if lower != 0 and (upper - lower) / lower < 1e-6:
        sp_ops = upper * desc.k[0] * desc.k[1] * desc.k[2]
    else:
        sp_ops = 1
        for axis in zip(desc.o, desc.i, desc.k, desc.s, desc.p, desc.dil):
            sp_ops *= _taps_in_bounds(*axis)
    return 2 * desc.mb * desc.oc * (desc.ic // desc.g) * sp_ops
