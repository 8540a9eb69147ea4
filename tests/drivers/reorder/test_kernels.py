"""The C reorder kernels through core, on every ISA variant: each path (bit copies,
runs, batched short runs, tiles, zero jobs, conversions) against numpy placing the
reference by the layout module's offsets. Tensors of 8 MiB or more take the streaming
stores, so a few cases are that large."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import layout, packed
from benchdnn_py.common.check import round_to_dt
from benchdnn_py.drivers.reorder import ref
from benchdnn_py.engine.memory import aligned_zeros

IMPLS = [i for i in core.reorder_impls() if core.isa_supported(i.isa)]


def run(impl, stag, dtag, dims, sdt="f32", ddt="f32", src_scale=1.0, dst_scale=1.0,
        sum_scale=None, seed=0):
    rng = np.random.default_rng(seed)
    src_l = layout.parse_tag(stag).layout(dims)
    dst_l = layout.parse_tag(dtag).layout(dims)
    x = round_to_dt(rng.integers(-300, 300, dims).astype(np.float32) / 4, sdt)
    # 64-byte aligned, as the driver's buffers: the streaming stores need it
    src = aligned_zeros(src_l.size, core.numpy_dtype(sdt))
    src[src_l.offset_table()] = x.astype(src.dtype)
    dst = aligned_zeros(dst_l.size, core.numpy_dtype(ddt))
    dst[:] = 77
    prior = None
    if sum_scale is not None:
        prior = round_to_dt(rng.integers(-8, 8, dims).astype(np.float32), ddt)
        dst[dst_l.offset_table()] = prior.astype(dst.dtype)
    attr = core.ReorderAttr(sdt, ddt, src_scale, dst_scale, sum_scale is not None,
                                sum_scale or 1.0)
    jobs = layout.copy_jobs(src_l, dst_l) + layout.zero_jobs(dst_l)
    core.ReorderPrimitive(impl, attr, jobs).bind(src, dst)()
    with np.errstate(all="ignore"):
        exp = round_to_dt(ref.reorder(x, src_scale, dst_scale, sum_scale, prior), ddt)
    got = dst[dst_l.offset_table()].astype(np.float32)
    pad = dst[dst_l.padding_offsets()]
    return exp, got, pad


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("stag,dtag,dims", [
    ("nchw", "nchw", (2, 33, 5, 7)),          # one merged run: memcpy shares
    ("nchw", "nhwc", (2, 37, 19, 5)),         # a transposition: tiles with tails
    ("nchw", "nChw16c", (3, 40, 9, 11)),      # narrow tall tiles, padding
    ("nhwc", "nChw8c", (2, 19, 9, 9)),        # batched short runs, padding
    ("nChw16c", "nhwc", (2, 130, 5, 3)),      # 8 blocks swapped inside the batch, a tail
    ("OIhw16i16o", "hwio", (20, 36, 3, 3)),   # blocked to plain, both dims blocked
    ("aBcd8b", "aBcd16b", (2, 30, 4, 3)),     # nested blocks
    ("ab", "ba", (130, 67)),                  # a plain 2D transpose, 8x8 tails
])
def test_every_path_is_exact_and_zeroes_the_padding(impl, stag, dtag, dims):
    exp, got, pad = run(impl, stag, dtag, dims)
    assert np.array_equal(exp, got)
    assert (pad == 0).all()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("sdt,ddt", [("f32", "s8"), ("f32", "u8"), ("bf16", "f16"),
                                     ("s32", "bf16"), ("u8", "f32"), ("f16", "s32")])
def test_conversions_scales_and_sum_round_like_the_reference(impl, sdt, ddt):
    for stag, dtag in (("nchw", "nhwc"), ("nhwc", "nChw16c")):
        exp, got, pad = run(impl, stag, dtag, (2, 21, 6, 5), sdt, ddt, src_scale=0.75,
                            dst_scale=0.5, sum_scale=1.5)
        assert np.array_equal(exp, got), (stag, dtag)
        assert (pad == 0).all()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("dt", ["bf16", "s8"])
@pytest.mark.parametrize("stag,dtag,dims", [
    ("nchw", "nhwc", (2, 37, 19, 5)),         # 16 x 32 blocks of 2-byte lanes, tails
    ("nchw", "nhwc", (2, 80, 33, 2)),         # a 16-wide column after the 32-wide blocks
    ("nchw", "nChw16c", (3, 40, 9, 11)),      # dense 16-wide rows, padding
    ("ab", "ba", (130, 67)),
])
def test_narrow_bit_copies_transpose_exactly(impl, dt, stag, dtag, dims):
    exp, got, pad = run(impl, stag, dtag, dims, dt, dt)
    assert np.array_equal(exp, got)
    assert (pad == 0).all()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("sdt,ddt", [("f32", "bf16"), ("bf16", "f32"), ("f32", "s8"),
                                     ("u8", "s32"), ("s32", "u8"), ("s8", "bf16")])
def test_transposing_conversions_in_registers(impl, sdt, ddt):
    """No sum: the register path, with and without scales, blocks and scalar edges."""
    for stag, dtag, dims in (("nchw", "nhwc", (2, 37, 19, 5)), ("nhwc", "nchw", (2, 21, 6, 5)),
                             ("nchw", "nChw16c", (3, 40, 9, 11)), ("ab", "ba", (70, 131))):
        for scales in ((1.0, 1.0), (0.75, 0.5)):
            exp, got, pad = run(impl, stag, dtag, dims, sdt, ddt, *scales)
            assert np.array_equal(exp, got), (stag, dtag, scales)
            assert (pad == 0).all()


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("sdt,ddt,stag,dtag,dims", [
    ("f32", "f32", "nchw", "nhwc", (2, 128, 181, 47)),     # 4-byte blocks, 64-byte rows
    ("bf16", "bf16", "nchw", "nhwc", (2, 128, 181, 91)),   # 2-byte blocks, whole lines
    ("f32", "bf16", "nchw", "nhwc", (2, 128, 181, 91)),    # converted rows from a stage
    ("bf16", "f32", "nhwc", "nchw", (2, 100, 176, 128)),   # y tails, 64-wide f32 rows
    ("f32", "s8", "nchw", "nChw16c", (3, 64, 230, 229)),   # dense rows, y tails
])
def test_large_outputs_stream_whole_lines_exactly(impl, sdt, ddt, stag, dtag, dims):
    exp, got, pad = run(impl, stag, dtag, dims, sdt, ddt)
    assert np.array_equal(exp, got)
    assert (pad == 0).all()


def test_bind_refuses_buffers_the_jobs_overrun():
    impl = IMPLS[0]
    src_l = layout.parse_tag("nchw").layout((2, 3, 4, 4))
    dst_l = layout.parse_tag("nChw16c").layout((2, 3, 4, 4))
    prim = core.ReorderPrimitive(impl, core.ReorderAttr(),
                                     layout.copy_jobs(src_l, dst_l) + layout.zero_jobs(dst_l))
    with pytest.raises(ValueError, match="the jobs reach"):
        prim.bind(np.zeros(src_l.size, np.float32), np.zeros(dst_l.nelems, np.float32))


# -- the generic route: zero points, per-point attributes, the 8- and 4-bit types --------

GENERIC = next(i for i in IMPLS if i.name == "reorder_generic:scalar")


def run_generic(stag, dtag, dims, sdt, ddt, masks=None, src_zp=0, dst_zp=0, sum_scale=None,
                threads_split=True, seed=1):
    """One reorder through the generic row, src values placed and dst values read back
    with the packing helpers; per-point arrays from masks (REORDER_ARGS name -> mask)."""
    rng = np.random.default_rng(seed)
    masks = masks or {}
    src_l = layout.parse_tag(stag).layout(dims)
    dst_l = layout.parse_tag(dtag).layout(dims)
    x = round_to_dt(rng.integers(-40, 40, dims).astype(np.float32) / 4, sdt)
    src = aligned_zeros(*packed.storage(sdt, src_l.size))
    packed.place(src, src_l, sdt, x)
    dst = aligned_zeros(*packed.storage(ddt, dst_l.size))
    dst[:] = 0x5A
    prior = None
    if sum_scale is not None:
        prior = round_to_dt(rng.integers(-6, 6, dims).astype(np.float32), ddt)
        packed.place(dst, dst_l, ddt, prior)
    arrays = {}
    for name, mask in masks.items():
        shape = tuple(n if mask >> d & 1 else 1 for d, n in enumerate(dims))
        values = rng.integers(-3, 4, shape) if name == "src_zps" else \
            rng.choice(np.array([0.5, 2, 3, 0.25], np.float32), shape)
        arrays[name] = values.astype(np.int32 if name == "src_zps" else np.float32)
    args = tuple(layout.broadcast_layout(dims, masks[n]) for n in core.REORDER_ARGS
                 if n in masks)
    attr = core.ReorderAttr(sdt, ddt, 1.0, 1.0, sum_scale is not None, sum_scale or 1.0,
                            src_zp, dst_zp, frozenset(masks))
    jobs = layout.copy_jobs(src_l, dst_l, args) + layout.zero_jobs(dst_l)
    core.ReorderPrimitive(GENERIC, attr, jobs).bind(
        src, dst, **{n: a.ravel() for n, a in arrays.items()})()
    with np.errstate(all="ignore"):
        exp = round_to_dt(ref.reorder(x, arrays.get("src_scales", 1.0),
                                      arrays.get("dst_scales", 1.0), sum_scale, prior,
                                      arrays.get("src_zps", src_zp), dst_zp), ddt)
    got = _get(dst, dst_l, ddt, dst_l.offset_table())
    pad = _get(dst, dst_l, ddt, dst_l.padding_offsets())
    return exp, got, pad


def _get(buf, lay, dt, offsets):
    """f32 values of the elements at offsets (4-bit codes decoded)."""
    stored = packed.elements(buf, lay, dt)[offsets]
    return packed.values(stored, dt) if dt in core.PACKED_DTS else stored.astype(np.float32)


def _equal_or_both_nan(exp, got):
    return bool(np.all((exp == got) | (np.isnan(exp) & np.isnan(got))))


@pytest.mark.parametrize("masks", [
    {"src_scales": 2}, {"dst_scales": 1}, {"src_scales": 3, "dst_scales": 2},
    {"src_zps": 2}, {"src_zps": 5, "src_scales": 8, "dst_scales": 15},
])
@pytest.mark.parametrize("stag,dtag", [("nchw", "nhwc"), ("nhwc", "nChw16c"),
                                       ("nChw8c", "nchw")])
def test_generic_route_per_point_attributes_follow_their_dims(masks, stag, dtag):
    exp, got, pad = run_generic(stag, dtag, (2, 19, 5, 3), "f32", "s8", masks, dst_zp=3,
                                sum_scale=0.5)
    assert np.array_equal(exp, got)
    assert (pad == 0).all()


@pytest.mark.parametrize("sdt,ddt", [("f32", "f8_e5m2"), ("f32", "f8_e4m3"),
                                     ("f8_e5m2", "f32"), ("f8_e4m3", "bf16"),
                                     ("f8_e4m3", "f8_e5m2"), ("s8", "f8_e4m3"),
                                     ("f32", "s4"), ("f32", "u4"), ("f32", "f4_e2m1"),
                                     ("s4", "f32"), ("u4", "u4"), ("f4_e2m1", "f16"),
                                     ("u4", "s4")])
@pytest.mark.parametrize("stag,dtag,dims", [
    ("abcd", "acdb", (2, 7, 3, 5)),           # odd sizes: bytes shared across rows
    ("acdb", "aBcd16b", (2, 19, 3, 3)),       # a blocked dst with a padded tail
    ("ab", "ba", (15, 16)),
])
def test_generic_route_converts_the_narrow_types_exactly(sdt, ddt, stag, dtag, dims):
    exp, got, pad = run_generic(stag, dtag, dims, sdt, ddt, src_zp=-1, dst_zp=1)
    assert _equal_or_both_nan(exp, got)
    assert (pad == 0).all()


@pytest.mark.parametrize("ddt", ["s4", "u4", "f4_e2m1", "f8_e4m3"])
def test_generic_route_into_large_narrow_outputs_keeps_every_element(ddt):
    """Past the size where the route runs on threads (a 4-bit dst stays on one: two
    elements share a byte)."""
    exp, got, pad = run_generic("nchw", "nhwc", (2, 64, 33, 31), "f32", ddt)
    assert _equal_or_both_nan(exp, got)


def test_fast_rows_refuse_what_only_the_generic_route_takes():
    for attr in (core.ReorderAttr("f32", "f8_e5m2"), core.ReorderAttr("s4", "f32"),
                 core.ReorderAttr(src_zp=1), core.ReorderAttr(dst_zp=-2),
                 core.ReorderAttr(per_point=frozenset({"src_scales"}))):
        for impl in IMPLS:
            if impl is GENERIC:
                core.ReorderPrimitive(impl, attr, [])
            else:
                with pytest.raises(core.Unimplemented, match="no zero points"):
                    core.ReorderPrimitive(impl, attr, [])


def test_bind_needs_the_per_point_arrays_the_attributes_name():
    lay = layout.parse_tag("ab").layout((3, 4))
    args = (layout.broadcast_layout((3, 4), 2),)
    attr = core.ReorderAttr(per_point=frozenset({"dst_scales"}))
    prim = core.ReorderPrimitive(GENERIC, attr, layout.copy_jobs(lay, lay, args))
    src, dst = np.zeros(12, np.float32), np.zeros(12, np.float32)
    with pytest.raises(ValueError, match="per-point arrays"):
        prim.bind(src, dst)
    with pytest.raises(ValueError, match="the jobs reach 4"):
        prim.bind(src, dst, dst_scales=np.ones(3, np.float32))
    prim.bind(src, dst, dst_scales=np.ones(4, np.float32))()
