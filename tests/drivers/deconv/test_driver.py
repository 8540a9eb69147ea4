"""The deconvolution driver end to end: what its native backend runs beyond the
convolution's (zero points on the swapped kernels)."""

from __future__ import annotations

import numpy as np
from conftest import run_cli

from benchdnn_py.common.attr import parse_zero_points
from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers.conv.attrs import Quant
from benchdnn_py.drivers.deconv import driver
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings


def test_int8_zero_points_run_on_the_backward_data_kernels():
    """The src zero point is the kernels' diff_dst one: taps that reach no src point
    read it (strided and padded shapes), so that (src - zp) * w holds everywhere; the
    dst zero point is added to what they write. The reference subtracts the src zero
    point, which changes its result: a kernel ignoring it could not pass."""
    res = run_cli("--deconv", "--dir=FWD_B,FWD_I", "--dt=u8:s8:u8,s8:s8:s32",
                  "--attr-zero-points=src:common:31+dst:common:15,src:host_scalar:7",
                  "--stag=any,axb", "mb2ic16ih7oc24kh3sh2ph1", "g8ic8ih7oc8kh3sh2ph1")
    assert res.code == 0 and res.summary()["passed"] == 32, res.err[-2000:]
    prb = driver.make_problem(
        {"dir": Dir.FWD_I, "dt": ("u8", "s8", "s32"), "mb": 0, "impl_filter": ImplFilter(),
         "attr-zero-points": parse_zero_points("src:common:31"), "backend": "native"},
        "mb2ic16ih7oc24kh3sh2ph1", GlobalSettings())
    rng = np.random.default_rng(0)
    inputs = {"src": rng.integers(0, 64, prb.shape.src_shape).astype(np.float32),
              "wei": rng.integers(-2, 3, prb.shape.wei_shape).astype(np.float32)}
    with_zp = driver._reference(prb, inputs, Quant(src_zp=31), None)["dst"]
    shifted = dict(inputs, src=inputs["src"] - 31)
    assert np.array_equal(with_zp, driver._reference(prb, shifted, Quant(), None)["dst"])
    assert not np.array_equal(with_zp, driver._reference(prb, inputs, Quant(), None)["dst"])


def test_a_src_zero_point_outside_the_src_type_is_named_not_run():
    """The backward-data kernels pad with the src zero point itself, so one a u8 cannot
    hold is UNIMPLEMENTED with that reason (the convolution's forward corrects it)."""
    args = ("--dt=u8:s8:u8", "--attr-zero-points=src:common:-2", "mb2ic16ih7oc24kh3sh2ph1")
    res = run_cli("--deconv", *args)
    assert res.summary()["unimplemented"] == 1, res.out
    assert "UNIMPLEMENTED (--attr-zero-points=src:common:-2: a src zero point outside " \
        "u8's range [0, 255]" in res.out, res.out
    res = run_cli("--conv", *args)
    assert res.code == 0 and res.summary()["passed"] == 1, res.out

