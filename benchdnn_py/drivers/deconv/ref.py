"""Deconvolution reference and op count, by benchdnn's swap rule (reference 6.5).

A deconvolution D is the transpose of the convolution D' with input and output swapped
(ic <-> oc, input sizes <-> output sizes) and each group's weights transposed (oc <-> ic):
    deconv forward          = D' backward data  (src plays diff_dst), plus bias
    deconv backward data    = D' forward        (diff_dst plays src)
    deconv backward weights = D' backward weights with src and diff_dst swapped, transposed
    deconv diff_bias        = per-channel sums of diff_dst
(--check=sampled: each at a list of points; the swap keeps dst and diff_src offsets and
transposes the weight offsets.) The reference composes the convolution references (plain double loops) that way; the test
suite checks it against an independent NumPy transposed convolution.
"""

from __future__ import annotations

import math

import numpy as np

from ... import core
from ...common.window import ConvDesc
from ..conv.ref import _taps_in_bounds


def user_shape(desc: ConvDesc) -> core.ConvShape:
    """D's own tensors: src [mb][ic][i], wei [g][oc/g][ic/g][k], dst [mb][oc][o]."""
    return core.ConvShape(desc.g, desc.mb, desc.ic, desc.oc, desc.i, desc.o, desc.k, desc.s,
                          desc.p, desc.dil)


def swapped_shape(desc: ConvDesc) -> core.ConvShape:
    """D': the convolution whose backward data is D's forward."""
    return core.ConvShape(desc.g, desc.mb, desc.oc, desc.ic, desc.o, desc.i, desc.k, desc.s,
                          desc.p, desc.dil)


def transpose_weights(wei: np.ndarray) -> np.ndarray:
    """[g][a][b][k...] -> [g][b][a][k...], contiguous (works both ways)."""
    return np.ascontiguousarray(np.swapaxes(wei, 1, 2))


def ref_fwd(desc: ConvDesc, src: np.ndarray, wei: np.ndarray, bias: np.ndarray | None,
            points: np.ndarray | None = None) -> np.ndarray:
    """dst in double, or (points: linear offsets into dst) its values there: D's dst is
    D' diff_src, offset for offset."""
    sw = swapped_shape(desc)
    dst = core.ref_conv_bwd_data(sw, src, transpose_weights(wei), points)
    if bias is not None:
        b = bias.astype(np.float64)
        if points is None:
            dst += b.reshape(1, -1, 1, 1, 1)
        else:
            dst += b[(points // math.prod(desc.o)) % desc.oc]
    return dst


def ref_bwd_data(desc: ConvDesc, diff_dst: np.ndarray, wei: np.ndarray,
                 points: np.ndarray | None = None) -> np.ndarray:
    """diff_src (D' dst, offset for offset) in double, whole or at points."""
    return core.ref_conv_fwd(swapped_shape(desc), diff_dst, transpose_weights(wei), None,
                             points)


def ref_bwd_weights(desc: ConvDesc, src: np.ndarray, diff_dst: np.ndarray, with_bias: bool,
                    points: np.ndarray | None = None, bias_points: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """(diff_wei, diff_bias or None) in double; with points and bias_points, the values
    at those offsets of diff_wei [g][oc/g][ic/g][k...] and diff_bias [oc]."""
    sw, user = swapped_shape(desc), user_shape(desc)
    if points is None:
        wei_t, _ = core.ref_conv_bwd_weights(sw, diff_dst, src, False)
        wei = np.ascontiguousarray(np.swapaxes(wei_t, 1, 2))
    else:   # D's weight (g, a, b, k) is D' weight (g, b, a, k)
        g, a, b, *k = np.unravel_index(points, user.wei_shape)
        wei = core.ref_conv_bwd_weights_at(
            sw, diff_dst, src, np.ravel_multi_index((g, b, a, *k), sw.wei_shape))
    # diff_bias sums D's diff_dst per channel: the convolution bias formula on D's shape.
    if bias_points is None:
        bias_points = np.arange(desc.oc)
    bias = core.ref_conv_bwd_bias_at(user, diff_dst, bias_points) if with_bias else None
    return wei, bias


def count_ops(desc: ConvDesc) -> int:
    """2 * mb * oc * ic/g * (input point, tap) pairs that land inside the output: the conv
    count of the swapped problem, with no shortcut (reference 7)."""
    sp_ops = 1
    for i, o, k, s, p, d in zip(desc.i, desc.o, desc.k, desc.s, desc.p, desc.dil):
        sp_ops *= _taps_in_bounds(i, o, k, s, p, d)
    return 2 * desc.mb * desc.oc * (desc.ic // desc.g) * sp_ops
