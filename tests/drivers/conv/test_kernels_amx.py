"""The AMX tile rows (tile_conv_nhwc_bf16 and _int8: kernels/conv/conv_amx.c) against the C
reference, bit for bit, on channels-last src and dst. Small integers are exact in bf16
and u8/s8, and every partial sum of their products is exact in f32 and s32, so the tile
products' sums equal the reference's, and their conversion to the output type (nearest
even, saturating for integers) must match numpy's. dst starts as a value no case writes
(NaN for floats) and has a guard band after it: a point left unwritten, or a store past
the last point, fails; src ends right before a page no one may read, so a load past its
last point faults. The shapes cover each walk of the output points (GEMM from src or
from a copy, FLAT, ROWS from src or from a copy, FOLD), partial items and partial channel
chunks, and passes of several images (the copy's images per pass: at most 2 MiB of
them)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import conv_rows
from lp_exact import (UNWRITTEN, against_a_locked_page, converted, converted_int, edge_bias,
                      inputs, ints, unwritten)
from conftest import run_cli

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.engine import memory


@dataclasses.dataclass(frozen=True)
class RowTypes:
    src: str
    wei: str
    dsts: tuple[str, ...]
    src_range: tuple[int, int]


TYPES = {
    "tile_conv_nhwc_bf16:": RowTypes("bf16", "bf16", ("bf16", "f32"), (-8, 8)),
    "tile_conv_nhwc_int8:": RowTypes("u8", "s8", ("u8", "s8", "s32", "f32", "bf16"), (0, 8)),
}
ROWS = [(i, t) for i in conv_rows.groups() for p, t in TYPES.items() if i.name.startswith(p)]
RUNNABLE = [(i, t) for i, t in ROWS if core.isa_supported(i.isa)]
IDS = [i.name for i, _ in RUNNABLE]
GUARD = 97   # elements after dst

SHAPES = [
    "mb2ic64ih7oc64kh1",                      # GEMM on src; 98 points: the last item staged
    "mb1ic128ih4oc32kh1",                     # GEMM on src, whole items
    "mb2ic40ih10oc36kh1",                     # GEMM on a copy: channels padded to a block
    "mb1ic64ih9oc80kh1sh2",                   # GEMM on a copy of the strided points
    "mb2ic64ih55oc40kh1sh2",                  # ROWS on src: a strided 1x1, 28-point rows;
                                              # the last row's item staged (src's end)
    "mb1ic128ih8iw60oc32kh1kw1sh3sw2",        # ROWS on src: unequal strides
    "mb2ic32ih6oc18kh3ph1",                   # FLAT: padding, a partial channel chunk
    "mb1ic64ih7oc70kh3ph1",                   # FLAT, 7x7 with 3x3; two input blocks
    "mb3ic32ih103oc8kh3ph1",                  # FLAT: passes of two images, then one
    "ic40ih10iw8oc33kh3kw2dh2dw3",            # FLAT with dilation, no padding
    "ic32ih3oc16oh7kh2ph2",                   # outputs that read only padding
    "mb2ic64ih15oc48kh3sh2ph1",               # ROWS: strided 3x3
    "ic48ih10iw8oc20kh3kw2dh1dw2sh2",         # ROWS with dilation, negative padding
    "mb1ic64ih3iw70oc32kh1kw3sw2pw1",         # ROWS: 35 points a row (two items)
    "mb2ic3ih30oc64kh7sh2ph3",                # FOLD: ResNet's first layer, smaller
    "mb1ic5ih9iw20oc17kh3kw3sw2ph1pw1",       # FOLD at stride 2 with edges
    "mb3ic3ih20oc96kh7sh2ph3",                # FOLD: three channel chunks (a thread's
                                              # items start mid-item), the next item
                                              # gathered across images
    "mb3ic5ih400oc16kh3sh2ph1",               # FOLD: passes of one image (bf16) or two
    "ic8ih10iw12oc33kh2kw3dw1pw2sw3",         # FOLD, dilated: tap by tap
    "mb1ic12ih8oc30kh5ph2",                   # FOLD (12 x 5 = 60 channels, two bf16 blocks)
    "mb1ic3ih12iw10oc16kh3kw3dh1ph2pw1",      # FOLD, dilated in h
    "iw40ic64oc64kw3pw1",                     # 1D
    "mb0ic32ih5oc16kh3",                      # empty minibatch
]


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _nhwc(x: np.ndarray, dt: str) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, 1, -1).astype(core.numpy_dtype(dt)))


def _attr(t: RowTypes, dst_dt: str, **kw) -> core.ConvAttr:
    return core.ConvAttr(src_dt=t.src, wei_dt=t.wei, dst_dt=dst_dt,
                         layout=core.ActLayout.NHWC, **kw)


def _run(impl, t: RowTypes, s, attr, src, wei, bias, dst_init):
    """dst (logical [mb][oc][spatial], f64) after one execution from dst_init, after
    checking the guard band behind dst is untouched; src ends where reading stops
    (against_a_locked_page)."""
    dst_dt, marker = attr.dst_dt, UNWRITTEN.get(attr.dst_dt, np.nan)
    init = _nhwc(dst_init, dst_dt)
    full = np.full(init.size + GUARD, marker, init.dtype)
    full[:init.size] = init.ravel()
    dst = full[:init.size].reshape(init.shape)
    keep: list = []
    src_at_end = against_a_locked_page(_nhwc(src, t.src), keep)
    with conv_rows.create(impl, s, core.Direction.FWD, bias is not None, attr=attr) as prim:
        prim.bind(src_at_end, prim.pack_weights(wei.astype(core.numpy_dtype(t.wei))),
                  None if bias is None else bias.astype(core.numpy_dtype(attr.bia_dt)), dst)()
    guard = full[init.size:].astype(np.float64)
    assert (np.isnan(guard) if np.isnan(marker) else guard == marker).all(), "wrote past dst"
    return np.moveaxis(dst.astype(np.float64), -1, 1)


pytestmark = pytest.mark.skipif(not RUNNABLE, reason="no AMX on this CPU (or no permission)")


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_the_rows_run_forward_on_channels_last_only(impl, t):
    shape = _shape("ic32ih6oc18kh3ph1")
    conv_rows.create(impl, shape, core.Direction.FWD, False, attr=_attr(t, t.dsts[0])).close()
    nhwc = _attr(t, t.dsts[0])
    refused = [dataclasses.replace(nhwc, layout=core.ActLayout.PLAIN),
               dataclasses.replace(nhwc, layout=core.ActLayout.BLOCKED16),
               _attr(t, t.dsts[0], scales=core.Scales.OSCALE, wei_scales=(0.5,)),
               core.ConvAttr(layout=core.ActLayout.NHWC)]                        # f32
    if t.src == "u8":   # zero points, and an s8 source (its shift and compensation)
        refused += [_attr(t, "u8", src_zp=3), _attr(t, "u8", dst_zp=1),
                    dataclasses.replace(_attr(t, "f32"), src_dt="s8")]
    for attr in refused:
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, shape, core.Direction.FWD, False, attr=attr)
    for other in ("g2ic32ih6oc32kh3ph1", "ic32id4ih4iw4oc16kd3kh3kw3pd1ph1pw1"):   # groups, 3D
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, _shape(other), core.Direction.FWD, False, attr=nhwc)
    for direction in (core.Direction.BWD_DATA, core.Direction.BWD_WEIGHTS):
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, shape, direction, False, attr=nhwc)


CASES = [pytest.param(i, t, d, text, id=f"{i.name}-{d}-{text}")
         for i, t in RUNNABLE for d in t.dsts for text in SHAPES]


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,t,dst_dt,text", CASES)
def test_forward_matches_reference_exactly(impl, t, dst_dt, text, with_bias):
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, len(text))
    bias = bias if with_bias else None
    out = _run(impl, t, s, _attr(t, dst_dt), src, wei, bias, unwritten(dst_dt, s.dst_shape))
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), dst_dt))


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_a_bias_of_the_source_type(impl, t):
    s = _shape("mb1ic32ih6oc18kh3ph1")
    bia_dt = "bf16" if t.src == "bf16" else "s8"
    src, wei, bias = inputs(t.src_range, s, 3)
    out = _run(impl, t, s, _attr(t, "f32", bia_dt=bia_dt), src, wei, bias,
               unwritten("f32", s.dst_shape))
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), "f32"))


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
@pytest.mark.parametrize("text", ["mb2ic32ih6oc18kh3ph1", "mb2ic64ih7oc40kh1",
                                  "mb1ic64ih9oc36kh3sh2ph1", "mb1ic3ih12oc20kh7sh2ph3"])
def test_sum_and_eltwise_post_ops_in_f32_then_one_conversion(impl, t, text):
    """bias, then the sum (the prior dst, scaled), leaky relu and a shift, all in f32, and
    one conversion, on each walk."""
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, 5)
    prior = ints(np.random.default_rng(6), s.dst_shape, 0, 8)
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.LINEAR, alpha=1.0,
                         beta=3.0))
    for dst_dt in t.dsts:
        out = _run(impl, t, s, _attr(t, dst_dt, post_ops=chain), src, wei, bias, prior)
        v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
        ref = np.where(v > 0, v, np.float32(0.25) * v) + np.float32(3.0)
        assert np.array_equal(out, converted(ref, dst_dt)), dst_dt


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_a_sum_alone_reads_the_prior_dst(impl, t):
    s = _shape("mb1ic64ih5oc48kh3ph1")
    src, wei, bias = inputs(t.src_range, s, 7)
    prior = ints(np.random.default_rng(8), s.dst_shape, 0, 8)
    chain = (core.PostOp(core.PostKind.SUM, scale=2.0),)
    for dst_dt in t.dsts:
        out = _run(impl, t, s, _attr(t, dst_dt, post_ops=chain), src, wei, bias, prior)
        v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(2.0) * prior
        assert np.array_equal(out, converted(v, dst_dt)), dst_dt


@pytest.mark.parametrize("dt,row", [("bf16", "tile_conv_nhwc_bf16:avx512_amx"),
                                    ("u8:s8:u8", "tile_conv_nhwc_int8:avx512_amx")])
def test_cli_any_takes_the_tile_rows_on_channels_last(dt, row):
    out = run_cli("--conv", f"--dt={dt}", "--dir=FWD_B", "--attr-post-ops=,sum+relu", "-v5",
                  "mb2ic32ih6oc18kh3ph1").out
    assert out.count("PASSED") == 2
    assert out.count(f"implementation: {row}") == 2
    assert "dst any=acdb" in out and "+reorder" not in out
    capped = run_cli("--conv", f"--dt={dt}", "-v5", "--isa=avx512_bf16",
                     "mb2ic32ih6oc18kh3ph1").out
    assert "PASSED" in capped and "tile_conv_nhwc" not in capped
    assert "dst any=aBcd16b" in capped


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_denormal_and_nan_outputs_keep_their_bf16_bits(impl, t):
    """A bf16 dst is converted two vectors at a time by an instruction that flushes
    denormals: a vector holding a denormal or a NaN must take the exact conversion (the
    bias alone reaches dst: src is zero). Channels 0-15 hold one denormal, 16-31 none,
    32-47 a NaN."""
    s = _shape("mb1ic32ih4oc48kh1")
    src = np.zeros(s.src_shape, np.float32)
    wei = ints(np.random.default_rng(2), s.wei_shape)
    bias = np.arange(1, s.oc + 1, dtype=np.float32)
    bias[5] = np.float32(2.0 ** -130)   # an f32 denormal, and a bf16 one
    bias[40] = np.nan
    out = _run(impl, t, s, _attr(t, "bf16"), src, wei, bias, unwritten("bf16", s.dst_shape))
    ref = np.broadcast_to(bias.reshape((1, -1) + (1,) * (out.ndim - 2)), out.shape)
    assert (out[:, 5] != 0).all()
    assert np.array_equal(out, converted(ref, "bf16"), equal_nan=True)


@pytest.mark.parametrize("dst_dt", ["u8", "s8"])
@pytest.mark.parametrize("impl,t", [(i, t) for i, t in RUNNABLE if t.src == "u8"],
                         ids=[i.name for i, t in RUNNABLE if t.src == "u8"])
def test_integer_outputs_saturate_round_and_zero_nan(impl, t, dst_dt):
    """u8 and s8 dst take the sums rounded to nearest even, saturated, and NaN as 0 (u8's
    clamp is left to the packs' saturation: a NaN or anything below the s32 range becomes
    INT_MIN there, which must still store 0). The bias alone reaches dst: src is zero."""
    s = _shape("mb1ic64ih2oc48kh1")
    src = np.zeros(s.src_shape, np.float32)
    wei = ints(np.random.default_rng(3), s.wei_shape)
    bias = edge_bias(s.oc)
    out = _run(impl, t, s, _attr(t, dst_dt), src, wei, bias, unwritten(dst_dt, s.dst_shape))
    ref = np.broadcast_to(bias.reshape((1, -1) + (1,) * (out.ndim - 2)), out.shape)
    assert np.array_equal(out, converted_int(ref, dst_dt))


@pytest.mark.parametrize("impl,t", [(i, t) for i, t in RUNNABLE if t.src == "bf16"],
                         ids=[i.name for i, t in RUNNABLE if t.src == "bf16"])
def test_a_bf16_output_past_the_caches_is_exact(impl, t):
    """A 16 MiB bf16 dst (core.STREAM_MIN_BYTES, bdnn.h), aligned as the driver's buffers
    are, goes out by non-temporal stores, each a chunk's 32 channels of a point."""
    s = _shape("mb1ic32ih512oc32kh1")
    src, wei, bias = inputs((-4, 4), s, 9)
    dst = memory.aligned_empty(2 * int(np.prod(s.dst_shape))).view(core.numpy_dtype("bf16"))
    dst = dst.reshape((1,) + tuple(s.dst_shape[2:]) + (32,))
    assert dst.nbytes >= core.STREAM_MIN_BYTES
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=_attr(t, "bf16")) as prim:
        prim.bind(_nhwc(src, "bf16"), prim.pack_weights(wei.astype(core.numpy_dtype("bf16"))),
                  bias, dst)()
    out = np.moveaxis(dst.astype(np.float64), -1, 1)
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), "bf16"))
