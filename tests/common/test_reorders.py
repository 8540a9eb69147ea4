"""Data in and out of a primitive's layouts (common/reorders.py): values placed into a
layout read back in logical order, strides' gaps left poisoned, the user's layout as is."""

from __future__ import annotations

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import layout, reorders
from benchdnn_py.engine.memory import aligned_array, poison


@pytest.mark.parametrize("tag,dims", [("nChw16c", (2, 20, 3, 3)), ("OIhw16i16o", (18, 20, 3, 3)),
                                      ("chwn", (2, 5, 3, 4)), ("Goihw16g", (20, 1, 1, 3, 3))])
def test_values_placed_into_a_layout_read_back_in_logical_order(tag, dims):
    lay = layout.parse_tag(tag).layout(dims)
    values = np.arange(np.prod(dims), dtype=np.float32).reshape(dims) + 1
    buf = reorders.place(values, lay, "f32")
    assert buf.size == lay.size
    assert np.array_equal(reorders.read(buf, lay), values.ravel())
    assert not buf[lay.padding_offsets()].any()          # the padded tail is zero
    points = np.array([0, 7, values.size - 1])
    assert np.array_equal(reorders.read(buf, lay, points), values.ravel()[points])


def test_placing_into_strides_leaves_the_gaps_poisoned():
    lay = layout.strided_layout((2, 3), (8, 2), offset0=5)
    buf = reorders.place(np.arange(6, dtype=np.int8).reshape(2, 3), lay, "s8")
    owned = lay.offset_table().ravel()
    assert buf[owned].tolist() == list(range(6))
    gaps = np.setdiff1d(np.arange(buf.size), owned)
    assert gaps.size and (buf[gaps] == np.int8(poison(np.int8))).all()


def test_the_users_layout_is_given_as_is_when_on_a_cache_line():
    values = aligned_array(2 * 3 * 4 * 4, np.float32).reshape(2, 3, 1, 4, 4)
    values[...] = 1
    assert reorders.place(values, layout.plain((2, 3, 4, 4)), "f32") is values


@pytest.mark.parametrize("tag", ["nchw", "nhwc", "nChw16c"])
def test_every_placed_memory_starts_on_a_cache_line(tag):
    """Values off a cache line (numpy's large arrays start 16 bytes past a page) are
    placed into a buffer on one, the user's layout included: a 64-byte channel block
    read from there would span two lines."""
    dims = (2, 3, 4, 4)
    raw = np.arange(1 + np.prod(dims), dtype=np.float32)
    values = raw[1:].reshape(dims)   # 4 bytes past raw's start: off every line
    assert values.ctypes.data % core.ALIGN
    lay = layout.parse_tag(tag).layout(dims)
    buf = reorders.place(values, lay, "f32")
    assert buf.ctypes.data % core.ALIGN == 0
    assert np.array_equal(reorders.read(buf.reshape(-1), lay), values.ravel())
