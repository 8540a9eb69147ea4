"""The deconvolution primitive on the convolution kernels: which kernel direction runs each
deconvolution direction (on the swapped convolution, ref.py), its attributes, and binding
the buffers so that the kernel sees the swapped problem."""

from __future__ import annotations

import math

import numpy as np

from ... import core
from ...common.direction import Dir
from ..conv import attrs
from ..conv import prim as conv_prim

# What the kernels run for each deconvolution direction (on the swapped convolution).
KERNEL_DIR = {Dir.FWD_B: core.Direction.BWD_DATA, Dir.FWD_D: core.Direction.BWD_DATA,
              Dir.FWD_I: core.Direction.BWD_DATA, Dir.BWD_D: core.Direction.FWD,
              Dir.BWD_W: core.Direction.BWD_WEIGHTS, Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


def kernel_attr(prb) -> core.ConvAttr:
    """The swapped convolution's attributes: the deconvolution's src plays the kernels'
    diff_dst (forward) or the deconvolution's diff_dst plays their src (backward), so in
    every direction the kernels' src type is the user's dst type and vice versa."""
    dts, q = conv_prim.tensor_dts(prb), attrs.quant_of(prb, prb.desc.oc)
    return core.ConvAttr(dts["dst"], dts["wei"], dts["src"], dts["bia"], q.kind, q.src_scale,
                         q.dst_scale, tuple(float(v) for v in q.wei_scales), q.src_zp, q.dst_zp,
                         attrs.kernel_post_ops(prb.post_ops, prb.dt[2],
                                               conv_prim.logical_dims(prb.desc)["dst"]),
                         src_zps=() if q.src_zps is None else tuple(map(int, q.src_zps)),
                         dst_zps=() if q.dst_zps is None else tuple(map(int, q.dst_zps)),
                         scratchpad_user=prb.modes.scratchpad == "user")


def bind(prim: core.ConvPrimitive, prb, inputs: dict[str, np.ndarray],
         wei_packed: np.ndarray | None, outs: dict[str, np.ndarray]):
    """Native kernels: the timed callable in the swapped convolution's terms, on the
    kernels' own layouts (the weights transposed per group, conv/backend_native.py), given
    in the user's tensor names."""
    if prb.dir.forward:
        return prim.bind_bwd_data(inputs["src"], wei_packed, inputs.get("bia"), outs["dst"])
    if prb.dir is Dir.BWD_D:
        return prim.bind(inputs["dst"], wei_packed, None, outs["src"])
    # diff_bias is the sum of diff_dst (the swapped problem's bias would be src's).
    kernel = prim.bind_bwd_weights(inputs["dst"], inputs["src"], outs["wei"], None)
    bias = None
    dd = inputs["dst"]
    block = prim.attr.layout.block
    if prim.attr.layout is core.ActLayout.NHWC:   # channels last: [points][channels]
        dd = dd.reshape(-1).reshape(-1, dd.shape[1], 1)
    if "bia" in outs and block > 1:   # blocked (f32): [mb][c/B][points][B], padded
        mb, channels, *spatial = prim.shape.src_shape
        blocks = dd.reshape(mb, -(-channels // block), math.prod(spatial), block)
        out = outs["bia"]
        bias = lambda: out.__setitem__(  # noqa: E731
            slice(None), blocks.sum(axis=(0, 2), dtype=np.float32).reshape(-1)[:channels])
    elif "bia" in outs and dd.dtype == np.float32 == outs["bia"].dtype:
        bias = core.bias_grad(dd, outs["bia"])
    elif "bia" in outs:   # bf16: f32 sums of the widened diff_dst, rounded once
        out = outs["bia"]
        axes = (0,) + tuple(range(2, dd.ndim))
        bias = lambda: out.__setitem__(  # noqa: E731
            slice(None), dd.astype(np.float32).sum(axis=axes, dtype=np.float32).astype(out.dtype))
    if bias is None:
        return kernel

    def run() -> None:
        kernel()
        bias()
    return run
