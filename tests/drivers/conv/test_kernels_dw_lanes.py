"""The depthwise rows on channels in lanes (dw_conv_nhwc, dw_conv_blocked;
kernels/conv/conv_dw_lanes.c) against the C reference, bit for bit: src and dst handed
over channels last ([mb][spatial][C]) or channel-blocked ([mb][C/B][spatial][B], the
padded tail NaN on input, so a row that reads it fails, and NaN on output, so one left
unwritten fails). Integer data keeps every partial sum exact in f32."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc

from .test_kernels_blocked import _blocked, _empty, _plain

NHWC = "nhwc"
LAYOUT = {NHWC: core.ActLayout.NHWC, 8: core.ActLayout.BLOCKED8, 16: core.ActLayout.BLOCKED16}
ROWS = [i for i in core.conv_impls() if i.name.startswith(("dw_conv_nhwc:", "dw_conv_blocked:"))]
RUNNABLE = [i for i in ROWS if core.isa_supported(i.isa)]
# The layouts each row takes: channels last, or the blocks its vector length divides.
BLOCKS = {core.Isa.AVX512_BF16: (16,), core.Isa.AVX512: (16,), core.Isa.AVX2: (8, 16),
          core.Isa.SCALAR: (8, 16)}


def _takes(impl) -> tuple:
    return (NHWC,) if impl.name.startswith("dw_conv_nhwc:") else BLOCKS[impl.isa]


SHAPES = [
    "ic5ih7oc5kh3ph1_dw",                         # channels below a vector: the tail
    "g20mb2ic20ih9iw11oc20kh3kw3sh2sw2ph1pw1",    # stride 2, a partial block
    "ic16ih5iw70oc16kh3kw3sh2sw2ph1pw1_dw",       # 3 taps at stride 2: segments 16, 16, 3
    "ic17ih6iw36oc17kh3kw3sh2sw2ph0pw0_dw",       # ... no padding: 16 + 1, 17 channels
    "ic40ih7oc40kh3ph1_dw",                       # MobileNet's small planes, 40 channels
    "mb2ic32ih8iw6oc32kh3kw3ph1pw1_dw",           # rows of 6 two at a time (4 pairs)
    "ic16ih9iw8oc16kh5kw3ph2pw1_dw",              # 5 tap rows, pairs of 8, a last row alone
    "mb2ic4ih9iw40oc4kh3kw5sh2sw3dw1ph2pw3_dw",   # stride 3, dilation, wide rows
    "ic6ih9oc6kh3dh1ph2_dw",                      # dilation
    "ic3id4oc3kd3pd1_dw",                         # 3D
    "ic3iw11oc3kw3sw2pw2_dw",                     # 1D
    "ic2ih3oc2oh7kh2ph2_dw",                      # outputs that read only padding
    "ic4ih5oc4kh2sh2_dw",                         # right padding -1
    "mb2ic48ih20oc48kh5ph2_dw",                   # 5x5, whole blocks
    "ic33ih6iw3oc33kh3kw3ph1pw1_dw",              # rows shorter than the register block
    "mb0ic16ih5oc16kh3ph1_dw",                    # empty minibatch
]
CASES = [pytest.param(i, lay, t, id=f"{i.name}-{lay}-{t}")
         for i in RUNNABLE for lay in _takes(i) for t in SHAPES]


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _ints(rng, shape) -> np.ndarray:
    return rng.integers(-8, 9, size=shape).astype(np.float32)


def _to(x: np.ndarray, lay, tail: float = np.nan) -> np.ndarray:
    if lay == NHWC:
        return np.ascontiguousarray(np.moveaxis(x, 1, -1))
    return _blocked(x, lay, tail)


def _from(x: np.ndarray, lay, c: int) -> tuple[np.ndarray, np.ndarray]:
    """The logical [mb][c][spatial] tensor, and the padded tail (empty for channels last)."""
    if lay == NHWC:
        return np.ascontiguousarray(np.moveaxis(x, -1, 1)), np.zeros(0, np.float32)
    return _plain(x, c)


def _out(shape, lay) -> np.ndarray:
    return _to(np.full(shape, np.nan, np.float32), lay) if lay == NHWC else _empty(shape, lay)


def _run(impl, lay, s, src, wei, bias, prior=None, post_ops=(), fault=core.Fault.NONE):
    attr = core.ConvAttr(layout=LAYOUT[lay], post_ops=tuple(post_ops))
    with core.ConvPrimitive(impl, s, core.Direction.FWD, bias is not None, fault,
                            attr=attr) as prim:
        dst = _out(s.dst_shape, lay) if prior is None else _to(prior, lay, 0.0)
        prim.bind(_to(src, lay), prim.pack_weights(wei), bias, dst)()
    return _from(dst, lay, s.oc)


def test_rows_take_depthwise_on_their_layouts_only():
    assert {i.isa for i in ROWS if i.name.startswith("dw_conv_nhwc:")} == \
        {core.Isa.AVX512, core.Isa.AVX2, core.Isa.SCALAR}
    assert {i.isa for i in ROWS if i.name.startswith("dw_conv_blocked:")} == \
        {core.Isa.AVX512, core.Isa.AVX2, core.Isa.SCALAR}
    dw, grouped = _shape("ic32ih6oc32kh3ph1_dw"), _shape("g16ic32ih6oc32kh3ph1")
    for impl in RUNNABLE:
        for lay in (NHWC, 8, 16):
            attr = core.ConvAttr(layout=LAYOUT[lay])
            if lay in _takes(impl):
                core.ConvPrimitive(impl, dw, core.Direction.FWD, False, attr=attr).close()
            else:
                with pytest.raises(core.Unimplemented):
                    core.ConvPrimitive(impl, dw, core.Direction.FWD, False, attr=attr)
        attr = core.ConvAttr(layout=LAYOUT[_takes(impl)[0]])
        with pytest.raises(core.Unimplemented):   # two channels per group: not depthwise
            core.ConvPrimitive(impl, grouped, core.Direction.FWD, False, attr=attr)
        for direction in (core.Direction.BWD_DATA, core.Direction.BWD_WEIGHTS):
            with pytest.raises(core.Unimplemented):
                core.ConvPrimitive(impl, dw, direction, False, attr=attr)
        with pytest.raises(core.Unimplemented):
            core.ConvPrimitive(impl, dw, core.Direction.FWD, False,
                               attr=core.ConvAttr("bf16", "bf16", "bf16", layout=LAYOUT[_takes(impl)[0]]))


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,lay,text", CASES)
def test_forward_matches_reference_exactly(impl, lay, text, with_bias):
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    out, tail = _run(impl, lay, s, src, wei, bias if with_bias else None)
    ref = core.ref_conv_fwd(s, src, wei, bias if with_bias else None).astype(np.float32)
    assert np.array_equal(out, ref) and not tail.any()


def _chain_case(s):
    """Inputs, a prior dst and the chain sum:0.5 + relu:0.25 + linear:1:3, with the f32
    result the chain gives (exact: small integers)."""
    rng = np.random.default_rng(5)
    src, wei, bias, prior = (_ints(rng, s.src_shape), _ints(rng, s.wei_shape),
                             _ints(rng, s.oc), _ints(rng, s.dst_shape))
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.LINEAR, alpha=1.0,
                         beta=3.0))
    v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
    return src, wei, bias, prior, chain, np.where(v > 0, v, np.float32(0.25) * v) + np.float32(3.0)


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_sum_then_eltwise_chain_in_order_and_the_tail_stays_zero(impl):
    """sum (scaled prior) in the store, then relu and a shifting linear on the row; the
    shift would make a blocked tail nonzero if it reached it."""
    lay = _takes(impl)[-1]
    s = _shape("mb2ic20ih7iw9oc20kh3kw3ph1pw1_dw")
    src, wei, bias, prior, chain, ref = _chain_case(s)
    out, tail = _run(impl, lay, s, src, wei, bias, prior, chain)
    assert np.array_equal(out, ref) and not tail.any()


@pytest.mark.parametrize("text", ["mb1ic16ih13oc16kh3ph1_dw",          # 13 rows, 2 borders
                                  "mb1ic16id2ih9iw9oc16kd3kh3kw3pd1ph1pw1_dw"])   # 3D
@pytest.mark.parametrize("nthr", [2, 3, 4])
@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_threads_split_a_run_of_rows(impl, nthr, text):
    """A 2D plane's rows are one row kernel call (a plane run, border rows included), a 3D
    plane's interior rows one call, each cut where the thread's range of rows ends: a row
    computed by two threads would add the scaled prior twice (the sum reads what the
    other thread already wrote), and a plane run that starts below the first row must
    still leave out the padding's tap rows."""
    lay = _takes(impl)[-1]
    s = _shape(text)
    src, wei, bias, prior, chain, ref = _chain_case(s)
    with core.threads(nthr):
        for _ in range(3):
            out, tail = _run(impl, lay, s, src, wei, bias, prior, chain)
            assert np.array_equal(out, ref) and not tail.any()


@pytest.mark.parametrize("fault", [core.Fault.SKIP_LAST_TAP, core.Fault.SKIP_LAST_IC,
                                   core.Fault.SUM_SCALE_DROPPED])
def test_defects_change_the_result(fault):
    impl = RUNNABLE[0]
    lay = _takes(impl)[0]
    s = _shape("mb2ic20ih6oc20kh3ph1_dw")
    rng = np.random.default_rng(9)
    src, wei, prior = (rng.integers(1, 6, size=x).astype(np.float32)
                       for x in (s.src_shape, s.wei_shape, s.dst_shape))
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),)
    good, _ = _run(impl, lay, s, src, wei, None, prior, chain)
    bad, _ = _run(impl, lay, s, src, wei, None, prior, chain, fault=fault)
    ref = core.ref_conv_fwd(s, src, wei, None).astype(np.float32) + np.float32(0.5) * prior
    assert np.array_equal(good, ref) and not np.array_equal(bad, ref)


def test_padding_garbage_defect_writes_the_tail():
    impl = next(i for i in RUNNABLE if i.name.startswith("dw_conv_blocked:"))
    s = _shape("ic5ih6oc5kh3ph1_dw")
    rng = np.random.default_rng(7)
    _, tail = _run(impl, _takes(impl)[0], s, _ints(rng, s.src_shape), _ints(rng, s.wei_shape),
                   None, fault=core.Fault.PADDING_GARBAGE)
    assert tail.size and (tail == 1).all()


@pytest.mark.parametrize("tag,row", [("nhwc", "dw_conv_nhwc:"), ("nChw16c", "dw_conv_blocked:"),
                                     ("any", "dw_conv_blocked:")])
def test_cli_depthwise_runs_on_the_native_row(tag, row):
    out = run_cli("--conv", "--dir=FWD_B", f"--stag={tag}", f"--dtag={tag}",
                  "--attr-post-ops=sum+relu", "-v5", "mb2ic32ih10oc32kh3sh2ph1_dw").out
    assert "PASSED" in out and "+reorder" not in out
    if core.isa_supported(core.Isa.AVX2):
        assert f"implementation: {row}" in out, out


# The bf16 rows (dw_conv_nhwc_bf16, dw_conv_blocked_bf16): the same kernel reading bf16
# inputs, widened exactly; small integers are exact in bf16 and every partial sum of
# theirs in f32, so the rows' outputs are the reference's, rounded once into dst's type.
BF16_ROWS = [i for i in core.conv_impls()
             if i.name.startswith(("dw_conv_nhwc_bf16:", "dw_conv_blocked_bf16:"))]
BF16_RUNNABLE = [i for i in BF16_ROWS if core.isa_supported(i.isa)]
BF16 = core.numpy_dtype("bf16")


def _takes_bf16(impl) -> tuple:
    return (NHWC,) if impl.name.startswith("dw_conv_nhwc_bf16:") else BLOCKS[impl.isa]


def _run_bf16(impl, lay, s, src, wei, bias, dst_dt, prior=None, post_ops=(),
              fault=core.Fault.NONE):
    """dst after one execution, as f64 (logical, and the padded tail apart); src and wei
    go in as bf16, the bias as f32, the prior (or NaN: unwritten) in dst_dt."""
    attr = core.ConvAttr("bf16", "bf16", dst_dt, layout=LAYOUT[lay], post_ops=tuple(post_ops))
    start = np.full(s.dst_shape, np.nan, np.float32) if prior is None else prior
    dst = _to(start, lay, np.nan if prior is None else 0.0).astype(core.numpy_dtype(dst_dt))
    with core.ConvPrimitive(impl, s, core.Direction.FWD, bias is not None, fault,
                            attr=attr) as prim:
        prim.bind(_to(src, lay).astype(BF16), prim.pack_weights(wei.astype(BF16)), bias, dst)()
    return _from(dst.astype(np.float32), lay, s.oc)


def _as(v: np.ndarray, dt: str) -> np.ndarray:
    return np.asarray(v, np.float32).astype(core.numpy_dtype(dt)).astype(np.float32)


def test_bf16_rows_take_bf16_depthwise_on_their_layouts_only():
    assert {i.isa for i in BF16_ROWS} == {core.Isa.AVX512_BF16, core.Isa.AVX512, core.Isa.AVX2,
                                         core.Isa.SCALAR}
    dw = _shape("ic32ih6oc32kh3ph1_dw")
    for impl in BF16_RUNNABLE:
        lay = _takes_bf16(impl)[0]
        for dst_dt in ("bf16", "f32"):
            core.ConvPrimitive(impl, dw, core.Direction.FWD, False,
                               attr=core.ConvAttr("bf16", "bf16", dst_dt,
                                                  layout=LAYOUT[lay])).close()
        refused = [core.ConvAttr(layout=LAYOUT[lay]),                                  # f32
                   core.ConvAttr("bf16", "bf16", "f16", layout=LAYOUT[lay]),
                   core.ConvAttr("bf16", "bf16", "bf16", layout=LAYOUT[lay],
                                 scales=core.Scales.OSCALE, wei_scales=(0.5,)),
                   core.ConvAttr("bf16", "bf16", "bf16", layout=LAYOUT[lay],           # sum 2nd
                                 post_ops=(core.PostOp(core.PostKind.ELTWISE,
                                                       alg=core.EltAlg.RELU),
                                           core.PostOp(core.PostKind.SUM, scale=0.5)))]
        for attr in refused:
            with pytest.raises(core.Unimplemented):
                core.ConvPrimitive(impl, dw, core.Direction.FWD, False, attr=attr)
        with pytest.raises(core.Unimplemented):
            core.ConvPrimitive(impl, dw, core.Direction.BWD_DATA, False,
                               attr=core.ConvAttr("bf16", "bf16", "bf16", layout=LAYOUT[lay]))


BF16_CASES = [pytest.param(i, lay, t, dst, id=f"{i.name}-{lay}-{t}-{dst}")
              for i in BF16_RUNNABLE for lay in _takes_bf16(i) for t in SHAPES
              for dst in ("bf16", "f32")]


@pytest.mark.parametrize("impl,lay,text,dst_dt", BF16_CASES)
def test_bf16_forward_matches_reference_rounded_once(impl, lay, text, dst_dt):
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    out, tail = _run_bf16(impl, lay, s, src, wei, bias, dst_dt)
    ref = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32)
    assert np.array_equal(out, _as(ref, dst_dt)) and not tail.any()


@pytest.mark.parametrize("dst_dt", ["bf16", "f32"])
@pytest.mark.parametrize("impl", BF16_RUNNABLE, ids=[i.name for i in BF16_RUNNABLE])
def test_bf16_sum_then_eltwise_chain_in_order_into_dst(impl, dst_dt):
    """The prior dst (of dst's type) scaled, relu and a shifting linear, then one rounding;
    the shift would make a blocked tail nonzero if it reached it. Channels last runs its
    rows in runs of vectors when the rows are few (mb1, 3 rows): not one run of dst."""
    for text in ("mb2ic20ih7iw9oc20kh3kw3ph1pw1_dw", "mb1ic40ih3iw5oc40kh3kw3ph1pw1_dw"):
        s = _shape(text)
        src, wei, bias, prior, chain, ref = _chain_case(s)
        out, tail = _run_bf16(impl, _takes_bf16(impl)[-1], s, src, wei, bias, dst_dt, prior,
                              chain)
        assert np.array_equal(out, _as(ref, dst_dt)) and not tail.any(), text


def test_bf16_padding_garbage_defect_writes_the_tail():
    impl = next(i for i in BF16_RUNNABLE if i.name.startswith("dw_conv_blocked_bf16:"))
    s = _shape("ic5ih6oc5kh3ph1_dw")
    rng = np.random.default_rng(7)
    _, tail = _run_bf16(impl, _takes_bf16(impl)[0], s, _ints(rng, s.src_shape),
                        _ints(rng, s.wei_shape), None, "bf16",
                        fault=core.Fault.PADDING_GARBAGE)
    assert tail.size and (tail == 1).all()


@pytest.mark.parametrize("tag,row", [("nhwc", "dw_conv_nhwc_bf16:"),
                                     ("nChw16c", "dw_conv_blocked_bf16:"),
                                     ("any", "dw_conv_blocked_bf16:")])
def test_cli_bf16_depthwise_runs_on_the_native_row(tag, row):
    out = run_cli("--conv", "--dir=FWD_B", "--dt=bf16", f"--stag={tag}", f"--dtag={tag}",
                  "--attr-post-ops=sum+relu", "-v5", "mb2ic32ih10oc32kh3sh2ph1_dw").out
    assert "PASSED" in out and "+reorder" not in out
    if core.isa_supported(core.Isa.AVX2):
        assert f"implementation: {row}" in out, out


@pytest.mark.parametrize("tag,family", [("nhwc", "dw_conv_nhwc_bf16"),
                                        ("nChw16c", "dw_conv_blocked_bf16"),
                                        ("any", "dw_conv_blocked_bf16")])
def test_bf16_dot_product_row_leads_only_where_512_bit_operations_split(tag, family):
    """The AVX512_BF16 row (a dot product per tap) comes before the AVX-512 one (a shift and
    an FMA) only on cores that run 512-bit operations in two halves; the order decides what
    a case runs, `any`'s layout entries of AVX512_BF16 included, and both rows stay in the
    table."""
    names = [i.name for i in core.conv_impls()]
    dp, widen = names.index(f"{family}:avx512_bf16"), names.index(f"{family}:avx512")
    assert abs(dp - widen) == 1 and (dp < widen) is core.splits_512()
    if not core.isa_supported(core.Isa.AVX512_BF16):
        return
    out = run_cli("--conv", "--dt=bf16", f"--stag={tag}", f"--dtag={tag}", "-v5",
                  "mb1ic32ih10oc32kh3ph1_dw").out
    isa = "avx512_bf16" if core.splits_512() else "avx512"
    assert "PASSED" in out and re.search(rf"implementation: {family}:{isa}\b", out), out


@pytest.mark.parametrize("impl", BF16_RUNNABLE, ids=[i.name for i in BF16_RUNNABLE])
def test_bf16_store_keeps_nan_and_rounds_ties_to_even(impl):
    """The row kernel rounds into a bf16 dst itself (no eltwise entry): a NaN input gives
    NaN in the outputs that read it, and the others round to nearest even, ties included
    (sums such as 257, halfway between 256 and 258, occur among these integers)."""
    s = _shape("mb1ic40ih7oc40kh3ph1_dw")
    rng = np.random.default_rng(11)
    src, wei = rng.integers(-8, 9, size=s.src_shape).astype(np.float32), _ints(rng, s.wei_shape)
    bias = rng.integers(250, 262, size=s.oc).astype(np.float32)
    src[0, 3, 0, 3, 3] = np.nan
    out, tail = _run_bf16(impl, _takes_bf16(impl)[-1], s, src, wei, bias, "bf16")
    ref = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32)
    assert np.array_equal(np.isnan(out), np.isnan(ref)) and np.isnan(out).sum() == 9
    finite = ~np.isnan(ref)
    assert np.array_equal(out[finite], _as(ref, "bf16")[finite]) and not tail.any()


@pytest.mark.parametrize("impl", BF16_RUNNABLE, ids=[i.name for i in BF16_RUNNABLE])
def test_bf16_sum_alone_is_read_and_rounded_in_the_store(impl):
    """A chain of a sum alone stays in the row kernel's store: the prior bf16 dst widened,
    scaled and added, the result rounded once; channels past a vector (20) included."""
    s = _shape("mb2ic20ih7iw9oc20kh3kw3ph1pw1_dw")
    rng = np.random.default_rng(3)
    src, wei, bias, prior = (_ints(rng, s.src_shape), _ints(rng, s.wei_shape),
                             _ints(rng, s.oc), _ints(rng, s.dst_shape))
    out, tail = _run_bf16(impl, _takes_bf16(impl)[-1], s, src, wei, bias, "bf16", prior,
                          (core.PostOp(core.PostKind.SUM, scale=0.5),))
    v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
    assert np.array_equal(out, _as(v, "bf16")) and not tail.any()


@pytest.mark.parametrize("impl", BF16_RUNNABLE, ids=[i.name for i in BF16_RUNNABLE])
def test_bf16_store_keeps_denormal_outputs(impl):
    """Denormal outputs (a denormal bias over zero products, added in f32 after the taps)
    keep their bits in the bf16 store, as dt.h's conversion does: vcvtneps2bf16, which
    the AVX512_BF16 rows store with elsewhere, would flush them to zero."""
    s = _shape("mb1ic32ih5oc32kh3ph1_dw")
    src = np.zeros(s.src_shape, np.float32)
    wei = _ints(np.random.default_rng(5), s.wei_shape)
    tiny = np.float32(2.0 ** -130)   # a bf16 denormal (the smallest normal is 2^-126)
    bias = np.where(np.arange(s.oc) % 3 == 0, -tiny, tiny).astype(np.float32)
    out, tail = _run_bf16(impl, _takes_bf16(impl)[-1], s, src, wei, bias, "bf16")
    want = np.broadcast_to(bias.reshape((1, -1) + (1,) * (out.ndim - 2)), out.shape)
    assert np.array_equal(out, want) and np.all(out != 0) and not tail.any()
