"""Buffers that catch out-of-bounds writes (guard zones with a known bit pattern on both
sides of every output buffer, checked after execution), and the memory guard: a case's
estimate against the RAM budget its run shares, and the peak RSS it really reached."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import time
from typing import Callable

import numpy as np

from .. import core

GUARD_ELEMS = 64          # 256 bytes on each side: covers any vector store that overruns
GUARD_VALUE = np.float32(-7.77e-31)   # an odd pattern no kernel writes by accident
RAM_SHARE = 0.7           # the cases of a run hold at most this share of physical memory
# What a case's peak RSS may exceed its estimate by before the run reports it: allocator
# arenas, code pages and the first-use state of libraries, none of which a case allocates.
RSS_SLACK_BYTES = 64 << 20


GUARD_BYTES = 4 * GUARD_ELEMS
# every buffer starts on a cache line (core.ALIGN)
aligned_empty, aligned_array, is_aligned = core.aligned_empty, core.aligned_array, core.is_aligned


def aligned_zeros(n: int, dtype) -> np.ndarray:
    out = aligned_array(n, dtype)
    out.fill(0)
    return out


def poison(dtype: np.dtype) -> float:
    """What an output is filled with before execution, so an unwritten point fails: NaN
    for floating types. Integers have no NaN: their poison is a value the correctness
    fill makes rare (an unwritten point whose true value happens to equal it goes
    unnoticed, the one blind spot)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name in ("bfloat16", "float8_e4m3fn"):
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
        core.parallel_fill(self.array, fill)

    def intact(self) -> bool:
        head, tail = self._buf[:GUARD_BYTES], self._buf[self._buf.size - GUARD_BYTES:]
        return bool((head == self._guard).all() and (tail == self._guard).all())


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 62


# -- the memory guard's budget ---------------------------------------------------------

class Budget:
    """The RAM the cases of a run may hold at once: RAM_SHARE of physical memory.

    A serial run holds one case at a time: a case fits when its estimate is within the
    total. The N worker processes of -j N share it: a case of up to ``small`` (an eighth of
    the total, over N) runs at once and counts as ``small``; a larger one asks the run's
    parent for its estimate (``ask``: hold() waits) and runs once the other workers' cases
    leave it room, each counted as at least ``small``; the parent frees it when the case's
    outcome arrives or its worker dies. So N workers never hold more than the total
    together, and a case fits when it is within the total less the other workers'
    ``small``s. Too big a case is SKIPPED before it allocates anything."""

    def __init__(self, ask: Callable[[int], None] | None = None, jobs: int = 1) -> None:
        self.total = int(RAM_SHARE * physical_memory_bytes())
        self.small = self.total // (8 * jobs) if jobs > 1 else self.total
        self.limit = self.total - (jobs - 1) * self.small
        self.ask = ask
        # what a process that runs cases may keep of the memory they free (FreedMemory):
        # a worker, the share it is counted at anyway; a serial run, what a worker of
        # -j 2 keeps (its share would be the whole budget)
        self.keep = self.total // (8 * max(jobs, 2))

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.limit

    def hold(self, nbytes: int) -> float:
        """Waits until the run's budget holds this case's estimate (until it ends);
        returns the seconds it waited (0 for a case that need not ask)."""
        if self.ask is None or nbytes <= self.small:
            return 0.0
        start = time.perf_counter()
        self.ask(nbytes)
        return time.perf_counter() - start

    def grantable(self, nbytes: int, others: list[int]) -> bool:
        """Whether a case of nbytes fits beside the other workers' holdings (the
        parent's decision)."""
        return nbytes + sum(max(held, self.small) for held in others) <= self.total


_budget: Budget | None = None


def budget() -> Budget:
    """This process's budget (a worker's asks its parent: set_budget)."""
    global _budget
    if _budget is None:
        _budget = Budget()
    return _budget


def set_budget(ask: Callable[[int], None] | None, jobs: int) -> None:
    global _budget
    _budget = Budget(ask, jobs)


# -- keeping what a case frees for the next one ----------------------------------------

# glibc's mallopt parameters (malloc.h); their values are C ints
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX = -1, -2, -4
_INT_MAX = 2**31 - 1


class FreedMemory:
    """Up to ``keep`` bytes of what a case frees stay in this process for the next case.

    glibc serves every large array with a mapping of its own and unmaps it on free, so the
    next case's arrays are fresh pages: each first touch a fault whose page the kernel
    zeroes (in a virtual machine, often a fault of the host too), a large share of filling
    a big tensor. Served from the heap instead (no mappings), freed arrays stay resident
    for the next case to reuse: free() returns memory to the system only past ``keep`` at
    the heap's top, and after a case that allocated more than ``keep`` (whose frees can
    leave resident holes below the top), malloc_trim returns all but ``keep``. A worker is
    counted in the run's budget as holding at least its ``small`` share, which is what it
    keeps (Budget.keep). Elsewhere than glibc, nothing changes."""

    def __init__(self, keep: int) -> None:
        self.keep = min(keep, _INT_MAX)
        self._libc = _glibc()
        ok = self._libc is not None and all(
            self._libc.mallopt(param, value) == 1
            for param, value in ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, self.keep),
                                 (_M_TOP_PAD, self.keep)))
        if not ok:
            self._libc = None

    @property
    def active(self) -> bool:
        return self._libc is not None

    def after_case(self, allocated: int) -> None:
        """A case that allocated this many bytes ended (CaseMemory.estimate)."""
        if self._libc is not None and allocated > self.keep:
            self._libc.malloc_trim(ctypes.c_size_t(self.keep))


def _glibc():
    """The C library this process runs on, when it is glibc (None elsewhere)."""
    try:
        libc = ctypes.CDLL(None)   # the process's own symbols: its C library's among them
        if not hasattr(libc, "gnu_get_libc_version"):
            return None
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):   # pragma: no cover - not glibc
        return None


_freed: FreedMemory | None = None


def keep_freed_memory(nbytes: int) -> FreedMemory:
    """Sets up this process's FreedMemory (once: a worker at its start, a serial run
    before its first case)."""
    global _freed
    if _freed is None:
        _freed = FreedMemory(nbytes)
    return _freed


def after_case(allocated: int) -> None:
    if _freed is not None:
        _freed.after_case(allocated)


def huge_pages(timed: bool) -> None:
    """Whether NumPy asks for transparent huge pages on its large arrays for the next case:
    only where the case is timed. Where the system compacts memory for such a request
    (THP defrag=madvise), each fault of a fresh array can wait on compaction, a large
    share of filling a big tensor; a timed case keeps them for its kernels' TLB reach."""
    if _SET_MADVISE_HUGEPAGE is not None:
        _SET_MADVISE_HUGEPAGE(timed)


def _numpy_setter():
    """numpy's switch of huge-page requests (numpy._core from NumPy 2, numpy.core before
    it), or None where it has none."""
    try:
        from numpy._core import multiarray
    except ImportError:   # pragma: no cover - NumPy 1
        from numpy.core import multiarray
    return getattr(multiarray, "_set_madvise_hugepage", None)


_SET_MADVISE_HUGEPAGE = _numpy_setter()   # looked up once, not per case


# -- what a case really used ------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CaseMemory:
    """A case's memory: its tensors in their layouts, the guard's estimate of everything it
    allocates, and the RSS it added at its peak (None where Linux's counters are missing)."""

    tensors: int
    estimate: int
    peak: int | None
    scratchpad: int | None = None   # the primitive's work memory, where it reports one

    @property
    def over(self) -> bool:
        """The peak exceeded the estimate by more than RSS_SLACK_BYTES: the estimate
        missed a buffer."""
        return self.peak is not None and self.peak > self.estimate + RSS_SLACK_BYTES

    def line(self) -> str:
        peak = "-" if self.peak is None else _mb(self.peak)
        return (f"memory: tensors {_mb(self.tensors)}, estimate {_mb(self.estimate)}, "
                f"peak RSS +{peak}")

    def diagnostic(self) -> str:
        return (f"memory guard: the case's peak RSS grew by {_mb(self.peak or 0)}, over its "
                f"estimate of {_mb(self.estimate)} (the estimate misses a buffer)")

    def record(self) -> dict[str, int | None]:
        return {"tensor_bytes": self.tensors, "estimate_bytes": self.estimate,
                "peak_rss_bytes": self.peak, "scratchpad_bytes": self.scratchpad}


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MiB"


_STATUS = "/proc/self/status"


def _status_kib(field: str) -> int | None:
    try:
        with open(_STATUS) as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) * 1024 if m else None


class PeakRss:
    """The RSS a case adds at its peak: Linux's high-water mark (VmHWM), reset to the
    current RSS when this starts (writing 5 to /proc/self/clear_refs). Memory an earlier
    case freed to the allocator and this one reuses is resident already: not counted.

    The mark is the process's: a case timed with others (--perf-interleave) stops its
    count while they run (pause) and starts it again after (resume), so that their buffers,
    alive beside its own, are not counted as its; what the group's shared timing added
    (resume's shared) is."""

    def __init__(self) -> None:
        self.base = self._restart()
        self._held = 0   # what the case holds past base, at its last pause
        self._peak = 0   # its highest growth in the stretches before

    @staticmethod
    def _restart() -> int | None:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            return None
        return _status_kib("VmRSS")

    def _grown(self) -> int | None:
        """The highest growth so far: the stretches before and this one's."""
        hwm = _status_kib("VmHWM")
        if self.base is None or hwm is None:
            return None
        return max(self._peak, self._held + hwm - self.base)

    def pause(self) -> None:
        grown, rss = self._grown(), _status_kib("VmRSS")
        if grown is None or rss is None or self.base is None:
            self.base = None
            return
        self._peak, self._held = grown, self._held + rss - self.base

    def resume(self, shared: int | None = 0) -> None:
        if self.base is None or shared is None:
            self.base = None
            return
        self._peak = max(self._peak, self._held + shared)
        self.base = self._restart()

    def added(self) -> int | None:
        grown = self._grown()
        return None if grown is None else max(0, grown)
