"""Exact values for the low-precision kernel rows' tests (test_kernels_blocked_lp.py,
test_kernels_amx.py): small integers, exact in bf16 and u8/s8, whose products and partial
sums are exact in f32 and s32, so a row's sums equal the reference's; and the conversion
every low-precision row stores with (nearest even, integers saturated), which a test's
expected values go through; and a source that ends against a page no one may read."""

from __future__ import annotations

import ctypes
import mmap

import numpy as np

from benchdnn_py import core

INT_RANGE = {"u8": (0, 255), "s8": (-128, 127), "s32": (-2**31, 2**31 - 1)}
# a value no case writes into an integer output (sums of these fills stay far below it)
UNWRITTEN = {"u8": 251, "s8": -127, "s32": -2**31 + 5}


def ints(rng, shape, lo: int = -8, hi: int = 8) -> np.ndarray:
    return rng.integers(lo, hi + 1, size=shape).astype(np.float32)


def inputs(src_range: tuple[int, int], s: core.ConvShape, seed: int):
    """src (in src_range), weights and bias of a problem, as f32."""
    rng = np.random.default_rng(seed)
    return ints(rng, s.src_shape, *src_range), ints(rng, s.wei_shape), ints(rng, s.oc)


def converted(v: np.ndarray, dt: str) -> np.ndarray:
    """f32 values v as the kernels store them in dt, read back as f64."""
    v = np.asarray(v, np.float32)
    if dt in INT_RANGE:
        lo, hi = INT_RANGE[dt]
        return np.clip(np.rint(v.astype(np.float64)), lo, hi)
    return v.astype(core.numpy_dtype(dt)).astype(np.float64)


# Sums that test an integer dst's conversion: NaN, infinities, values past the s32 range,
# ties on each side of the u8 and s8 limits and of zero.
INT_EDGES = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 2.5, 3.5, -0.5, -0.6, 254.5,
                      255.5, 255.49, -127.5, -128.5, 126.5, 127.5, -2.5e9, 2.5e9, 0.0, -1.0],
                     np.float32)


def edge_bias(oc: int) -> np.ndarray:
    """A bias of oc channels starting with INT_EDGES, then plain values."""
    bias = np.arange(oc, dtype=np.float32) * 7 - 100
    bias[:len(INT_EDGES)] = INT_EDGES
    return bias


def converted_int(v: np.ndarray, dt: str) -> np.ndarray:
    """converted() for an integer dt, NaN giving 0 as the kernels store it."""
    return converted(np.where(np.isnan(v), 0, v), dt)


def unwritten(dst_dt: str, shape) -> np.ndarray:
    """A dst of dt's never-written value (NaN for floats)."""
    return np.full(shape, UNWRITTEN.get(dst_dt, np.nan), np.float64)


def against_a_locked_page(a: np.ndarray, keep: list) -> np.ndarray:
    """A copy of a whose last byte ends where a page that may not be read starts: a read
    past its end stops the process (SIGSEGV) instead of reading a neighbour."""
    page = mmap.PAGESIZE
    pages = -(-a.nbytes // page) + 1
    buf = mmap.mmap(-1, pages * page)
    libc = ctypes.CDLL(None, use_errno=True)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf)) + (pages - 1) * page
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    assert libc.mprotect(addr, page, 0) == 0, ctypes.get_errno()   # PROT_NONE
    keep.append(buf)
    out = np.frombuffer(buf, a.dtype, a.size, (pages - 1) * page - a.nbytes).reshape(a.shape)
    out[...] = a
    return out
