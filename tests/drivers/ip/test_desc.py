"""The ip grammar: benchdnn's keys, defaults and deductions, its printing, the exact round
trip, and one-line errors naming what is wrong."""

from __future__ import annotations

import pytest
from conftest import assert_one_line
from hypothesis import given
from hypothesis import strategies as st

from benchdnn_py.drivers.ip.desc import parse_ip
from benchdnn_py.errors import ProblemError


@pytest.mark.parametrize("text, printed, canonical, ndims, i", [
    ('ic2048oc1000n"resnet:ip1"', 'ic2048oc1000n"resnet:ip1"',
     'mb2ic2048oc1000n"resnet:ip1"', 2, (1, 1, 1)),
    ("mb16ic64ih7oc1000", "mb16ic64ih7oc1000", "mb16ic64ih7iw7oc1000", 4, (1, 7, 7)),
    ("mb112ic2048_ih1iw1_oc1000", "mb112ic2048ih1oc1000", "mb112ic2048ih1iw1oc1000", 4,
     (1, 1, 1)),
    ("ic3id4oc5", "ic3id4oc5", "mb2ic3id4ih4iw4oc5", 5, (4, 4, 4)),
    ("oc5ic3id4ih2iw3", "ic3id4ih2iw3oc5", "mb2ic3id4ih2iw3oc5", 5, (4, 2, 3)),
    ("mb2ic3iw9oc4", "ic3iw9oc4", "mb2ic3iw9oc4", 3, (1, 1, 9)),
    ("ic3ih2iw5oc1", "ic3ih2iw5oc1", "mb2ic3ih2iw5oc1", 4, (1, 2, 5)),
])
def test_deductions_and_printing(text, printed, canonical, ndims, i):
    d = parse_ip(text)
    assert (d.format(), d.format(canonical=True), d.ndims, d.i) == (printed, canonical, ndims, i)
    # the convolution it is: a kernel over the whole input, one output point
    assert (d.k, d.o, d.p, d.g) == (i, (1, 1, 1), (0, 0, 0), 1)
    assert parse_ip(printed) == parse_ip(canonical) == d


@given(mb=st.integers(0, 64), ic=st.integers(1, 4096), oc=st.integers(1, 4096),
       spatial=st.lists(st.integers(1, 9), max_size=3), name=st.sampled_from(["", '"x:1"']))
def test_round_trip(mb, ic, oc, spatial, name):
    keys = ("id", "ih", "iw")[3 - len(spatial):]
    text = f"mb{mb}ic{ic}" + "".join(f"{k}{v}" for k, v in zip(keys, spatial)) + f"oc{oc}"
    text += f"n{name}" if name else ""
    d = parse_ip(text)
    assert d.mb == mb and d.ic == ic and d.oc == oc and d.ndims == 2 + len(spatial)
    assert parse_ip(d.format()) == d and parse_ip(d.format(canonical=True)) == d


@pytest.mark.parametrize("text, names", [
    ("ic3", "`oc`"), ("oc3ic0", "`ic`"), ("ic3oc4id2ih3", "id and only one of ih, iw"),
    ("ic4oc4x", "starting from `x`"), ("ic4oc4kh3", "starting from `kh3`"),
    ("ic4oc4ih", "`ih`"), ("ic-4oc4", "`ic-4`"), ("", "empty"),
])
def test_errors_name_the_token(text, names):
    with pytest.raises(ProblemError) as exc:
        parse_ip(text)
    assert_one_line(exc.value)
    assert names in str(exc.value)
