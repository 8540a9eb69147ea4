"""Every pooling kernel (each ISA variant the CPU runs, on each layout its row takes: plain,
channels last, blocked by 8 and 16) against the reference, and the workspace contract:
queried, present exactly for training max, every entry written."""

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import reorders
from benchdnn_py.common.layout import parse_tag
from benchdnn_py.core import PoolAlg, PoolLayout, Prop
from benchdnn_py.drivers.base import CaseResult
from benchdnn_py.drivers.pool import cfg, driver
from benchdnn_py.drivers.pool.desc import parse_pool
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.status import Status

RUNNABLE = [i for i in core.pool_impls() if core.isa_supported(i.isa)]
IMPLS = [i for i in RUNNABLE if i.operands is core.Operands.F32]
PLAIN_IMPLS = [i for i in IMPLS if PoolLayout.NCX in core.pool_impl_layouts(i)]
# The tags that put a case on each kernel layout (layout.py's meta tags, any rank).
TAGS = {PoolLayout.NCX: ("abx",), PoolLayout.NXC: ("axb",),
        PoolLayout.NCX8C: ("aBx8b",), PoolLayout.NCX16C: ("aBx16b",)}
# Channel counts below, at, and past the blocks (5 = 8 - 3, 20 = 16 + 4) and, for channels
# last, past its 64-channel chunks (70 = 64 + 6).
SHAPES = ["mb2ic5iw17kw3sw2pw1", "mb2ic4ih10kh3ph1", "mb1ic3ih9iw11kh3kw2sh2sw3dh1ph1pw1",
          "mb1ic2id6kd3sd2pd1", "mb1ic16ih7kh7", "mb2ic3ih12kh2sh2", "mb1ic20ih6kh3sh2ph1",
          "mb1ic70iw9kw3pw1", "mb1ic13id4ih5iw3kd2kh3kw2sh2ph1pw1"]


def impl_tags(impl):
    """The tags of every layout the row takes."""
    return [t for lay in sorted(core.pool_impl_layouts(impl)) for t in TAGS[lay]]


def _problem(text, direction, alg, dt="f32", tag="abx"):
    return driver.PoolProblem(parse_pool(text), direction, (dt,), parse_tag(tag),
                              alg, ImplFilter(), 0)


def _primitive(impl, prb, prop=None, fault=core.OpFault.NONE, lay=None):
    """impl's primitive for the case on the case's own layout (which impl must take), or
    on lay (one channel: plain and channels last are one memory)."""
    lay = lay or driver.kernel_layout(prb)
    assert lay in core.pool_impl_layouts(impl), (impl.name, prb.tag)
    shape = dataclasses.replace(prb.shape, layout=lay)
    return core.PoolPrimitive(impl, shape, prb.kalg, prop or prb.dir.prop, fault, prb.dt[0])


def _route(prb):
    """The case's reorder route: empty, the primitive runs on the case's layout."""
    route = driver.make_route(prb, CaseResult(Status.UNTESTED), routed=False)
    assert route is not None and not route.active
    return route


def _check(prb, prim):
    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
    bufs.run()
    assert bufs.out.intact()
    res = driver.CaseResult(driver.Status.UNTESTED)
    driver.judge(prb, bufs, driver.reference(prb, bufs), res, 0)
    return bufs, res


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("direction", list(driver.Dir), ids=lambda d: d.value)
@pytest.mark.parametrize("alg", ["max", "avg_np", "avg_p"])
def test_kernels_match_the_reference(impl, direction, alg):
    """judge() also checks the poison of an unwritten workspace entry and that a blocked
    output's padded channel tail holds zeros."""
    for tag in impl_tags(impl):
        for text in SHAPES:
            prb = _problem(text, direction, alg, tag=tag)
            _, res = _check(prb, _primitive(impl, prb))
            assert res.status is driver.Status.PASSED, (tag, text, res.diagnostics[:3])


def test_rows_refuse_the_layouts_they_do_not_take():
    for impl in IMPLS:
        for lay in set(PoolLayout) - core.pool_impl_layouts(impl):
            shape = dataclasses.replace(_problem("mb1ic3ih5kh3", driver.Dir.FWD_D, "max").shape,
                                        layout=lay)
            with pytest.raises(core.Unimplemented):
                core.PoolPrimitive(impl, shape, PoolAlg.MAX, Prop.FWD_TRAINING)


@pytest.mark.parametrize("tag", ["aBx8b", "aBx16b"])
@pytest.mark.parametrize("direction", list(driver.Dir), ids=lambda d: d.value)
def test_a_blocked_outputs_padded_tail_is_zero_whatever_the_inputs_tail(tag, direction):
    """The padded channels of the input hold garbage (NaN, huge values): the output's padded
    channels still come out zero, and the real channels are unaffected."""
    impl = next(i for i in IMPLS if PoolLayout.NCX16C in core.pool_impl_layouts(i))
    for alg in ("max", "avg_p"):
        prb = _problem("mb2ic11ih6kh3ph1", direction, alg, tag=tag)
        prim = _primitive(impl, prb)
        bufs = driver.prepare(prb, prim, _route(prb), perf=False)
        name = "dst" if direction is driver.Dir.BWD_D else "src"
        lay = prb.layout(name)
        pad = lay.padding_offsets()
        assert pad.size
        # rebind on inputs whose padded tail is garbage
        values = bufs.diff_dst if direction is driver.Dir.BWD_D else bufs.src
        placed = reorders.place(values.reshape(-1), lay, "f32").copy()
        placed[pad[0::2]] = np.nan
        placed[pad[1::2]] = 3e38
        bufs.out.array[:] = 7.0
        if direction is driver.Dir.BWD_D:
            prim.bind_bwd(placed, bufs.ws, bufs.out.array)()
        else:
            prim.bind_fwd(placed, bufs.out.array, bufs.ws)()
        out_lay = prb.layout("src" if direction is driver.Dir.BWD_D else "dst")
        assert (bufs.out.array[out_lay.padding_offsets()] == 0).all()
        res = driver.CaseResult(driver.Status.UNTESTED)
        driver.judge(prb, bufs, driver.reference(prb, bufs), res, 0)
        assert res.status is driver.Status.PASSED, (alg, res.diagnostics[:3])


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
def test_workspace_is_queried_and_only_training_max_has_one(impl):
    for tag in impl_tags(impl):
        prb = _problem("mb2ic3ih7kh3", driver.Dir.FWD_D, "max", tag=tag)
        shape = _primitive(impl, prb).shape
        ws = core.pool_workspace(impl, shape, PoolAlg.MAX, Prop.FWD_TRAINING)
        # one entry per dst element of the layout (a blocked layout's padding included)
        assert ws.nbytes == ws.elem_bytes * prb.layout("dst").size and ws.elem_bytes > 0
        assert core.pool_workspace(impl, shape, PoolAlg.MAX, Prop.FWD_INFERENCE).nbytes == 0
        assert core.pool_workspace(impl, shape, PoolAlg.AVG_P, Prop.FWD_TRAINING).nbytes == 0
        buf = ws.allocate(cfg.WORKSPACE_POISON)
        assert buf.nbytes == ws.nbytes and (buf == cfg.WORKSPACE_POISON).all()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("fault", [core.OpFault.POOL_WS_IGNORED, core.OpFault.POOL_WS_UNWRITTEN],
                         ids=lambda f: f.name.lower())
def test_workspace_defects_are_caught_on_every_row(impl, fault):
    """The deliberate defects act on every row: backward max fails on them (wrong or no
    taps), and forward training with an unwritten workspace fails on the poison."""
    for tag in impl_tags(impl):
        prb = _problem("mb2ic20ih6kh3sh2ph1", driver.Dir.BWD_D, "max", tag=tag)
        _, res = _check(prb, _primitive(impl, prb, fault=fault))
        assert res.status is driver.Status.FAILED, (tag, fault)
        fwd = _problem("mb2ic20ih6kh3sh2ph1", driver.Dir.FWD_D, "max", tag=tag)
        _, res = _check(fwd, _primitive(impl, fwd, fault=fault))
        want = "workspace left unwritten" if fault is core.OpFault.POOL_WS_UNWRITTEN else ""
        assert (res.status, res.reason or "") == (
            driver.Status.FAILED if want else driver.Status.PASSED, want), (tag, fault)


def test_training_writes_every_workspace_entry_with_the_winning_tap():
    prb = _problem("mb1ic2ih6kh3sh2ph1", driver.Dir.FWD_D, "max")
    prim = core.PoolPrimitive(PLAIN_IMPLS[0], prb.shape, PoolAlg.MAX, Prop.FWD_TRAINING)
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


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
def test_a_corrupt_workspace_never_writes_outside_diff_src(impl):
    for tag in impl_tags(impl):
        prb = _problem("mb1ic2ih6kh3sh2ph1", driver.Dir.BWD_D, "max", tag=tag)
        prim = _primitive(impl, prb)
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
    tags = impl_tags(impl)
    for tag in tags:
        for dt in TYPES[impl.operands]:
            for direction in driver.Dir:
                for alg in ("max", "avg_np", "avg_p"):
                    for text in SHAPES:
                        prb = _problem(text, direction, alg, dt, tag)
                        if driver.unsupported(prb):
                            continue
                        bufs, res = _check(prb, _primitive(impl, prb))
                        assert bufs.out.array.dtype == core.numpy_dtype(dt)
                        assert res.status is driver.Status.PASSED, (tag, dt, text,
                                                                    res.diagnostics[:3])
                        checked += 1
    per_dir = 3 * len(SHAPES) * len(tags)
    assert checked == {core.Operands.INT8: 3 * 2 * per_dir}.get(impl.operands, 3 * per_dir)


def _pair_average(impl, dt, pairs, fault=core.OpFault.NONE):
    """avg_p over windows of two (kw2 sw2): (a + b) / 2 in f32, stored in dt. One channel,
    on the row's first layout (a blocked one pads it to its block: the values sit at the
    block's first lane)."""
    n = pairs.size // 2
    prb = _problem(f"mb1ic1iw{2 * n}kw2sw2", driver.Dir.FWD_I, "avg_p", dt, impl_tags(impl)[0])
    prim = _primitive(impl, prb, fault=fault, lay=min(core.pool_impl_layouts(impl)))
    b = prim.shape.layout.channel_block
    src = np.zeros(pairs.size * b, pairs.dtype)
    src[::b] = pairs
    out = np.empty(n * b, pairs.dtype)
    prim.bind_fwd(src, out, None)()
    return out[::b]


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
        for tag in impl_tags(impl):
            prb = _problem("mb1ic2ih4oh9kh2ph3", driver.Dir.FWD_D, "max", dt, tag)
            bufs, res = _check(prb, _primitive(impl, prb))
            got = bufs.out.array.astype(np.float64)
            assert np.isfinite(got).all() and (got == cfg.lowest(dt)).sum() >= 2 * 4
            assert res.status is driver.Status.PASSED, (dt, tag, res.diagnostics[:3])


# -- the user scratchpad --------------------------------------------------------------------

SCRATCH_ROWS = [i for i in RUNNABLE if i.operands in (core.Operands.F32, core.Operands.BF16)]


@pytest.mark.parametrize("impl", SCRATCH_ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("direction", [driver.Dir.FWD_D, driver.Dir.BWD_D],
                         ids=lambda d: d.value)
def test_user_scratchpad_gives_the_library_modes_bits(impl, direction, monkeypatch):
    """In a scratchpad poisoned 0xFF, then 0x00, every layout the row takes writes the same
    bits as with its own memory: the kernels write each part before reading it, and the
    reported size holds every part (a short one would leave the guard zones or fail)."""
    dt = "f32" if impl.operands is core.Operands.F32 else "bf16"
    sized = 0
    for text in ("mb2ic4ih10kh3ph1", "mb1ic20ih6kh3sh2ph1", "mb1ic13id4ih5iw3kd2kh3kw2sh2ph1pw1"):
        for tag in impl_tags(impl):
            for alg in ("max", "avg_p"):
                prb = _problem(text, direction, alg, dt, tag)
                shape = dataclasses.replace(prb.shape, layout=driver.kernel_layout(prb))
                outs = []
                for user, poison in ((False, 0), (True, 0xFF), (True, 0x00)):
                    monkeypatch.setattr(core.pool, "scratchpad_buffer",
                                        lambda n, p=poison: core.conv.scratchpad_buffer(n, p))
                    prim = core.PoolPrimitive(impl, shape, prb.kalg, prb.dir.prop, dt=dt,
                                              user_scratchpad=user)
                    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
                    bufs.run()
                    assert bufs.out.intact()
                    outs.append(bufs.out.array.view(np.uint8).copy())
                sized = max(sized, prim.scratchpad_bytes)
                assert prim.memory_bytes == prim.scratchpad_bytes + prim.workspace_bytes
                for out in outs[1:]:
                    np.testing.assert_array_equal(out, outs[0], err_msg=(text, tag, alg))
    # the plain rows' bounds (and bf16's widened planes, backward averages' accumulators)
    assert sized > 0


def test_a_scratchpad_sized_for_fewer_threads_is_refused():
    """The size is the thread count's: a scratchpad sized at one thread, run at two, would
    be overrun; the call refuses it and writes nothing."""
    impl = next(i for i in SCRATCH_ROWS if i.operands is core.Operands.BF16)
    prb = _problem("mb2ic4ih10kh3ph1", driver.Dir.FWD_D, "avg_p", "bf16")
    with core.threads(1):
        prim = core.PoolPrimitive(impl, prb.shape, prb.kalg, prb.dir.prop, dt="bf16",
                                  user_scratchpad=True)
    src = np.ones(prb.shape.elems(prb.shape.src_shape), core.numpy_dtype("bf16"))
    dst = np.zeros(prb.shape.elems(prb.shape.dst_shape), core.numpy_dtype("bf16"))
    with core.threads(2), pytest.raises(core.InvalidProblem):
        prim.bind_fwd(src, dst, None)()
    assert not dst.astype(np.float32).any()
