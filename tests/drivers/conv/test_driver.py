"""The conv driver's case pieces: direction routing, fills, and the spec's statement that
forward training and forward inference compute the same thing."""

from __future__ import annotations

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.attr import PostOps
from benchdnn_py.drivers.conv import cfg, driver
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.drivers.conv.driver import Dir, ImplFilter
from benchdnn_py.settings import GlobalSettings


def _outputs_of(text: str, direction: Dir) -> dict[str, np.ndarray]:
    prb = driver.make_problem({"dir": direction, "dt": ("f32",) * 3, "mb": 0,
                               "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings())
    shape = prb.shape
    t = driver.tensors(prb.desc, shape)
    res = driver.CaseResult(driver.Status.UNTESTED)
    prim = driver.create(shape, driver.KERNEL_DIR[direction], direction.with_bias,
                         ImplFilter(), res)
    assert prim is not None
    with prim:
        inputs = driver.fill_inputs(prb, t, perf=False)
        outs = driver.outputs(prb, t)
        packed = prim.pack_weights(inputs["wei"]) if "wei" in inputs else None
        driver.bind(prim, direction, inputs, packed, outs)()
    return {**{k: v.array.copy() for k, v in outs.items()}, **{"in_" + k: v for k, v in inputs.items()}}


@pytest.mark.parametrize("text", ["mb2ic8ih9oc12kh3ph1", "g4ic8id5oc8kd3sd2pd1",
                                  "ic16iw30oc16kw3pw3dw2", "ic32ih12oc32kh3ph1_dw"])
def test_forward_inference_equals_forward_training(text):
    training = _outputs_of(text, Dir.FWD_D)
    inference = _outputs_of(text, Dir.FWD_I)
    assert np.array_equal(training["dst"], inference["dst"])
    with_bias = _outputs_of(text, Dir.FWD_B)
    bias = with_bias["in_bia"].reshape(1, -1, 1, 1, 1)
    shape = driver.make_problem({"dir": Dir.FWD_B, "dt": ("f32",) * 3, "mb": 0,
                                 "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings()).shape
    assert np.array_equal(with_bias["dst"].reshape(shape.dst_shape) - bias,
                          training["dst"].reshape(shape.dst_shape))


def _inputs(text: str, direction: Dir) -> dict[str, np.ndarray]:
    prb = driver.make_problem({"dir": direction, "dt": ("f32",) * 3, "mb": 0,
                               "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings())
    return driver.fill_inputs(prb, driver.tensors(prb.desc, prb.shape), perf=False)


def _zero_share(a: np.ndarray) -> float:
    return float(np.mean(a == 0))


def test_the_long_chain_operand_is_sparse_per_direction():
    # forward: 4096 * 9 = 36864 src x wei products per output > 16384 -> src ~44% dense
    fwd = _inputs("mb1ic4096ih3oc2kh3ph1", Dir.FWD_B)
    assert set(fwd) == {"src", "wei", "bia"}
    assert _zero_share(fwd["src"]) > 0.5 > _zero_share(fwd["wei"])
    # backward data: 8192 * 9 = 73728 diff_dst x wei products per point
    #   > 2**24 / (8 * 32) = 65536 -> diff_dst sparse
    bwd_d = _inputs("mb1ic2ih3oc8192kh3ph1", Dir.BWD_D)
    assert set(bwd_d) == {"dst", "wei"}
    assert _zero_share(bwd_d["dst"]) > 0.1 > _zero_share(bwd_d["wei"])
    # backward weights: mb * oh * ow = 2 * 200 * 200 = 80000 diff_dst x src products per
    # weight > 65536 -> diff_dst sparse
    bwd_w = _inputs("mb2ic1ih200oc1kh1", Dir.BWD_WB)
    assert set(bwd_w) == {"src", "dst"}
    assert _zero_share(bwd_w["dst"]) > 0.1 > _zero_share(bwd_w["src"])
    for data in (fwd, bwd_d, bwd_w):
        for a in data.values():
            assert np.array_equal(a, np.round(a)) and a.ravel()[0] > 0


def test_density_keeps_partial_sums_exact():
    def density(dt, n_acc, out=None, pair=("src", "wei")):
        dts = tuple(dt.split(":"))
        return cfg.fill_ranges(dts, "f32", out or dts[2], n_acc, pair).density
    assert density("f32:f32:f32", 100) == 1.0
    assert density("f32:f32:f32", 32768) == pytest.approx(16384 / 32768)
    # diff_dst [-8, 8] x weights [-32, 32]: 2**24 / 256 = 65536 terms are safe.
    assert density("f32:f32:f32", 131072, pair=("dst", "wei")) == pytest.approx(0.5)


# Reference 6.3's worked values: the safe chain length per SRC:WEI:DST (before / n_acc).
@pytest.mark.parametrize("dt,safe", [
    ("bf16:bf16:bf16", 16), ("f16:f16:f16", 256), ("bf16:bf16:f32", 1048576),
    ("u8:s8:u8", 3 * 8), ("u8:s8:s8", 3 * 4), ("s8:s8:s8", 3 * 16), ("u8:s8:f32", 3 * 26214),
    ("u8:s8:s32", 3355443), ("s8:s8:f32", 3 * 2097152)])
def test_density_per_data_type_matches_reference(dt, safe):
    n_acc = 10**8
    r = cfg.fill_ranges(tuple(dt.split(":")), "f32", dt.split(":")[2], n_acc, ("src", "wei"))
    assert r.density == pytest.approx(safe / n_acc)


def test_int8_fill_adjustments():
    r = cfg.fill_ranges(("u8", "s8", "s32"), "s32", "s32", 10, ("src", "wei"))
    assert r.src == (0, 160) and r.wei == (-4, 4) and r.wei_mult == 1
    r = cfg.fill_ranges(("s8", "s8", "s8"), "f32", "s8", 10, ("src", "wei"))
    assert r.wei == (-2, 2) and r.wei_mult == 2


def test_zero_trust_numbers():
    assert cfg.dst_zero_trust_percent(False) == pytest.approx(70)
    assert cfg.dst_zero_trust_percent(True) == pytest.approx(85)
    assert cfg.src_zero_trust_percent((1, 2, 2)) == pytest.approx(92.5)
    assert cfg.wei_zero_trust_percent((1, 3, 3), 4, 100) == pytest.approx(100 - 30 * 4 / 9)
    assert cfg.BIA_ZERO_TRUST_PERCENT == 20


def test_directions_route_to_kernels():
    assert {d: driver.KERNEL_DIR[d] for d in (Dir.FWD_I, Dir.BWD_D, Dir.BWD_WB)} == {
        Dir.FWD_I: core.Direction.FWD, Dir.BWD_D: core.Direction.BWD_DATA,
        Dir.BWD_WB: core.Direction.BWD_WEIGHTS}
