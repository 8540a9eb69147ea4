"""Buffers that catch out-of-bounds writes: guard zones with a known bit pattern on both
sides of every output buffer, checked after execution."""

from __future__ import annotations

import os

import numpy as np

GUARD_ELEMS = 64          # 256 bytes on each side: covers any vector store that overruns
GUARD_VALUE = np.float32(-7.77e-31)   # an odd pattern no kernel writes by accident
RAM_SHARE = 0.7           # a case may use at most this share of physical memory


class Guarded:
    """A flat f32 buffer of ``n`` elements with guard zones; ``.array`` is the payload."""

    def __init__(self, n: int, fill: float) -> None:
        self._buf = np.full(n + 2 * GUARD_ELEMS, GUARD_VALUE, np.float32)
        self.array = self._buf[GUARD_ELEMS:GUARD_ELEMS + n]
        self.array.fill(fill)

    def intact(self) -> bool:
        head, tail = self._buf[:GUARD_ELEMS], self._buf[GUARD_ELEMS + self.array.size:]
        guard = GUARD_VALUE.view(np.uint32)
        return bool((head.view(np.uint32) == guard).all() and (tail.view(np.uint32) == guard).all())


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 62


def fits_in_ram(nbytes: int) -> bool:
    return nbytes <= RAM_SHARE * physical_memory_bytes()
