"""Inner product reference and op count. The spec's inner product,
    dst[n][o] = bias[o] + sum over (c, spatial) of src[n][c][spatial] * wei[o][c][spatial],
is the convolution formula with a kernel as large as the input and one output point
(desc.py), so the convolution's reference (the C core's plain double loops, which share
nothing with the kernels) computes it: conv/ref.py's reference runs on the parsed
descriptor as it stands. The test suite checks it against an independent NumPy matrix
product in double."""

from __future__ import annotations

import math

from ...common.window import ConvDesc


def count_ops(desc: ConvDesc) -> int:
    """2 * mb * oc * ic * spatial: a multiply and an add per weight and image."""
    return 2 * desc.mb * desc.oc * desc.ic * math.prod(desc.i)
