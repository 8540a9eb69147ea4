"""Deterministic input filling (benchdnn reference 6.2 to 6.4).

Correctness fills are small integers, most of them zero where the accumulation chain is
long, so every partial sum is exact and any summation order gives the same result. Values
come from a counter-based hash of (tensor kind, element count, element index): the same
problem always gets the same data, whatever the thread count or chunking, and no state is
carried between tensors or cases.
"""

from __future__ import annotations

import enum
import functools

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


class Kind(enum.IntEnum):
    """Data kinds; part of the seed, so each tensor of a case gets different values."""

    SRC = 0
    WEI = 1
    BIA = 2
    DST = 3
    SCALES = 4
    DW_WEI = 5      # depthwise fusion: the depthwise step's weights and bias
    DW_BIA = 6


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer over uint64 arrays (wrapping arithmetic)."""
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


# Cases of a batch fill the same tensor sizes over and over (one problem across
# directions, data types and ISA caps), and hashing is most of a fill's cost: streams up
# to _CACHED_STREAM elements are kept, read-only, for reuse (at most 32 x 2 MiB).
_CACHED_STREAM = 1 << 18


def _streams(kind: Kind, n: int, stream: int) -> np.ndarray:
    """Element i of stream (kind, n, stream): a 64-bit hash of the triple and i."""
    if n <= _CACHED_STREAM:
        return _cached_streams(kind, n, stream)
    return _hash_streams(kind, n, stream)


@functools.lru_cache(maxsize=32)
def _cached_streams(kind: Kind, n: int, stream: int) -> np.ndarray:
    bits = _hash_streams(kind, n, stream)
    bits.flags.writeable = False
    return bits


def _hash_streams(kind: Kind, n: int, stream: int) -> np.ndarray:
    base = np.uint64((int(kind) * 0x1000003 + n * 0x10001 + stream * 0x7F4A7C15) & (2**64 - 1))
    with np.errstate(over="ignore"):
        return _splitmix64(np.arange(n, dtype=np.uint64) ^ _splitmix64(base))


def _unit_floats(bits: np.ndarray) -> np.ndarray:
    """Uniform floats in [0, 1) from the top 53 bits."""
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def int_fill(n: int, kind: Kind, lo: int, hi: int, density: float = 1.0) -> np.ndarray:
    """n f32 integers: with probability ``density`` uniform in [lo, hi], else 0.
    Element 0 is always drawn strictly positive, so no output can be identically zero."""
    if n == 0:
        return np.empty(0, np.float32)
    span = hi - lo + 1
    values = lo + (_streams(kind, n, 1) % np.uint64(span)).astype(np.int64)
    keep = _unit_floats(_streams(kind, n, 2)) < density
    out = np.where(keep, values, 0).astype(np.float32)
    positive_lo = max(lo, 1)
    if hi >= 1:
        out[0] = positive_lo + int(_streams(kind, 1, 3)[0] % np.uint64(hi - positive_lo + 1))
    return out


def real_fill(n: int, kind: Kind, lo: float, hi: float) -> np.ndarray:
    """n f32 values uniform in [lo, hi): performance-mode data (values do not matter, only
    that they are ordinary finite numbers)."""
    return (lo + (hi - lo) * _unit_floats(_streams(kind, n, 4))).astype(np.float32)


def choice_fill(n: int, kind: Kind, values: tuple[float, ...]) -> np.ndarray:
    """n f32 values drawn uniformly from ``values`` (non-common scales, reference 6.4)."""
    if n == 0:
        return np.empty(0, np.float32)
    picks = (_streams(kind, n, 5) % np.uint64(len(values))).astype(np.int64)
    return np.asarray(values, np.float32)[picks]
