"""Binary descriptors (drivers/binary/desc.py): two tensors, src1 padded with trailing 1s,
broadcast rules, dst's dims, round trip."""

import pytest

from benchdnn_py.drivers.binary.desc import dst_dims, parse_binary
from benchdnn_py.errors import ProblemError


def test_src1_takes_trailing_ones_and_prints_them():
    d = parse_binary('15x12x3x5:15_n"pc"')
    assert d.srcs == ((15, 12, 3, 5), (15, 1, 1, 1)) and d.name == '"pc"'
    assert d.format() == '15x12x3x5:15x1x1x1_n"pc"'
    assert parse_binary(d.format()) == d


@pytest.mark.parametrize("text, dst", [
    ("5x3x1x9:1x3x2x9", (5, 3, 2, 9)),      # both broadcast somewhere
    ("12x1:1x12", (12, 12)),
    ("8x0x3:8x1x3", (8, 0, 3)),             # an empty tensor stays empty
    ("1:1", (1,)),
])
def test_dst_takes_the_larger_size_or_zero(text, dst):
    assert dst_dims(parse_binary(text)) == dst


@pytest.mark.parametrize("text, why", [
    ("8x3:8x4", "dim 1 is 3 in src0 and 4 in src1"),
    ("8x3:8x3:8x3", "exactly two tensors"),
    ("8:8x3", "src1 has more dims than src0"),
    ("8x3", "expected two tensors' dims or more"),
    ("x".join(["1"] * 13) + ":1", "at most 12 dims"),
])
def test_bad_descriptors_name_their_token(text, why):
    with pytest.raises(ProblemError, match=why):
        parse_binary(text)


def test_mb_keeps_a_broadcast_source_broadcast():
    d = parse_binary("2x16x5x7:1x16x1x1").with_mb(3, keep_ones=True)
    assert d.srcs == ((3, 16, 5, 7), (1, 16, 1, 1))
