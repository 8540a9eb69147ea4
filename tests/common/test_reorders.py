"""Data in and out of a primitive's layouts (common/reorders.py): values placed into a
layout read back in logical order, strides' gaps left poisoned, the user's layout as is."""

from __future__ import annotations

import numpy as np
import pytest

from benchdnn_py.common import layout, reorders
from benchdnn_py.engine.memory import poison


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


def test_the_users_layout_is_given_as_is():
    values = np.ones((2, 3, 1, 4, 4), np.float32)
    assert reorders.place(values, layout.plain((2, 3, 4, 4)), "f32") is values
