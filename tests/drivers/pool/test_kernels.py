"""Every pooling kernel (each ISA variant the CPU runs) against the reference, and the
workspace contract: queried, present exactly for training max, every entry written."""

import math

import ml_dtypes
import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.core import PoolAlg, Prop
from benchdnn_py.drivers.base import CaseResult
from benchdnn_py.drivers.conv.driver import ImplFilter
from benchdnn_py.drivers.pool import cfg, driver, ref
from benchdnn_py.drivers.pool.desc import parse_pool
from benchdnn_py.layout import parse_tag
from benchdnn_py.status import Status


def _route(prb):
    """The case's reorder route (empty for the plain layouts these tests use)."""
    route = driver.make_route(prb, CaseResult(Status.UNTESTED))
    assert route is not None
    return route


RUNNABLE = [i for i in core.pool_impls() if core.isa_supported(i.isa)]
IMPLS = [i for i in RUNNABLE if i.operands is core.Operands.F32]
SHAPES = ["mb2ic5iw17kw3sw2pw1", "mb2ic4ih10kh3ph1", "mb1ic3ih9iw11kh3kw2sh2sw3dh1ph1pw1",
          "mb1ic2id6kd3sd2pd1", "mb1ic16ih7kh7", "mb2ic3ih12kh2sh2"]


def _problem(text, direction, alg):
    return driver.PoolProblem(parse_pool(text), direction, ("f32",), parse_tag("abx"),
                              alg, ImplFilter(), 0)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("direction", list(driver.Dir), ids=lambda d: d.value)
@pytest.mark.parametrize("alg", ["max", "avg_np", "avg_p"])
def test_kernels_match_the_reference(impl, direction, alg):
    for text in SHAPES:
        prb = _problem(text, direction, alg)
        prim = core.PoolPrimitive(impl, prb.shape, prb.kalg, direction.prop)
        bufs = driver.prepare(prb, prim, _route(prb), perf=False)
        bufs.run()
        assert bufs.out.intact()
        exp = (ref.backward(prb.shape, prb.kalg, bufs.src, bufs.diff_dst)
               if direction is driver.Dir.BWD_D else ref.forward(prb.shape, prb.kalg, bufs.src))
        res = driver.CaseResult(driver.Status.UNTESTED)
        driver.judge(prb, bufs, exp, res, 0)
        assert res.status is driver.Status.PASSED, (text, res.diagnostics[:3])


def test_workspace_is_queried_and_only_training_max_has_one():
    shape = _problem("mb2ic3ih7kh3", driver.Dir.FWD_D, "max").shape
    ws = core.pool_workspace(shape, PoolAlg.MAX, Prop.FWD_TRAINING)
    assert ws.nbytes == ws.elem_bytes * math.prod(shape.dst_shape) and ws.elem_bytes > 0
    assert core.pool_workspace(shape, PoolAlg.MAX, Prop.FWD_INFERENCE).nbytes == 0
    assert core.pool_workspace(shape, PoolAlg.AVG_P, Prop.FWD_TRAINING).nbytes == 0
    buf = ws.allocate(cfg.WORKSPACE_POISON)
    assert buf.nbytes == ws.nbytes and (buf == cfg.WORKSPACE_POISON).all()


def test_training_writes_every_workspace_entry_with_the_winning_tap():
    prb = _problem("mb1ic2ih6kh3sh2ph1", driver.Dir.FWD_D, "max")
    prim = core.PoolPrimitive(IMPLS[0], prb.shape, PoolAlg.MAX, Prop.FWD_TRAINING)
    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
    bufs.run()
    assert bufs.ws is not None and (bufs.ws < 9).all()
    src = bufs.src.reshape(1, 2, 6, 6)
    dst = bufs.out.array.reshape(1, 2, 3, 3)
    # the tap the workspace names holds the maximum
    for c in range(2):
        for oh in range(3):
            for ow in range(3):
                t = int(bufs.ws.reshape(1, 2, 3, 3)[0, c, oh, ow])
                ih, iw = oh * 2 - 1 + t // 3, ow * 2 - 1 + t % 3
                assert src[0, c, ih, iw] == dst[0, c, oh, ow]


def test_a_corrupt_workspace_never_writes_outside_diff_src():
    prb = _problem("mb1ic2ih6kh3sh2ph1", driver.Dir.BWD_D, "max")
    prim = core.PoolPrimitive(IMPLS[0], prb.shape, PoolAlg.MAX, Prop.BWD_DATA)
    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
    bufs.ws[:] = np.array([cfg.WORKSPACE_POISON, 2**31 - 1, 0xFFFFFFFF], np.uint32)[
        np.arange(bufs.ws.size) % 3]
    bufs.run()
    assert bufs.out.intact() and (bufs.out.array == 0).all()


# -- data types: the typed rows (bf16, f16, integers) ------------------------------------

TYPED = [i for i in RUNNABLE if i.operands is not core.Operands.F32]
TYPES = {core.Operands.BF16: ("bf16",), core.Operands.F16: ("f16",),
         core.Operands.INT8: ("s8", "u8", "s32")}


@pytest.mark.parametrize("impl", TYPED, ids=lambda i: i.name)
def test_typed_rows_match_the_reference(impl):
    """Every algorithm and direction the type takes, every shape: forward training writes
    the whole workspace, backward consumes it, results match the double reference rounded
    to the type."""
    checked = 0
    for dt in TYPES[impl.operands]:
        for direction in driver.Dir:
            for alg in ("max", "avg_np", "avg_p"):
                for text in SHAPES:
                    prb = driver.PoolProblem(parse_pool(text), direction, (dt,),
                                             parse_tag("abx"), alg, ImplFilter(), 0)
                    if driver.unsupported(prb):
                        continue
                    prim = core.PoolPrimitive(impl, prb.shape, prb.kalg, direction.prop,
                                              dt=dt)
                    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
                    bufs.run()
                    assert bufs.out.intact() and bufs.out.array.dtype == core.numpy_dtype(dt)
                    res = driver.CaseResult(driver.Status.UNTESTED)
                    driver.judge(prb, bufs, driver.reference(prb, bufs), res, 0)
                    assert res.status is driver.Status.PASSED, (dt, text, res.diagnostics[:3])
                    checked += 1
    per_dir = 3 * len(SHAPES)
    assert checked == {core.Operands.INT8: 3 * 2 * per_dir}.get(impl.operands, 3 * per_dir)


def _pair_average(impl, dt, pairs, fault=core.OpFault.NONE):
    """avg_p over windows of two (kw2 sw2): (a + b) / 2 in f32, stored in dt."""
    n = pairs.size // 2
    prb = driver.PoolProblem(parse_pool(f"mb1ic1iw{2 * n}kw2sw2"), driver.Dir.FWD_I, (dt,),
                             parse_tag("abx"), "avg_p", ImplFilter(), 0)
    prim = core.PoolPrimitive(impl, prb.shape, PoolAlg.AVG_P, Prop.FWD_INFERENCE, fault, dt)
    out = np.empty(n, pairs.dtype)
    prim.bind_fwd(pairs, out, None)()
    return out


def _average_f32(pairs):
    a, b = pairs[0::2].astype(np.float32), pairs[1::2].astype(np.float32)
    with np.errstate(all="ignore"):
        return (a + b) / np.float32(2)


ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


@pytest.mark.parametrize("impl", [i for i in TYPED if i.operands is not core.Operands.INT8],
                         ids=lambda i: i.name)
def test_float_stores_round_like_ml_dtypes_and_numpy(impl):
    """Averages of pairs of every finite bit pattern: half of the sums' last bits make ties
    of the type. The stores must give ml_dtypes' (numpy's) bits; truncation must not."""
    np_type = ml_dtypes.bfloat16 if impl.operands is core.Operands.BF16 else np.float16
    dt = "bf16" if np_type is ml_dtypes.bfloat16 else "f16"
    x = ALL16.view(np_type)
    x = x[np.isfinite(x.astype(np.float32))]
    pairs = np.stack([x, np.roll(x, 7)], axis=1).ravel()
    with np.errstate(all="ignore"):
        exp = _average_f32(pairs).astype(np_type)
    got = _pair_average(impl, dt, pairs)
    finite = np.isfinite(exp.astype(np.float32))
    np.testing.assert_array_equal(got.view(np.uint16)[finite], exp.view(np.uint16)[finite])
    truncated = _pair_average(impl, dt, pairs, core.OpFault.TRUNCATE_DST)
    assert (truncated.view(np.uint16)[finite] != exp.view(np.uint16)[finite]).any()


@pytest.mark.parametrize("impl", [i for i in TYPED if i.operands is core.Operands.INT8],
                         ids=lambda i: i.name)
def test_integer_averages_round_half_even(impl):
    for dt, lo, hi in (("u8", 0, 255), ("s8", -128, 127), ("s32", -5000, 5000)):
        a, b = np.meshgrid(np.arange(lo, hi + 1, 1 if dt != "s32" else 39),
                           np.arange(lo, hi + 1, 1 if dt != "s32" else 41))
        pairs = np.stack([a.ravel(), b.ravel()], axis=1).ravel().astype(core.numpy_dtype(dt))
        exp = np.rint(_average_f32(pairs)).astype(np.int64)
        np.testing.assert_array_equal(_pair_average(impl, dt, pairs).astype(np.int64), exp)
        truncated = _pair_average(impl, dt, pairs, core.OpFault.TRUNCATE_DST)
        assert (truncated.astype(np.int64) != exp).any()


@pytest.mark.parametrize("impl", TYPED, ids=lambda i: i.name)
def test_a_max_over_no_tap_is_the_types_lowest_value(impl):
    """Windows entirely in padding (reference 9.3: max starts at lowest(dst dt)): bf16 and
    f16 must not round -FLT_MAX to -Inf."""
    for dt in TYPES[impl.operands]:
        prb = driver.PoolProblem(parse_pool("mb1ic2ih4oh9kh2ph3"), driver.Dir.FWD_D, (dt,),
                                 parse_tag("abx"), "max", ImplFilter(), 0)
        prim = core.PoolPrimitive(impl, prb.shape, PoolAlg.MAX, Prop.FWD_TRAINING, dt=dt)
        bufs = driver.prepare(prb, prim, _route(prb), perf=False)
        bufs.run()
        got = bufs.out.array.astype(np.float64)
        assert np.isfinite(got).all() and (got == cfg.lowest(dt)).sum() >= 2 * 4
        res = driver.CaseResult(driver.Status.UNTESTED)
        driver.judge(prb, bufs, driver.reference(prb, bufs), res, 0)
        assert res.status is driver.Status.PASSED, (dt, res.diagnostics[:3])
