"""common/post_ops.py's rules that every driver's check shares."""

from __future__ import annotations

from benchdnn_py.common import attr, post_ops


def test_nans_are_possible_only_where_an_eltwise_entry_can_make_them():
    assert post_ops.nans_possible(attr.parse_post_ops("relu+sqrt"))
    assert post_ops.nans_possible(attr.parse_post_ops("add:f32:per_oc+log"))
    assert post_ops.nans_possible(attr.parse_post_ops("pow:1:0.5"))
    assert not post_ops.nans_possible(attr.parse_post_ops("relu+tanh+sum:0.5"))
    assert not post_ops.nans_possible(attr.parse_post_ops("add:f32:per_oc"))
    assert not post_ops.nans_possible(attr.PostOps())
