"""Deterministic input filling (benchdnn reference 6.2 to 6.4).

Correctness fills are small integers, most of them zero where the accumulation chain is
long, so every partial sum is exact and any summation order gives the same result. Values
come from a counter-based hash of (tensor kind, element count, element index): the same
problem always gets the same data, whatever the thread count or chunking, and no state is
carried between tensors or cases.

The contract, which the C core computes (kernels/common/fill.c) and tests/test_fill.py
restates in NumPy: element i of stream (kind, n, stream) is the 64-bit SplitMix64
finalizer of i XOR splitmix64(kind * 0x1000003 + n * 0x10001 + stream * 0x7F4A7C15), in
wrapping arithmetic, and a unit double is its top 53 bits times 2^-53. Integers take
lo + (stream 1 mod (hi - lo + 1)), kept where stream 2's unit double < density, else 0;
element 0, when hi >= 1, is max(lo, 1) + (element 0 of stream (kind, 1, 3) mod the width
of [max(lo, 1), hi]). Reals are lo + (hi - lo) * stream 4's unit double, rounded to f32
once (one that rounds up to hi becomes the float below it: the range is half-open);
choices are values[stream 5 mod len(values)].
"""

from __future__ import annotations

import enum

import numpy as np

from .. import core
from .check import round_to_dt


class Kind(enum.IntEnum):
    """Data kinds; part of the seed, so each tensor of a case gets different values."""

    SRC = 0
    WEI = 1
    BIA = 2
    DST = 3
    SCALES = 4
    DW_WEI = 5      # depthwise fusion: the depthwise step's weights and bias
    DW_BIA = 6
    POST_SRC1 = 7   # binary and prelu post-op inputs: entry i of a chain seeds 7 + i
    SRC_ZPS = 20    # per-channel zero points (past the chain's seeds)
    DST_ZPS = 21
    LINES = 22      # per-line draws of the softmax fill: kinds 22 to 25
    MULTI_SRC = 26  # the sources of a sum or concat: source i seeds 26 + i


def int_fill(n: int, kind: Kind, lo: int, hi: int, density: float = 1.0) -> np.ndarray:
    """n f32 integers: with probability ``density`` uniform in [lo, hi], else 0.
    Element 0 is always drawn strictly positive, so no output can be identically zero."""
    if hi < lo:
        raise ValueError(f"int_fill: empty range [{lo}, {hi}]")
    return core.fill_int(int(kind), n, lo, hi, density)


def real_fill(n: int, kind: Kind, lo: float, hi: float) -> np.ndarray:
    """n f32 values uniform in [lo, hi): performance-mode data (values do not matter, only
    that they are ordinary finite numbers)."""
    return core.fill_real(int(kind), n, lo, hi)


def choice_fill(n: int, kind: Kind, values: tuple[float, ...]) -> np.ndarray:
    """n f32 values drawn uniformly from ``values`` (non-common scales, reference 6.4)."""
    if not values:
        raise ValueError("choice_fill: no values to choose from")
    return core.fill_choice(int(kind), n, np.asarray(values, np.float32))


def exact_in(values: np.ndarray, dt: str) -> np.ndarray:
    """f32 values rounded to dt and kept as f32 (exact in dt; f64 holds them as they are),
    -0 made +0: a fill as the tensor of type dt will hold it."""
    out = round_to_dt(np.asarray(values, np.float32), dt)
    out[out == 0] = 0
    return out
