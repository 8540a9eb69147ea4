"""Properties of the deterministic fills (benchdnn reference 6.2 to 6.4)."""

from __future__ import annotations

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import fill
from benchdnn_py.common.fill import Kind

RANGES = [(-32, 32), (-8, 8), (0, 1), (3, 7), (-4, 1), (1, 1)]


# ---- the contract in fill.py's docstring, restated in NumPy (the C core computes it) ----

def _splitmix64(x: np.ndarray) -> np.ndarray:
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _stream(kind: int, n: int, stream: int) -> np.ndarray:
    base = np.uint64((kind * 0x1000003 + n * 0x10001 + stream * 0x7F4A7C15) & (2**64 - 1))
    with np.errstate(over="ignore"):
        return _splitmix64(np.arange(n, dtype=np.uint64) ^ _splitmix64(base))


def _unit(bits: np.ndarray) -> np.ndarray:
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def numpy_int_fill(n, kind, lo, hi, density):
    values = lo + (_stream(kind, n, 1) % np.uint64(hi - lo + 1)).astype(np.int64)
    out = np.where(_unit(_stream(kind, n, 2)) < density, values, 0).astype(np.float32)
    positive_lo = max(lo, 1)
    if n and hi >= 1:
        out[0] = positive_lo + int(_stream(kind, 1, 3)[0] % np.uint64(hi - positive_lo + 1))
    return out


@pytest.mark.parametrize("density", [1.0, 0.5, 0.25, 0.0])
@pytest.mark.parametrize("lo,hi", RANGES + [(-1, 5), (-127, 128), (0, 255)])
@pytest.mark.parametrize("kind", list(Kind))
def test_int_fill_is_the_contract_bit_for_bit(kind, lo, hi, density):
    # Sizes below and above the C side's threading threshold, and odd ones.
    for n in (1, 3, 1000, 65535, 65536, 200_003):
        got = fill.int_fill(n, kind, lo, hi, density)
        assert got.dtype == np.float32 and got.shape == (n,)
        np.testing.assert_array_equal(got, numpy_int_fill(n, int(kind), lo, hi, density))


# The C core's AVX-512 loop takes widths up to 2^24 (its remainder is built in double:
# kernels/common/fill_avx512.c) and the scalar loop the rest: both must be the contract,
# at a width's edges, at prime and power-of-two widths, far from zero and past 2^31.
@pytest.mark.parametrize("lo,hi", [
    (0, 2**24 - 1), (-2**23, 2**23), (0, 2**24), (-4096, 4096), (0, 65520), (1, 8191),
    (2**30, 2**30 + 999), (-2**39, -2**39 + 2**24 - 1), (-2**31, 2**31 - 1), (0, 2**40)])
@pytest.mark.parametrize("density", [1.0, 0.5])
def test_int_fill_wide_ranges_are_the_contract_bit_for_bit(lo, hi, density):
    for n in (7, 8, 9, 16_387, 200_003):
        np.testing.assert_array_equal(fill.int_fill(n, Kind.WEI, lo, hi, density),
                                      numpy_int_fill(n, int(Kind.WEI), lo, hi, density))


@pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (0.0, 4.0), (-2, 3), (0.25, 0.75)])
@pytest.mark.parametrize("kind", list(Kind))
def test_real_fill_is_the_contract_bit_for_bit(kind, lo, hi):
    for n in (1, 777, 150_001):
        want = (lo + (hi - lo) * _unit(_stream(int(kind), n, 4))).astype(np.float32)
        # a value that rounds up to hi is the float below it: the range stays half-open
        want = np.where(want < hi, want, np.nextafter(np.float32(hi), np.float32(-np.inf)))
        np.testing.assert_array_equal(fill.real_fill(n, kind, lo, hi), want)


@pytest.mark.parametrize("values", [(0.5,), (0.25, 0.5, 2.0), (1.0, -3.0, 0.125, 8.0, 5.0)])
def test_choice_fill_is_the_contract_bit_for_bit(values):
    for n in (1, 50, 100_000):
        picks = (_stream(int(Kind.SCALES), n, 5) % np.uint64(len(values))).astype(np.int64)
        want = np.asarray(values, np.float32)[picks]
        np.testing.assert_array_equal(fill.choice_fill(n, Kind.SCALES, values), want)


def test_fills_refuse_empty_ranges():
    with pytest.raises(ValueError, match="empty range"):
        fill.int_fill(4, Kind.SRC, 3, 2)
    with pytest.raises(ValueError, match="no values"):
        fill.choice_fill(4, Kind.SCALES, ())


@pytest.mark.parametrize("lo,hi", RANGES)
@pytest.mark.parametrize("kind", list(Kind))
def test_int_fill_dense_values_are_integers_in_range(kind, lo, hi):
    out = fill.int_fill(5000, kind, lo, hi)
    assert out.dtype == np.float32 and out.shape == (5000,)
    assert np.all(out == np.round(out))
    assert out.min() >= lo and out.max() <= hi
    # Dense: every value of a small range shows up.
    if hi - lo < 20:
        assert set(np.unique(out).tolist()) == set(range(lo, hi + 1))


@pytest.mark.parametrize("lo,hi", RANGES)
def test_int_fill_sparse_values_are_range_or_zero(lo, hi):
    out = fill.int_fill(20000, Kind.SRC, lo, hi, density=0.3)
    assert np.all(out == np.round(out))
    in_range = (out >= lo) & (out <= hi)
    assert np.all(in_range | (out == 0))
    assert np.count_nonzero(out == 0) > 0


@pytest.mark.parametrize("density", [1.0, 0.5, 0.01, 0.0])
@pytest.mark.parametrize("lo,hi", [(-32, 32), (-1, 1), (0, 4), (3, 7), (-5, 1)])
@pytest.mark.parametrize("kind", list(Kind))
def test_int_fill_first_element_strictly_positive(kind, lo, hi, density):
    for n in (1, 2, 17, 1000):
        out = fill.int_fill(n, kind, lo, hi, density)
        assert out[0] > 0, (n, kind, lo, hi, density)
        assert out[0] <= hi and out[0] == np.round(out[0])


@pytest.mark.parametrize("kind", list(Kind))
def test_int_fill_deterministic(kind):
    a = fill.int_fill(100_000, kind, -32, 32, 0.4)
    b = fill.int_fill(100_000, kind, -32, 32, 0.4)
    assert a is not b
    np.testing.assert_array_equal(a, b)


def test_int_fill_different_kinds_differ():
    outs = {k: fill.int_fill(4096, k, -32, 32) for k in Kind}
    for k1 in Kind:
        for k2 in Kind:
            if k1 < k2:
                assert not np.array_equal(outs[k1], outs[k2]), (k1, k2)
                # not just a shift of each other either: most elements differ
                assert np.count_nonzero(outs[k1] != outs[k2]) > 4096 * 0.9


@pytest.mark.parametrize("density,lo,hi", [(0.1, -32, 32), (0.5, -32, 32), (0.25, -8, 8),
                                           (0.1, 3, 7), (1.0, -32, 32), (0.02, -4, 4)])
def test_int_fill_density(density, lo, hi):
    n = 200_000
    out = fill.int_fill(n, Kind.SRC, lo, hi, density)
    span = hi - lo + 1
    zero_in_range = lo <= 0 <= hi
    expected = density * (1 - 1 / span) if zero_in_range else density
    share = np.count_nonzero(out) / n
    assert abs(share - expected) <= 0.01, (share, expected)


def test_int_fill_density_zero_keeps_only_first():
    out = fill.int_fill(1000, Kind.SRC, -32, 32, 0.0)
    assert out[0] > 0
    assert np.count_nonzero(out) == 1


def test_int_fill_values_roughly_uniform():
    out = fill.int_fill(130_000, Kind.WEI, -32, 32)
    counts = np.bincount((out + 32).astype(np.int64), minlength=65)
    assert counts.size == 65
    # 2000 expected per value; allow a generous +-15 %.
    assert counts.min() > 1700 and counts.max() < 2300


@pytest.mark.parametrize("kind", list(Kind))
def test_int_fill_empty(kind):
    out = fill.int_fill(0, kind, -32, 32, 0.5)
    assert out.dtype == np.float32 and out.shape == (0,)


@pytest.mark.parametrize("lo,hi", [(-1024.0, 1024.0), (0.0, 1.0), (-2.0, 2.0), (5.0, 6.5)])
@pytest.mark.parametrize("kind", list(Kind))
def test_real_fill_in_half_open_range(kind, lo, hi):
    out = fill.real_fill(200_000, kind, lo, hi)
    assert out.dtype == np.float32 and out.shape == (200_000,)
    assert np.all(np.isfinite(out))
    assert out.min() >= lo
    assert out.max() < hi
    # Real values, spread over the range.
    assert np.count_nonzero(out != np.round(out)) > out.size * 0.5
    mid = (lo + hi) / 2
    assert abs(float(out.astype(np.float64).mean()) - mid) < (hi - lo) * 0.01
    assert out.min() < lo + (hi - lo) * 0.01 and out.max() > hi - (hi - lo) * 0.01


def test_real_fill_deterministic_and_kind_dependent():
    a = fill.real_fill(50_000, Kind.SRC, -1024.0, 1024.0)
    b = fill.real_fill(50_000, Kind.SRC, -1024.0, 1024.0)
    np.testing.assert_array_equal(a, b)
    c = fill.real_fill(50_000, Kind.WEI, -1024.0, 1024.0)
    assert np.count_nonzero(a != c) > 50_000 * 0.99
    # Not all integers: the perf fill is real-valued.
    assert np.count_nonzero(a != np.round(a)) > 50_000 * 0.9


def test_real_fill_empty():
    out = fill.real_fill(0, Kind.DST, -1.0, 1.0)
    assert out.dtype == np.float32 and out.shape == (0,)


@pytest.mark.parametrize("make", [lambda n: fill.int_fill(n, Kind.SRC, -2, 2),
                                  lambda n: fill.real_fill(n, Kind.WEI, -1.0, 1.0),
                                  lambda n: fill.choice_fill(n, Kind.SCALES, (0.5, 2.0))])
def test_fills_start_on_a_cache_line(make):
    """A plain f32 input's memory is its fill itself: it starts where the kernels expect
    every buffer to (core.ALIGN), at sizes numpy would place 16 bytes past a page."""
    for n in (1, 17, 1 << 20):
        assert make(n).ctypes.data % core.ALIGN == 0
