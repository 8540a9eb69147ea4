"""The native backend of the deconv driver: the convolution kernels on the swapped
problem (ref.py explains the swap), through the conv driver's native executor."""

from __future__ import annotations

import dataclasses

from ..base import CaseResult
from ..conv import backend_native
from ..conv import prim as conv_prim
from . import prim as deconv
from .ref import swapped_shape

unsupported = backend_native.unsupported


def create(prb, res: CaseResult):
    # Bias: added by the backward-data kernel in the forward pass; summed separately when
    # computing diff_bias (the swapped problem's bias would be the wrong tensor's sum).
    # The swapped problem's activations are the deconvolution's, in the same layout.
    attr = deconv.kernel_attr(prb)
    shape = swapped_shape(prb.desc)
    kernel_dir = deconv.KERNEL_DIR[prb.dir]
    return backend_native.create_on(
        prb, res, kernel_dir, shape,
        lambda entry, impl_filter: conv_prim.create(shape, kernel_dir,
                                               prb.dir.forward and prb.dir.with_bias,
                                               impl_filter, res, prb.post_ops,
                                               attr=dataclasses.replace(attr, layout=entry.act)),
        deconv.bind)
