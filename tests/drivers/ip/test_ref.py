"""The inner product reference (the convolution reference on the descriptor's
convolution) against an independent NumPy matrix product in double, every direction and
rank, and the op count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.drivers.ip import ref
from benchdnn_py.drivers.ip.desc import parse_ip


def _shape(desc) -> core.ConvShape:
    return core.ConvShape(desc.g, desc.mb, desc.ic, desc.oc, desc.i, desc.o, desc.k, desc.s,
                          desc.p, desc.dil)


@pytest.mark.parametrize("text", ["mb3ic5oc7", "mb4ic3iw5oc2", "mb2ic3ih4iw2oc6",
                                  "mb1ic2id2ih3iw2oc3", "mb5ic17oc1"])
def test_directions_match_a_numpy_matrix_product(text):
    desc = parse_ip(text)
    s = _shape(desc)
    rng = np.random.default_rng(7)
    src = rng.integers(-5, 6, s.src_shape).astype(np.float32)
    wei = rng.integers(-5, 6, s.wei_shape).astype(np.float32)
    bias = rng.integers(-5, 6, (desc.oc,)).astype(np.float32)
    ddst = rng.integers(-5, 6, s.dst_shape).astype(np.float32)
    x = src.astype(np.float64).reshape(desc.mb, -1)          # [mb][K]
    w = wei.astype(np.float64).reshape(desc.oc, -1)          # [oc][K]
    dd = ddst.astype(np.float64).reshape(desc.mb, desc.oc)   # [mb][oc]

    dst = core.ref_conv_fwd(s, src, wei, bias).reshape(desc.mb, desc.oc)
    assert np.array_equal(dst, x @ w.T + bias)
    dsrc = core.ref_conv_bwd_data(s, ddst, wei).reshape(desc.mb, -1)
    assert np.array_equal(dsrc, dd @ w)
    dwei, dbia = core.ref_conv_bwd_weights(s, src, ddst, True)
    assert np.array_equal(dwei.reshape(desc.oc, -1), dd.T @ x)
    assert np.array_equal(dbia, dd.sum(axis=0))
    # a reference that ignored any product would differ: the values are not degenerate
    assert np.count_nonzero(dst) > dst.size // 2


def test_op_count():
    desc = parse_ip("mb16ic64ih7oc1000")
    assert ref.count_ops(desc) == 2 * 16 * 1000 * 64 * 49
    assert ref.count_ops(parse_ip("ic2048oc1000")) == 2 * 2 * 2048 * 1000
    assert ref.count_ops(desc) == 2 * desc.mb * desc.oc * desc.ic * math.prod(desc.i)
