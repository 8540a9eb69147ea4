"""The native backend of the ip driver: the inner product as one matrix product on the
convolution kernels (kernels/conv/README.md).

src [mb][ic][spatial] is, in memory, a matrix of mb rows of K = ic x spatial values,
and the weights [oc][ic][spatial] one of oc rows of K: both flattened in the same (ic,
spatial) order, so the product needs no reorder. Routes, in order (each tried when the
one before has no row that accepts the case):

| route | the kernels' problem | rows |
|---|---|---|
| GEMM | one image, mb output points in a row, channels last: `dst[mb][oc] = src[mb][K] x wei[oc][K]^T`, the whole batch one GEMM | gemm_conv_nhwc (f32); tile_conv_nhwc (bf16 and u8 x s8 forward, where AMX runs) |
| per image | mb images of one point, ic = K: one matrix-vector product per image | every plain row (all types) |

Backward weights of a small batch (at most STREAM_MAX_MB images) into weights of at least
STREAM_MIN_WEIGHTS floats tries the per-image route first: each weight then takes a few
products, so writing diff_weights dominates, and that route's outer product streams it
past the caches (kernels/conv/README.md, OP_STREAM_MIN_FLOATS) where the GEMM reads it in
first. From 16 images on, the GEMM's reuse wins.

Both read and write the user's plain buffers as they are (abx: a 0D tensor's `ab`, a
spatial one's nchw); other layouts (`axb` with spatial dims, `ba`, blocked) take the
reorder route of the convolution's backend. A binary or prelu entry's input is read over
the kernels' dst: its mb stride moves to the GEMM's point axis.
"""

from __future__ import annotations

import dataclasses
import math

from ... import core
from ...common.direction import Dir
from ..base import CaseResult
from ..conv import attrs, backend_native
from ..conv import prim as conv_prim

unsupported = backend_native.unsupported

_ONE, _ZERO = (1, 1, 1), (0, 0, 0)
STREAM_MAX_MB = 8
STREAM_MIN_WEIGHTS = 1 << 20   # floats: the outer route's streaming threshold


def gemm_shape(desc) -> core.ConvShape:
    """The GEMM route's problem: one image whose mb points each hold K channels."""
    k = desc.ic * math.prod(desc.i)
    points = (1, 1, desc.mb)
    return core.ConvShape(1, 1, k, desc.oc, points, points, _ONE, _ONE, _ZERO, _ZERO)


def image_shape(desc) -> core.ConvShape:
    """The per-image route's problem: mb images of one point with K channels."""
    return core.ConvShape(1, desc.mb, desc.ic * math.prod(desc.i), desc.oc, _ONE, _ONE, _ONE,
                          _ONE, _ZERO, _ZERO)


def _to_points(op: core.PostOp) -> core.PostOp:
    """An entry's input strides over the GEMM's dst (1, oc, 1, 1, mb points)."""
    if not op.has_input:
        return op
    mb, oc = op.src1_strides[:2]
    return dataclasses.replace(op, src1_strides=(0, oc, 0, 0, mb))


def _attr(prb, route: str) -> core.ConvAttr:
    """The convolution's attributes of the case on a route's problem (gemm or image)."""
    q = attrs.quant_of(prb, prb.desc.oc)
    attr = conv_prim.kernel_attr(prb, q)
    spatial = math.prod(prb.desc.i)
    if attr.src_zps and spatial > 1:   # per input channel: each of K takes its channel's
        attr = dataclasses.replace(attr, src_zps=tuple(z for z in attr.src_zps
                                                      for _ in range(spatial)))
    if route == "gemm":
        attr = dataclasses.replace(attr, layout=core.ActLayout.NHWC,
                                   post_ops=tuple(map(_to_points, attr.post_ops)))
    return attr


def create(prb, res: CaseResult):
    kernel_dir = conv_prim.KERNEL_DIR[prb.dir]
    impl_filter = backend_native.route_filter(prb)
    before = (res.status, res.reason)
    d = prb.desc
    routes = [("gemm", gemm_shape(d))] if d.mb > 0 else []
    streamed = (prb.dir in (Dir.BWD_W, Dir.BWD_WB) and d.mb <= STREAM_MAX_MB
                and d.oc * d.ic * math.prod(d.i) >= STREAM_MIN_WEIGHTS)
    routes.insert(0 if streamed else len(routes), ("image", image_shape(d)))
    for route, shape in routes:
        res.status, res.reason = before
        prim = conv_prim.create(shape, kernel_dir, prb.dir.with_bias, impl_filter, res,
                                prb.post_ops, attr=_attr(prb, route))
        if prim is not None:
            return backend_native.executor(prim, prb, backend_native.conv_bind, res,
                                           core.ActLayout.PLAIN)
    return None
