"""The pooling reference (C, kernels/pool/pool_ref.c) against an independent NumPy
formulation: the padded input as a masked array, windows gathered by index arithmetic."""

import itertools
import math

import numpy as np
import pytest

from benchdnn_py.common import fill
from benchdnn_py.core import PoolShape
from benchdnn_py.drivers.pool import ref
from benchdnn_py.drivers.pool.desc import parse_pool
from benchdnn_py.drivers.pool.driver import ALGS

SHAPES = ["mb2ic3iw9kw3sw2pw1", "mb1ic2iw7ow7kw3pw1dw1", "mb2ic3ih7kh3ph1",
          "mb1ic2ih8iw6oh3ow3kh3kw2sh3sw2ph1pw0", "mb1ic2ih9kh3sh2dh1ph2",
          "mb1ic2id5kd3sd2pd1", "mb1ic1id4ih5iw3kd2kh3kw2pd1ph1pw1", "mb1ic3ih7oh9kh2ph3"]


def _windows(desc, x):
    """For each output point: the in-bounds input offsets of its window, in tap order."""
    out = {}
    for o in itertools.product(*(range(n) for n in desc.o)):
        taps = []
        for k in itertools.product(*(range(n) for n in desc.k)):
            idx = tuple(oo * s - p + kk * (d + 1)
                        for oo, kk, s, p, d in zip(o, k, desc.s, desc.p, desc.dil))
            if all(0 <= i < n for i, n in zip(idx, desc.i)):
                taps.append(idx)
        out[o] = taps
    return out


def numpy_pool(desc, alg, src, diff_dst=None):
    k_total = math.prod(desc.k)
    windows = _windows(desc, src)
    dst = np.zeros((desc.mb, desc.ic) + desc.o)
    dsrc = np.zeros(src.shape)
    for o, taps in windows.items():
        vals = np.stack([src[(slice(None), slice(None)) + t] for t in taps], -1) if taps \
            else np.zeros((desc.mb, desc.ic, 0))
        if alg == "max":
            dst[(..., *o)] = vals.max(-1) if taps else -np.finfo(np.float32).max
            if diff_dst is not None and taps:
                first = vals.argmax(-1)          # argmax returns the first maximum
                for n, c in itertools.product(range(desc.mb), range(desc.ic)):
                    dsrc[(n, c) + taps[first[n, c]]] += diff_dst[(n, c) + o]
            continue
        div = k_total if alg == "avg_p" else len(taps)
        dst[(..., *o)] = vals.sum(-1) / div if div else np.nan   # avg_np: 0/0
        if diff_dst is not None:
            for t in taps:
                dsrc[(slice(None), slice(None)) + t] += diff_dst[(..., *o)] / div
    return dst, dsrc


@pytest.mark.parametrize("text", SHAPES)
@pytest.mark.parametrize("alg", ["max", "avg_p", "avg_np"])
def test_reference_equals_numpy(text, alg):
    # (avg_np over a window entirely in padding is 0/0 = NaN in both; the driver skips it)
    desc = parse_pool(text)
    shape = PoolShape(desc.mb, desc.ic, desc.i, desc.o, desc.k, desc.s, desc.p, desc.dil)
    # small range: ties happen, so "first maximum" is exercised
    src = fill.int_fill(math.prod(shape.src_shape), fill.Kind.SRC, -3, 3).reshape(shape.src_shape)
    dd = fill.int_fill(math.prod(shape.dst_shape), fill.Kind.DST, -5, 5).reshape(shape.dst_shape)
    # the NumPy version works on the logical (1D/2D/3D) shapes
    axes = desc.spatial_axes
    lsrc = src.reshape((desc.mb, desc.ic) + tuple(desc.i[a] for a in axes))
    ldd = dd.reshape((desc.mb, desc.ic) + tuple(desc.o[a] for a in axes))

    class Logical:
        mb, ic = desc.mb, desc.ic
        i, o, k, s, p, dil = (tuple(t[a] for a in axes) for t in
                              (desc.i, desc.o, desc.k, desc.s, desc.p, desc.dil))
    exp_dst, exp_dsrc = numpy_pool(Logical, alg, lsrc.astype(np.float64), ldd.astype(np.float64))
    got_dst = ref.forward(shape, ALGS[alg], src).reshape(exp_dst.shape)
    got_dsrc = ref.backward(shape, ALGS[alg], src, dd).reshape(exp_dsrc.shape)
    np.testing.assert_allclose(got_dst, exp_dst, rtol=1e-12)
    np.testing.assert_allclose(got_dsrc, exp_dsrc, rtol=1e-12, atol=1e-12)


def test_empty_windows_are_detected():
    assert ref.has_empty_window(parse_pool("ic3ih7oh9kh2ph3"))
    assert not ref.has_empty_window(parse_pool("ic3ih7kh3ph2"))
    assert ref.count_ops(parse_pool("mb2ic3ih7kh3ph1")) == 2 * 3 * 49 * 9
