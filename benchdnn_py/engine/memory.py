"""Buffers that catch out-of-bounds writes: guard zones with a known bit pattern on both
sides of every output buffer, checked after execution."""

from __future__ import annotations

import os

import numpy as np

GUARD_ELEMS = 64          # 256 bytes on each side: covers any vector store that overruns
GUARD_VALUE = np.float32(-7.77e-31)   # an odd pattern no kernel writes by accident
RAM_SHARE = 0.7           # a case may use at most this share of physical memory


GUARD_BYTES = 4 * GUARD_ELEMS
ALIGN = 64                # bytes: buffers start on a cache line, as oneDNN's do


def aligned_empty(nbytes: int) -> np.ndarray:
    """nbytes of uint8 starting on an ALIGN boundary. numpy's large arrays come from mmap
    plus a header (16-byte aligned only); a kernel's whole-line streaming stores, and
    vector stores that do not split lines, need the cache-line alignment."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes]


def aligned_zeros(n: int, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    out = aligned_empty(n * dtype.itemsize).view(dtype)
    out.fill(0)
    return out


def poison(dtype: np.dtype) -> float:
    """What an output is filled with before execution, so an unwritten point fails: NaN
    for floating types. Integers have no NaN: their poison is a value the correctness
    fill makes rare (an unwritten point whose true value happens to equal it goes
    unnoticed, the one blind spot)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return float("nan")
    return {1: 0x5A if dtype.kind == "u" else -0x5B, 4: -0x3EADBEEF}[dtype.itemsize]


class Guarded:
    """A flat buffer of ``n`` elements of ``dtype`` with guard zones; ``.array`` is the
    payload, filled with ``fill``."""

    def __init__(self, n: int, fill: float, dtype: np.dtype = np.dtype(np.float32)) -> None:
        dtype = np.dtype(dtype)
        self._guard = np.full(GUARD_ELEMS, GUARD_VALUE, np.float32).view(np.uint8)
        self._buf = aligned_empty(n * dtype.itemsize + 2 * GUARD_BYTES)   # payload aligned too
        self._buf[:GUARD_BYTES] = self._guard
        self._buf[GUARD_BYTES + n * dtype.itemsize:] = self._guard
        self.array = self._buf[GUARD_BYTES:GUARD_BYTES + n * dtype.itemsize].view(dtype)
        self.array.fill(fill)

    def intact(self) -> bool:
        head, tail = self._buf[:GUARD_BYTES], self._buf[self._buf.size - GUARD_BYTES:]
        return bool((head == self._guard).all() and (tail == self._guard).all())


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 62


def fits_in_ram(nbytes: int) -> bool:
    return nbytes <= RAM_SHARE * physical_memory_bytes()
