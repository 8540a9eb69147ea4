"""bnorm descriptors: benchdnn's grammar, defaults and h/w promotion, canonical printing,
and an exact round trip through the printed text."""

import pytest

from benchdnn_py.drivers.bnorm.desc import DEFAULT_EPS, parse_desc
from benchdnn_py.errors import ProblemError


@pytest.mark.parametrize("text,dims,short", [
    ('ic23_n"bnorm_ci_0d:1"', (2, 23), 'ic23n"bnorm_ci_0d:1"'),
    ("ic32iw32", (2, 32, 32), "ic32iw32"),
    ("mb5ic33iw27", (5, 33, 27), "mb5ic33iw27"),
    ("ic256ih28", (2, 256, 28, 28), "ic256ih28"),          # iw taken from ih
    ("mb4ic200ih17iw16", (4, 200, 17, 16), "mb4ic200ih17iw16"),
    ("ic16id12", (2, 16, 12, 12, 12), "ic16id12"),         # ih and iw from id
    ("mb1_ic19_id4ih6iw6", (1, 19, 4, 6, 6), "mb1ic19id4ih6iw6"),
    ("ic3ih4ih5", (2, 3, 5, 5), "ic3ih5"),                 # the last value wins
    ("iw7ic3mb2", (2, 3, 7), "ic3iw7"),                    # keys in any order
])
def test_dims_defaults_and_short_form(text, dims, short):
    d = parse_desc(text)
    assert d.dims == dims and d.eps == DEFAULT_EPS and d.format() == short


@pytest.mark.parametrize("text", ["ic3", "mb7ic3ih5iw6eps1e-5", "ic3id2ih3iw4eps0.001",
                                  'mb0ic1iw1n"a b"', "ic9id3eps2"])
def test_printed_text_reads_back_to_the_same_problem(text):
    d = parse_desc(text)
    for canonical in (False, True):
        assert parse_desc(d.format(canonical)) == d
    assert d.format(True).startswith(f"mb{d.mb}ic{d.ic}") and "eps" in d.format(True)


def test_eps_prints_as_the_shortest_f32_text():
    assert parse_desc("ic3eps1e-5").format() == "ic3eps1e-05"
    assert parse_desc("ic3eps0.0625").format() == "ic3"       # the default
    assert parse_desc("ic3").format(True) == "mb2ic3eps0.0625"


@pytest.mark.parametrize("text,says", [
    ("mb2", "`ic` was not specified or set to 0"),
    ("ic0", "`ic` was not specified or set to 0"),
    ("ic", "no value found for `ic`"),
    ("ic3x5", "unrecognized pattern starting from `x5`"),
    ("_ic3", "unrecognized pattern starting from `ic3`"),
    ("ic-3", "`ic` must be positive"),
    ("ic3eps-1", "`eps` must be positive"),
    ("ic3id2ih3", "give both `ih` and `iw`, or neither, with `id`"),
])
def test_errors_name_the_token(text, says):
    with pytest.raises(ProblemError) as exc:
        parse_desc(text)
    assert f"`{text}`" in str(exc.value) and says in str(exc.value)
