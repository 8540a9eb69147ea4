"""The C core's own data-type conversions, bit for bit against ml_dtypes (bf16) and numpy
(f16, integers): every one of the 65,536 bf16 and f16 bit patterns both ways, rounding ties,
NaN, Inf, denormals, saturation; the portable code and the F16C path alike."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from benchdnn_py import core

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
PATHS = [False, True]   # F16C / vector path, then the portable code


def _f32_probe() -> np.ndarray:
    """f32 values around every bf16 and f16 boundary: the exact values, the ties (half
    way to the next value), and one ulp either side of the ties; then specials."""
    base = ALL16.astype(np.uint32) << 16
    bits = np.concatenate([base, base | 0x8000, base | 0x7FFF, base | 0x8001, base | 0x0001])
    f16 = ALL16.view(np.float16).astype(np.float32)
    f16 = f16[np.isfinite(f16)]
    nxt = np.nextafter(f16, np.float32(np.inf))
    mid = np.concatenate([f16, f16 * np.float32(1 + 2**-11), f16 * np.float32(1 + 2**-12),
                          nxt, np.nextafter(f16, np.float32(-np.inf))])
    special = np.array([0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, 1e-8, 2**-25,
                        2**-25 * 1.0000001, 2**-24, 3 * 2**-25, 1e38], np.float32)
    return np.concatenate([bits.view(np.float32), mid.astype(np.float32), special])


def _same_bits(got: np.ndarray, exp: np.ndarray) -> None:
    """Equal bits, except that NaNs only need to be NaN with the same sign (the core quiets
    signaling NaNs like the hardware does; numpy keeps the payload as is)."""
    g, e = got.view(f"u{got.itemsize}"), exp.view(f"u{exp.itemsize}")
    nan = np.isnan(exp.astype(np.float32))
    np.testing.assert_array_equal(g[~nan], e[~nan])
    assert np.isnan(got[nan].astype(np.float32)).all()
    sign = np.array(1 << (8 * got.itemsize - 1), g.dtype)
    np.testing.assert_array_equal(g[nan] & sign, e[nan] & sign)


@pytest.mark.parametrize("portable", PATHS)
def test_bf16_to_f32_every_pattern(portable):
    x = ALL16.view(ml_dtypes.bfloat16)
    got = core.dt_convert(x, "f32", from_dt="bf16", portable=portable)
    _same_bits(got, x.astype(np.float32))


@pytest.mark.parametrize("portable", PATHS)
def test_f32_to_bf16_round_to_nearest_even(portable):
    x = _f32_probe()
    with np.errstate(invalid="ignore"):   # ml_dtypes warns casting NaN
        exp = x.astype(ml_dtypes.bfloat16)
    _same_bits(core.dt_convert(x, "bf16", portable=portable), exp)


@pytest.mark.parametrize("portable", PATHS)
def test_f16_to_f32_every_pattern(portable):
    x = ALL16.view(np.float16)
    _same_bits(core.dt_convert(x, "f32", from_dt="f16", portable=portable),
               x.astype(np.float32))


@pytest.mark.parametrize("portable", PATHS)
def test_f32_to_f16_round_to_nearest_even(portable):
    x = _f32_probe()
    with np.errstate(over="ignore"):
        exp = x.astype(np.float16)
    _same_bits(core.dt_convert(x, "f16", portable=portable), exp)


def test_f16_paths_agree_bit_for_bit_nans_included():
    x = _f32_probe()
    np.testing.assert_array_equal(core.dt_convert(x, "f16").view(np.uint16),
                                  core.dt_convert(x, "f16", portable=True).view(np.uint16))
    h = ALL16.view(np.float16)
    np.testing.assert_array_equal(core.dt_convert(h, "f32", from_dt="f16").view(np.uint32),
                                  core.dt_convert(h, "f32", from_dt="f16",
                                                  portable=True).view(np.uint32))


F8 = {"f8_e5m2": ml_dtypes.float8_e5m2, "f8_e4m3": ml_dtypes.float8_e4m3fn}
ALL8 = np.arange(256, dtype=np.uint8)


@pytest.mark.parametrize("dt", F8)
def test_f8_to_f32_every_pattern(dt):
    x = ALL8.view(F8[dt])
    _same_bits(core.dt_convert(x, "f32", from_dt=dt), x.astype(np.float32))


@pytest.mark.parametrize("dt", F8)
def test_f32_to_f8_rounds_through_f16_like_onednn(dt):
    """oneDNN converts f32 -> f16 -> f8, each to nearest even: probes at every f8 value,
    the ties between neighbours and one f32 ulp either side, past the range (e5m2: Inf;
    e4m3: NaN), and the f16 boundaries where the two roundings differ from one."""
    v = ALL8.view(F8[dt]).astype(np.float32)
    v = np.sort(v[np.isfinite(v)])
    ties = (v[:-1] + v[1:]) / 2
    probe = np.concatenate([v, ties, np.nextafter(ties, np.float32(np.inf)),
                            np.nextafter(ties, np.float32(-np.inf)), _f32_probe()])
    with np.errstate(all="ignore"):
        exp = probe.astype(np.float16).astype(F8[dt])
    _same_bits(core.dt_convert(probe, dt), exp)


@pytest.mark.parametrize("dt, lo, hi", [("s8", -128, 127), ("u8", 0, 255),
                                        ("s32", -2**31, 2**31 - 128)])
def test_f32_to_integers_saturate_then_round_half_even(dt, lo, hi):
    x = np.array([-1e12, -300.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.49, 126.5, 127.5, 254.5,
                  255.5, 300.0, 1e12, 2**31, np.nan], np.float32)
    got = core.dt_convert(x, dt).astype(np.float64)
    exp = np.rint(np.clip(np.nan_to_num(x.astype(np.float64), nan=0.0), lo, hi))
    np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("dt", ["s8", "u8", "s32"])
def test_integers_to_f32_exact(dt):
    info = np.iinfo(core.numpy_dtype(dt))
    x = np.array([info.min, -1 if info.min else 0, 0, 1, info.max], core.numpy_dtype(dt))
    np.testing.assert_array_equal(core.dt_convert(x, "f32", from_dt=dt), x.astype(np.float32))


def test_post_op_inputs_are_checked_at_the_c_boundary():
    """A binary entry's input: required before execution, refused on an entry that takes
    none, and refused when its strides reach past the buffer."""
    shape = core.ConvShape(1, 1, 4, 4, (1, 1, 3), (1, 1, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0),
                           (0, 0, 0))
    add = core.PostOp(core.PostKind.BINARY, core.BINARY_ALGS["add"],
                      src1_strides=(0, 1, 0, 0, 0))
    relu = core.PostOp(core.PostKind.ELTWISE, core.EltAlg.RELU)
    impl = next(i for i in core.conv_impls() if i.name == "gemm_conv:scalar:gather")
    prim = core.ConvPrimitive(impl, shape, core.Direction.FWD, False,
                              attr=core.ConvAttr(post_ops=(relu, add)))
    src, dst = np.ones((1, 4, 1, 1, 3), np.float32), np.zeros((1, 4, 1, 1, 3), np.float32)
    run = prim.bind(src, prim.pack_weights(np.ones(16, np.float32)), None, dst)
    with pytest.raises(core.InvalidProblem):
        run()                                     # no input given for entry 1
    with pytest.raises(ValueError, match="needs its input"):
        prim.set_post_op_inputs({0: np.ones(4, np.float32)})
    with pytest.raises(ValueError, match="strides reach 4"):
        prim.set_post_op_inputs({1: np.ones(3, np.float32)})
    prim.set_post_op_inputs({1: np.arange(4, dtype=np.float32)})
    run()
    assert np.array_equal(dst.reshape(4, 3), np.repeat([[4.0], [5.0], [6.0], [7.0]], 3, 1))


def test_a_post_chain_refuses_inputs_shorter_than_its_strides_reach():
    add = core.PostOp(core.PostKind.BINARY, core.BINARY_ALGS["add"],
                      src1_strides=(0, 1, 0, 0, 0))
    chain = core.PostChain((add,), {0: np.ones(3, np.float32)}, 4, (1, 1, 5))
    with pytest.raises(ValueError, match="strides reach 4"):
        chain.check(2 * 4 * 5)
    with pytest.raises(ValueError, match="no whole number"):
        chain.check(7)


def test_depthwise_fusion_refuses_depthwise_weights_the_f32_rows_would_misread():
    shape = core.ConvShape(1, 1, 8, 8, (1, 5, 5), (1, 5, 5), (1, 1, 1), (1, 1, 1),
                           (0, 0, 0), (0, 0, 0))
    dw = core.PostOp(core.PostKind.DW, dw_k=3, dw_s=1, dw_p=1, dw_wei_dt="bf16")
    impl = next(i for i in core.conv_impls() if i.name == "fused_dw:scalar")
    with pytest.raises(core.Unimplemented):
        core.ConvPrimitive(impl, shape, core.Direction.FWD, False,
                           attr=core.ConvAttr(post_ops=(dw,)))


@pytest.mark.parametrize("dt,ref", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_large_conversions_split_across_threads_convert_every_element(dt, ref):
    """Past a million elements the threads share the work in chunks: the probe repeated
    over 2^21 + 12345 elements (a partial last chunk) converts as numpy does, both ways."""
    x = np.resize(_f32_probe(), (1 << 21) + 12345)
    with np.errstate(over="ignore", invalid="ignore"):
        exp = x.astype(ref)
    got = core.dt_convert(x, dt)
    _same_bits(got, exp)
    _same_bits(core.dt_convert(got, "f32", from_dt=dt), got.astype(np.float32))


@pytest.mark.parametrize("nbytes", [1, 100, 4096, 1 << 20, (1 << 22) + 3])
def test_kernel_buffers_start_on_a_cache_line(nbytes):
    """Small arrays come from the heap, large ones from mmap plus numpy's header (16-byte
    aligned): both start on a cache line, whatever is left of the others."""
    held = [np.empty(n, np.uint8) for n in (17, 1 << 21)]   # shift the allocator's state
    buf = core.aligned_empty(nbytes)
    assert buf.dtype == np.uint8 and buf.size == nbytes and buf.flags.c_contiguous
    assert buf.ctypes.data % core.ALIGN == 0 and core.ALIGN == 64
    assert core.scratchpad_buffer(nbytes).ctypes.data % 64 == 0
    del held


def test_packed_weights_start_on_a_cache_line():
    impl = next(i for i in core.conv_impls() if core.isa_supported(i.isa)
                and i.name.startswith("gemm_conv_nhwc") and i.name.endswith(":gather"))
    shape = core.ConvShape(1, 1, 768, 768, (1, 1, 2), (1, 1, 2), (1, 1, 1), (1, 1, 1),
                           (0, 0, 0), (0, 0, 0))
    attr = core.ConvAttr(layout=core.ActLayout.NHWC)
    with core.ConvPrimitive(impl, shape, core.Direction.FWD, False, attr=attr) as prim:
        wei = np.ones(768 * 768, np.float32)
        assert prim.pack_weights(wei).ctypes.data % 64 == 0


def test_the_512_bit_width_query_reads_the_cpus_vendor_and_family():
    """bdnn_cpu_splits_512 (cpuid) against the kernel's /proc/cpuinfo: AMD family 25 (19h)
    only."""
    info = Path("/proc/cpuinfo")
    if not info.exists():
        pytest.skip("no /proc/cpuinfo")
    first = info.read_text().split("\n\n")[0]
    fields = {k.strip(): v.strip() for k, _, v in (l.partition(":") for l in first.splitlines())}
    expected = fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "25"
    assert core.splits_512() is expected


def test_buffers_of_a_page_or_more_start_on_a_page_whatever_the_heap_did():
    """A large block freed from its own mapping makes glibc serve later large blocks from
    the heap at any offset: the buffers still start on a page (a line below a page)."""
    freed = np.empty(48 << 20, np.uint8)   # mmapped, then freed: raises the threshold
    freed[::4096] = 1
    del freed
    for n in (4096, 4097, 65536, 1 << 20, 3 << 20):
        buf = core.aligned_empty(n)
        assert buf.nbytes == n and buf.ctypes.data % core.PAGE == 0
    for n in (64, 100, 4095):
        assert core.aligned_empty(n).ctypes.data % core.ALIGN == 0
