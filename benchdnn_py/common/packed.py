"""4-bit types in memory: two elements to a byte, element 2k in the low nibble of byte k
(oneDNN's packing, and the kernels': kernels/include/bdnn.h). Values go in and out as
f32 already representable in the type (check.round_to_dt); a buffer is a uint8 array.
storage, place and elements take any type, packed or not (core.PACKED_DTS)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import core


def codes(values: np.ndarray, dt: str) -> np.ndarray:
    """The 4-bit codes (uint8, 0..15) of values representable in dt."""
    v = np.asarray(values, np.float32)
    if dt == "f4_e2m1":
        return v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    return v.astype(np.int8).view(np.uint8) & 0xF   # two's complement for s4


def values(nibbles: np.ndarray, dt: str) -> np.ndarray:
    """The f32 values of 4-bit codes."""
    c = np.asarray(nibbles, np.uint8) & 0xF
    if dt == "f4_e2m1":
        return c.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    if dt == "s4":
        return np.where(c >= 8, c.astype(np.float32) - 16, c.astype(np.float32))
    return c.astype(np.float32)


def pack(nibbles: np.ndarray) -> np.ndarray:
    """n codes into (n + 1) // 2 bytes (an odd count leaves the last high nibble 0)."""
    c = np.asarray(nibbles, np.uint8).ravel() & 0xF
    if c.size % 2:
        c = np.append(c, np.uint8(0))
    return c[0::2] | (c[1::2] << 4)


def unpack(packed: np.ndarray, n: int) -> np.ndarray:
    """The first n codes of packed bytes."""
    b = np.asarray(packed, np.uint8).ravel()
    out = np.empty(b.size * 2, np.uint8)
    out[0::2], out[1::2] = b & 0xF, b >> 4
    return out[:n]


def nbytes(n: int) -> int:
    return (n + 1) // 2


def storage(dt: str, n: int) -> tuple[int, np.dtype]:
    """Buffer length and numpy type of n elements of dt (4-bit: packed bytes)."""
    return (nbytes(n) if dt in core.PACKED_DTS else n), core.numpy_dtype(dt)


def place(buf: np.ndarray, lay, dt: str, values: np.ndarray) -> None:
    """values (logical order, representable in dt) into buf at the offsets of lay (a
    layout.Layout)."""
    if dt in core.PACKED_DTS:
        nibbles = unpack(buf, lay.size)
        nibbles[lay.offset_table()] = codes(values, dt)
        buf[:] = pack(nibbles)
    else:
        buf[lay.offset_table()] = values.astype(buf.dtype)


def elements(buf: np.ndarray, lay, dt: str) -> np.ndarray:
    """Every element of a buffer of lay, as stored (4-bit: one code per element)."""
    return unpack(buf, lay.size) if dt in core.PACKED_DTS else buf
