"""Every usable implementation of the C core against the C reference, bit for bit.

Integer data keeps every partial sum exact in f32, so any summation order must give the
reference's value exactly (benchdnn's conv threshold is 0). Also: the deliberate defects
(core.Fault) really change the result, and closing a primitive twice is harmless.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import conv_rows
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.engine import memory


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _is_depthwise(s: core.ConvShape) -> bool:
    return s.g == s.ic == s.oc


FWD = core.Direction.FWD
# The f32 implementations on plain activations (the data-type ones have tests of their
# own: test_kernels_dt.py; the channels-last ones, test_kernels_nhwc.py; the blocked
# ones, test_kernels_blocked.py; the depthwise ones on those layouts,
# test_kernels_dw_lanes.py; fused_dw, which takes only problems with a dw post-op,
# test_dw_fusion.py; Winograd, inexact by design, test_wino.py).
# (A GEMM family's routes are rows of their own: each group runs the first that accepts,
# as the drivers do; conv_rows.)
IMPLS = conv_rows.groups(
    i for i in core.conv_impls()
    if core.isa_supported(i.isa) and i.operands is core.Operands.F32
    and not i.name.startswith(("gemm_conv_nhwc:", "gemm_conv_blocked:", "fused_dw",
                               "wino_f43", "dw_conv_nhwc:", "dw_conv_blocked:")))
IMPL_IDS = [i.name for i in IMPLS]

SHAPES = [
    # 1D
    "mb1ic2iw9oc3kw3",
    "ic4iw10oc6kw3sw2pw1",
    "mb3ic2iw7oc4kw2dw1pw1",
    "ic2iw10oc2kw3sw4",                          # right padding -3
    # 2D
    "mb1ic1ih5oc1kh3",
    "ic3ih5oc3kh2sh2",                           # right padding -1
    "ic3ih6oc4kh3ph1",
    "ic2ih5iw7oc3kh3kw2ph1pw0",                  # rectangular
    "ic4ih8iw6oc4kh3kw3sh2sw1ph1pw1",
    "ic3ih7oc2kh3sh3ph2",
    "ic2ih4oc3oh6kh3ph1",                        # explicit large right padding (3)
    "ic2ih3oc2oh7kh2ph2",                        # outputs that read only padding
    "ic2ih9oc3kh3dh1ph2",                        # dilation
    "ic2ih10iw8oc2kh3kw2dh2dw3sh2",              # dilation, stride, negative pad
    "g2ic4ih6oc6kh3ph1",                         # groups
    "g3mb1ic6ih7oc3kh3sh2ph1",
    # depthwise
    "ic5ih7oc5kh3ph1_dw",
    "g4mb3ic4ih6iw5oc4kh2kw3sh2sw1ph0pw1",
    "ic3iw11oc3kw3sw2pw2_dw",                    # 1D depthwise
    "ic6ih9oc6kh3dh1ph2_dw",                     # depthwise dilation
    "ic3id4oc3kd3pd1_dw",                        # 3D depthwise
    "ic2ih3oc2oh7kh2ph2_dw",                     # depthwise, padding-only outputs
    "ic4ih5oc4kh2sh2_dw",                        # depthwise, right padding -1
    "mb2ic4ih9iw40oc4kh3kw5sh2sw3dw1ph2pw3_dw",   # depthwise: stride 3 phases, dilation,
                                                 # rows of several vectors and a tail
    "ic40ih7oc40kh3ph1_dw",                      # MobileNet's small planes
    # 3D
    "mb1ic2id4oc3kd3pd1",
    "ic2id5ih4iw6oc3kd2kh3kw3sd2sh1sw2pd0ph1pw1",
    "g2ic4id5oc4kd3sd2pd1dd1",
    # blocking edges: M = oc/g not a multiple of 12/6/4, N = spatial not a multiple of
    # 32/16/4, K = ic/g*taps > 256 (several k blocks, some split inside a channel's taps)
    "mb2ic300ih7oc50kh1",                        # K=300, M=50, N=49
    "mb1ic30ih9oc13kh3ph1",                      # K=270, M=13, N=81
    "mb3ic29ih11iw5oc7kh3kw3sh2ph1pw1",          # K=261, N=30
    "mb1ic10id5oc7kd3pd1",                       # 3D, K=270, N=125
    "g2mb2ic64ih6oc38kh3ph1",                    # groups, K=288 per group, M=19
    "mb1ic2ih37oc25kh1",                         # N=1369, several column blocks, M=25
    "mb1ic3ih33iw35oc17kh3kw3sw2ph1pw1",         # odd N across micro-panels, stride 2
    "mb2ic48ih20oc48kh5ph2_dw",                  # bigger depthwise
]


def _data(shape: core.ConvShape, with_bias: bool, seed: int):
    rng = np.random.default_rng(seed)
    src = rng.integers(-8, 9, size=shape.src_shape).astype(np.float32)
    wei = rng.integers(-8, 9, size=shape.wei_shape).astype(np.float32)
    bias = rng.integers(-8, 9, size=shape.oc).astype(np.float32) if with_bias else None
    return src, wei, bias


def _run(impl, shape, src, wei, bias, with_bias, fault=core.Fault.NONE):
    try:
        prim = conv_rows.create(impl, shape, FWD, with_bias, fault)
    except core.Unimplemented:
        return None
    with prim:
        packed = prim.pack_weights(wei)
        assert packed.dtype == np.uint8 and packed.size == prim.weights_bytes
        dst = np.full(shape.dst_shape, np.nan, np.float32)   # unwritten points stay NaN
        prim.bind(src, packed, bias, dst)()
    return dst


def test_every_impl_usable_somewhere():
    assert IMPLS, "no implementation runs on this machine"
    assert any(i.isa == core.Isa.SCALAR for i in IMPLS)
    assert {i.name.split(":")[0] for i in IMPLS} == {"dw_conv_fwd", "gemm_conv"}


def _applicable():
    """(impl, shape) pairs to run: the depthwise kernels only take depthwise problems
    (test_dw_rejects_non_depthwise_and_gemm_accepts_all checks that they refuse the rest)."""
    for impl in IMPLS:
        for text in SHAPES:
            if impl.name.startswith("dw_") and not _is_depthwise(_shape(text)):
                continue
            yield pytest.param(impl, text, id=f"{impl.name}-{text}")


def _assert_forward_exact(impl, text, with_bias):
    shape = _shape(text)
    src, wei, bias = _data(shape, with_bias, seed=len(text) + 31 * impl.index)
    dst = _run(impl, shape, src, wei, bias, with_bias)
    assert dst is not None, f"{impl.name} rejected {text}"
    ref = core.ref_conv_fwd(shape, src, wei, bias).astype(np.float32)
    assert np.array_equal(dst, ref), (
        f"{impl.name} {text}: {np.count_nonzero(dst != ref)} of {dst.size} points differ; "
        f"first at {np.unravel_index(np.flatnonzero(dst != ref)[0], dst.shape)}")


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,text", list(_applicable()))
def test_impl_matches_reference_exactly(impl, text, with_bias):
    _assert_forward_exact(impl, text, with_bias)


@pytest.mark.parametrize("impl", IMPLS, ids=IMPL_IDS)
def test_dw_rejects_non_depthwise_and_gemm_accepts_all(impl):
    shape = _shape("g2ic4ih6oc6kh3ph1")
    if impl.name.startswith("dw_"):
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, shape, FWD, False)
    else:
        conv_rows.create(impl, shape, FWD, False).close()


@pytest.mark.parametrize("impl", IMPLS, ids=IMPL_IDS)
def test_reuse_primitive_and_second_run_identical(impl):
    """A bound run can be executed again and overwrites dst fully each time."""
    shape = _shape("ic6ih9oc6kh3ph1_dw")
    src, wei, bias = _data(shape, True, seed=5)
    ref = core.ref_conv_fwd(shape, src, wei, bias).astype(np.float32)
    with conv_rows.create(impl, shape, FWD, True) as prim:
        dst = np.full(shape.dst_shape, np.nan, np.float32)
        run = prim.bind(src, prim.pack_weights(wei), bias, dst)
        run()
        assert np.array_equal(dst, ref)
        dst[...] = 12345.0
        run()
        assert np.array_equal(dst, ref)


# ---- deliberate defects ---------------------------------------------------------------

# gemm_conv's forward takes the shift route with 16+ input channels per group and several
# taps at unit stride (a padded copy of the input, taps as shifts), else the gather route.
FAULT_SHAPES = {"gemm": ("mb2ic4ih6oc5kh3ph1", "mb2ic16ih6oc5kh3ph1"),
                "dw": ("ic4ih6oc4kh3ph1_dw",)}


def _fault_cases():
    for impl in IMPLS:
        family = "dw" if impl.name.startswith("dw_") else "gemm"
        for fault in (core.Fault.SKIP_LAST_IC, core.Fault.RIGHT_PAD_EDGE):
            for text in FAULT_SHAPES[family]:
                yield pytest.param(impl, fault, text,
                                   id=f"{impl.name}-{fault.name.lower()}-{text}")


def _positive_data(shape, seed):
    """Strictly positive integers: any dropped or added product changes the sum."""
    rng = np.random.default_rng(seed)
    return (rng.integers(1, 6, size=shape.src_shape).astype(np.float32),
            rng.integers(1, 6, size=shape.wei_shape).astype(np.float32),
            rng.integers(-4, 5, size=shape.oc).astype(np.float32))


@pytest.mark.parametrize("impl,fault,text", list(_fault_cases()))
def test_fault_is_detected(impl, fault, text):
    shape = _shape(text)
    assert parse_desc(text).p_r[2] > 0          # the shape has right padding
    src, wei, bias = _positive_data(shape, seed=11)
    ref = core.ref_conv_fwd(shape, src, wei, bias).astype(np.float32)
    good = _run(impl, shape, src, wei, bias, True)
    assert np.array_equal(good, ref)
    bad = _run(impl, shape, src, wei, bias, True, fault)
    assert bad is not None
    assert not np.array_equal(bad, ref), f"{fault.name} did not change {impl.name}'s result"
    assert not np.any(np.isnan(bad))
    if fault is core.Fault.SKIP_LAST_IC:
        # Exactly the last input channel of every group is dropped.
        wei_cut = wei.copy()
        wei_cut[:, :, -1] = 0
        np.testing.assert_array_equal(
            bad, core.ref_conv_fwd(shape, src, wei_cut, bias).astype(np.float32))
    else:
        # kw=3, pw=1, sw=1: only the last output column has a tap past the right edge;
        # every other point is untouched, and the last column reads extra (positive) data.
        np.testing.assert_array_equal(bad[..., :-1], ref[..., :-1])
        assert np.all(bad[..., -1] > ref[..., -1])


def test_fault_name_suffix():
    impl = next(i for i in IMPLS if i.name.startswith("gemm_"))
    with conv_rows.create(impl, _shape("ic2ih4oc2kh3ph1"), FWD, False,
                          core.Fault.RIGHT_PAD_EDGE) as prim:
        # (the route that ran: ic 2 is the gather route's)
        assert prim.name == impl.name + ":gather+fault:right_pad_edge"
    with conv_rows.create(impl, _shape("ic2ih4oc2kh3ph1"), FWD, False) as prim:
        assert prim.name == impl.name + ":gather"


# ---- lifetime -------------------------------------------------------------------------

@pytest.mark.parametrize("impl", IMPLS, ids=IMPL_IDS)
def test_close_twice_is_harmless(impl):
    shape = _shape("ic3ih5oc3kh3ph1_dw")
    src, wei, bias = _data(shape, False, seed=3)
    with conv_rows.create(impl, shape, FWD, False) as prim:
        dst = np.full(shape.dst_shape, np.nan, np.float32)
        prim.bind(src, prim.pack_weights(wei), None, dst)()
        prim.close()
        prim.close()
    prim.close()          # and once more after the context exit
    assert np.array_equal(dst, core.ref_conv_fwd(shape, src, wei, None).astype(np.float32))
    # Creating and running a fresh primitive afterwards still works.
    again = _run(impl, shape, src, wei, None, False)
    assert np.array_equal(again, dst)


def test_bias_required_when_created_with_bias():
    impl = next(i for i in IMPLS if i.name.startswith("gemm_"))
    shape = _shape("ic2ih4oc2kh3ph1")
    src, wei, _ = _data(shape, False, seed=1)
    with conv_rows.create(impl, shape, FWD, True) as prim:
        dst = np.zeros(shape.dst_shape, np.float32)
        run = prim.bind(src, prim.pack_weights(wei), None, dst)
        with pytest.raises(core.InvalidProblem):
            run()


# ---- backward directions -----------------------------------------------------------------
GEMM_IMPLS = [i for i in IMPLS if i.name.startswith("gemm_")]


def _assert_bwd_data_exact(impl, text):
    shape = _shape(text)
    rng = np.random.default_rng(len(text))
    diff_dst = rng.integers(-8, 9, size=shape.dst_shape).astype(np.float32)
    wei = rng.integers(-8, 9, size=shape.wei_shape).astype(np.float32)
    with conv_rows.create(impl, shape, core.Direction.BWD_DATA, False) as prim:
        diff_src = np.full(shape.src_shape, np.nan, np.float32)
        prim.bind_bwd_data(diff_dst, prim.pack_weights(wei), None, diff_src)()
    ref = core.ref_conv_bwd_data(shape, diff_dst, wei).astype(np.float32)
    assert np.array_equal(diff_src, ref), f"{np.count_nonzero(diff_src != ref)} points differ"


@pytest.mark.parametrize("text", SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_data_matches_reference_exactly(impl, text):
    _assert_bwd_data_exact(impl, text)


def _assert_bwd_weights_exact(impl, text):
    shape = _shape(text)
    rng = np.random.default_rng(len(text) + 1)
    src = rng.integers(-8, 9, size=shape.src_shape).astype(np.float32)
    diff_dst = rng.integers(-8, 9, size=shape.dst_shape).astype(np.float32)
    with conv_rows.create(impl, shape, core.Direction.BWD_WEIGHTS, True) as prim:
        assert prim.weights_bytes == 0    # writes the user layout directly
        # on a cache line, as the driver's buffers are (streaming stores need it)
        diff_wei = memory.aligned_empty(4 * int(np.prod(shape.wei_shape))).view(np.float32)
        diff_wei = diff_wei.reshape(shape.wei_shape)
        diff_wei.fill(np.nan)
        diff_bias = np.full(shape.oc, np.nan, np.float32)
        prim.bind_bwd_weights(src, diff_dst, diff_wei, diff_bias)()
    ref_w, ref_b = core.ref_conv_bwd_weights(shape, src, diff_dst, True)
    assert np.array_equal(diff_wei, ref_w.astype(np.float32))
    assert np.array_equal(diff_bias, ref_b.astype(np.float32))


@pytest.mark.parametrize("text", SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_matches_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


# A short tile (conv_ukr.inc) runs only its rows, rounded up to the kernel's row step, and
# stores them as vectors: oc 1 to 25 puts every remainder of 12 (AVX-512), 6 (AVX2) and
# 4 (scalar) on the last row panel of the plain rows' GEMMs, whose rows are OC in forward
# (with bias) and in backward weights, with 9 and 40 columns (a partial column panel, and
# one whole AVX-512 panel and a part).
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_every_short_tile_height_matches_reference_exactly(impl):
    for oc in range(1, 26):
        for text in (f"mb1ic3ih3iw3oc{oc}kh1kw1", f"mb1ic4ih5iw8oc{oc}kh3kw3ph1pw1"):
            shape = _shape(text)
            src, wei, bias = _data(shape, True, seed=oc)
            dst = _run(impl, shape, src, wei, bias, True)
            ref = core.ref_conv_fwd(shape, src, wei, bias).astype(np.float32)
            assert np.array_equal(dst, ref), f"{impl.name} forward {text}"
            _assert_bwd_weights_exact(impl, text)


# Backward weights written in one k block into a result of at least 1 M floats goes out by
# non-temporal stores (conv_gemm.c, OP_STREAM_MIN_FLOATS): tiles of whole columns streamed
# (oc 1100 and 1000 leave a partial row panel, streamed row by row), those of a partial
# column panel (1008 columns) stored as usual. At mb8 K is 392, more than one k block of 256, and such a result takes
# all of K as one block (OP_WHOLE_K_MAX_FLOATS), with groups too.
STREAMED_SHAPES = ["mb1ic112ih7oc1100kh3ph1", "mb1ic128ih5oc1000kh3ph1",
                   "mb8ic112ih7oc1100kh3ph1", "g2mb8ic224ih7oc2200kh3ph1"]


# Backward weights whose K (mb x output points) is long enough for a k split in blocks of
# 512 points (conv_gemm.c, OP_SPLIT_KC; from 2048 points on two threads): K = 2700 on
# im2col rows (3x3, padding) and 3200 on the src planes (1x1), neither a multiple of 512;
# one with A's panels past OP_SPLIT_A_MAX_FLOATS keeps blocks of 256. Past 8 MiB of src and
# diff_dst (BDNN_BWT_CACHED_MAX_BYTES) each block's tiles read the next one ahead
# (op_ahead): on the src planes, on im2col rows (a 7x7 at stride 2, input rows clamped),
# and in groups (the last block of one group reads the next group's first).
K_SPLIT_SHAPES = ["mb3ic5ih30oc13kh3ph1", "mb2ic20ih40oc14kh1ph0", "mb2ic8ih40oc600kh1ph0",
                  "mb8ic64ih64oc64kh1ph0", "mb8ic3ih224oc16oh112kh7sh2ph3",
                  "g2mb8ic64ih48oc64kh3ph1"]


@pytest.mark.parametrize("text", K_SPLIT_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_k_split_matches_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


# Backward weights whose kw taps are runs of at least 5 consecutive input points, at a
# stride (conv_gemm.c, op_runs): B's panels are gathered straight from src by masked vector
# loads (conv_runs_fn), a row's end points clipped to the input one by one. Runs split at a
# vector's end (a 7-column run across 16, kw 9 and 17 past AVX2's and AVX-512's vectors);
# points with taps on both sides of the input (iw below the kernel's reach), wholly in the
# padding (pw >= kw), rows outside it (ph, dilation along h), groups, 3D, a negative right
# padding (explicit ow), and conv1 shrunk on one result (the k split's is in K_SPLIT_SHAPES).
RUNS_SHAPES = [
    "mb2ic3ih30oc16kh7sh2ph3",
    "mb1ic5ih7iw41oc7kh3kw9sh1sw3ph1pw4",
    "mb1ic1ih3iw60oc4kh1kw17sw2pw8",
    "mb2ic4ih12iw40oc9kh5kw5sh2sw2ph2pw2dh1",
    "mb1ic2ih4iw4oc3kh1kw7sw2pw3",
    "g2mb2ic6ih9iw33oc6kh2kw6sw2ph0pw6",
    "mb1ic2id4ih5iw30oc3kd2kh2kw5sd1sw2pd1pw2",
    "mb1ic3ih6iw31oc5kh1kw5sw2pw2ow14",
]


@pytest.mark.parametrize("text", RUNS_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_runs_match_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


# Backward weights on one result with A's packed block small (conv_gemm.c,
# OP_PRIVATE_B_MAX_A_BYTES) and at least 8 B panels per thread: each thread packs its
# items' B panels itself. Over two k blocks (K = 392, blocks of 256: the second
# accumulates), with groups, and (in STREAMED_SHAPES) in one streamed block.
PRIVATE_B_SHAPES = ["mb2ic56ih14oc20kh3ph1", "g2mb2ic112ih14oc40kh3ph1"]


@pytest.mark.parametrize("text", PRIVATE_B_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_private_b_matches_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


@pytest.mark.parametrize("text", STREAMED_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_streamed_result_matches_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


# Backward weights with a long reduction (K = mb * output points >= 256) takes the
# dot-product route (conv_gemm.c): operand rows copied as they lie, k blocks of 4096, and
# with K >= 2 * 4096 per thread, K split across threads into partial sums added at the end.
DOT_ROUTE_SHAPES = [
    "mb4ic3ih66iw64oc5kh3kw3ph1pw1",             # K=16896: k split on 2 threads
    "mb2ic5ih48iw47oc7kh3kw3ph1pw1",             # K=4512: two k blocks, tails
    "mb3ic3ih40oc5kh3sh2dh1ph2",                 # stride, dilation, K=1200
    "g2mb4ic4ih33iw31oc6kh3kw2sw2ph1pw0",        # groups, rectangular, stride along w
    "mb1ic2ih70oc3kh1",                          # 1x1, K=4900 across output rows
    "mb2ic3id9ih10iw11oc4kd3kh2kw3pd1ph0pw1",    # 3D
    "mb5ic13ih9oc27kh3sh1ph1",                   # M and N off the tile sizes, K=405
]


@pytest.mark.parametrize("text", DOT_ROUTE_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_weights_dot_route_matches_reference_exactly(impl, text):
    _assert_bwd_weights_exact(impl, text)


# Forward on the shift route: padding on either side (negative right padding too),
# dilation, rectangular kernels, groups, 1D, k blocks split inside a tap (IC/G > 256),
# output rows narrower and wider than a micro-panel.
SHIFT_SHAPES = [
    "mb2ic16ih9oc24kh3ph1",
    "mb1ic20ih11iw30oc13kh3kw5ph0pw2dh1",
    "g2mb2ic40ih7oc10kh2ph0",                    # groups, even kernel
    "mb1ic300ih6oc14kh3ph1",                     # 300 channels: two k blocks per tap
    "mb3ic16iw50oc7kw7pw3dw1",                   # 1D
    "mb1ic17ih40oc40kh3ph2",                     # oh 42: padded grid wider than the input
    "mb1ic24ih12oc8oh9kh3ph0",                   # explicit oh: right padding -1
]


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("text", SHIFT_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_shift_route_matches_reference_exactly(impl, text, with_bias):
    _assert_forward_exact(impl, text, with_bias)


# bf16 forward takes the shift route too on the vdpbf16ps kernel when the channels pair
# up (IC/G even): the padded copy is made of channel pairs from the bf16 input, and the
# accumulators go through the low-precision epilogue. An odd IC/G stays on the gather
# route. Through the driver: bf16 and f32 outputs, bias, a sum and relu chain.
BF16_ROUTE_SHAPES = SHIFT_SHAPES + ["mb1ic17ih9oc6kh3ph1"]

# The dot-product kernels per instruction set, each tested where the CPU has it: the
# AVX2 ones take the same routes, with their operands split into halves in registers.
BF16_DP_IMPLS = [pytest.param("gemm_conv_bf16:avx512_bf16", marks=pytest.mark.skipif(
                     not core.isa_supported(core.Isa.AVX512_BF16), reason="no AVX512_BF16")),
                 pytest.param("gemm_conv_bf16:avx2", marks=pytest.mark.skipif(
                     not core.isa_supported(core.Isa.AVX2), reason="no AVX2"))]
INT8_DP_IMPLS = [pytest.param("gemm_conv_int8:avx512_vnni", marks=pytest.mark.skipif(
                     not core.isa_supported(core.Isa.AVX512_VNNI), reason="no AVX512_VNNI")),
                 pytest.param("gemm_conv_int8:avx2", marks=pytest.mark.skipif(
                     not core.isa_supported(core.Isa.AVX2), reason="no AVX2"))]


@pytest.mark.parametrize("impl", BF16_DP_IMPLS)
def test_bf16_shift_route_passes_and_its_defects_are_caught(impl):
    args = ["--conv", f"--impl={impl}", "--dir=FWD_B",
            "--dt=bf16,bf16:bf16:f32", "--attr-post-ops=,sum:0.5+relu", *BF16_ROUTE_SHAPES]
    res = run_cli(*args)
    assert res.code == 0, res.out
    assert sum(":PASSED " in l for l in res.lines) == 4 * len(BF16_ROUTE_SHAPES)
    for fault in ("right_pad_edge", "skip_last_ic"):
        res = run_cli("--conv", f"--impl={impl}", "--dt=bf16",
                      "mb2ic16ih6oc5kh3ph1", env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert res.code == 1 and ":FAILED (errors:" in res.out, (fault, res.out)


# int8 likewise, on the VNNI kernel with IC/G a multiple of 4: padding holds the source
# zero point (shifted by 128 for s8), which the weights' compensation removes.
INT8_ROUTE_SHAPES = SHIFT_SHAPES[:3] + ["mb1ic18ih9oc6kh3ph1"]   # the last: IC/G % 4 != 0


@pytest.mark.parametrize("impl", INT8_DP_IMPLS)
def test_int8_shift_route_passes_with_zero_points_and_its_defects_are_caught(impl):
    res = run_cli("--conv", f"--impl={impl}", "--dir=FWD_B",
                  "--dt=u8:s8:u8,s8:s8:s8,s8:s8:f32",
                  "--attr-scales=src:common:0.5+wei:per_oc+dst:common:2",
                  "--attr-zero-points=,src:common:3+dst:common:-2",
                  "--attr-post-ops=,sum:0.5+relu", *INT8_ROUTE_SHAPES)
    assert res.code == 0, res.out
    assert not [l for l in res.lines if l[:1].isdigit() and ":PASSED " not in l
                and ":MISTRUSTED " not in l], res.out
    for fault in ("right_pad_edge", "skip_last_ic"):
        res = run_cli("--conv", f"--impl={impl}", "--dt=u8:s8:u8",
                      "--attr-zero-points=src:common:3", "mb2ic16ih6oc5kh3ph1",
                      env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert res.code == 1 and ":FAILED (errors:" in res.out, (fault, res.out)


# Images whose padded planes pass the copy's chunk (about 1 MiB): the copy and the
# products then run image by image, each chunk's planes from the buffer's start. The
# s2d rows: a strided first layer on space-to-depth phases.
SHIFT_ROWS = [i.name for i in core.conv_impls() if core.isa_supported(i.isa)
              and i.name.endswith((":shift", ":s2d")) and ":scalar:" not in i.name]


@pytest.mark.parametrize("row", SHIFT_ROWS)
def test_shift_rows_copy_image_by_image(row):
    shape = "mb3ic12ih230oc8kh7sh2ph3" if row.endswith(":s2d") else "mb3ic128ih64oc8kh3ph1"
    dt = "f32" if row.startswith("gemm_conv:") else \
        "bf16" if row.startswith("gemm_conv_bf16") else "u8:s8:u8"
    res = run_cli("--conv", f"--impl={row}", f"--dt={dt}", "--dir=FWD_B", shape)
    assert res.code == 0 and sum(":PASSED " in l for l in res.lines) == 1, res.out
    assert row in res.out, res.out


def _assert_s32_sums_exact(row, src_dt, texts, rng):
    """Full-range src (u8 or s8) and weights into s32 on an int8 row: every sum equals the
    reference's (a dst filled with -7 first, so unwritten outputs show)."""
    lo, hi = (0, 255) if src_dt == "u8" else (-128, 127)
    for text in texts:
        shape = _shape(text)
        src = rng.integers(lo, hi + 1, size=shape.src_shape).astype(core.numpy_dtype(src_dt))
        wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
        ref = core.ref_conv_fwd(shape, src.astype(np.float32), wei.astype(np.float32), None)
        attr = core.ConvAttr(src_dt, "s8", "s32", "f32")
        with core.ConvPrimitive(row, shape, FWD, False, core.Fault.NONE, attr=attr) as prim:
            dst = np.full(shape.dst_shape, -7, np.int32)
            prim.bind(src, prim.pack_weights(wei), None, dst)()
        assert np.array_equal(dst, ref.astype(np.int64)), text


# A 1x1 on channel groups whose image alone would leave much of its last tile empty (7x7
# outputs: 49 points) runs the images of a chunk side by side along N, a tile's columns
# reaching from one image into the next: chunks of 5 images (ic 4096) with a last one of
# 1, groups, a stride, and padding (whose border is never copied) at 7x7; the s32 sums
# equal the reference's.
INT8_SHIFT_ROWS = [i for i in core.conv_impls() if core.isa_supported(i.isa)
                   and i.operands is core.Operands.INT8 and i.name.endswith(":shift")]
STACKED_SHAPES = ["mb11ic4096ih7oc8kh1", "mb3g2ic64ih14oc16kh1sh2", "mb4ic16ih5oc24kh1ph1",
                  "mb2ic64ih6oc5kh1"]


@pytest.mark.parametrize("src_dt", ["u8", "s8"])
@pytest.mark.parametrize("row", INT8_SHIFT_ROWS, ids=[i.name for i in INT8_SHIFT_ROWS])
def test_shift_rows_stack_the_images_of_a_small_1x1(row, src_dt):
    _assert_s32_sums_exact(row, src_dt, STACKED_SHAPES, np.random.default_rng(5))


# A strided 1x1's planes hold every second input point of every second row: rows of
# every length around the AVX2 copy's steps of 8 points (its last step overlapping the one
# before, the row's last point alone), input rows of even and odd width (odd: the last
# point is the row's last byte, and in the last channel the tensor's), both sources (s8
# flips each byte's sign bit); the s32 sums equal the reference's.
STRIDED_ROW_SHAPES = [f"mb2ic16ih3iw{iw}oc5kh1kw1sh2sw2"
                      for ow in (1, 7, 8, 9, 10, 16, 17, 18, 25, 28)
                      for iw in (2 * ow - 1, 2 * ow)]


@pytest.mark.parametrize("src_dt", ["u8", "s8"])
@pytest.mark.parametrize("row", INT8_SHIFT_ROWS, ids=[i.name for i in INT8_SHIFT_ROWS])
def test_shift_rows_copy_strided_rows_of_every_length(row, src_dt):
    _assert_s32_sums_exact(row, src_dt, STRIDED_ROW_SHAPES, np.random.default_rng(9))


@pytest.mark.parametrize("row", [i.name for i in core.conv_impls() if core.isa_supported(i.isa)
                                 and i.name.endswith(":shift") and i.operands in
                                 (core.Operands.INT8, core.Operands.BF16)])
def test_stacked_images_pass_through_the_cli(row):
    """The same through the CLI, with bias, post-ops and (int8) per-channel scales, whose
    epilogue splits its runs at each image's end, and in bf16."""
    bf16 = "bf16" in row
    dt, scales = ("bf16", "") if bf16 else ("u8:s8:u8,s8:s8:f32", ",wei:per_oc")
    res = run_cli("--conv", f"--impl={row}", f"--dt={dt}", "--dir=FWD_B",
                  f"--attr-scales={scales}", "--attr-post-ops=,sum:0.5+relu",
                  *STACKED_SHAPES[1:])
    runs = len(dt.split(",")) * len(scales.split(",")) * 2 * len(STACKED_SHAPES[1:])
    assert res.code == 0, res.out
    assert sum(":PASSED " in l for l in res.lines) == runs, res.out
    assert row in res.out, res.out


# Planes whose last panel holds at most 8 columns (AVX2's 16-column tile then runs on one
# B vector): 49 points (one left), 8 (one half panel), 24 (16 + 8), against 9 and 25
# (a whole tile's last panel of 9).
NARROW_PANEL_SHAPES = ["mb2ic16ih7oc7kh1ph0", "mb1ic12ih2iw4oc11kh1kw1",
                       "mb1ic16ih4iw6oc13kh1kw1", "mb1ic16ih3oc6kh1", "mb2ic20ih5oc9kh1"]


@pytest.mark.parametrize("impl", INT8_DP_IMPLS)
def test_int8_narrow_last_panels_pass(impl):
    res = run_cli("--conv", f"--impl={impl}", "--dir=FWD_B", "--dt=u8:s8:u8,s8:s8:s32",
                  "--attr-scales=,wei:per_oc", *NARROW_PANEL_SHAPES)
    assert res.code == 0, res.out
    assert sum(":PASSED " in l for l in res.lines) == 4 * len(NARROW_PANEL_SHAPES), res.out


# A src zero point outside the source's type (a u8 source's -3 or 300, an s8 one's 200;
# per channel, a mix of both kinds): the int8 gather rows pad with the type's nearest
# value and take the difference back from the outputs that read padding. Their s32 sums
# equal the reference's on src - zp (zero outside the input); border_kept, which skips
# the correction, changes exactly the outputs whose window reaches the padding.
ZP_BEYOND_SHAPES = ["mb2ic8ih6iw7oc5kh3kw2ph1pw1",
                    "g2ic8id4ih5iw5oc6kd2kh3kw3sd2sh2pd1ph2pw1dh1"]
ZP_BEYOND = [("u8", -3), ("u8", 300), ("s8", 200),
             ("u8", (-4, 0, 7, 260, 1, -1, 2, 255)), ("s8", (-200, 5, 130, -128, 0, 127, -129, 3))]
INT8_GATHER_ROWS = [i for i in core.conv_impls() if core.isa_supported(i.isa)
                    and i.operands is core.Operands.INT8 and i.name.endswith(":gather")]


def _zp_beyond_run(row, shape, src_dt, zp, src, wei, fault=core.Fault.NONE):
    per_channel = isinstance(zp, tuple)
    attr = core.ConvAttr(src_dt, "s8", "s32", "f32", src_zp=0 if per_channel else zp,
                         src_zps=zp if per_channel else ())
    with core.ConvPrimitive(row, shape, FWD, False, fault, attr=attr) as prim:
        dst = np.full(shape.dst_shape, -7, np.int32)
        prim.bind(src, prim.pack_weights(wei), None, dst)()
    return dst


@pytest.mark.parametrize("text", ZP_BEYOND_SHAPES)
@pytest.mark.parametrize("src_dt,zp", ZP_BEYOND)
@pytest.mark.parametrize("row", INT8_GATHER_ROWS, ids=[i.name for i in INT8_GATHER_ROWS])
def test_int8_gather_rows_correct_the_padding_a_zero_point_cannot_fill(row, src_dt, zp, text):
    shape = _shape(text)
    rng = np.random.default_rng(11)
    lo, hi = (0, 255) if src_dt == "u8" else (-128, 127)
    src = rng.integers(lo, hi + 1, size=shape.src_shape).astype(core.numpy_dtype(src_dt))
    wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
    zps = np.array(zp if isinstance(zp, tuple) else (zp,) * shape.ic, np.float32)
    shifted = src.astype(np.float32) - zps.reshape((1, -1) + (1,) * (src.ndim - 2))
    ref = core.ref_conv_fwd(shape, shifted, wei.astype(np.float32), None)
    good = _zp_beyond_run(row, shape, src_dt, zp, src, wei)
    assert np.array_equal(good, ref.astype(np.int64))
    bad = _zp_beyond_run(row, shape, src_dt, zp, src, wei, core.Fault.BORDER_KEPT)
    # the outputs whose window lies inside the input: one tap of padding on each side
    inner = (Ellipsis, slice(1, -1), slice(1, -1)) if text.startswith("mb2") else \
        (Ellipsis, slice(1, -1), slice(1, -1), slice(1, -1))
    assert np.array_equal(bad[inner], good[inner])
    assert not np.array_equal(bad, good)


# Sums with no bias, scales or post-ops into u8 or s8 saturate as integers (the same values
# as through f32): full-range src and weights take them far past s16 both ways, on the
# shift row's store from registers (1x1) and by output rows (3x3), and on the epilogue's.
INT8_PLAIN_ROWS = [i for i in core.conv_impls() if core.isa_supported(i.isa)
                   and i.name.startswith("gemm_conv_int8:")
                   and i.name.endswith((":shift", ":gather"))]


@pytest.mark.parametrize("text", ["mb2ic64ih7oc20kh3ph1", "mb1ic96ih9oc40kh1",
                                  "mb1ic64ih9oc24kh1sh2"])
@pytest.mark.parametrize("src_dt", ["u8", "s8"])   # s8: the compensation of its +128
@pytest.mark.parametrize("row", INT8_PLAIN_ROWS, ids=[i.name for i in INT8_PLAIN_ROWS])
def test_int8_sums_without_bias_saturate_to_8_bits(row, src_dt, text):
    shape = _shape(text)
    rng = np.random.default_rng(len(text))
    lo, hi = (0, 255) if src_dt == "u8" else (-128, 127)
    src = rng.integers(lo, hi + 1, size=shape.src_shape).astype(core.numpy_dtype(src_dt))
    wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
    ref = core.ref_conv_fwd(shape, src.astype(np.float32), wei.astype(np.float32), None)
    assert ref.max() > 2 ** 15 and ref.min() < -2 ** 15
    for dst_dt, (lo, hi) in (("u8", (0, 255)), ("s8", (-128, 127))):
        attr = core.ConvAttr(src_dt, "s8", dst_dt, "f32")
        with core.ConvPrimitive(row, shape, FWD, False, core.Fault.NONE, attr=attr) as prim:
            dst = np.zeros(shape.dst_shape, core.numpy_dtype(dst_dt))
            prim.bind(src, prim.pack_weights(wei), None, dst)()
        assert np.array_equal(dst.astype(np.float64), np.clip(ref, lo, hi)), dst_dt


# Sums plus a bias into u8 or s8: (float)sum + bias in f32, rounded half to even and
# saturated, a NaN bias giving 0. Full-range data take the sums past s16; biases of half
# values test the rounding, and those past 2^31 the conversion's own range (which would
# wrap to INT_MIN unbounded), on the rows' epilogue (AVX2: its s32-plus-bias row).
BIASES = [0.5, 1.5, -0.5, -1.5, 2.5, 3e9, -3e9, np.nan, np.inf, -np.inf, 0.0, 1e-3,
          -2.5, 126.5, 127.5, -127.5, 254.5, 7.25, -7.75, 1e4]


@pytest.mark.parametrize("text", ["mb2ic64ih7oc20kh3ph1", "mb2ic96ih9oc20kh1"])
@pytest.mark.parametrize("row", INT8_PLAIN_ROWS, ids=[i.name for i in INT8_PLAIN_ROWS])
def test_int8_sums_plus_a_bias_round_half_even_and_saturate(row, text):
    shape = _shape(text)
    rng = np.random.default_rng(len(text))
    src = rng.integers(0, 256, size=shape.src_shape).astype(np.uint8)
    wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
    src[0] //= 128   # the first image's sums small: many land in range, where the
    #                  bias's fraction decides the rounding
    bias = np.array(BIASES, np.float32)
    ref = core.ref_conv_fwd(shape, src.astype(np.float32), wei.astype(np.float32), None)
    assert ref.max() > 2 ** 15 and ref.min() < -2 ** 15
    with np.errstate(invalid="ignore"):
        v = ref.astype(np.float32) + bias.reshape((1, -1) + (1,) * (ref.ndim - 2))
    for dst_dt, (lo, hi) in (("u8", (0, 255)), ("s8", (-128, 127))):
        want = np.where(np.isnan(v), 0, np.rint(np.clip(v, lo, hi)))
        attr = core.ConvAttr("u8", "s8", dst_dt, "f32")
        with core.ConvPrimitive(row, shape, FWD, True, core.Fault.NONE, attr=attr) as prim:
            dst = np.zeros(shape.dst_shape, core.numpy_dtype(dst_dt))
            prim.bind(src, prim.pack_weights(wei), bias, dst)()
        assert np.array_equal(dst.astype(np.float64), want), dst_dt


# The AVX2 int8 rows' bounded tiles (vpmaddubsw's s16 pair sums, conv_gemm_ukr_t.pairs16)
# run on an execution only where the bytes they read times the largest |w0| + |w1| of a
# weight pair, times the pairs a tile adds in s16 (1: pairs16, 2: pairs16x2), fit 32767.
# Every source byte at its largest (u8 255, or s8 127 after the +128 shift) and every
# weight one value puts the sums at the bounds: 64 (255 * 128 = 32640) and -64 take
# pairs16, 65 and -65 (33150) would saturate there, so they take the exact tile; 32 takes
# pairs16x2, 33 (two pairs: 33660) would wrap there, so it takes pairs16. Bytes under 64
# take pairs16x2 with any weights, under 128 pairs16. The space-to-depth first layer's
# k blocks of three quads keep to pairs16. The s32 sums equal the reference's whichever
# tile ran, and the name shows the one that did.
PAIRS16_ROWS = [i for i in core.conv_impls() if core.isa_supported(i.isa)
                and i.name in ("gemm_conv_int8:avx2:shift", "gemm_conv_int8:avx2:s2d")]
PAIRS16_SHAPES = {"shift": ["mb2ic16ih5oc10kh1", "mb1ic32ih7oc12kh3ph1"],
                  "s2d": ["mb1ic3ih20oc8kh7sh2ph3"]}
PAIRS16_CASES = [  # (source type, its bytes, weights, the tile that runs: "" exact)
    ("u8", "max", 64, "pairs16"), ("u8", "max", -64, "pairs16"), ("s8", "max", 64, "pairs16"),
    ("u8", "max", 65, ""), ("u8", "max", -65, ""), ("s8", "max", -65, ""),
    ("u8", "max", 32, "pairs16x2"), ("s8", "max", -32, "pairs16x2"),
    ("u8", "max", 33, "pairs16"), ("s8", "max", -33, "pairs16"),
    ("u8", "under64", "any", "pairs16x2"), ("u8", "under128", "any", "pairs16"),
    ("u8", "any", "any", "")]


def _pairs16_data(shape, src_dt, src_kind, wei_kind, seed):
    rng = np.random.default_rng(seed)
    top = 255 if src_dt == "u8" else 127
    below = {"under64": 64, "under128": 128, "any": 256}
    src = (np.full(shape.src_shape, top) if src_kind == "max"
           else rng.integers(0, below[src_kind], size=shape.src_shape))
    if src_kind != "max":
        src.flat[0] = below[src_kind] - 1   # the range's top byte, whatever the draw
    wei = (np.full(shape.wei_shape, wei_kind) if wei_kind != "any"
           else rng.integers(-128, 128, size=shape.wei_shape))
    if wei_kind == "any":
        wei.flat[:2] = -128
    return src.astype(core.numpy_dtype(src_dt)), wei.astype(np.int8)


@pytest.mark.parametrize("src_dt,src_kind,wei_kind,tile", PAIRS16_CASES)
@pytest.mark.parametrize("row", PAIRS16_ROWS, ids=[i.name for i in PAIRS16_ROWS])
def test_int8_bounded_tiles_run_where_their_sums_fit_and_only_there(row, src_dt, src_kind,
                                                                   wei_kind, tile):
    route = row.name.rsplit(":", 1)[1]
    if route == "s2d" and tile == "pairs16x2":
        tile = "pairs16"
    for text in PAIRS16_SHAPES[route]:
        shape = _shape(text)
        src, wei = _pairs16_data(shape, src_dt, src_kind, wei_kind, len(text))
        ref = core.ref_conv_fwd(shape, src.astype(np.float32), wei.astype(np.float32), None)
        attr = core.ConvAttr(src_dt, "s8", "s32", "f32")
        with core.ConvPrimitive(row, shape, FWD, False, core.Fault.NONE, attr=attr) as prim:
            assert prim.name == row.name   # no variant before an execution
            dst = np.full(shape.dst_shape, -7, np.int32)
            prim.bind(src, prim.pack_weights(wei), None, dst)()
            assert prim.name == row.name + (f"@{tile}" if tile else ""), text
        assert np.array_equal(dst, ref.astype(np.int64)), text


@pytest.mark.skipif(not PAIRS16_ROWS, reason="no AVX2")
def test_image_chunks_choose_their_tiles_apart():
    """Images of 1 MiB of planes are copied and run one chunk at a time, each on the
    tile its own bytes allow (full-range weights): under 64, pairs16x2; under 128,
    pairs16; any, the exact tile. The name says `mixed`; every sum is exact."""
    shape = _shape("mb3ic64ih128oc8kh1")
    rng = np.random.default_rng(3)
    src = np.concatenate([rng.integers(0, top, size=(1,) + shape.src_shape[1:])
                          for top in (64, 128, 256)]).astype(np.uint8)
    src[2].flat[0] = 255
    wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
    ref = core.ref_conv_fwd(shape, src.astype(np.float32), wei.astype(np.float32), None)
    row = next(i for i in PAIRS16_ROWS if i.name.endswith(":shift"))
    attr = core.ConvAttr("u8", "s8", "s32", "f32")
    with core.ConvPrimitive(row, shape, FWD, False, core.Fault.NONE, attr=attr) as prim:
        dst = np.full(shape.dst_shape, -7, np.int32)
        packed = prim.pack_weights(wei)
        prim.bind(src, packed, None, dst)()
        assert prim.name == row.name + "@mixed"
        assert np.array_equal(dst, ref.astype(np.int64))
        prim.bind(src[:1].repeat(3, axis=0), packed, None, dst)()   # every chunk under 64
        assert prim.name == row.name + "@pairs16x2"


@pytest.mark.skipif(not PAIRS16_ROWS, reason="no AVX2")
@pytest.mark.parametrize("tags,row", [
    (("--stag=nchw", "--dtag=nchw"), "gemm_conv_int8:avx2:shift"),
    ((), "gemm_conv_blocked_int8:avx2:direct"),   # what `any` takes (nChw8c)
])
def test_a_result_names_the_bounded_tile_and_its_repro_reruns(tags, row):
    """The correctness fill's bytes and weights fit the deeper bound: the result line
    names the variant after `@`, and its repro selects the row again (no warning of a
    name that ran nowhere)."""
    res = run_cli("--conv", "--isa=avx2", "--dt=u8:s8:u8", *tags, "mb1ic16ih5oc10kh1")
    assert res.code == 0, res.out
    repro = re.search(r"__REPRO: (.*)", res.out).group(1)
    assert f"--impl={row}@pairs16x2 " in repro, repro
    again = run_cli(*repro.split())
    assert again.code == 0 and ":PASSED " in again.out, again.out
    assert "part of no implementation" not in again.out, again.out


# int8 forward with a long reduction and few outputs per image takes the dot route
# (conv_gemm_dot.c): per output, dot products of the kw taps inside the input, the zero point
# taken off in s32 (so any zero point, beyond the source type's range too), the reduction
# split across threads. Its s32 sums equal the reference's on src - zp, zero outside.
DOT_SHAPES = ["mb2ic5ih4iw40oc3oh2ow2kh3kw20ph1pw1",          # padding on every side
              "mb1ic7ih3iw33oc2oh1ow1kh3kw33",                # the whole input, one point
              "g2mb2ic8ih5iw50oc6oh2ow3sh2sw7kh2kw17pw2dh1",  # groups, strides, dilation
              "mb3ic4id3ih3iw24oc5od2oh1ow1kd2kh3kw24"]       # 3D
DOT_ZPS = [("u8", 0), ("u8", 135), ("u8", -3), ("s8", 0), ("s8", 200),
           ("u8", (-4, 0, 7, 260, 1, -1, 2, 255)), ("s8", (-200, 5, 130, -128, 0, 127, -129, 3))]
DOT_ROWS = [i for i in core.conv_impls() if core.isa_supported(i.isa)
            and i.name.startswith("gemm_conv_int8:") and i.name.endswith(":dot")]


@pytest.mark.parametrize("text", DOT_SHAPES)
@pytest.mark.parametrize("src_dt,zp", DOT_ZPS)
@pytest.mark.parametrize("row", DOT_ROWS, ids=[i.name for i in DOT_ROWS])
def test_int8_dot_rows_sum_exactly_with_any_zero_point(row, src_dt, zp, text):
    shape = _shape(text)
    assert core.conv_dot_shape(shape)
    rng = np.random.default_rng(5)
    lo, hi = (0, 255) if src_dt == "u8" else (-128, 127)
    src = rng.integers(lo, hi + 1, size=shape.src_shape).astype(core.numpy_dtype(src_dt))
    wei = rng.integers(-128, 128, size=shape.wei_shape).astype(np.int8)
    zps = np.array(zp if isinstance(zp, tuple) else (zp,) * shape.ic, np.float32)
    shifted = src.astype(np.float32) - zps[:shape.ic].reshape((1, -1) + (1,) * (src.ndim - 2))
    ref = core.ref_conv_fwd(shape, shifted, wei.astype(np.float32), None)
    per_channel = isinstance(zp, tuple)
    attr = core.ConvAttr(src_dt, "s8", "s32", "f32", src_zp=0 if per_channel else zp,
                         src_zps=zp[:shape.ic] if per_channel else ())
    with core.ConvPrimitive(row, shape, FWD, False, core.Fault.NONE, attr=attr) as prim:
        assert prim.name == row.name
        dst = np.full(shape.dst_shape, -7, np.int32)
        prim.bind(src, prim.pack_weights(wei), None, dst)()
    assert np.array_equal(dst, ref.astype(np.int64))


def test_dot_route_takes_its_shapes_by_default_and_only_those():
    """With `any` tags, an int8 case of the dot route's shape runs there (not on the
    blocked rows, which would pad its output channels), with scales, zero points and
    post-ops, and passes; a short kernel row stays on the other routes."""
    res = run_cli("--conv", "--dt=u8:s8:u8,s8:s8:f32,u8:s8:bf16",
                  "--attr-scales=src:common:0.25+wei:per_oc+dst:common:2",
                  "--attr-zero-points=,src:common:135+dst:common:1",
                  "--attr-post-ops=,sum:1.5:2+relu:0:0:2.6,add:f32:per_oc",
                  *DOT_SHAPES)
    assert res.code == 0, res.out
    cases = [l for l in res.lines if l[:1].isdigit()]
    assert len(cases) == 3 * 2 * 3 * len(DOT_SHAPES)
    assert all(":PASSED " in l and ":dot " in l for l in cases), res.out
    res = run_cli("--conv", "--dt=u8:s8:u8", "mb1ic4ih3iw40oc2oh1ow38kh3kw3")
    assert res.code == 0 and ":PASSED " in res.out and ":dot " not in res.out, res.out


# bf16 and int8 first layers (few channels, stride > 1, several taps) take the shift route
# by space-to-depth: the S x S phases of the input become channels of a unit-stride
# problem with ceil(K/S) taps. Shapes: ResNet-50's conv1 shrunk, one channel, uneven
# strides and kernels per axis, a kernel smaller than its stride, a negative right padding
# (explicit oh), mb > 1. Every shape's IC*SH*SW is a multiple of 4, so both types take it.
S2D_SHAPES = [
    "mb2ic3ih30oc16kh7sh2ph3",
    "mb1ic1ih9oc8kh4sh2ph1",
    "mb1ic2ih13iw17oc13kh5kw3sh2sw3ph2pw1",
    "mb1ic4ih10oc6kh2sh3ph0",
    "mb1ic3ih20oc8oh8kh5sh2ph1",
]


@pytest.mark.parametrize("bf16_impl,int8_impl", [
    pytest.param("gemm_conv_bf16:avx512_bf16", "gemm_conv_int8:avx512_vnni",
                 marks=pytest.mark.skipif(not core.isa_supported(core.Isa.AVX512_VNNI)
                                          or not core.isa_supported(core.Isa.AVX512_BF16),
                                          reason="no AVX512_VNNI / AVX512_BF16")),
    pytest.param("gemm_conv_bf16:avx2", "gemm_conv_int8:avx2", marks=pytest.mark.skipif(
        not core.isa_supported(core.Isa.AVX2), reason="no AVX2"))])
def test_space_to_depth_first_layers_pass_and_their_defects_are_caught(bf16_impl, int8_impl):
    res = run_cli("--conv", f"--impl={bf16_impl}", "--dir=FWD_B",
                  "--dt=bf16,bf16:bf16:f32", "--attr-post-ops=,sum:0.5+relu", *S2D_SHAPES)
    assert res.code == 0, res.out
    assert sum(":PASSED " in l for l in res.lines) == 4 * len(S2D_SHAPES), res.out
    res = run_cli("--conv", f"--impl={int8_impl}", "--dir=FWD_B",
                  "--dt=u8:s8:u8,s8:s8:f32", "--attr-zero-points=,src:common:3+dst:common:-2",
                  "--attr-scales=src:common:0.5+wei:per_oc+dst:common:2", *S2D_SHAPES)
    assert res.code == 0, res.out
    assert not [l for l in res.lines if l[:1].isdigit() and ":PASSED " not in l
                and ":MISTRUSTED " not in l], res.out
    for impl, dt in ((bf16_impl, "bf16"), (int8_impl, "s8:s8:s8")):
        for fault in ("skip_last_ic", "skip_last_tap"):
            res = run_cli("--conv", f"--impl={impl}", f"--dt={dt}", "--attr-zero-points=src:common:3"
                          if dt.startswith("s8") else "--attr-zero-points=", S2D_SHAPES[0],
                          env={"BENCHDNN_PY_TEST_FAULT": fault})
            assert res.code == 1 and ":FAILED (errors:" in res.out, (impl, fault, res.out)


# A 1x1 in bf16 or int8 whose epilogue is only a bias and the conversion: the dot-product
# kernel stores each tile into dst itself (dp_store_fn). Several chains (the last reads
# the earlier ones' sums), tile tails, groups, strides; every output type, with and
# without bias; narrow outputs saturate (the fill's density bump). With a sum post-op the
# same shapes take the accumulator block and the epilogue, as a control. Only the
# AVX512_BF16 and VNNI kernels have the direct store (on AVX2 it measured no faster than
# the vectorized epilogue and was left out), so elsewhere there is nothing to test here;
# conv_ci runs these shapes on whichever kernels the CPU has.
DIRECT_STORE_SHAPES = ["mb2ic800ih5iw3oc30kh1kw1", "g2mb1ic1024ih7oc100kh1",
                       "mb1ic64ih12iw9oc13kh1kw1", "mb1ic32ih9oc16kh1sh2"]


@pytest.mark.skipif(not core.isa_supported(core.Isa.AVX512_VNNI)
                    or not core.isa_supported(core.Isa.AVX512_BF16),
                    reason="no AVX512_VNNI / AVX512_BF16")
@pytest.mark.parametrize("post_ops", ["", "sum:0.5"], ids=["direct", "epilogue"])
def test_direct_store_1x1_layers_pass(post_ops):
    for impl, dts in (("gemm_conv_bf16:avx512_bf16", "bf16,bf16:bf16:f32"),
                      ("gemm_conv_int8:avx512_vnni", "u8:s8:u8,u8:s8:s8,u8:s8:s32,s8:s8:f32")):
        res = run_cli("--conv", f"--impl={impl}", "--dir=FWD_B,FWD_I", f"--dt={dts}",
                      f"--attr-post-ops={post_ops}", *DIRECT_STORE_SHAPES)
        assert res.code == 0, res.out
        n = 2 * len(dts.split(",")) * len(DIRECT_STORE_SHAPES)
        assert sum(":PASSED " in l or ":MISTRUSTED " in l for l in res.lines) == n, res.out


# Backward data on the col2im route: strided, multi-tap, grouped, dilated and 3D problems,
# with few (image, group) slices (threads add into private copies of diff_src) and many
# (threads own slices); the first layer of ResNet-50 shrunk (3 channels, 7x7, stride 2).
COL2IM_SHAPES = [
    "mb1ic3ih40oc8kh7sh2ph3",
    "mb6ic5ih17oc7kh3sh2ph1",                    # 6 slices: each thread owns some
    "g3mb2ic6ih13iw11oc9kh3kw2sh2sw3ph1pw0",
    "mb1ic4ih15oc6kh3dh2ph2",
    "mb1ic2id6ih7iw5oc3kd3kh2kw3sd2pd1ph0pw1",
    "mb1ic40ih20oc300kh3ph1",                    # K > 256: several k blocks, M > 192 rows
    "mb2ic8ih9oc4kh1sh2",                        # 1x1 strided
]


@pytest.mark.parametrize("text", COL2IM_SHAPES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_bwd_data_col2im_route_matches_reference_exactly(impl, text):
    _assert_bwd_data_exact(impl, text)


# A 1x1 whose explicit output size reads past the input's end (ih4 oh3 at stride 2 reads
# row 4; ih5 oh6 at stride 1): padding after the input with none before, which the paths
# reading a 1x1's input points directly (subsampled copies, planes read in place) must
# not take (benchdnn's test_conv_all: the outer route's backward weights and the blocked
# rows' forward under a dw post-op read past the input). Every family, direction and
# layout against the reference.
PADDED_AFTER_1X1 = ["ic16ih4iw8oc16oh3ow8kh1kw1sh2sw1ph0pw0", "ic16ih10oc16oh6kh1sh2ph0",
                    "ic16ih5oc16oh6kh1ph0", "mb2ic32id3ih6iw5oc16od4oh7ow5kd1kh1kw1"]


def test_a_1x1_reading_past_the_input_runs_as_padded():
    """(Each layout takes its own family's rows: plain, channels last, blocked.)"""
    res = run_cli("--conv", "--dir=FWD_B,BWD_D,BWD_WB", "--stag=abx,axb,aBx16b",
                  *PADDED_AFTER_1X1)
    s = res.summary()
    assert res.code == 0 and s["passed"] == s["tests"] == 36, res.out
    ran = {l.split("--impl=")[1].split(" ")[0] for l in res.lines if "__REPRO" in l}
    assert {"gemm_conv:avx512:gather", "gemm_conv:avx512:outer",
            "gemm_conv_blocked:avx512:direct"} <= ran or not core.isa_supported(
        core.Isa.AVX512), ran


def test_a_fused_1x1_reading_past_the_input_runs_as_padded():
    res = run_cli("--conv", "--stag=abx,axb,aBx16b", "--attr-post-ops=relu+dw:k3s1p1",
                  "ic16ih10oc16oh6kh1sh2ph0")
    assert res.code == 0 and res.summary()["passed"] == 3, res.out
    assert all("fused_dw" in l for l in res.lines if "__REPRO" in l), res.out


# A kernel far larger than its output (3d_conv_large_shape in little: one output point, so
# one tap in 1728 live per input point): the gather routes, which read every tap for every
# input point, refuse backward data, on every layout; col2im, which computes the live
# products only, takes it.
FEW_LIVE_TAPS = "mb1ic4id12oc3od1kd12pd0"


def test_backward_data_with_few_live_taps_runs_col2im_not_gather():
    shape = _shape(FEW_LIVE_TAPS)
    gathers = [i for i in core.conv_impls()
               if core.isa_supported(i.isa) and i.operands is core.Operands.F32
               and i.name.startswith(("gemm_conv:", "gemm_conv_nhwc:", "gemm_conv_blocked:"))
               and i.name.endswith(":gather")]
    assert len(gathers) >= 3
    for row in gathers:
        layout = (core.ActLayout.NHWC if "nhwc" in row.name
                  else core.ActLayout.BLOCKED16 if "blocked" in row.name
                  else core.ActLayout.PLAIN)
        with pytest.raises(core.Unimplemented):
            core.ConvPrimitive(row, shape, core.Direction.BWD_DATA, False,
                               attr=core.ConvAttr(layout=layout))
        # forward reads only live taps' worth per output point: still taken
        core.ConvPrimitive(row, shape, FWD, False, attr=core.ConvAttr(layout=layout)).close()
    for group in GEMM_IMPLS:
        with conv_rows.create(group, shape, core.Direction.BWD_DATA, False) as prim:
            assert prim.name.endswith(":col2im")
        _assert_bwd_data_exact(group, FEW_LIVE_TAPS)


def test_bwd_data_bias_is_added_for_deconvolution():
    shape = _shape("mb2ic6ih5oc4kh3sh2ph1")
    rng = np.random.default_rng(5)
    diff_dst = rng.integers(-8, 9, size=shape.dst_shape).astype(np.float32)
    wei = rng.integers(-8, 9, size=shape.wei_shape).astype(np.float32)
    bias = rng.integers(-8, 9, size=shape.ic).astype(np.float32)
    with conv_rows.create(GEMM_IMPLS[0], shape, core.Direction.BWD_DATA, True) as prim:
        out = np.full(shape.src_shape, np.nan, np.float32)
        prim.bind_bwd_data(diff_dst, prim.pack_weights(wei), bias, out)()
    ref = core.ref_conv_bwd_data(shape, diff_dst, wei) + bias.reshape(1, -1, 1, 1, 1)
    assert np.array_equal(out, ref.astype(np.float32))


def test_empty_minibatch_backward_weights_is_zero():
    shape = _shape("mb0ic3ih5oc4kh3")
    with conv_rows.create(GEMM_IMPLS[0], shape, core.Direction.BWD_WEIGHTS, True) as prim:
        diff_wei = np.full(shape.wei_shape, np.nan, np.float32)
        diff_bias = np.full(shape.oc, np.nan, np.float32)
        empty_src = np.empty(shape.src_shape, np.float32)
        empty_dd = np.empty(shape.dst_shape, np.float32)
        prim.bind_bwd_weights(empty_src, empty_dd, diff_wei, diff_bias)()
    assert not diff_wei.any() and not diff_bias.any()


def test_dw_kernels_are_forward_only_and_directions_are_enforced():
    shape = _shape("ic4ih6oc4kh3ph1_dw")
    for impl in IMPLS:
        if impl.name.startswith("dw_"):
            with pytest.raises(core.Unimplemented):
                conv_rows.create(impl, shape, core.Direction.BWD_DATA, False)
    with conv_rows.create(GEMM_IMPLS[0], shape, core.Direction.BWD_DATA, False) as prim:
        with pytest.raises(ValueError, match="created for BWD_DATA"):
            prim.bind(np.zeros(shape.src_shape, np.float32), np.zeros(1, np.float32), None,
                      np.zeros(shape.dst_shape, np.float32))


# Backward data reads past the output only where the input outlives it (negative right
# padding); backward weights reads past the input only with positive right padding. Both
# shapes are strided, so the stride defect bites too.
BWD_DATA_FAULT_SHAPE = "mb2ic4ih10oc5kh3sh2"        # oh4, right padding -1
BWD_WEIGHTS_FAULT_SHAPE = "mb2ic4ih9oc5kh3sh2ph1"   # oh5, right padding 1


# f32 backward data takes the col2im route when it has taps or strides (its edge defect
# then needs contributions past the input's right edge: positive right padding), the
# gather route for 1x1 unit-stride problems and with the stride-truncation defect.
BWD_DATA_FAULT_CASES = [
    (BWD_DATA_FAULT_SHAPE, core.Fault.SKIP_LAST_IC),
    (BWD_DATA_FAULT_SHAPE, core.Fault.SKIP_LAST_TAP),
    (BWD_DATA_FAULT_SHAPE, core.Fault.STRIDE_TRUNC),
    ("mb2ic4ih9oc5kh3sh2ph1", core.Fault.SKIP_LAST_IC),       # col2im, right padding 1
    ("mb2ic4ih9oc5kh3sh2ph1", core.Fault.SKIP_LAST_TAP),
    ("mb2ic4ih9oc5kh3sh2ph1", core.Fault.RIGHT_PAD_EDGE),
    ("mb2ic4ih9oc5kh3sh2ph1", core.Fault.STRIDE_TRUNC),
    ("mb2ic4ih10oc5oh8kh1ph0", core.Fault.RIGHT_PAD_EDGE),     # gather, right padding -2
]


@pytest.mark.parametrize("text,fault", BWD_DATA_FAULT_CASES)
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_backward_data_faults_change_the_result(impl, text, fault):
    shape = _shape(text)
    _, wei, _ = _positive_data(shape, seed=3)
    diff_dst = np.random.default_rng(4).integers(1, 6, size=shape.dst_shape).astype(np.float32)
    with conv_rows.create(impl, shape, core.Direction.BWD_DATA, False, fault) as prim:
        out = np.full(shape.src_shape, np.nan, np.float32)
        prim.bind_bwd_data(diff_dst, prim.pack_weights(wei), None, out)()
    ref = core.ref_conv_bwd_data(shape, diff_dst, wei).astype(np.float32)
    assert not np.any(np.isnan(out)) and not np.array_equal(out, ref)


@pytest.mark.parametrize("text", [BWD_WEIGHTS_FAULT_SHAPE,
                                  "mb2ic4ih33oc5kh3sh2ph1"])   # the dot route, K=578
@pytest.mark.parametrize("fault", [core.Fault.SKIP_LAST_IC, core.Fault.SKIP_LAST_TAP,
                                   core.Fault.RIGHT_PAD_EDGE])
@pytest.mark.parametrize("impl", GEMM_IMPLS, ids=[i.name for i in GEMM_IMPLS])
def test_backward_weights_faults_change_the_result(impl, fault, text):
    shape = _shape(text)
    src, _, _ = _positive_data(shape, seed=6)
    diff_dst = np.ones(shape.dst_shape, np.float32)
    with conv_rows.create(impl, shape, core.Direction.BWD_WEIGHTS, False, fault) as prim:
        diff_wei = np.full(shape.wei_shape, np.nan, np.float32)
        prim.bind_bwd_weights(src, diff_dst, diff_wei, None)()
    ref, _ = core.ref_conv_bwd_weights(shape, src, diff_dst, False)
    assert not np.any(np.isnan(diff_wei)) and not np.array_equal(diff_wei, ref.astype(np.float32))


# ---- --attr-scratchpad=user: the work memory the caller gives -------------------------

SCRATCHPAD_SHAPES = ["mb2ic16ih6oc5kh3ph1", "mb2ic300ih7oc50kh1", "ic4ih8iw6oc4kh3kw3sh2sw1ph1pw1",
                     "mb2ic48ih20oc48kh5ph2_dw", "g2ic4id5oc4kd3sd2pd1dd1",
                     "mb2ic8ih9iw13oc6kh1kw1sh2sw2"]   # strided 1x1: the subsampled copy
DIRECTIONS = [core.Direction.FWD, core.Direction.BWD_DATA, core.Direction.BWD_WEIGHTS]


def _execute(prim, shape, direction, data):
    src, wei, diff_dst = data
    if direction is core.Direction.BWD_WEIGHTS:
        out = np.full(shape.wei_shape, np.nan, np.float32)
        prim.bind_bwd_weights(src, diff_dst, out, None)()
    elif direction is core.Direction.BWD_DATA:
        out = np.full(shape.src_shape, np.nan, np.float32)
        prim.bind_bwd_data(diff_dst, prim.pack_weights(wei), None, out)()
    else:
        out = np.full(shape.dst_shape, np.nan, np.float32)
        prim.bind(src, prim.pack_weights(wei), None, out)()
    return out


@pytest.mark.parametrize("direction", DIRECTIONS, ids=[d.name for d in DIRECTIONS])
@pytest.mark.parametrize("impl", IMPLS, ids=IMPL_IDS)
def test_user_scratchpad_computes_what_the_library_one_does(impl, direction):
    """In user mode the primitive keeps none of its work memory (its own bytes drop by the
    scratchpad's size, which both modes report alike), refuses to run without one, and
    computes bit for bit what library mode does in a scratchpad poisoned anew (all bytes
    0xFF, then 0x00) before each run: no kernel reads work memory it did not write."""
    ran = 0
    for text in SCRATCHPAD_SHAPES:
        shape = _shape(text)
        rng = np.random.default_rng(len(text))
        data = tuple(rng.integers(-8, 9, size=s).astype(np.float32)
                     for s in (shape.src_shape, shape.wei_shape, shape.dst_shape))
        try:
            lib_prim = conv_rows.create(impl, shape, direction, False)
        except core.Unimplemented:
            continue
        user_attr = core.ConvAttr(scratchpad_user=True)
        with lib_prim, conv_rows.create(impl, shape, direction, False,
                                        attr=user_attr) as user_prim:
            ran += 1
            assert user_prim.name == lib_prim.name
            assert user_prim.scratchpad_bytes == lib_prim.scratchpad_bytes
            assert (user_prim.scratch_bytes + user_prim.scratchpad_bytes
                    == lib_prim.scratch_bytes)
            expected = _execute(lib_prim, shape, direction, data)
            if user_prim.scratchpad_bytes:
                with pytest.raises(core.InvalidProblem):
                    _execute(user_prim, shape, direction, data)
            for poison in (0xFF, 0x00):
                if user_prim.scratchpad_bytes:
                    user_prim.set_scratchpad(
                        core.scratchpad_buffer(user_prim.scratchpad_bytes, poison))
                got = _execute(user_prim, shape, direction, data)
                assert np.array_equal(got, expected, equal_nan=True), (text, poison)
    assert ran or direction is not core.Direction.FWD, f"{impl.name} ran no shape"


def test_library_primitive_refuses_a_scratchpad():
    shape = _shape("mb2ic16ih6oc5kh3ph1")
    gemm = next(i for i in IMPLS if i.name.startswith("gemm_conv:"))
    with conv_rows.create(gemm, shape, FWD, False) as prim:
        with pytest.raises(core.InvalidProblem):
            prim.set_scratchpad(core.scratchpad_buffer(max(prim.scratchpad_bytes, 64)))


def test_weights_past_a_million_values_pack_on_threads():
    """Past PACK_PARALLEL_MIN packed values the threads share A's rows k (and, for int8,
    each sums its blocks' compensation): f32, bf16 and int8 with common and per-channel
    zero points, forward and backward data, all exact."""
    res = run_cli("--conv", "--dir=FWD_B,BWD_D", "--dt=f32,bf16", "mb2ic512ih5oc256kh3ph1",
                  "--dir=FWD_I", "--dt=u8:s8:u8,s8:s8:s32",
                  "--attr-zero-points=src:common:3+dst:common:1,src:per_dim_1",
                  "--attr-scales=src:common:0.25+wei:per_oc", "mb2ic512ih5oc256kh3ph1",
                  env={"OMP_NUM_THREADS": "2"})
    cases = [l for l in res.lines if l.split(":")[0].isdigit()]
    assert res.code == 0 and len(cases) == 8 and all(":PASSED " in l for l in cases), \
        res.out[-2000:]


# ---- low-precision depthwise on plain layouts (conv_fwd_dw.c's lp path) -----------------

# Every operand class, with what the epilogue adds: scales, zero points (common and per
# channel), sum, binary (per channel and per tensor) and eltwise entries, bias of another
# type, 1D to 3D, stride, dilation and padding; the sums of the int8 ones are exact. (bf16
# on plain layouts: `any` gives it channel blocks, dw_conv_blocked_bf16's.)
DW_LP_BATCH = """\
--reset --dt=u8:s8:u8 --dir=FWD_B --attr-scales=src:common:0.5+wei:per_oc+dst:common:2
--attr-zero-points=src:common:3+dst:common:-2 --attr-post-ops=add:f32:per_oc+relu
g16mb2ic16ih9oc16kh3sh2ph1
--reset --dt=s8:s8:f32 --attr-zero-points=src:per_dim_1 g8mb1ic8id5ih6iw7oc8kd3kh3kw3pd1ph1pw1
--reset --dt=u8:s8:s32 --attr-post-ops=sum:0.5 g12mb2ic12ih11oc12kh3dh1ph2
--reset --dt=f16:f16:f16 --dir=FWD_B --attr-post-ops=swish:1+mul:f16:per_tensor g8mb2ic8ih10oc8kh5ph2
--reset --dt=bf16:bf16:bf16 --stag=abx --dtag=abx g8mb3ic8iw20oc8kw3pw1
--reset --dt=bf16:bf16:f32 --dir=FWD_B --stag=abx --dtag=abx g24mb1ic24ih7oc24kh3sh2ph1
--reset --dir=FWD_B --attr-post-ops=sum:2+prelu:per_oc g8mb2ic8ih10oc8kh3ph1
"""
DW_LP_ROWS = sorted({i.name.split(":")[0] for i in core.conv_impls()
                     if i.name.startswith("dw_conv_fwd")})


@pytest.mark.parametrize("isa", [isa for isa in ("avx512", "avx2", "scalar")
                                 if core.isa_supported(core.Isa[isa.upper()])])
def test_low_precision_depthwise_passes_on_every_row(tmp_path, isa):
    batch = tmp_path / "dw_lp"
    batch.write_text(DW_LP_BATCH)
    res = run_cli("--conv", "-v5", f"--isa={isa}", f"--batch={batch}")
    assert res.code == 0, res.out + res.err
    assert sum(re.match(r"\d+:PASSED ", l) is not None for l in res.lines) == 7, res.out
    ran = [l.split("implementation: ")[1].split(" ")[0] for l in res.lines
           if l.startswith("implementation: ")]
    assert ran == [f"dw_conv_fwd_{c}:{isa}" for c in ("int8",) * 3 + ("f16",) + ("bf16",) * 2]\
        + [f"dw_conv_fwd:{isa}"], ran


@pytest.mark.parametrize("fault", ["skip_last_ic", "skip_last_tap", "right_pad_edge"])
def test_low_precision_depthwise_defects_fail(tmp_path, fault):
    batch = tmp_path / "dw_lp"
    batch.write_text(DW_LP_BATCH)
    res = run_cli("--conv", f"--batch={batch}", env={"BENCHDNN_PY_TEST_FAULT": fault})
    # each defect changes every case (each has a right padding column)
    # (the failed-cases summary repeats the lines: cases by index)
    assert {l.split(":")[0] for l in res.lines if re.match(r"\d+:FAILED ", l)} == \
        {str(i) for i in range(7)}, res.out
