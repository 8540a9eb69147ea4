"""The conv descriptor grammar: every worked example of benchdnn reference 2.6, the error
cases, the `_dw` shorthand, and the parse/print round trip."""

import dataclasses

import pytest

from benchdnn_py.common.window import c_div, parse_desc
from benchdnn_py.errors import ProblemError

# (input, short print) from reference 2.6, checked against a real benchdnn build.
WORKED = [
    ('ic3ih227iw227_oc96oh55ow55_kh11kw11_sh4sw4ph0pw0_n"alexnet:conv1"',
     'ic3ih227oc96oh55kh11sh4ph0n"alexnet:conv1"'),
    ("ic16ih7oc16kh3", "ic16ih7oc16oh5kh3ph0"),
    ("ic16ih7oc16oh7kh3", "ic16ih7oc16oh7kh3ph1"),
    ("ic16ih7oc16kh3ph1", "ic16ih7oc16oh7kh3ph1"),
    ("ic3ih5oc3kh2sh2", "ic3ih5oc3oh2kh2sh2ph0"),
    ("ic8ih10oc8kh3dh1", "ic8ih10oc8oh6kh3ph0dh1"),
    ("ic8ih10oc8oh10kh3dh1", "ic8ih10oc8oh10kh3ph2dh1"),
    ("g2ic16ih5iw7oc16kh3kw1", "g2ic16ih5iw7oc16oh3ow7kh3kw1ph0pw0"),
    ('mb1_g1ic16oc16_iw5ow5kw3pw1_n"x"', 'g1mb1ic16iw5oc16ow5kw3pw1n"x"'),
    ("ic16id8oc16kd3pd1", "ic16id8oc16od8kd3pd1"),
    ("ic16id4ih4iw5oc16kd3kh3kw3", "ic16id4ih4iw5oc16od2oh2ow3kd3kh3kw3pd0ph0pw0"),
    ('g32mb24_ic1024oc1024_ih14oh14kh3sh1dh0ph1_iw14ow14kw3sw1dw0pw1_n"h*22"',
     'g32mb24ic1024ih14oc1024oh14kh3ph1n"h*22"'),
    ("ic16oc16ih5kh3ih7", "ic16ih7oc16oh5kh3ph0"),
]


@pytest.mark.parametrize("text,short", WORKED)
def test_worked_examples_print_like_benchdnn(text, short):
    desc = parse_desc(text)
    assert desc.format() == short
    assert parse_desc(short) == desc


def test_canonical_forms():
    assert (parse_desc("ic16ih7oc16kh3").format(canonical=True)
            == "g1mb2ic16ih7iw7oc16oh5ow5kh3kw3sh1sw1ph0pw0dh0dw0")
    assert (parse_desc("ic16id8oc16kd3pd1").format(canonical=True)
            == "g1mb2ic16id8ih8iw8oc16od8oh8ow8kd3kh3kw3sd1sh1sw1pd1ph1pw1dd0dh0dw0")
    one_d = parse_desc("ic4iw9oc4kw2sw3")
    assert one_d.format(canonical=True) == "g1mb2ic4iw9oc4ow3kw2sw3pw0dw0"
    for text, _ in WORKED:
        desc = parse_desc(text)
        again = parse_desc(desc.format(canonical=True))
        # The canonical form always prints g, which (as in benchdnn) marks the weights as
        # grouped; everything else is the same problem.
        assert dataclasses.replace(again, has_groups=desc.has_groups) == desc


def test_deduction_uses_c_truncation():
    # (4 - 5 + 0) / 2 + 1 truncates to 1 in C (Python's floor division would give 0).
    desc = parse_desc("ic16ih4oc16kh5sh2")
    assert desc.o[1] == 1 and desc.p_r[1] == 1
    assert c_div(-1, 2) == 0 and c_div(-3, 2) == -1 and c_div(3, 2) == 1


def test_derived_right_padding_may_be_negative():
    desc = parse_desc("ic3ih5oc3kh2sh2")
    assert desc.p[1] == 0 and desc.p_r[1] == -1


def test_rank_detection_and_neutral_axes():
    one = parse_desc("ic2iw5oc2kw3")
    assert one.ndims == 3 and one.i == (1, 1, 5) and one.k == (1, 1, 3)
    two = parse_desc("ic3ih5oc3kh3")          # h only: a square 2D problem, not 1D
    assert two.ndims == 4 and two.i == (1, 5, 5) and two.o == (1, 3, 3)
    three = parse_desc("ic16id8oc16kd3pd1")     # cubic: d values fill h and w
    assert three.ndims == 5 and three.i == (8, 8, 8) and three.p == (1, 1, 1)


def test_axis_becomes_present_through_stride_padding_or_dilation():
    with pytest.raises(ProblemError, match="`iw`"):
        parse_desc("ic16ih4oc16kh3sw2")


def test_deconv_formulas():
    assert parse_desc("ic16ih4oc16kh3sh2", "deconv").o[1] == 9
    assert parse_desc("ic16ih4oc16oh8kh4sh2", "deconv").p[1] == 1


def test_depthwise_shorthand():
    desc = parse_desc("mb1ic64ih56oc64kh3ph1_dw")
    assert (desc.g, desc.ic, desc.oc, desc.has_groups) == (64, 64, 64, True)
    assert desc.format() == "g64mb1ic64ih56oc64oh56kh3ph1"
    named = parse_desc('ic8ih5oc8kh3ph1_dw_n"dwnet:a"')
    assert named.g == 8 and named.name == '"dwnet:a"'
    assert parse_desc("ic8ih5kh3_dw").oc == 8


def test_name_is_kept_verbatim():
    desc = parse_desc('ic3ih5oc3kh3n"a b:c_d#"')
    assert desc.name == '"a b:c_d#"'
    assert desc.format().endswith('n"a b:c_d#"')


@pytest.mark.parametrize("text,fragment", [
    ("ic16ihoc16kh3", "no value found for `ih`"),                 # missing value
    ("ic16ih-4oc16kh3", "`ih` must not be negative"),             # negative value
    ("ic16ih4oc16kh3xx2", "starting from `xx2`"),                 # unknown key
    ("_ic16ih4oc16kh3", "starting from `_ic16ih4oc16kh3`"),       # leading underscore
    ("ic16ih4__oc16kh3", "starting from `_oc16kh3`"),             # double underscore
    ("ic16id8ih6oc16kd3kh3", "only one of h and w"),              # 3D with h but no w
    ("ic16ih4iw4oc16kh3", "`kw`"),                                # w present, kw missing
    ("ic16ih4oc16kh5", "give oh=0"),                              # deduced output <= 0
    ("ic16oc16", "no spatial dimension"),
    ("g0ic16ih4oc16kh3", "`g`"),
    ("ic0ih4oc16kh3", "`ic`"),
    ("ic16ih4oc16kh3sh0", "`sh`"),
    ("ic16ih7oc16oh3kh3", "negative ph"),
    ("ic16ih4oc32kh3_dw", "oc equal to ic"),
    ("g4ic16ih4kh3_dw", "g4 != ic16"),
    ("", "empty"),
])
def test_bad_descriptors_name_the_token(text, fragment):
    with pytest.raises(ProblemError) as err:
        parse_desc(text)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_repeated_keys_last_wins_and_any_order():
    a = parse_desc("kh3ph1oc16ih7ic16")
    b = parse_desc("ic16ih7oc16kh3ph1")
    assert a == b
