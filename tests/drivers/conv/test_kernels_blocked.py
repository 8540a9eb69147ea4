"""The channel-blocked rows (gemm_conv_blocked, kernels/conv/conv_gemm_nhwc.c) against the
C reference, bit for bit, in every direction: src and dst (and their diffs) are handed to
the kernels as [mb][c/B][spatial][B] with the channels padded up to the block, the
reference computes on the plain tensors. Integer data keeps every partial sum exact in
f32, so any summation order must match. Outputs start as NaN, so an unwritten point or a
padded tail left unwritten fails; the padded tail of an input holds NaN too, so a row
that reads it fails."""

from __future__ import annotations

import numpy as np
import pytest
import conv_rows
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.engine import memory

ROWS = conv_rows.groups(i for i in core.conv_impls() if i.name.startswith("gemm_conv_blocked:"))
RUNNABLE = [i for i in ROWS if core.isa_supported(i.isa)]
LAYOUT = {8: core.ActLayout.BLOCKED8, 16: core.ActLayout.BLOCKED16}
# The blocks each row takes: those its micro-kernel's width divides.
TAKES = {core.Isa.AVX512: (16,), core.Isa.AVX2: (8, 16), core.Isa.SCALAR: (8, 16)}

TAPS_STRIDED_1X1 = ["mb1ic256ih46iw24oc40kh1kw1sh2sw2ph0", "mb1ic256ih46oc40oh23kh1sh2ph0"]

# backward weights of pointwise layers (the pointwise routes): both tensors in place, the
# taps route behind them checked on them too. AVX2's row takes them all (input and output
# channels in whole 8s: its oc8 kernel's vectors are output channels, its ic8 twin's input
# channels, PW_SHORT_CALL's rule); AVX-512's those of POINTWISE_16 (input channels, its
# vectors, in whole 16s). Comments name AVX2's kernel and groups of vectors. (Which
# strided ones `any` sends to these rows is policy's rule; the rows take them all.)
POINTWISE_16 = [
    "mb3ic16ih300iw5oc56kh1kw1",                  # oc8: 2 k blocks an image; 2, 2 and 3
    "mb1ic1024ih16oc1024kh1",                     # oc8: weight rows 4 KiB apart: staged
    "mb5ic1024ih16oc1024kh1",                     # ... over 2 k blocks: added to
    "mb2ic1024ih3oc24kh1",                        # ic8 (more inputs): rows 4 KiB apart
    "mb1ic1024ih36oc8kh1",                        # ... over 2 k blocks: added to
    # AVX-512's groups of vectors: 4 cut 2 and 2, broadcast runs inner (more input than
    # output channels), images per k block over 2 k blocks
    "mb30ic64ih7oc40kh1",
    "mb2ic80id3ih4iw5oc96kd1kh1kw1",              # 5 cut 2 and 3, runs outer, 3D
    "mb2ic48ih10oc8kh1",                          # one group of 3, one run
    "mb3ic32ih2iw3oc16kh1kw1",                    # 6 points an image: no whole step
    # weights in one pass past the caches (AVX-512): 1 MiB from 16 points, 4 MiB from 9
    "mb1ic1024ih4oc256kh1",
    "mb1ic1024ih3oc1024kh1",
    # strided: src's points a stride apart in rows a stride apart
    "mb2ic64ih11oc48oh6kh1sh2ph0",                # odd input rows, the last one read
    "mb2ic32ih13iw9oc24oh5ow3kh1kw1sh3sw4ph0pw0",  # strides apart along h and w
    "mb30ic64ih14oc40oh7kh1sh2ph0",               # images per k block
    "mb1ic16ih130oc24oh65kh1sh2ph0",              # k blocks of whole output rows
    "mb2ic32iw9oc16ow5kw1sw2pw0",                 # 1D
    *TAPS_STRIDED_1X1,                            # (in SHAPES with the taps route's)
]
POINTWISE = [
    "mb2ic40ih10oc24kh1",                         # one group of 3 output blocks
    "mb30ic8ih7oc40kh1",                          # images per k block, a 2-block group
    "mb2ic24id3ih4iw5oc16kd1kh1kw1",              # 3D
    *POINTWISE_16,
]

SHAPES = [
    "mb1ic2iw9oc3kw3",                            # 1D, channels far below a block
    "ic4iw10oc6kw3sw2pw1",
    "ic2iw10oc2kw3sw4",                           # right padding -3
    "ic20ih6oc18kh3ph1",                          # 2D, tails in and out
    "ic2ih5iw7oc3kh3kw2ph1pw0",                   # rectangular
    "ic17ih8iw6oc9kh3kw3sh2sw1ph1pw1",            # stride: backward data skips taps
    "mb1ic20ih11iw9oc512kh3kw3sh2sw1ph1pw1",      # border columns: runs of strided rows
    "mb1ic17id5ih3iw6oc256kd1kh1kw3sd2pw1",       # ... cut at each output plane
    "ic2ih3oc2oh7kh2ph2",                         # outputs that read only padding
    "ic3ih10iw8oc5kh3kw2dh2dw3sh2",               # dilation, stride, negative pad
    "g2ic32ih6oc32kh3ph1",                        # groups of whole blocks
    "mb1ic5id4oc3kd3pd1",                         # 3D
    "g2ic32id5oc32kd3sd2pd1dd1",
    "mb2ic300ih5oc40kh1",                         # channels past a k block (256)
    "mb1ic30ih9oc13kh3ph1",                       # several taps per k block, M tail
    "mb1ic16ih37oc70kh1",                         # many row blocks and column blocks
    "mb3ic64ih7oc64kh3ph1",                       # mb > 1, whole blocks
    "mb0ic3ih5oc4kh3",                            # empty minibatch
    "mb2ic40ih10oc20kh1",                         # 1x1 at stride 1: A read in place
    "g2mb2ic32ih7oc64kh1",                        # (direct_fn), tails, groups, edge rows
    # the taps route (behind the pointwise ones, which take these too):
    "mb1ic256ih46iw24oc40kh1kw1sh2sw2ph0",       # strided 1x1 past L2: items gather points
    "mb1ic256ih46oc40oh23kh1sh2ph0",              # ... rows of 23, one group: in place
    "mb2ic40ih56oc270oh28kh1sh2ph0",              # ... rows of 28 (16-channel blocks): in
                                                  # place, each item's rows for 5 groups
    "g2ic32ih58oc64oh29kh1sh2ph0",                # ... and for one, in each of 2 groups
    "mb1ic192ih10oc250kh3ph1",                    # weights past L2: whole groups per thread
    # backward weights by direct convolution (run_dbw, AVX-512): blocks hold the
    # channels past the tensor's, and the taps route behind it checked on them too
    "mb2ic20ih9iw11oc18kh3kw3ph1pw1",             # tails in and out, borders
    "mb1ic40ih7iw9oc48kh3kw4ph1pw2dh1",           # 4 taps, dilation along h
    "mb3ic5ih6iw8oc3kh2kw5pw2dw1",                # 5 taps, dilation along w, tiny blocks
    *(t for t in POINTWISE if t not in TAPS_STRIDED_1X1),
    # backward weights by taps (run_bwt): diff_dst gathered per point across blocks
    "mb3ic48ih9oc20kh3sh2ph1dh1",                 # stride phases, dilation, oc tail
    "mb2ic32id3ih5iw5oc40kd3kh3kw3ph1pw1",        # 3D, one output plane, depth taps
    "mb2ic32id5ih4iw4oc16od3kd1kh1kw1sd2",        # 3D strided 1x1: not pointwise
]


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _blocked(x: np.ndarray, b: int, tail: float = np.nan) -> np.ndarray:
    """[mb][c][spatial] -> [mb][c/B][spatial][B], the padded tail set to tail."""
    mb, c = x.shape[:2]
    cp = -(-c // b) * b
    padded = np.full((mb, cp, *x.shape[2:]), tail, np.float32)
    padded[:, :c] = x
    return np.ascontiguousarray(np.moveaxis(padded.reshape(mb, cp // b, b, *x.shape[2:]), 2, -1))


def _plain(x: np.ndarray, c: int) -> np.ndarray:
    """The inverse of _blocked: the logical channels, and the padded tail apart."""
    mb, cb, b = x.shape[0], x.shape[1], x.shape[-1]
    full = np.moveaxis(x, -1, 2).reshape(mb, cb * b, *x.shape[2:-1])
    return np.ascontiguousarray(full[:, :c]), full[:, c:]


def _empty(shape: tuple[int, ...], b: int) -> np.ndarray:
    return _blocked(np.full(shape, np.nan, np.float32), b)


def _ints(rng, shape) -> np.ndarray:
    return rng.integers(-8, 9, size=shape).astype(np.float32)


CASES = [pytest.param(i, b, t, id=f"{i.name}-{b}-{t}")
         for i in RUNNABLE for b in TAKES[i.isa] for t in SHAPES]


def _attr(b: int, **kw) -> core.ConvAttr:
    return core.ConvAttr(layout=LAYOUT[b], **kw)


def test_rows_take_their_blocks_and_only_them():
    assert {i.isa for i in ROWS} == {core.Isa.AVX512, core.Isa.AVX2, core.Isa.SCALAR}
    shape = _shape("ic20ih6oc18kh3ph1")
    for impl in RUNNABLE:
        for attr in (core.ConvAttr(), core.ConvAttr(layout=core.ActLayout.NHWC)):
            with pytest.raises(core.Unimplemented):
                conv_rows.create(impl, shape, core.Direction.FWD, False, attr=attr)
        for b in (8, 16):
            if b in TAKES[impl.isa]:
                conv_rows.create(impl, shape, core.Direction.FWD, False, attr=_attr(b)).close()
            else:
                with pytest.raises(core.Unimplemented):
                    conv_rows.create(impl, shape, core.Direction.FWD, False, attr=_attr(b))
    # groups whose channels straddle a block are another row's (the route)
    for impl in RUNNABLE:
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, _shape("g2ic20ih6oc20kh3ph1"), core.Direction.FWD, False,
                             attr=_attr(TAKES[impl.isa][0]))


def test_low_precision_is_left_to_the_route():
    impl = RUNNABLE[0]
    b = TAKES[impl.isa][0]
    for attr in (_attr(b, src_dt="bf16", wei_dt="bf16", dst_dt="bf16"),
                 _attr(b, scales=core.Scales.OSCALE, wei_scales=(0.5,))):
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, _shape("ic3ih6oc4kh3ph1"), core.Direction.FWD, False,
                             attr=attr)


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,b,text", CASES)
def test_forward_matches_reference_exactly(impl, b, text, with_bias):
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    with conv_rows.create(impl, s, core.Direction.FWD, with_bias, attr=_attr(b)) as prim:
        dst = _empty(s.dst_shape, b)
        prim.bind(_blocked(src, b), prim.pack_weights(wei), bias if with_bias else None, dst)()
    ref = core.ref_conv_fwd(s, src, wei, bias if with_bias else None).astype(np.float32)
    out, tail = _plain(dst, s.oc)
    assert np.array_equal(out, ref) and not tail.any()


# Forward from channels-last src beside blocked dst (attr src_layout, the first layers'
# `any`): the direct rows, on their own block only.
DIRECT_BLOCK = {core.Isa.AVX512: 16, core.Isa.AVX2: 8}
NHWC_SRC_SHAPES = [
    "mb2ic3ih20oc32kh3sh2ph1",                    # MobileNet's first layer, small
    "mb1ic3ih23oc64kh7sh2ph3",                    # ResNet's
    "mb1ic1ih17oc16kh3sh3ph2dh1",                 # one channel; stride past the kernel
    "mb1ic4ih9iw9oc20kh3kw4pw1",                  # a folded window of 16 channels
    "mb1ic7ih12iw12oc40kh3kw5sw2pw2",             # ... of 35: more than two blocks
    "ic20ih6oc18kh3ph1",                          # a whole block and part of one
    "mb1ic20ih11iw9oc512kh3kw3sh2sw1ph1pw1",      # border columns: runs of strided rows
    "mb1ic5id4oc3kd3pd1",                         # 3D
    "ic3ih10iw8oc5kh3kw2dh2dw3sh2",               # dilation, stride, negative pad
    "mb2ic3ih10oc20kh1",                          # 1x1: image rows, not runs of points
    "mb1ic7ih9oc24kh1sh2",                        # strided 1x1: read in place
    "g2ic32ih6oc32kh3ph1",                        # groups: g * IC/G into each point
    "mb0ic3ih5oc4kh3",                            # empty minibatch
]
NHWC_SRC = [pytest.param(i, DIRECT_BLOCK[i.isa], t, id=f"{i.name}-{t}")
            for i in RUNNABLE if i.isa in DIRECT_BLOCK for t in NHWC_SRC_SHAPES]


def _nhwc(x: np.ndarray) -> np.ndarray:
    """[mb][c][spatial] -> [mb][spatial][c]."""
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,b,text", NHWC_SRC)
def test_forward_from_channels_last_src_matches_reference_exactly(impl, b, text, with_bias):
    s = _shape(text)
    rng = np.random.default_rng(len(text) + 3)
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    attr = _attr(b, src_layout=core.ActLayout.NHWC)
    with conv_rows.create(impl, s, core.Direction.FWD, with_bias, attr=attr) as prim:
        assert prim.name.endswith(":direct")
        dst = _empty(s.dst_shape, b)
        prim.bind(_nhwc(src), prim.pack_weights(wei), bias if with_bias else None, dst)()
    ref = core.ref_conv_fwd(s, src, wei, bias if with_bias else None).astype(np.float32)
    out, tail = _plain(dst, s.oc)
    assert np.array_equal(out, ref) and not tail.any()


def test_channels_last_src_is_the_direct_rows_forward_only():
    shape = _shape("ic3ih6oc18kh3ph1")
    for impl in RUNNABLE:
        for b in TAKES[impl.isa]:
            attr = _attr(b, src_layout=core.ActLayout.NHWC)
            direct = DIRECT_BLOCK.get(impl.isa) == b
            for row in impl.rows:   # its direct row alone, forward only
                if direct and row.name.endswith(":direct"):
                    conv_rows.create(row, shape, core.Direction.FWD, False, attr=attr).close()
                else:
                    with pytest.raises(core.Unimplemented):
                        conv_rows.create(row, shape, core.Direction.FWD, False, attr=attr)
                for direction in (core.Direction.BWD_DATA, core.Direction.BWD_WEIGHTS):
                    with pytest.raises(core.Unimplemented):
                        conv_rows.create(row, shape, direction, False, attr=attr)
    # beside plain or channels-last dst it is no layout of its own
    for layout in (core.ActLayout.PLAIN, core.ActLayout.NHWC):
        attr = core.ConvAttr(layout=layout, src_layout=core.ActLayout.BLOCKED16)
        with pytest.raises(core.Unimplemented):
            conv_rows.create(RUNNABLE[0], shape, core.Direction.FWD, False, attr=attr)


def _assert_backward_data_exact(impl, b, text):
    s = _shape(text)
    rng = np.random.default_rng(len(text) + 1)
    diff_dst, wei = _ints(rng, s.dst_shape), _ints(rng, s.wei_shape)
    with conv_rows.create(impl, s, core.Direction.BWD_DATA, False, attr=_attr(b)) as prim:
        diff_src = _empty(s.src_shape, b)
        prim.bind_bwd_data(_blocked(diff_dst, b), prim.pack_weights(wei), None, diff_src)()
    if s.mb:
        ref = core.ref_conv_bwd_data(s, diff_dst, wei).astype(np.float32)
        out, tail = _plain(diff_src, s.ic)
        assert np.array_equal(out, ref) and not tail.any()


@pytest.mark.parametrize("impl,b,text", CASES)
def test_backward_data_matches_reference_exactly(impl, b, text):
    _assert_backward_data_exact(impl, b, text)


# Strided backward data runs the blocked GEMM with input points as rows (the one-block
# kernels: 24 rows on AVX-512, 12 on AVX2): 1 to 25 points put every remainder on the last
# row panel, so each short tile height (conv_ukr.inc) runs.
@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_every_short_tile_height_matches_reference_exactly(impl):
    for b in TAKES[impl.isa]:
        for iw in range(1, 26):
            _assert_backward_data_exact(impl, b, f"mb1ic5iw{iw}oc7kw3sw2pw1")


@pytest.mark.parametrize("impl,b,text", CASES)
def test_backward_weights_matches_reference_exactly(impl, b, text):
    s = _shape(text)
    rng = np.random.default_rng(len(text) + 2)
    src, diff_dst = _ints(rng, s.src_shape), _ints(rng, s.dst_shape)
    ref_w, ref_b = core.ref_conv_bwd_weights(s, src, diff_dst, True)
    for made in conv_rows.bwd_weights_routes(impl, s, _attr(b)):
        with made as prim:
            # on a cache line, as the driver's buffers are (streaming stores need it)
            diff_wei = memory.aligned_empty(4 * int(np.prod(s.wei_shape))).view(np.float32)
            diff_wei = diff_wei.reshape(s.wei_shape)
            diff_wei.fill(np.nan)
            diff_bias = np.full(s.oc, np.nan, np.float32)
            prim.bind_bwd_weights(_blocked(src, b), _blocked(diff_dst, b), diff_wei,
                                  diff_bias)()
        assert np.array_equal(diff_wei, ref_w.astype(np.float32)), prim.name
        assert np.array_equal(diff_bias, ref_b.astype(np.float32)), prim.name


@pytest.mark.parametrize("group,b,takes", [
    ("gemm_conv_blocked:avx2", 8, POINTWISE), ("gemm_conv_blocked:avx2", 16, POINTWISE),
    ("gemm_conv_blocked:avx512", 16, POINTWISE_16)])
def test_pointwise_layers_run_on_the_pointwise_route(group, b, takes):
    """The pointwise shapes a group's pointwise row takes reach it (else its exactness
    test would check only the routes behind it), and only those do."""
    (impl,) = [i for i in ROWS if i.name == group]
    if not core.isa_supported(impl.isa):
        pytest.skip(f"no {impl.isa.name} on this CPU")
    for text in SHAPES:
        with conv_rows.create(impl, _shape(text), core.Direction.BWD_WEIGHTS, True,
                              attr=_attr(b)) as prim:
            row = prim.name.split("@")[0]   # (AVX2's: @ the kernel of the two it ran)
            assert row.endswith(":pointwise") is (text in takes), (text, prim.name)


@pytest.mark.parametrize("text,kernel", [
    ("mb16ic64ih56oc256kh1", "oc8"),      # more outputs than inputs, calls of 1024 points
    ("mb1ic64ih16oc64kh1", "oc8"),        # as many, calls of 256
    ("mb1ic64ih15oc64kh1", "ic8"),        # calls of 225: short
    ("mb1ic512ih7oc2048kh1", "ic8"),      # calls of 49 (one image)
    ("mb16ic512ih7oc2048kh1", "oc8"),     # ... of 784 (16 images)
    ("mb16ic144ih56oc24kh1", "ic8"),      # more inputs than outputs
    ("mb1ic16ih130oc24oh65kh1sh2ph0", "oc8"),  # strided: calls of 13 rows of 65 points
])
def test_avx2_pointwise_kernel_follows_the_rule(text, kernel):
    """AVX2's pointwise row runs its ic8 kernel (input channels in the vectors) where a
    layer has more input than output channels or its calls sum fewer than 256 points, else
    its oc8 kernel, and says which."""
    (impl,) = [i for i in ROWS if i.name == "gemm_conv_blocked:avx2"]
    if not core.isa_supported(impl.isa):
        pytest.skip(f"no {impl.isa.name} on this CPU")
    with conv_rows.create(impl, _shape(text), core.Direction.BWD_WEIGHTS, True,
                          attr=_attr(8)) as prim:
        assert prim.name == f"gemm_conv_blocked:avx2:pointwise@{kernel}", prim.name


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_sum_and_eltwise_post_ops_leave_the_tail_zero(impl):
    """A linear post-op with a shift would make the tail nonzero if it reached it."""
    b = TAKES[impl.isa][0]
    s = _shape("mb2ic20ih6oc18kh3ph1")
    rng = np.random.default_rng(5)
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    prior = _ints(rng, s.dst_shape)
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.LINEAR, alpha=1.0,
                         beta=3.0))
    with conv_rows.create(impl, s, core.Direction.FWD, True,
                          attr=_attr(b, post_ops=chain)) as prim:
        dst = _blocked(prior, b, 0.0)
        prim.bind(_blocked(src, b), prim.pack_weights(wei), bias, dst)()
    v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
    ref = np.where(v > 0, v, np.float32(0.25) * v) + np.float32(3.0)
    out, tail = _plain(dst, s.oc)
    assert np.array_equal(out, ref) and not tail.any()


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
@pytest.mark.parametrize("text", ["mb2ic20ih6iw30oc18kh3kw3ph1pw1", "mb2ic40ih10oc36kh1",
                                  "mb1ic16ih7oc16kh3ph1"])
def test_a_lone_relu_is_applied_in_the_store(impl, text):
    """sum then relu (its one eltwise entry, unscaled): the direct kernel applies it to the
    values it stores (conv_dblk.inc), not in a pass after; the 7x7 3x3 case runs by kw
    taps, where the pass stays."""
    b = TAKES[impl.isa][0]
    s = _shape(text)
    rng = np.random.default_rng(6)
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    prior = _ints(rng, s.dst_shape)
    for chain, alpha in (((), 0.25), ((core.PostOp(core.PostKind.SUM, scale=0.5),), 0.0)):
        relu = core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=alpha)
        with conv_rows.create(impl, s, core.Direction.FWD, True,
                              attr=_attr(b, post_ops=chain + (relu,))) as prim:
            dst = _blocked(prior, b, 0.0)
            prim.bind(_blocked(src, b), prim.pack_weights(wei), bias, dst)()
        v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32)
        if chain:
            v = v + np.float32(0.5) * prior
        ref = np.where(v > 0, v, np.float32(alpha) * v)
        out, tail = _plain(dst, s.oc)
        assert np.array_equal(out, ref) and not tail.any()


# Two outputs of 16 MiB or more (core.STREAM_MIN_BYTES, bdnn.h), two output blocks on
# AVX2: 510x516 points put the blocks 8421120 bytes apart (not a multiple of 4 KiB),
# stored past the caches on every ISA; 512x512 puts them 8 MiB apart, where AVX2's
# half-line stores go through the caches instead (BDNN_ALIAS_BYTES, conv_impl.h; bdnn_dc_execute).
STREAM_SHAPES = ["mb1ic3ih510iw516oc16kh3kw3ph1pw1", "mb1ic3ih512oc16kh3ph1"]


@pytest.mark.parametrize("text", STREAM_SHAPES)
@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_an_output_past_the_caches_is_exact(impl, text):
    """A large output with a lone relu applied before its stores: 3 input channels into
    16 outputs (AVX-512: the one-block instances' embedded-broadcast multiply-adds on a
    partial input block). Against NumPy, tap by tap: integer data keeps every sum exact
    in f32."""
    b = TAKES[impl.isa][0]
    s = _shape(text)
    oh, ow = s.dst_shape[-2:]
    rng = np.random.default_rng(8)
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    relu = core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25)
    dst = memory.aligned_empty(4 * int(np.prod(s.dst_shape))).view(np.float32)
    dst = dst.reshape(1, 16 // b, oh, ow, b)
    assert dst.nbytes >= core.STREAM_MIN_BYTES
    with conv_rows.create(impl, s, core.Direction.FWD, True,
                          attr=_attr(b, post_ops=(relu,))) as prim:
        prim.bind(_blocked(src, b), prim.pack_weights(wei), bias, dst)()
    padded = np.pad(src[0, :, 0], ((0, 0), (1, 1), (1, 1)))
    v = np.broadcast_to(bias[:, None, None], (16, oh, ow)).copy()
    for kh in range(3):
        for kw in range(3):
            v += np.tensordot(wei[0, :, :, 0, kh, kw], padded[:, kh:kh + oh, kw:kw + ow], 1)
    ref = np.where(v > 0, v, np.float32(0.25) * v)
    assert np.array_equal(_plain(dst, 16)[0][0], ref)


# A strided 1x1 whose src passes core.GATHER_AHEAD_MIN_BYTES: each work item gathers its
# points while the item before reads them ahead from a list of their lines. Placed half a
# point before a line's end (the C API takes any src), each point straddles two lines,
# which the list holds both of. Rows of 12 and 13 points: shorter than the rows that read
# in place.
AHEAD_SHAPES = [
    "mb2ic32ih512iw36oc24kh1kw1sh2sw3ph0",       # points three blocks apart along w
    "mb1ic20ih1800iw26oc16kh1kw1sh2sw2ph0",      # a tail of input channels
]


@pytest.mark.parametrize("straddling", [False, True], ids=["aligned", "straddling"])
@pytest.mark.parametrize("text", AHEAD_SHAPES)
@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_a_strided_1x1_reading_ahead_is_exact(impl, text, straddling):
    b = TAKES[impl.isa][0]
    offset = 64 - 4 * b // 2 if straddling else 0
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    blocked = _blocked(src, b)
    assert blocked.nbytes >= core.GATHER_AHEAD_MIN_BYTES
    moved = memory.aligned_empty(blocked.nbytes + 64)[offset:offset + blocked.nbytes]
    moved = moved.view(np.float32).reshape(blocked.shape)
    moved[...] = blocked
    dst = _empty(s.dst_shape, b)
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=_attr(b)) as prim:
        prim.bind(moved, prim.pack_weights(wei), bias, dst)()
    ref = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32)
    out, tail = _plain(dst, s.oc)
    assert np.array_equal(out, ref) and not tail.any()


def test_the_padding_garbage_defect_writes_the_tail():
    impl = RUNNABLE[0]
    b = TAKES[impl.isa][0]
    s = _shape("ic3ih6oc5kh3ph1")
    rng = np.random.default_rng(7)
    with conv_rows.create(impl, s, core.Direction.FWD, False, core.Fault.PADDING_GARBAGE,
                          attr=_attr(b)) as prim:
        dst = _empty(s.dst_shape, b)
        prim.bind(_blocked(_ints(rng, s.src_shape), b),
                  prim.pack_weights(_ints(rng, s.wei_shape)), None, dst)()
    assert (_plain(dst, s.oc)[1] == 1).all()


@pytest.mark.parametrize("direction", ["FWD_B", "BWD_D", "BWD_WB"])
@pytest.mark.parametrize("tag,row", [("nChw16c", "gemm_conv_blocked:avx512"),
                                     ("nChw8c", "gemm_conv_blocked:avx2")])
def test_cli_blocked_runs_on_the_native_row(direction, tag, row):
    if not core.isa_supported(core.Isa[row.split(":")[1].upper()]):
        pytest.skip(f"{row} does not run here")
    out = run_cli("--conv", f"--dir={direction}", f"--stag={tag}", f"--dtag={tag}",
                  "--skip-impl=+reorder", "-v5", "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and "+reorder" not in out
    assert f"implementation: {row}" in out


@pytest.mark.parametrize("args,native", [
    (("--dir=FWD_B",), True),                        # forward: the blocked rows first
    (("--dir=BWD_D",), True),                        # backward data at unit stride too
    (("--dir=BWD_D", "mb2ic20ih6oc18kh3sh2ph1"), False),   # strided: the route first
    (("--dir=BWD_WB",), False),                      # backward weights: the route first
])
def test_cli_blocked_rows_or_route_first_by_direction(args, native):
    if not core.isa_supported(core.Isa.AVX512):
        pytest.skip("the 16-wide blocked rows run on AVX-512")
    desc = [a for a in args if not a.startswith("--")] or ["mb2ic20ih6oc18kh3ph1"]
    opts = [a for a in args if a.startswith("--")]
    out = run_cli("--conv", *opts, "--stag=nChw16c", "--dtag=nChw16c", "-v5", *desc).out
    assert "PASSED" in out
    assert ("gemm_conv_blocked:avx512" in out and "+reorder" not in out) is native
    assert ("gemm_conv:" in out and "+reorder" in out) is not native


def test_cli_blocked_rows_on_request_resolve_the_other_side():
    # one side asked for, the route skipped: the other side's `any` takes the block too
    out = run_cli("--conv", "--dir=BWD_WB", "--stag=nChw16c", "--skip-impl=+reorder", "-v5",
                  "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and "gemm_conv_blocked:" in out and "dst any=aBcd16b" in out


def test_cli_groups_that_straddle_a_block_take_the_route():
    out = run_cli("--conv", "--stag=nChw16c", "--dtag=nChw16c", "--skip-impl=gemm_conv:",
                  "-v5", "g2mb2ic20ih6oc20kh3ph1").out
    assert "UNIMPLEMENTED" in out or "SKIPPED" in out
    out = run_cli("--conv", "--stag=nChw16c", "--dtag=nChw16c", "-v5",
                  "g2mb2ic20ih6oc20kh3ph1").out
    assert "PASSED" in out and "+reorder" in out and "gemm_conv_blocked" not in out
