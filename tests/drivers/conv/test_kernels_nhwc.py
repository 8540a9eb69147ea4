"""The channels-last rows (gemm_conv_nhwc, kernels/conv/conv_gemm_nhwc.c) against the C
reference, bit for bit, in every direction: src and dst (and their diffs) are handed to
the kernels as [mb][spatial][channels], the reference computes on the plain transposes.
Integer data keeps every partial sum exact in f32, so any summation order must match."""

from __future__ import annotations

import numpy as np
import pytest
import conv_rows
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc

NHWC = core.ConvAttr(layout=core.ActLayout.NHWC)
ROWS = conv_rows.groups(i for i in core.conv_impls() if i.name.startswith("gemm_conv_nhwc:"))
RUNNABLE = [i for i in ROWS if core.isa_supported(i.isa)]

SHAPES = [
    "mb1ic2iw9oc3kw3",                            # 1D
    "ic4iw10oc6kw3sw2pw1",
    "ic2iw10oc2kw3sw4",                           # right padding -3
    "ic3ih6oc4kh3ph1",                            # 2D
    "ic2ih5iw7oc3kh3kw2ph1pw0",                   # rectangular
    "ic4ih8iw6oc4kh3kw3sh2sw1ph1pw1",             # stride: backward data skips taps
    "ic2ih3oc2oh7kh2ph2",                         # outputs that read only padding
    "ic2ih10iw8oc2kh3kw2dh2dw3sh2",               # dilation, stride, negative pad
    "g2ic4ih6oc6kh3ph1",                          # groups
    "ic5ih7oc5kh3ph1_dw",                         # depthwise
    "mb1ic2id4oc3kd3pd1",                         # 3D
    "g2ic4id5oc4kd3sd2pd1dd1",
    "mb2ic300ih7oc50kh1",                         # channels past a k block (256)
    "mb1ic30ih9oc13kh3ph1",                       # several taps per k block, M tail
    "g2mb2ic64ih6oc38kh3ph1",                     # groups, column tails
    "mb1ic16ih37oc70kh1",                         # many row blocks and column blocks
    "mb1ic64ih7oc64kh3ph1",                       # mb1 7x7: blocks shrink for threads
    "mb0ic3ih5oc4kh3",                            # empty minibatch
    # backward weights by taps (run_bwt: 16 and more input channels per group)
    "mb2ic64ih14oc32kh1",                         # 1x1 stride 1: B read from src
    "mb3ic48ih9oc20kh3sh2ph1dh1",                 # stride phases, dilation
    "mb2ic32id3ih5iw5oc16kd3kh3kw3ph1pw1",        # 3D, one output plane, depth taps
    "mb1ic32id1ih6iw6oc16kd3kh3kw3pd1ph1pw1",     # 3D, only the middle depth tap live
    "g2mb2ic64ih8oc40kh3ph1",                     # groups: panel ranges across groups
    "mb1ic96ih5oc200kh3ph1",                      # many panels, k not split
    # ... past BWT_CACHED_MAX_BYTES (src and diff_dst together): each k block's
    # tiles read the next block ahead, whose ranges clamp to the tensors' edges
    "mb8ic256ih32oc64kh1",                        # 1x1, src (8 MiB) still read in place
    "mb9ic256ih32oc64kh1",                        # ... past it: points under a page too
    "mb3ic1024ih28oc32kh1",                       # ... a page a point past it: copied
    "mb8ic128ih48oc64kh3sh2ph1",                  # padded, strided: clamped windows
    # ... with the window's columns in ranges, A's panels outside (long k blocks where
    # all of A and the whole window leave short ones)
    "mb1ic2048iw150oc128kw1",                     # an inner product's shape (copied)
    "mb1ic1024iw300oc256kw1",                     # ... a page a point: in place (6x16: copied)
    "mb1ic512iw40oc24kw1",                        # ... half a page: in place on both tiles
    "mb1ic1024ih24oc32kh3sh2ph1",                 # 4 phases: ranges of 128 columns
    "g2mb1ic2048ih10oc48kh3ph1",                  # groups, tap windows per range
    # ... phase images per kw offset (narrow outputs), k blocks across images (flat)
    "mb7ic64ih7oc64kh3ph1",                       # blocks end inside an image
    "mb4ic32iw12oc16kw5pw2",                      # 1D: one group, blocks of 4 images
    "mb96ic512ih7oc16kh3ph1",                     # k split, read ahead across images
    # ... an odd count of panels: each thread its own rows
    "mb1ic32ih10oc128kh3ph1",                     # packed A, C through the scratch
    "mb1ic64ih6oc128kh1",                         # A and B read in place, C direct
    "mb1ic64ih6oc99kh1",                          # an odd channel count: A packed
    "mb2ic64ih6oc1024kh1",                        # diff_dst a page a point: A packed
    "mb3ic256ih6oc2048kh1",                       # ... src in place in column ranges
    # ... both read in place and in cache: blocks of the thread's share of k, as many
    # as keep B's panel within L1
    "mb3ic64ih5oc76kh1",                          # blocks run on across images
    "mb3ic32ih15oc16kh1",                         # ... several a thread (AVX-512)
    "mb1ic32ih72iw64oc16kh1kw1",                  # shares past the L1 block: several each
    "mb2ic32ih17oc256kh1",                        # no k split: even panels, own rows
    "g2mb2ic64ih6oc48kh1",                        # ... groups: panel ranges
] + [
    # backward weights by direct convolution (run_dbw: AVX-512, 2D, one group, unit
    # stride, 2 to 5 taps along w, whole vectors of output channels and whole calls of
    # input channels); the taps route behind it checked on them too
    *(DIRECT_SHAPES := [
        "mb2ic32ih9iw11oc32kh3kw3ph1pw1",         # border columns both sides
        "mb1ic24ih7iw9oc48kh3kw4ph1pw2",          # 4 taps (4 channels a call), ic tail
        "mb1ic16ih8iw12oc16kh2kw5pw2",            # 5 taps, rows without padding
        "mb2ic16ih9iw11oc16kh3kw3dh1dw2ph2pw3",   # dilation
        "mb1ic16ih4iw3oc16kh3kw3ph1pw2",          # no column with every tap inside
        "mb3ic8ih6iw6oc32kh2kw2",                 # 2 taps, fewer channels than an item
        "mb5ic64ih14oc64kh3ph1",                  # image blocks of several images
        "mb2ic256ih6oc32kh3ph1",                  # src through copies (256 channels)
        "mb1ic32ih5iw7oc256kh3kw3ph1pw1",         # diff_dst through copies
        "mb2ic264ih5iw5oc256kh2kw2",             # both, src's last block partial
    ]),
] + [
    # backward weights by windows (run_win: fewer input channels per group than taps
    # takes, output channels in whole panels of every tile width, no dilation along w)
    *(WINDOW_SHAPES := [
        "mb2ic3ih20oc64kh7sh2ph3",                # a first layer: 7 x 7, stride 2
        "mb2ic2iw10oc32kw3sw4",                   # 1D, the last window ends inside the row
        "mb3ic1ih12oc32kh5",                      # one channel, no padding
        "mb1ic4ih6iw40oc32kh3kw3pw5",             # outputs that read only padding
        "g2mb2ic6id5ih9iw11oc64od3oh5ow6kd3kh3kw4sd2sh2sw2pd1ph1pw2dd0dh1",  # groups, 3D
        "mb0ic3ih5oc32kh3",                       # empty minibatch: zeros
    ]),
]


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _nhwc(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


def _plain(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, -1, 1))


def _empty_nhwc(shape: tuple[int, ...]) -> np.ndarray:
    """A NaN-filled channels-last buffer for a plain 5D shape (unwritten points fail)."""
    return np.full((shape[0], *shape[2:], shape[1]), np.nan, np.float32)


def _ints(rng, shape) -> np.ndarray:
    return rng.integers(-8, 9, size=shape).astype(np.float32)


CASES = [pytest.param(i, t, id=f"{i.name}-{t}") for i in RUNNABLE for t in SHAPES]


def test_one_row_per_isa_and_each_takes_only_channels_last():
    assert {i.isa for i in ROWS} == {core.Isa.AVX512, core.Isa.AVX2, core.Isa.SCALAR}
    shape = _shape("ic3ih6oc4kh3ph1")
    for impl in RUNNABLE:
        with pytest.raises(core.Unimplemented):   # plain activations: another row's
            conv_rows.create(impl, shape, core.Direction.FWD, False)
        conv_rows.create(impl, shape, core.Direction.FWD, False, attr=NHWC).close()
    # and the plain rows refuse channels last
    plain = next(g for g in conv_rows.groups() if g.name.startswith("gemm_conv:"))
    with pytest.raises(core.Unimplemented):
        conv_rows.create(plain, shape, core.Direction.FWD, False, attr=NHWC)


def test_low_precision_is_left_to_the_route():
    impl = RUNNABLE[0]
    for attr in (core.ConvAttr("bf16", "bf16", "bf16", layout=core.ActLayout.NHWC),
                 core.ConvAttr(scales=core.Scales.OSCALE, wei_scales=(0.5,),
                               layout=core.ActLayout.NHWC)):
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, _shape("ic3ih6oc4kh3ph1"), core.Direction.FWD, False,
                             attr=attr)


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,text", CASES)
def test_forward_matches_reference_exactly(impl, text, with_bias):
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    with conv_rows.create(impl, s, core.Direction.FWD, with_bias, attr=NHWC) as prim:
        dst = _empty_nhwc(s.dst_shape)
        prim.bind(_nhwc(src), prim.pack_weights(wei), bias if with_bias else None, dst)()
    ref = core.ref_conv_fwd(s, src, wei, bias if with_bias else None).astype(np.float32)
    assert np.array_equal(_plain(dst), ref)


@pytest.mark.parametrize("impl,text", CASES)
def test_backward_data_matches_reference_exactly(impl, text):
    s = _shape(text)
    rng = np.random.default_rng(len(text) + 1)
    diff_dst, wei = _ints(rng, s.dst_shape), _ints(rng, s.wei_shape)
    with conv_rows.create(impl, s, core.Direction.BWD_DATA, False, attr=NHWC) as prim:
        diff_src = _empty_nhwc(s.src_shape)
        prim.bind_bwd_data(_nhwc(diff_dst), prim.pack_weights(wei), None, diff_src)()
    if s.mb:
        ref = core.ref_conv_bwd_data(s, diff_dst, wei).astype(np.float32)
        assert np.array_equal(_plain(diff_src), ref)


@pytest.mark.parametrize("impl,text", CASES)
def test_backward_weights_matches_reference_exactly(impl, text):
    s = _shape(text)
    rng = np.random.default_rng(len(text) + 2)
    src, diff_dst = _ints(rng, s.src_shape), _ints(rng, s.dst_shape)
    ref_w, ref_b = core.ref_conv_bwd_weights(s, src, diff_dst, True)
    for made in conv_rows.bwd_weights_routes(impl, s, NHWC):
        with made as prim:
            diff_wei = np.full(s.wei_shape, np.nan, np.float32)
            diff_bias = np.full(s.oc, np.nan, np.float32)
            prim.bind_bwd_weights(_nhwc(src), _nhwc(diff_dst), diff_wei, diff_bias)()
        assert np.array_equal(diff_wei, ref_w.astype(np.float32)), prim.name
        assert np.array_equal(diff_bias, ref_b.astype(np.float32)), prim.name


@pytest.mark.parametrize("text,avx512,avx2", [
    ("mb9ic256ih32oc64kh1", True, True),       # past 8 MiB, points under a page
    ("mb1ic1024ih14oc32kh1", True, False),     # a page a point, cached (6x16: half a page)
    ("mb3ic1024ih28oc32kh1", False, False),    # ... past 8 MiB: copied
    ("mb2ic48ih14oc32kh1", False, True),       # 48 channels: whole 16-wide columns only
    ("mb2ic64ih14oc32kh1sh2", False, False),   # strided
    ("mb2ic64ih14oc32kh1ph1", False, False),   # padded
    ("mb2ic64ih14oc32kh3ph1", False, False),   # taps
])
def test_backward_weights_src_in_place_rule(text, avx512, avx2):
    """What the taps route reads in place, which `any`'s choice of layout asks."""
    s = _shape(text)
    assert core.bwt_src_in_place(s, core.Isa.AVX512) is avx512
    assert core.bwt_src_in_place(s, core.Isa.AVX2) is avx2


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_backward_weights_direct_where_its_rules_hold(impl):
    with_direct = impl.isa is core.Isa.AVX512
    for text in DIRECT_SHAPES:
        with conv_rows.create(impl, _shape(text), core.Direction.BWD_WEIGHTS, True,
                              attr=NHWC) as prim:
            assert prim.name.endswith(":direct") == with_direct, (text, prim.name)
    # strided; one tap along w; 7 taps; groups; 3D; output channels short of a vector;
    # an image's tensors past L2: the taps route (or windows)
    for text in ("mb1ic32ih14oc32kh3sh2ph1", "mb1ic32ih14iw14oc32kh3kw1ph1pw0",
                 "mb1ic32ih14iw14oc32kh1kw7pw3", "g2mb1ic32ih14oc32kh3ph1",
                 "mb1ic32id4ih6iw6oc32kd3kh3kw3pd1ph1pw1", "mb1ic32ih14oc24kh3ph1",
                 "mb1ic256ih56oc256kh3ph1"):
        with conv_rows.create(impl, _shape(text), core.Direction.BWD_WEIGHTS, True,
                              attr=NHWC) as prim:
            assert not prim.name.endswith(":direct"), (text, prim.name)


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_backward_weights_by_windows_where_taps_refuse(impl):
    # taps takes NR/2 input channels per group and more (NR: the row's tile width)
    nr = {core.Isa.AVX512: 32, core.Isa.AVX2: 16, core.Isa.SCALAR: 4}[impl.isa]
    for text in WINDOW_SHAPES:
        s = _shape(text)
        route = "taps" if 2 * (s.ic // s.g) >= nr else "window"
        with conv_rows.create(impl, s, core.Direction.BWD_WEIGHTS, True, attr=NHWC) as prim:
            assert prim.name.endswith(":" + route), (text, prim.name)
    # dilation along w: a point's window is not one run; 16 input channels: taps
    for text in ("mb2ic3ih20iw20oc64kh3kw3dw1", "mb2ic16ih20oc64kh3ph1"):
        with conv_rows.create(impl, _shape(text), core.Direction.BWD_WEIGHTS, True,
                              attr=NHWC) as prim:
            assert not prim.name.endswith(":window"), (text, prim.name)


@pytest.mark.parametrize("impl", RUNNABLE, ids=[i.name for i in RUNNABLE])
def test_sum_and_eltwise_post_ops(impl):
    s = _shape("mb2ic20ih6oc18kh3ph1")
    rng = np.random.default_rng(5)
    src, wei, bias = _ints(rng, s.src_shape), _ints(rng, s.wei_shape), _ints(rng, s.oc)
    prior = _ints(rng, s.dst_shape)
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25))
    attr = core.ConvAttr(post_ops=chain, layout=core.ActLayout.NHWC)
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=attr) as prim:
        dst = _nhwc(prior)
        prim.bind(_nhwc(src), prim.pack_weights(wei), bias, dst)()
    v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
    ref = np.where(v > 0, v, np.float32(0.25) * v)
    assert np.array_equal(_plain(dst), ref)


@pytest.mark.parametrize("direction", ["FWD_B", "BWD_D", "BWD_WB"])
def test_cli_channels_last_runs_on_the_native_row(direction):
    out = run_cli("--conv", f"--dir={direction}", "--stag=nhwc", "--dtag=nhwc",
                  "--skip-impl=+reorder", "-v5", "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and "+reorder" not in out
    assert "implementation: gemm_conv_nhwc:" in out
    assert "src nhwc=acdb" in out and "dst nhwc=acdb" in out


@pytest.mark.parametrize("direction", ["FWD_B", "BWD_D", "BWD_WB"])
def test_cli_channels_last_runs_on_its_rows_first(direction):
    # every direction's channels-last rows outran the route (NATIVE_FIRST)
    out = run_cli("--conv", f"--dir={direction}", "--stag=nhwc", "--dtag=nhwc", "-v5",
                  "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and "gemm_conv_nhwc:" in out and "+reorder" not in out
    # one side asked for: the other side's `any` takes channels last too
    out = run_cli("--conv", f"--dir={direction}", "--stag=nhwc", "-v5",
                  "mb2ic20ih6oc18kh3ph1").out
    assert "gemm_conv_nhwc:" in out and "dst any=acdb" in out
    # the route on request
    out = run_cli("--conv", f"--dir={direction}", "--stag=nhwc", "--dtag=nhwc",
                  "--impl=+reorder", "-v5", "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and "gemm_conv:" in out and "+reorder" in out
