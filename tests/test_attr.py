"""--attr-post-ops grammar: every entry kind, printing back as given, and errors."""

import pytest

from benchdnn_py import harness
from benchdnn_py.attr import Depthwise, Eltwise, PostOps, Sum, parse_post_ops
from benchdnn_py.errors import UsageError


@pytest.mark.parametrize("text,entries", [
    ("sum", (Sum(),)),
    ("sum:0.5", (Sum(0.5),)),
    ("sum:1:2", (Sum(1.0, 2),)),
    ("sum:2:0:s8", (Sum(2.0, 0, "s8"),)),
    ("relu", (Eltwise("relu"),)),
    ("relu:0.5", (Eltwise("relu", 0.5),)),
    ("linear:2:-1", (Eltwise("linear", 2.0, -1.0),)),
    ("relu:0:0:2.5", (Eltwise("relu", 0.0, 0.0, 2.5),)),          # DNNL 1.x scale field
    ("dw:k3s1p1", (Depthwise(3, 1, 1),)),
    ("dw:k3s2p1:bf16", (Depthwise(3, 2, 1, "bf16"),)),
    ("dw_k3s2p1", (Depthwise(3, 2, 1, legacy=True),)),             # DNNL 1.x spelling
    ("sum:0.5+tanh", (Sum(0.5), Eltwise("tanh"))),
    ("", ()),
])
def test_entries_parse_and_print_back(text, entries):
    post_ops = parse_post_ops(text)
    assert post_ops.entries == entries
    assert str(post_ops) == text


def test_aliases_print_canonically():
    assert str(parse_post_ops("eltwise_relu+srelu:2")) == "relu+soft_relu:2"


@pytest.mark.parametrize("text,fragment", [
    ("relu:", "dangling `:`"),
    ("relux", "unknown post-op `relux`"),
    ("relu:a", "`a` in `relu:a` is not a number (expected the alpha)"),
    ("sum:1:0.5", "zero point `0.5` in `sum:1:0.5` must be an integer"),
    ("sum:1:0:q8", "data type `q8`"),
    ("dw:k3", "expected dw:kKsSpP[:DST_DT]"),
    ("linear:1:2:3:4", "too many fields"),
])
def test_errors_name_the_entry(text, fragment):
    with pytest.raises(UsageError, match=None) as err:
        parse_post_ops(text)
    assert fragment in str(err.value)


def test_comma_list_gives_one_case_per_chain_and_empty_means_none():
    plan = harness.plan(["--conv", "--attr-post-ops=,relu,sum:0.5+tanh", "ic3ih5oc3kh3"])
    assert [str(c.values["attr-post-ops"]) for c in plan.cases] == ["", "relu", "sum:0.5+tanh"]
    assert plan.cases[0].values["attr-post-ops"] == PostOps()
