"""The reorder driver's attribute arrays: per-point values, and grouped ones expanded the
way benchdnn's reference indexes them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchdnn_py.drivers.reorder import cfg


def _grouped_index(point: tuple[int, ...], dims: tuple[int, ...], mask: int,
                   groups: tuple[int, int]) -> int:
    """benchdnn's dnn_mem_t::get_idx, transcribed: the groups cover the last two
    dimensions; the masked dimensions index the attribute's values, innermost fastest,
    each by its position divided by its group."""
    size = [1] * len(dims)
    size[-2:] = groups
    offset, stride = 0, 1
    for d in reversed(range(len(dims))):
        if mask >> d & 1:
            offset += point[d] // size[d] * stride
            stride *= dims[d] // size[d]
    return offset


@pytest.mark.parametrize("dims,mask,groups", [
    ((12, 25, 16, 7), 15, (8, 1)),
    ((12, 25, 7, 32), 15, (1, 16)),
    ((4, 6, 8), 6, (2, 4)),
    ((8, 6), 3, (4, 3)),
    ((8, 6), 1, (4, 3)),     # the last dimension outside the mask: its group plays no part
])
@pytest.mark.parametrize("name,dt", [("src_scales", "f16"), ("src_zps", "s4"),
                                     ("src_zps", "u4")])
def test_grouped_values_follow_benchdnns_index(dims, mask, groups, name, dt):
    values = cfg.attr_values(name, mask, dims, groups, dt)
    ungrouped = [n // (groups[d - len(dims) + 2] if d >= len(dims) - 2 else 1)
                 if mask >> d & 1 else 1 for d, n in enumerate(dims)]
    flat = cfg.attr_values(name, mask, dims[:-2] + (ungrouped[-2], ungrouped[-1]), (), dt)
    assert values.shape == tuple(n if mask >> d & 1 else 1 for d, n in enumerate(dims))
    full = np.broadcast_to(values, dims)
    for point in itertools.product(*map(range, dims)):
        assert full[point] == flat.ravel()[_grouped_index(point, dims, mask, groups)], point
    # each group holds one value, and neighbouring groups differ somewhere
    assert len(np.unique(values)) > 1


def test_unsigned_zero_points_are_nonnegative_and_signed_ones_take_both_signs():
    unsigned = cfg.attr_values("src_zps", 1, (10,), (), "u4")
    signed = cfg.attr_values("src_zps", 1, (10,), (), "s8")
    assert unsigned.min() >= 0 and 0 in unsigned
    assert signed.min() < 0 < signed.max() and 0 in signed
