"""The low-precision channel-blocked rows (gemm_conv_blocked_bf16 and _int8:
kernels/conv/conv_dblk.c on the PACK 2 and PACK 4 kernels of conv_dblk.inc) against the C
reference, bit for bit: src and dst are handed over as [mb][c/B][spatial][B] with the
channels padded up to the block (B 16 on the AVX-512 rows, 8 on AVX2's int8 row). Small
integers are exact in bf16 and u8/s8, and every
partial sum of their products is exact in f32 and s32, so the kernels' sums equal the
reference's, and their conversion to the output type (nearest even, saturating for
integers) must match numpy's. The padded tail of a bf16 src holds NaN, so a kernel that
reads the channel past an odd last channel (the high half of a pair) fails; outputs start
as NaN (integers: a value the case never writes), so a point or padded tail left
unwritten fails."""

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
    src_tail: float        # what the padded tail of src holds (never read into a sum)
    block: int = 16        # the row's channel block

    @property
    def layout(self) -> core.ActLayout:
        return core.ActLayout.BLOCKED16 if self.block == 16 else core.ActLayout.BLOCKED8


TYPES = {
    "gemm_conv_blocked_bf16:": RowTypes("bf16", "bf16", ("bf16", "f32"), (-8, 8), np.nan),
    "gemm_conv_blocked_int8:": RowTypes("u8", "s8", ("u8", "s8", "s32", "f32"), (0, 8), 255),
}
ROWS = [(i, dataclasses.replace(t, block=8 if i.isa is core.Isa.AVX2 else 16))
        for i in conv_rows.groups() for p, t in TYPES.items() if i.name.startswith(p)]
RUNNABLE = [(i, t) for i, t in ROWS if core.isa_supported(i.isa)]
IDS = [i.name for i, _ in RUNNABLE]

SHAPES = [
    "mb1ic3ih10oc5kh3ph1",                        # 3 channels: half a pair, 3/4 of a quad
    "mb1ic17ih8iw6oc9kh3kw3sh2sw1ph1pw1",         # a block and one channel; stride
    "mb1ic20ih11iw9oc512kh3kw3sh2sw1ph1pw1",      # border columns: runs of strided rows
    "mb1ic17id5ih3iw6oc256kd1kh1kw3sd2pw1",       # ... cut at each output plane
    "ic4iw10oc6kw3sw2pw1",                        # 1D
    "ic2ih3oc2oh7kh2ph2",                         # outputs that read only padding
    "ic6ih10iw8oc5kh3kw2dh2dw3sh2",               # dilation, stride, negative pad
    "mb1ic32ih7oc48kh3ph1",                       # 7x7 with 3x3: 2 of 7 points border
    "mb1ic480ih6oc64kh3ph1",                      # input blocks in chunks (bf16 3, u8 2)
    "mb2ic40ih10oc20kh1",                         # 1x1: runs of points (flat)
    "mb1ic64ih9oc80kh1sh2",                       # strided 1x1: on a copy of its points
    "mb2ic40ih30oc24kh1sh2",                      # ... rows of 15, few blocks: in place
    "mb1ic40ih30oc272kh1sh2",                     # ... five groups of blocks: copied
    "mb2ic40ih56oc272kh1sh2",                     # ... rows of 28: in place, groups inner
    "mb2ic40ih56oc24kh1sh2",                      # ... and few blocks: group by group
    "g2ic32ih6oc32kh3ph1",                        # groups of whole blocks
    "mb1ic5id4oc3kd3pd1",                         # 3D
    "mb2ic64ih7oc64kh3ph1",                       # mb > 1, whole blocks
    "mb0ic3ih5oc4kh3",                            # empty minibatch
    # the AVX2 row's forms of those it refuses (a block or more of input channels)
    "ic8iw10oc6kw3sw2pw1",                        # 1D
    "ic10ih3oc2oh7kh2ph2",                        # outputs that read only padding
    "ic12ih10iw8oc5kh3kw2dh2dw3sh2",              # dilation, stride, negative pad
    "mb1ic9id4oc3kd3pd1",                         # 3D
    "mb0ic8ih5oc4kh3",                            # empty minibatch
]


def _shape(text: str) -> core.ConvShape:
    d = parse_desc(text)
    return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def _avx2_int8_takes(text: str) -> bool:
    """Whether AVX2's int8 row takes the shape (kernels/conv/conv_api.c,
    blocked_int8_avx2_applies): a block or more of input channels per group, not a
    strided 1x1, not the dot route's shapes."""
    s = _shape(text)
    strided_1x1 = all(k == 1 for k in s.k) and any(x > 1 for x in s.s)
    return s.ic // s.g >= 8 and not strided_1x1 and not core.conv_dot_shape(s)


def _takes(t: RowTypes, text: str) -> bool:
    """Whether the row's domain holds the shape (the AVX-512 rows' holds every one)."""
    return t.block == 16 or _avx2_int8_takes(text)


def _blocked(x: np.ndarray, dt: str, tail: float, B: int) -> np.ndarray:
    """[mb][c][spatial] -> [mb][c/B][spatial][B] of dt, the padded tail set to tail."""
    mb, c = x.shape[:2]
    cp = -(-c // B) * B
    padded = np.full((mb, cp, *x.shape[2:]), tail, np.float64)
    padded[:, :c] = x
    blocked = np.moveaxis(padded.reshape(mb, cp // B, B, *x.shape[2:]), 2, -1)
    return np.ascontiguousarray(blocked.astype(core.numpy_dtype(dt)))


def _plain(x: np.ndarray, c: int, B: int) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of _blocked, as f64: the logical channels, and the padded tail apart."""
    mb, cb = x.shape[0], x.shape[1]
    full = np.moveaxis(x.astype(np.float64), -1, 2).reshape(mb, cb * B, *x.shape[2:-1])
    return np.ascontiguousarray(full[:, :c]), full[:, c:]


def _attr(t: RowTypes, dst_dt: str, **kw) -> core.ConvAttr:
    return core.ConvAttr(src_dt=t.src, wei_dt=t.wei, dst_dt=dst_dt, layout=t.layout, **kw)


def _run(impl, t: RowTypes, s, attr, src, wei, bias, dst_init, fault=core.Fault.NONE):
    """dst (blocked, of attr.dst_dt) after one execution from dst_init (plain values; the
    padded tail starts as the unwritten marker)."""
    dst_dt = attr.dst_dt
    dst = _blocked(dst_init, dst_dt, UNWRITTEN.get(dst_dt, np.nan), t.block)
    with conv_rows.create(impl, s, core.Direction.FWD, bias is not None, fault,
                          attr=attr) as prim:
        prim.bind(_blocked(src, t.src, t.src_tail, t.block),
                  prim.pack_weights(wei.astype(core.numpy_dtype(t.wei))),
                  None if bias is None else bias.astype(core.numpy_dtype(attr.bia_dt)), dst)()
    return dst


pytestmark = pytest.mark.skipif(not RUNNABLE, reason="no AVX512_BF16 or VNNI on this CPU")


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_the_rows_run_forward_on_their_channel_blocks_only(impl, t):
    shape = _shape("ic20ih6oc18kh3ph1")
    conv_rows.create(impl, shape, core.Direction.FWD, False, attr=_attr(t, t.dsts[0])).close()
    plain = dataclasses.replace(_attr(t, t.dsts[0]), layout=core.ActLayout.PLAIN)
    other = core.ActLayout.BLOCKED8 if t.block == 16 else core.ActLayout.BLOCKED16
    refused = [plain, dataclasses.replace(plain, layout=other),
               dataclasses.replace(plain, layout=core.ActLayout.NHWC),
               _attr(t, t.dsts[0], scales=core.Scales.OSCALE, wei_scales=(0.5,)),
               core.ConvAttr(layout=t.layout)]                                   # f32
    if t.src == "u8":   # zero points, and an s8 source (its shift and compensation)
        refused += [_attr(t, "u8", src_zp=3), _attr(t, "u8", dst_zp=1),
                    dataclasses.replace(_attr(t, "f32"), src_dt="s8")]
    for attr in refused:
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, shape, core.Direction.FWD, False, attr=attr)
    nhwc_src = _attr(t, t.dsts[0], src_layout=core.ActLayout.NHWC)
    if t.src == "bf16":   # the int8 row reads a partial lane whole: blocked src only
        conv_rows.create(impl, shape, core.Direction.FWD, False, attr=nhwc_src).close()
    else:
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, shape, core.Direction.FWD, False, attr=nhwc_src)
    for direction in (core.Direction.BWD_DATA, core.Direction.BWD_WEIGHTS):
        for attr in (_attr(t, t.dsts[0]), nhwc_src):
            with pytest.raises(core.Unimplemented):
                conv_rows.create(impl, shape, direction, False, attr=attr)


CASES = [pytest.param(i, t, d, text, id=f"{i.name}-{d}-{text}")
         for i, t in RUNNABLE for d in t.dsts for text in SHAPES if _takes(t, text)]


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("impl,t,dst_dt,text", CASES)
def test_forward_matches_reference_exactly(impl, t, dst_dt, text, with_bias):
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, len(text))
    bias = bias if with_bias else None
    dst = _run(impl, t, s, _attr(t, dst_dt), src, wei, bias, unwritten(dst_dt, s.dst_shape))
    out, tail = _plain(dst, s.oc, t.block)
    ref = core.ref_conv_fwd(s, src, wei, bias)
    assert np.array_equal(out, converted(ref, dst_dt)) and not tail.any()


# Forward from channels-last src beside blocked dst (attr src_layout, the first layers'
# `any`), on the bf16 row (the int8 one refuses it): a point's channels are IC elements,
# so a last pair short of a channel lies against the next point's (or the end of src)
# and reads only its own.
NHWC_SRC_SHAPES = [
    "mb1ic3ih10oc5kh3ph1",                        # 3 channels: a pair and half of one
    "mb2ic3ih20oc32kh3sh2ph1",                    # MobileNet's first layer, small
    "mb1ic3ih23oc64kh7sh2ph3",                    # ResNet's
    "mb1ic1ih7oc16kh3ph1",                        # one channel
    "mb1ic17ih8iw6oc9kh3kw3sh2sw1ph1pw1",         # a block and one channel; stride
    "mb1ic5id4oc3kd3pd1",                         # 3D
    "mb1ic6ih9oc24kh1sh2",                        # strided 1x1: read in place
    "g2ic32ih6oc32kh3ph1",                        # groups: g * IC/G into each point
]
NHWC_ROWS = [(i, t) for i, t in RUNNABLE if t.src == "bf16"]
NHWC_CASES = [pytest.param(i, t, d, text, id=f"{i.name}-{d}-{text}")
              for i, t in NHWC_ROWS for d in t.dsts for text in NHWC_SRC_SHAPES]


@pytest.mark.parametrize("impl,t,dst_dt,text", NHWC_CASES)
def test_forward_from_channels_last_src_matches_reference_exactly(impl, t, dst_dt, text):
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, len(text) + 1)
    attr = _attr(t, dst_dt, src_layout=core.ActLayout.NHWC)
    dst = _blocked(unwritten(dst_dt, s.dst_shape), dst_dt, UNWRITTEN.get(dst_dt, np.nan),
                   t.block)
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=attr) as prim:
        nhwc = np.ascontiguousarray(np.moveaxis(src, 1, -1).astype(core.numpy_dtype(t.src)))
        prim.bind(nhwc, prim.pack_weights(wei.astype(core.numpy_dtype(t.wei))),
                  bias.astype(np.float32), dst)()
    out, tail = _plain(dst, s.oc, t.block)
    ref = core.ref_conv_fwd(s, src, wei, bias)
    assert np.array_equal(out, converted(ref, dst_dt)) and not tail.any()


@pytest.mark.parametrize("impl,t", NHWC_ROWS, ids=[i.name for i, _ in NHWC_ROWS])
def test_channels_last_src_is_read_no_further_than_its_end(impl, t):
    """3 channels a point: the last point's second lane lies against the end of src (a
    bf16 pair read whole would take two bytes past it)."""
    s = _shape("mb1ic3ih6oc16kh3ph1")
    src, wei, bias = inputs(t.src_range, s, 4)
    attr = _attr(t, "f32", src_layout=core.ActLayout.NHWC)
    dst = _blocked(unwritten("f32", s.dst_shape), "f32", np.nan, t.block)
    keep: list = []
    nhwc = np.ascontiguousarray(np.moveaxis(src, 1, -1).astype(core.numpy_dtype(t.src)))
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=attr) as prim:
        prim.bind(against_a_locked_page(nhwc, keep),
                  prim.pack_weights(wei.astype(core.numpy_dtype(t.wei))),
                  bias.astype(np.float32), dst)()
    out, _ = _plain(dst, s.oc, t.block)
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), "f32"))


# A strided 1x1 whose src passes core.GATHER_AHEAD_MIN_BYTES: each work item gathers its
# points while the item before reads them ahead from a list of their lines (bf16: a
# 32-byte point a line, u8: two 16-byte points in each); placed half a point before a
# line's end (the C API takes any src), each point straddles two lines. Rows of 12
# points: shorter than the rows that read in place.
STRIDED_1X1_ROWS = [(i, t) for i, t in RUNNABLE if _takes(t, "mb1ic64ih9oc80kh1sh2")]


@pytest.mark.parametrize("straddling", [False, True], ids=["aligned", "straddling"])
@pytest.mark.parametrize("impl,t", STRIDED_1X1_ROWS, ids=[i.name for i, _ in STRIDED_1X1_ROWS])
def test_a_strided_1x1_reading_ahead_is_exact(impl, t, straddling):
    s = _shape("mb2ic40ih3000iw24oc24kh1kw1sh2sw2ph0")
    src, wei, bias = inputs(t.src_range, s, 7)
    blocked = _blocked(src, t.src, t.src_tail, t.block)
    assert blocked.nbytes >= core.GATHER_AHEAD_MIN_BYTES
    offset = 64 - t.block * blocked.itemsize // 2 if straddling else 0
    moved = memory.aligned_empty(blocked.nbytes + 64)[offset:offset + blocked.nbytes]
    moved = moved.view(blocked.dtype).reshape(blocked.shape)
    moved[...] = blocked
    dst_dt = t.dsts[0]
    dst = _blocked(unwritten(dst_dt, s.dst_shape), dst_dt, UNWRITTEN.get(dst_dt, np.nan),
                   t.block)
    with conv_rows.create(impl, s, core.Direction.FWD, True, attr=_attr(t, dst_dt)) as prim:
        prim.bind(moved, prim.pack_weights(wei.astype(core.numpy_dtype(t.wei))),
                  bias.astype(np.float32), dst)()
    out, tail = _plain(dst, s.oc, t.block)
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), dst_dt))
    assert not tail.any()


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_a_bias_of_the_source_type(impl, t):
    s = _shape("mb1ic20ih6oc18kh3ph1")
    bia_dt = "bf16" if t.src == "bf16" else "s8"
    src, wei, bias = inputs(t.src_range, s, 3)
    dst = _run(impl, t, s, _attr(t, "f32", bia_dt=bia_dt), src, wei, bias,
               unwritten("f32", s.dst_shape))
    out, tail = _plain(dst, s.oc, t.block)
    assert np.array_equal(out, converted(core.ref_conv_fwd(s, src, wei, bias), "f32"))
    assert not tail.any()


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
@pytest.mark.parametrize("text", ["mb2ic20ih6oc18kh3ph1", "mb1ic32ih7oc48kh3ph1",
                                  "mb2ic40ih10oc36kh1"])
def test_sum_and_eltwise_post_ops_in_f32_then_one_conversion(impl, t, text):
    """bias, then the sum (the prior dst, scaled), relu and a shift, all in f32, and one
    conversion; the shift would make the padded tail nonzero if it reached it. The 7x7
    3x3 case has a border point per call at either end of a row, the 1x1 runs of points."""
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, 5)
    prior = ints(np.random.default_rng(6), s.dst_shape, 0, 8)
    chain = (core.PostOp(core.PostKind.SUM, scale=0.5),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.LINEAR, alpha=1.0,
                         beta=3.0))
    for dst_dt in t.dsts:
        dst = _run(impl, t, s, _attr(t, dst_dt, post_ops=chain), src, wei, bias, prior)
        v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(0.5) * prior
        ref = np.where(v > 0, v, np.float32(0.25) * v) + np.float32(3.0)
        out, tail = _plain(dst, s.oc, t.block)
        assert np.array_equal(out, converted(ref, dst_dt)) and not tail.any(), dst_dt


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_a_lone_relu_after_a_sum(impl, t):
    s = _shape("mb2ic20ih6iw30oc18kh3kw3ph1pw1")
    src, wei, bias = inputs(t.src_range, s, 6)
    prior = ints(np.random.default_rng(7), s.dst_shape)
    chain = (core.PostOp(core.PostKind.SUM, scale=2.0),
             core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.0))
    dst = _run(impl, t, s, _attr(t, "f32", post_ops=chain), src, wei, bias, prior)
    v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32) + np.float32(2.0) * prior
    out, tail = _plain(dst, s.oc, t.block)
    assert np.array_equal(out, np.maximum(v, 0)) and not tail.any()


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
@pytest.mark.parametrize("text", ["mb2ic20ih6iw30oc18kh3kw3ph1pw1", "mb2ic40ih10oc36kh1",
                                  "mb1ic32ih7oc48kh3ph1", "mb1ic300ih5oc20kh3ph1"])
def test_a_lone_leaky_relu_in_the_direct_store(impl, t, text):
    """bias and relu alone: the last chunk converts its registers straight into dst (the
    300-channel one's earlier chunk does not)."""
    s = _shape(text)
    src, wei, bias = inputs(t.src_range, s, 9)
    relu = core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.25)
    for dst_dt in t.dsts:
        dst = _run(impl, t, s, _attr(t, dst_dt, post_ops=(relu,)), src, wei, bias,
                   unwritten(dst_dt, s.dst_shape))
        v = core.ref_conv_fwd(s, src, wei, bias).astype(np.float32)
        out, tail = _plain(dst, s.oc, t.block)
        assert np.array_equal(out, converted(np.where(v > 0, v, np.float32(0.25) * v),
                                              dst_dt)), dst_dt
        assert not tail.any()


BF16_RUNNABLE = [(i, t) for i, t in RUNNABLE if t.src == "bf16"]


@pytest.mark.parametrize("impl,t", BF16_RUNNABLE, ids=[i.name for i, _ in BF16_RUNNABLE])
@pytest.mark.parametrize("text", ["mb1ic64ih7oc64kh1", "mb2ic40ih10oc36kh1",
                                  "mb1ic32ih7oc48kh3ph1"])
def test_denormal_outputs_keep_their_bits(impl, t, text):
    """A leaky relu of tiny negative sums gives f32 denormals, which the bf16 store keeps
    (dt.h) where vcvtne2ps2bf16 would flush them: calls with one take the out-of-line
    store, the rest the store from registers, and both must give the reference's bits."""
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src = (ints(rng, s.src_shape, 1, 8) * 2.0 ** -60).astype(np.float32)
    wei = (ints(rng, s.wei_shape, -8, 8) * 2.0 ** -62).astype(np.float32)
    alpha = 2.0 ** -12
    relu = core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=alpha)
    dst = _run(impl, t, s, _attr(t, "bf16", post_ops=(relu,)), src, wei, None,
               unwritten("bf16", s.dst_shape))
    v = core.ref_conv_fwd(s, src, wei, None).astype(np.float32)
    want = converted(np.where(v > 0, v, np.float32(alpha) * v), "bf16")
    out, tail = _plain(dst, s.oc, t.block)
    assert ((out != 0) & (np.abs(out) < 2.0 ** -126)).any()   # denormals to keep
    assert np.array_equal(out, want) and not tail.any()


@pytest.mark.parametrize("impl,t", BF16_RUNNABLE, ids=[i.name for i, _ in BF16_RUNNABLE])
def test_denormal_bias_of_rows_without_taps_keeps_its_bits(impl, t):
    """The store from registers converts without a class test the sums that went through
    vdpbf16ps (it flushes denormal results), not those of calls without products: here
    the first and last output rows have every kh tap in the padding, so their sums are the
    bias, a denormal in channels 0-15, which must reach dst as dt.h keeps it."""
    s = _shape("mb1ic32ih4oc32kh3ph3")
    rng = np.random.default_rng(3)
    src = ints(rng, s.src_shape, -8, 8)
    wei = ints(rng, s.wei_shape, -8, 8)
    bias = np.zeros(s.oc, np.float32)
    bias[:16] = np.float32(2.0 ** -130)   # an f32 denormal, and a bf16 one
    bias[16:] = np.float32(0.5)
    dst = _run(impl, t, s, _attr(t, "bf16"), src, wei, bias, unwritten("bf16", s.dst_shape))
    want = converted(core.ref_conv_fwd(s, src, wei, bias).astype(np.float32), "bf16")
    out, tail = _plain(dst, s.oc, t.block)
    rows = out[..., [0, -1], :]   # (the first and last output rows: the bias alone)
    assert (rows[:, :16] == np.float32(2.0 ** -130)).all()
    assert np.array_equal(out, want) and not tail.any()


@pytest.mark.parametrize("impl,t", BF16_RUNNABLE, ids=[i.name for i, _ in BF16_RUNNABLE])
def test_nan_sums_keep_their_bf16_bits(impl, t):
    """The store from registers converts NaN sums without a class test: vcvtne2ps2bf16
    quiets them as dt.h does (sign and high payload bits kept, the quiet bit set). A NaN
    bias, which vdpbf16ps carries through the products, must reach dst with those bits."""
    s = _shape("mb1ic64ih7oc32kh1")
    rng = np.random.default_rng(5)
    src = ints(rng, s.src_shape, -8, 8)
    wei = ints(rng, s.wei_shape, -8, 8)
    bias = np.full(s.oc, 0.5, np.float32)
    bias[3] = np.array(0x7FC12345, np.uint32).view(np.float32)
    bias[17] = np.array(0xFFE54321, np.uint32).view(np.float32)
    dst = _run(impl, t, s, _attr(t, "bf16"), src, wei, bias, unwritten("bf16", s.dst_shape))
    # [mb][channel][point] of dst's bits
    bits = np.moveaxis(dst.view(np.uint16), -1, 2).reshape(s.mb, dst.shape[1] * t.block, -1)
    assert (bits[:, 3] == 0x7FC1).all() and (bits[:, 17] == 0xFFE5).all()
    out, tail = _plain(dst, s.oc, t.block)
    want = converted(core.ref_conv_fwd(s, src, wei, bias).astype(np.float32), "bf16")
    finite = np.delete(np.arange(s.oc), [3, 17])
    assert np.array_equal(out[:, finite], want[:, finite]) and not tail.any()


INT8_RUNNABLE = [(i, t) for i, t in RUNNABLE if t.src == "u8"]


SATURATING = [pytest.param(i, t, text, id=f"{i.name}-{text}") for i, t in INT8_RUNNABLE
               for text in ("mb2ic64ih7oc48kh3ph1", "mb1ic40ih10oc36kh1",
                            "mb1ic64ih9oc32kh1sh2")
               if _takes(t, text)]


@pytest.mark.parametrize("impl,t,text", SATURATING)
def test_sums_without_bias_saturate_as_integers(impl, t, text):
    """No bias, relu of slope 0 or none: the direct store saturates the s32 sums to 8 bits
    as integers. Full-range src and weights take sums far past s16 both ways (the packs
    saturate s32 to s16 first), and relu's zeros must reach an s8 dst too."""
    s = _shape(text)
    rng = np.random.default_rng(len(text))
    src = ints(rng, s.src_shape, 0, 255)
    wei = ints(rng, s.wei_shape, -128, 127)
    relu = core.PostOp(core.PostKind.ELTWISE, alg=core.EltAlg.RELU, alpha=0.0)
    v = core.ref_conv_fwd(s, src, wei, None)
    assert v.max() > 2 ** 15 and v.min() < -2 ** 15   # the packs' first step saturates
    for dst_dt in ("u8", "s8"):
        for post_ops in ((), (relu,)):
            dst = _run(impl, t, s, _attr(t, dst_dt, post_ops=post_ops), src, wei, None,
                       unwritten(dst_dt, s.dst_shape))
            out, tail = _plain(dst, s.oc, t.block)
            want = np.maximum(v, 0) if post_ops else v
            assert np.array_equal(out, converted(want, dst_dt)), (dst_dt, post_ops)
            assert not tail.any()


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_the_padding_garbage_defect_writes_the_tail(impl, t):
    s = _shape("ic9ih6oc5kh3ph1")
    src, wei, _ = inputs(t.src_range, s, 8)
    dst = _run(impl, t, s, _attr(t, t.dsts[0]), src, wei, None,
               unwritten(t.dsts[0], s.dst_shape), core.Fault.PADDING_GARBAGE)
    assert (_plain(dst, s.oc, t.block)[1] == 1).all()


@pytest.mark.parametrize("impl,t", RUNNABLE, ids=IDS)
def test_cli_any_runs_on_the_blocked_row(impl, t):
    row, dt = impl.name, f"{t.src}:{t.wei}:{t.dsts[0]}"
    # (capped below AMX, whose tile rows `any` takes first where the CPU has them, and
    # for the AVX2 row at AVX2)
    isa = "avx2" if t.block == 8 else "avx512_bf16"
    out = run_cli("--conv", f"--dt={dt}", "--dir=FWD_B", "--attr-post-ops=,sum+relu", "-v5",
                  f"--isa={isa}", "mb2ic20ih6oc18kh3ph1").out
    assert out.count("PASSED") == 2
    assert out.count(f"implementation: {row}") == 2
    assert f"dst any=aBcd{t.block}b" in out and "+reorder" not in out


@pytest.mark.parametrize("dt,args,plain", [
    ("bf16", ("--dir=BWD_D",), "gemm_conv_bf16:"),
    ("bf16", ("--dir=FWD_B", "--stag=nchw", "--dtag=nchw"), "gemm_conv_bf16:"),
    ("s8:s8:f32", ("--dir=FWD_B",), "gemm_conv_int8:"),
    ("u8:s8:u8", ("--dir=FWD_B", "--attr-zero-points=src:common:3"), "gemm_conv_int8:"),
    ("u8:s8:u8", ("--dir=FWD_B", "--attr-scales=src:common:0.5"), "gemm_conv_int8:"),
])
def test_cli_what_the_blocked_rows_refuse_takes_the_plain_rows(dt, args, plain):
    out = run_cli("--conv", f"--dt={dt}", *args, "-v5", "mb2ic20ih6oc18kh3ph1").out
    assert "PASSED" in out and f"implementation: {plain}" in out
    assert "gemm_conv_blocked_" not in out


INT8_ROWS = [(i, t) for i, t in RUNNABLE if t.src == "u8"]


@pytest.mark.parametrize("dst_dt", ["u8", "s8"])
@pytest.mark.parametrize("impl,t", INT8_ROWS, ids=[i.name for i, _ in INT8_ROWS])
def test_integer_outputs_saturate_round_and_zero_nan(impl, t, dst_dt):
    """u8 and s8 dst take the sums rounded to nearest even, saturated, and NaN as 0 (u8's
    clamp is left to the packs' saturation: a NaN or anything below the s32 range becomes
    INT_MIN there, which must still store 0), four points to a store and one by one (rows
    of 7). The bias alone reaches dst: src is zero."""
    s = _shape("mb1ic16ih3iw7oc48kh3kw3ph1pw1")
    src = np.zeros(s.src_shape, np.float32)
    wei = ints(np.random.default_rng(3), s.wei_shape)
    bias = edge_bias(s.oc)
    dst = _run(impl, t, s, _attr(t, dst_dt), src, wei, bias, unwritten(dst_dt, s.dst_shape))
    out, tail = _plain(dst, s.oc, t.block)
    ref = np.broadcast_to(bias.reshape((1, -1) + (1,) * (out.ndim - 2)), out.shape)
    assert np.array_equal(out, converted_int(ref, dst_dt)) and not tail.any()


# AVX2's int8 row (conv_dblk_int8_avx2.c): vpmaddubsw's s16 pair sums, two lanes' added in
# s16, are exact while twice the largest weight pair |w0| + |w1| times 255 fits s16 (pairs
# within 64); the packing measures the weights and an execution past that runs the exact
# twin. Both must give the reference's sums: full-range u8 src (255 against the weights'
# extremes) with weights at the bound, just past it, and at s8's extremes.
BOUNDED_ROWS = [(i, t) for i, t in INT8_ROWS if i.isa is core.Isa.AVX2]


@pytest.mark.parametrize("wmax,variant", [(32, "pairs16x2"), (33, "exact"), (127, "exact"),
                                          (-128, "exact")])
@pytest.mark.parametrize("text", ["mb2ic64ih7oc48kh3ph1", "mb1ic40ih10oc36kh1",
                                  "mb1ic20ih5iw9oc9kh3kw3sh2sw1ph1pw1"])
@pytest.mark.parametrize("impl,t", BOUNDED_ROWS, ids=[i.name for i, _ in BOUNDED_ROWS])
def test_avx2_int8_takes_the_bounded_form_only_where_the_weights_keep_it_exact(
        impl, t, text, wmax, variant):
    """Weights of magnitude |wmax| at every position of some pairs (the rest in [-4, 4]):
    32 makes pairs of 64, the bound; 33 passes it by one. src all 255 where a weight is
    extreme, so each s16 sum meets its worst case."""
    s = _shape(text)
    rng = np.random.default_rng(len(text) + abs(wmax))
    wei = ints(rng, s.wei_shape, -4, 4)
    extreme = rng.random(s.wei_shape) < 0.3
    sign = np.where(rng.random(s.wei_shape) < 0.5, -1.0, 1.0) if wmax > 0 else -1.0
    wei = np.where(extreme, sign * abs(wmax), wei).astype(np.float32)
    src = np.where(rng.random(s.src_shape) < 0.7, 255.0, ints(rng, s.src_shape, 0, 255))
    src = src.astype(np.float32)
    for dst_dt in ("s32", "f32"):
        dst = _blocked(unwritten(dst_dt, s.dst_shape), dst_dt, UNWRITTEN.get(dst_dt, np.nan),
                       t.block)
        with conv_rows.create(impl, s, core.Direction.FWD, False,
                              attr=_attr(t, dst_dt)) as prim:
            prim.bind(_blocked(src, t.src, t.src_tail, t.block),
                      prim.pack_weights(wei.astype(np.int8)), None, dst)()
            assert prim.name == f"{impl.rows[0].name}@{variant}"
        out, tail = _plain(dst, s.oc, t.block)
        ref = core.ref_conv_fwd(s, src, wei, None)
        assert np.array_equal(out, converted(ref, dst_dt)) and not tail.any(), dst_dt


@pytest.mark.parametrize("impl,t", BOUNDED_ROWS, ids=[i.name for i, _ in BOUNDED_ROWS])
def test_avx2_int8_refuses_first_layers_strided_1x1s_and_dot_shapes(impl, t):
    """Those take the plain rows (faster there); `any` then resolves to the plain layout."""
    refused = ["mb1ic3ih10oc5kh3ph1", "mb1ic7ih8oc16kh3ph1", "mb1ic64ih9oc80kh1sh2",
               "mb2ic40ih30oc24kh1sh2", "mb1ic16ih5iw40oc3oh2ow2kh3kw20ph1pw1"]
    assert not any(_avx2_int8_takes(text) for text in refused)
    for text in refused:
        with pytest.raises(core.Unimplemented):
            conv_rows.create(impl, _shape(text), core.Direction.FWD, False,
                             attr=_attr(t, "u8")).close()
    conv_rows.create(impl, _shape("mb1ic8ih8oc16kh3ph1"), core.Direction.FWD, False,
                     attr=_attr(t, "u8")).close()
    for text in refused:
        out = run_cli("--conv", "--isa=avx2", "--dt=u8:s8:u8", "-v5", text).out
        assert "PASSED" in out and "implementation: gemm_conv_int8:avx2:" in out, out
        assert "gemm_conv_blocked_int8" not in out, out
