"""The binary reference (drivers/binary/ref.py) on hand-checked values."""

import numpy as np

from benchdnn_py.common.attr import parse_post_ops
from benchdnn_py.drivers.binary import ref


def test_scaled_op_broadcasts_and_comparisons_give_one_or_zero():
    a = np.array([[1.0, -2.0, 3.0]])
    b = np.array([[2.0], [-1.0]])
    out = ref.forward("sub", a, b, None, (2.0, 0.5), parse_post_ops(""), {}, None)
    assert out.tolist() == [[1.0, -5.0, 5.0], [2.5, -3.5, 6.5]]
    out = ref.forward("gt", a, b, None, (1.0, 1.0), parse_post_ops(""), {}, None)
    assert out.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]


def test_select_and_a_chain_with_a_sum():
    a, b, c = np.array([4.0, 5.0]), np.array([-1.0, -2.0]), np.array([0.0, 3.0])
    assert ref.forward("select", a, b, c, (1.0, 1.0), parse_post_ops(""), {},
                       None).tolist() == [-1.0, 5.0]
    chain = parse_post_ops("sum:0.5:2+relu")
    out = ref.forward("add", a, b, None, (1.0, 1.0), chain, {}, np.array([-10.0, 6.0]))
    # 3 + 0.5 * (-10 - 2) = -3 -> relu 0; 3 + 0.5 * (6 - 2) = 5
    assert out.tolist() == [0.0, 5.0] and out.dtype == np.float32
