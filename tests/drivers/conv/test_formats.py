"""Memory formats of conv and deconv (drivers/conv/formats.py): the options, their errors
and their repro."""

from __future__ import annotations

import re

import pytest

from benchdnn_py.common import layout
from benchdnn_py.engine import harness
from benchdnn_py.errors import ProblemError, UsageError


def _problem(*args: str, driver: str = "conv"):
    (case,) = harness.plan([f"--{driver}", *args]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def test_options_print_back_exactly_in_benchdnn_order_and_only_when_given():
    prb = _problem("--alg=auto", "--wtag=OIhw16i16o", "--dir=BWD_D", "--dtag=axb",
                   "--dt=bf16:bf16:bf16", "--stag=nChw16c", "mb2ic20ih6oc18kh3ph1")
    assert prb.repro() == ("--dir=BWD_D --dt=bf16:bf16:bf16 --stag=nChw16c "
                           "--wtag=OIhw16i16o --dtag=axb --alg=auto ic20ih6oc18oh6kh3ph1")
    strided = _problem("--strides=887x1x147x24@3::1x4x80x500@7", "mb2ic20ih6oc18kh3ph1")
    assert strided.repro() == "--strides=887x1x147x24@3::1x4x80x500@7 ic20ih6oc18oh6kh3ph1"
    # the defaults (any, no strides) print nothing
    assert _problem("--stag=any", "--strides=::", "mb2ic20ih6oc18kh3ph1").repro() == \
        "ic20ih6oc18oh6kh3ph1"


@pytest.mark.parametrize("driver", ["conv", "deconv"])
@pytest.mark.parametrize("args", [
    ("--stag=nhwc", "--wtag=hwio", "--dtag=nChw8c"),
    ("--stag=aBx16b", "--wtag=gOIhw16o16i", "--dtag=chwn"),
    ("--strides=887x1x147x24@3:1x20x400x1300:",),
])
def test_the_repro_line_plans_the_same_problem(driver, args):
    desc = "g2mb2ic20ih6oc36kh3ph1" if "gOI" in " ".join(args) else "mb2ic20ih6oc18kh3ph1"
    prb = _problem(*args, desc, driver=driver)
    again = _problem(*prb.repro().split(), driver=driver)
    assert again == prb and again.requested_layouts == prb.requested_layouts


# One conv problem per rank of src/dst (3: 1D, 4: 2D, 5: 3D) and of weights (with groups
# one more).
_BY_RANK = {3: "mb2ic20iw9oc18kw3pw1", 4: "mb2ic20ih6oc18kh3ph1",
            5: "mb2ic20id4ih5iw5oc18kd2kh3kw3pd1ph1pw1"}
_GROUPED = {4: "g2mb2ic20iw9oc36kw3pw1", 5: "g2mb2ic20ih6oc36kh3ph1",
            6: "g2mb2ic20id4ih5iw5oc36kd2kh3kw3pd1ph1pw1"}


@pytest.mark.parametrize("alias", [a for a in layout.ALIASES if a not in layout._RNN
                                   and len(layout._split(layout.ALIASES[a])[0]) >= 3])
def test_every_tag_layout_accepts_fits_the_tensors_of_its_rank(alias):
    rank = len(layout._split(layout.ALIASES[alias])[0])
    weights = bool(set(alias.lower()) & set("oig"))
    grouped = "g" in alias.lower()
    if weights:
        desc = (_GROUPED if grouped else _BY_RANK).get(rank)
        option, name = "--wtag", "wei"
    else:
        desc, option, name = _BY_RANK.get(rank), "--stag", "src"
    assert desc is not None, alias
    prb = _problem(f"{option}={alias}", desc)
    lay = prb.requested_layouts[name]
    assert lay == layout.parse_tag(alias).layout(lay.dims)
    assert (lay.padded_dims != lay.dims) == any(c.isupper() for c in alias)


@pytest.mark.parametrize("args,message", [
    (("--wtag=OIhw16i16o", "g2mb2ic20ih6oc36kh3ph1"),
     "--wtag=OIhw16i16o: tag `OIhw16i16o` is for 4 dims, the problem has 5 (weights with "
     "groups: g, oc/g, ic/g, spatial)"),
    (("--stag=nChw16c", "mb2ic20iw9oc18kw3pw1"),
     "--stag=nChw16c: tag `nChw16c` is for 4 dims, the problem has 3 (src: mb, ic, spatial)"),
    (("--dtag=goihw", "mb2ic20ih6oc18kh3ph1"), "--dtag=goihw: tag `goihw` is for 5 dims"),
    (("--stag=nhwc", "--strides=887x1x147x24@3::", "mb2ic20ih6oc18kh3ph1"),
     "--stag=nhwc and --strides give src both a tag and strides; give one"),
    (("--strides=:1x20x400:", "mb2ic20ih6oc18kh3ph1"),
     "--strides=:1x20x400:: 3 strides for wei, which has 4 dims (oc, ic, spatial)"),
    (("--strides=::1x4x8x500", "mb2ic20ih6oc18kh3ph1"),
     "--strides, dst: strides `1x4x8x500` are invalid for dims 2x18x6x6"),
])
def test_a_layout_that_does_not_fit_is_one_problem_error_naming_the_token(args, message):
    with pytest.raises(ProblemError, match="^" + re.escape(message)):
        _problem(*args)


@pytest.mark.parametrize("arg,message", [
    ("--stag=nChw17x", "--stag=nChw17x: unknown or invalid tag `nChw17x`"),
    ("--wtag=OIhw16i", "--wtag=OIhw16i: unknown or invalid tag `OIhw16i`"),
    ("--strides=1x2:3", "--strides=1x2:3: expected SRC:WEI:DST (two `:`)"),
    ("--strides=1x0::", "--strides=1x0::: `1x0`: strides must be positive"),
])
def test_an_unknown_tag_or_strides_spelling_is_a_usage_error(arg, message):
    with pytest.raises(UsageError, match="^" + re.escape(message)):
        harness.plan(["--conv", arg, "ic3ih5oc3kh3"])
