"""The convolution reference, its epilogue (bias, quantization, post-ops, the fused
depthwise step) and the operation count.

The reference itself is C (kernels/conv/conv_ref.c): the spec's formula as plain loops in
double, sharing no code with the fast kernels, computing every output point or
(--check=sampled) a list of them through the same per-point formula. The test suite checks
it against an independent NumPy formulation (tests/drivers/conv/test_ref.py).
"""

from __future__ import annotations

import math

import numpy as np

from ... import core
from ...common import check
from ...common.attr import PostOps
from ...common.direction import Dir
from ...common.post_ops import src1_at, src1_entries, src1_name, src1_values_5d
from .attrs import Quant, dw_quant, quantize_reference, split_at_dw
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


def forward_epilogue(acc: np.ndarray, bias: np.ndarray | None, q: Quant, post_ops: PostOps,
                     prior: np.ndarray | None, points: np.ndarray | None,
                     dst_shape: tuple[int, ...],
                     inputs: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """quantize_reference on the whole dst, or on the sums at points (offsets into a dst
    of dst_shape [mb][oc][d][h][w]) with their channels, prior values and binary or prelu
    inputs (inputs' src1_{i}, logical)."""
    src1 = {}
    for i, _ in src1_entries(post_ops):
        values = inputs[src1_name(i)]
        values5 = src1_values_5d(values, values.ndim)
        src1[i] = values5 if points is None else src1_at(values5, dst_shape, points)
    if points is None:
        return quantize_reference(acc, bias, q, post_ops, prior, src1=src1)
    channels = (points // math.prod(dst_shape[2:])) % dst_shape[1]
    return quantize_reference(acc, bias, q, post_ops,
                              None if prior is None else prior.reshape(-1)[points], channels,
                              src1)


def dw_reference(prb, inputs: dict[str, np.ndarray], q: Quant,
                 points: np.ndarray | None) -> np.ndarray:
    """Depthwise fusion as separate plain steps: the 1x1 convolution with its epilogue
    (bias, scales, the entries before dw), rounded to the convolution's dst type as a
    stored output; the depthwise convolution of that (the same C reference); its bias and
    the entries after dw, with the depthwise step's scales (oneDNN 3.x: its src scale is
    the 1x1 step's dst scale; dw_quant). With points, the 1x1 output only where the
    depthwise taps of those points read it (dw_taps_read), then the depthwise output at
    the points. Binary and prelu entries read their inputs (src1_{i} by the whole chain's
    index) at the positions of the tensor they apply to: the 1x1 output before the dw
    entry, dst after it."""
    pre, post = split_at_dw(prb.post_ops)
    after = len(pre.entries) + 1   # the whole chain's index of post's first entry
    dw = prb.dw_shape
    read = None if points is None else dw_taps_read(dw, points)
    acc = compute_ref(prb.shape, inputs["src"], inputs["wei"], None, read)
    values = check.round_to_dt(forward_epilogue(acc, inputs.get("bia"), q, pre, None, read,
                                                prb.shape.dst_shape, inputs), prb.dt[2])
    if read is None:
        acc = compute_ref(dw, np.ascontiguousarray(values, np.float32), inputs["dw_wei"], None)
    else:   # (no 1x1 output of GBs to scatter a sample's few values into)
        acc = dw_at_points(dw, read, np.asarray(values, np.float32), inputs["dw_wei"], points)
    post_inputs = {src1_name(j): inputs[src1_name(after + j)] for j, _ in src1_entries(post)}
    return forward_epilogue(acc, inputs.get("dw_bia"), dw_quant(q), post, None, points,
                            dw.dst_shape, post_inputs)


def dw_at_points(dw: core.ConvShape, read: np.ndarray, values: np.ndarray,
                 dw_wei: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The depthwise step's sums at points (offsets into its dst), from the 1x1 output's
    values at read (dw_taps_read's sorted offsets): what compute_ref gives at those
    points, summed as the C reference sums them (from 0, in double, taps in (kh, kw)
    order, those outside the input skipped), so the bits are the same."""
    c = np.unravel_index(points, dw.dst_shape)[1]
    w = np.asarray(dw_wei, np.float32).reshape(dw.oc, dw.k[1], dw.k[2])
    acc = np.zeros(len(points))
    for kh, kw, inside, at in _dw_taps(dw, points):
        acc[inside] += (values[np.searchsorted(read, at)].astype(np.float64)
                        * w[c[inside], kh, kw].astype(np.float64))
    return acc


def dw_taps_read(dw: core.ConvShape, points: np.ndarray) -> np.ndarray:
    """The offsets into the 1x1 output [mb][oc][1][oh][ow] that the depthwise step's
    outputs at points (offsets into its [mb][oc][1][dw_oh][dw_ow]) read: every tap inside
    the input, each offset once."""
    read = [at for _, _, _, at in _dw_taps(dw, points)]
    return np.unique(np.concatenate(read)).astype(np.int64)


def _dw_taps(dw: core.ConvShape, points: np.ndarray):
    """Per tap (kh, kw), in order: which of the points' reads fall inside the 1x1 output
    (a mask over points) and those reads' offsets into it."""
    n, c, _, y, x = np.unravel_index(points, dw.dst_shape)
    for kh in range(dw.k[1]):
        for kw in range(dw.k[2]):
            h, w = y * dw.s[1] - dw.p[1] + kh, x * dw.s[2] - dw.p[2] + kw
            inside = (h >= 0) & (h < dw.i[1]) & (w >= 0) & (w < dw.i[2])
            yield kh, kw, inside, np.ravel_multi_index(
                (n[inside], c[inside], np.zeros_like(h[inside]), h[inside], w[inside]),
                dw.src_shape)


def reference(prb, inputs: dict[str, np.ndarray], q: Quant, prior: np.ndarray | None,
              points: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The spec's formulas in double on the f32 values (C, conv_ref.c), then the scales,
    zero points and post-ops of the forward pass (quantize_reference). With points
    (sample_points), each output holds the values at its points only, in their order."""
    prb_dir, shape = prb.dir, prb.shape
    at = (points or {}).get
    if prb_dir.forward and prb.dw is not None:
        return {"dst": dw_reference(prb, inputs, q, at("dst"))}
    if prb_dir.forward:
        acc = compute_ref(shape, q.shifted_src(inputs["src"]), inputs["wei"], None, at("dst"))
        return {"dst": forward_epilogue(acc, inputs.get("bia"), q, prb.post_ops, prior,
                                        at("dst"), shape.dst_shape, inputs)}
    if prb_dir is Dir.BWD_D:
        return {"src": core.ref_conv_bwd_data(shape, inputs["dst"], inputs["wei"], at("src"))}
    if points is None:
        wei, bia = core.ref_conv_bwd_weights(shape, inputs["src"], inputs["dst"],
                                             prb_dir.with_bias)
        return {"wei": wei, "bia": bia} if prb_dir.with_bias else {"wei": wei}
    out = {"wei": core.ref_conv_bwd_weights_at(shape, inputs["src"], inputs["dst"],
                                               points["wei"])}
    if prb_dir.with_bias:
        out["bia"] = core.ref_conv_bwd_bias_at(shape, inputs["dst"], points["bia"])
    return out
