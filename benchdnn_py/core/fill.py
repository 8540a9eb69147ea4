"""The deterministic fill generators in C (kernels/common/fill.c): the contract lives in
benchdnn_py's fill module; C produces the same values faster."""

from __future__ import annotations

import numpy as np

from .capi import aligned_array, ffi, lib

# Each fill starts on a cache line (aligned_array): it is a plain f32 input's memory as is.


def fill_int(kind: int, n: int, lo: int, hi: int, density: float) -> np.ndarray:
    """n f32 integers of the fill contract in fill.py (C: bdnn_fill_int)."""
    out = aligned_array(n, np.float32)
    lib.bdnn_fill_int(kind, n, lo, hi, density, ffi.from_buffer("float[]", out))
    return out


def fill_real(kind: int, n: int, lo: float, hi: float) -> np.ndarray:
    out = aligned_array(n, np.float32)
    lib.bdnn_fill_real(kind, n, lo, hi, ffi.from_buffer("float[]", out))
    return out


def fill_choice(kind: int, n: int, values: np.ndarray) -> np.ndarray:
    values = np.ascontiguousarray(values, np.float32)
    out = aligned_array(n, np.float32)
    lib.bdnn_fill_choice(kind, n, ffi.from_buffer("float[]", values), values.size,
                         ffi.from_buffer("float[]", out))
    return out
