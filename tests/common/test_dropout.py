"""The dropout reference: Philox4x32-10 against its published answers, and the keep mask's
properties."""

import numpy as np
import pytest

from benchdnn_py.common import dropout


@pytest.mark.parametrize("counter,key,words", [
    # Random123's known-answer vectors for philox4x32-10 (counter words x0..x3, key k0 k1)
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_matches_the_published_answers(counter, key, words):
    got = dropout.philox4x32(tuple(np.array([c], np.uint64) for c in counter), key)
    assert tuple(int(w[0]) for w in got) == words


def test_draws_lay_out_counter_words_as_onednn():
    """Element i is word i mod 4 of the block counted by (offset, i & ~3)."""
    seed, offset = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    i = np.arange(4, 12, dtype=np.uint64)
    got = dropout.draws(i, seed, offset)
    for block in (4, 8):
        words = dropout.philox4x32((np.array([offset & 0xFFFFFFFF]), np.array([offset >> 32]),
                                    np.array([block]), np.array([0])),
                                   (seed & 0xFFFFFFFF, seed >> 32))
        assert [int(w[0]) for w in words] == list(got[block - 4:block])
    # the value of an element depends on its index alone (threads and tiles do not matter)
    perm = np.random.default_rng(0).permutation(i)
    np.testing.assert_array_equal(dropout.draws(perm, seed, offset),
                                  got[(perm - 4).astype(np.intp)])
    # a negative seed is its 64-bit pattern
    np.testing.assert_array_equal(dropout.draws(i, -1, 0), dropout.draws(i, 2**64 - 1, 0))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.75])
def test_keep_mask_keeps_one_minus_p_and_streams_differ(p):
    n = 200_000
    keep = dropout.keep_mask(np.arange(n), np.float32(p), 12345, 0)
    sigma = np.sqrt(n * p * (1 - p))
    assert abs(keep.sum() - n * (1 - p)) < 6 * sigma
    # the four elements of a block decide independently: all-same blocks as often as chance
    blocks = keep.reshape(-1, 4)
    same = (blocks.all(axis=1) | ~blocks.any(axis=1)).mean()
    assert abs(same - ((1 - p) ** 4 + p ** 4)) < 0.01
    other = dropout.keep_mask(np.arange(n), np.float32(p), 12345, 1)
    assert (keep != other).mean() > p * (1 - p)     # another offset, another stream


def test_apply_scales_kept_and_zeroes_dropped():
    x = np.array([1.0, np.nan, np.inf, -2.0])
    keep = np.array([True, False, True, True])
    np.testing.assert_array_equal(dropout.apply(x, keep, 0.5), [2.0, 0.0, np.inf, -4.0])
    np.testing.assert_array_equal(dropout.apply(x, np.zeros(4, bool), 1.0), np.zeros(4))
    assert not dropout.keep_mask(np.arange(1000), 1.0, 3, 0).any()
