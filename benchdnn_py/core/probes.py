"""Machine probes: the compute peaks and copy bandwidth the perf reports judge against,
and the perf guard's short probes of the cores and their caches (kernels/common/peak.c).
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Callable

import numpy as np

from .capi import Isa, _bytes, _writable, isa_supported, lib, max_threads


class PeakKind(enum.IntEnum):
    """The instruction a compute peak is measured with (BDNN_PEAK_*)."""

    F32 = lib.BDNN_PEAK_F32
    BF16 = lib.BDNN_PEAK_BF16
    INT8 = lib.BDNN_PEAK_INT8


@dataclasses.dataclass(frozen=True)
class Peak:
    kind: PeakKind
    isa: Isa
    ops_per_s: float


# The routes an operand class can take to its multiply-adds, fastest first. A class whose
# own instruction the CPU lacks is computed by widening to f32, so its limit is then the
# f32 FMA peak (bf16 without AVX512_BF16; f16 always, through F16C). Where AMX runs, the
# bf16 and int8 limits are its tile products' (the tile rows' forward; the other
# directions' vector rows then read a small share of it).
PEAK_ROUTES: dict[str, tuple[tuple[PeakKind, Isa], ...]] = {
    "f32": ((PeakKind.F32, Isa.AVX512), (PeakKind.F32, Isa.AVX2)),
    "bf16": ((PeakKind.BF16, Isa.AVX512_AMX), (PeakKind.BF16, Isa.AVX512_BF16),
             (PeakKind.F32, Isa.AVX512), (PeakKind.F32, Isa.AVX2)),
    "int8": ((PeakKind.INT8, Isa.AVX512_AMX), (PeakKind.INT8, Isa.AVX512_VNNI),
             (PeakKind.INT8, Isa.AVX2)),
}
PEAK_SECONDS, PEAK_REPEATS = 0.05, 5


def measured_peak(operands: str) -> Peak | None:
    """The compute limit of an operand class ("f32", "bf16", "int8"; f16 computes as f32)
    on this machine and thread count, measured once per process (again after
    remeasure_limits); None if no vector route."""
    for kind, isa in PEAK_ROUTES["f32" if operands == "f16" else operands]:
        if isa_supported(isa):
            return _peak(kind, isa, max_threads())
    return None


# Each limit per thread count: (kind, isa, threads) -> Peak, and the copy bandwidth per
# thread count. A key in _STALE is measured again at its next use, keeping the higher.
_PEAKS: dict[tuple[PeakKind, Isa, int], Peak] = {}
_COPY: dict[int, float] = {}
_STALE: set[tuple[PeakKind, Isa, int] | int] = set()


def _peak(kind: PeakKind, isa: Isa, nthreads: int) -> Peak:   # (measured on nthreads)
    key = (kind, isa, nthreads)
    old = _PEAKS.get(key)
    if old is None or key in _STALE:
        rate = float(lib.bdnn_peak_ops(int(kind), int(isa), PEAK_SECONDS, PEAK_REPEATS))
        _PEAKS[key] = Peak(kind, isa, max(rate, old.ops_per_s if old else 0.0))
        _STALE.discard(key)
    return _PEAKS[key]


# A 512-bit bf16 or int8 dot product does two or four multiply-adds per f32 lane, and the
# CPUs that have one issue it at least half as often as the FMA: its peak is at least the
# f32 FMA peak. A reading under this share of it can only be a probe of a busy machine.
LOW_PRECISION_PEAK_FLOOR = 0.75


def implausible_limits(peaks: dict[str, Peak | None]) -> list[str]:
    """The measured compute limits that contradict each other, one line each (empty when
    they agree): a 512-bit bf16 or int8 dot-product peak under LOW_PRECISION_PEAK_FLOOR
    of the 512-bit f32 FMA peak."""
    f32 = peaks.get("f32")
    if f32 is None or f32.isa != Isa.AVX512:
        return []
    out = []
    for operands in ("bf16", "int8"):
        peak = peaks.get(operands)
        if peak is None or peak.isa not in (Isa.AVX512_BF16, Isa.AVX512_VNNI):
            continue   # computed as f32 (the same reading), or 256-bit int8
        if peak.ops_per_s < LOW_PRECISION_PEAK_FLOOR * f32.ops_per_s:
            out.append(f"the {operands} probe read {peak.ops_per_s / 1e9:.0f} G/s against "
                       f"{f32.ops_per_s / 1e9:.0f} GFLOPS for f32 FMA, which its instruction "
                       f"at least matches: other processes held the cores during a probe, "
                       f"so these limits (and %eff%) understate the machine")
    return out


def remeasure_limits() -> None:
    """The current thread count's limits read low (a guard probe, a shorter run of the
    f32 peak's own loop, read well above it: the process measured them in a slow
    spell). Each is measured again at its next use, keeping the higher reading."""
    n = max_threads()
    _STALE.update(key for key in _PEAKS if key[2] == n)
    _STALE.update(count for count in _COPY if count == n)


# The perf guard's probe (timing.MachineGuard): the f32 route's loop, short, best of two.
PROBE_SECONDS, PROBE_REPEATS = 0.002, 2


def probe_peak() -> float:
    """The f32 FMA rate this machine gives right now on the current threads (ops/s;
    0 without a vector route), against measured_peak("f32"): whether the cores a case
    was timed on were all there."""
    peak = measured_peak("f32")
    if peak is None:
        return 0.0
    return float(lib.bdnn_peak_ops(int(peak.kind), int(peak.isa), PROBE_SECONDS, PROBE_REPEATS))


# The perf guard's cache probe (kernels/common/peak.c): per thread, a buffer within the L2
# of every core these kernels target, read CACHE_PROBE_PASSES times, best of
# CACHE_PROBE_REPEATS readings, as the compute probe is best of two: a single reading
# that short dips whenever one thread is interrupted, while a neighbour's spell on the
# caches outlasts the three readings.
CACHE_PROBE_BYTES, CACHE_PROBE_PASSES, CACHE_PROBE_REPEATS = 512 << 10, 20, 3


def probe_cache() -> float:
    """The read rate (bytes/s) the slowest of the current threads gets from its own L2
    right now (the best of CACHE_PROBE_REPEATS readings): whether a neighbour is taking
    one of our cores' caches."""
    return max(float(lib.bdnn_probe_cache(CACHE_PROBE_BYTES, CACHE_PROBE_PASSES))
               for _ in range(CACHE_PROBE_REPEATS))


# Long enough for thousands of round trips on any pair of cores, short enough for info.
CORE_TRIP_SECONDS = 0.02


def core_round_trip() -> float:
    """Seconds for one cache line to go from OpenMP thread 0 to thread 1 and back, right
    now (0 with one thread): on a virtual machine the two cores are sometimes far apart,
    and then work that changes cores between executions runs slower."""
    return float(lib.bdnn_probe_core_round_trip(CORE_TRIP_SECONDS))


# Far beyond any last-level cache, so the copy streams from memory.
BANDWIDTH_BYTES = 256 << 20


def measured_copy_bandwidth() -> float:
    """Bytes read plus written per second by a multi-threaded copy, measured once per
    thread count (again after remeasure_limits)."""
    n = max_threads()
    if n not in _COPY or n in _STALE:
        rate = float(lib.bdnn_peak_copy_bandwidth(BANDWIDTH_BYTES, PEAK_REPEATS))
        _COPY[n] = max(rate, _COPY.get(n, 0.0))
        _STALE.discard(n)
    return _COPY[n]


def parallel_memcpy(dst: np.ndarray, src: np.ndarray) -> Callable[[], None]:
    """A callable copying src's bytes into dst on all threads (the bandwidth yardstick)."""
    if dst.nbytes != src.nbytes:
        raise ValueError("memcpy needs buffers of one size")
    args = (_writable(dst, None), _bytes(src), src.nbytes)
    return lambda: lib.bdnn_parallel_memcpy(*args)
