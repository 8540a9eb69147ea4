"""Attribute grammars: --attr-post-ops (every entry kind, printing back as given, errors),
--attr-scales, --attr-zero-points and --attr-oscale (round trips, accessors, errors).

The scale, zero-point and oscale tests need no kernel core; the post-ops tests look eltwise
algorithms up in a table of core constants (and one runs the harness), so they are skipped
when the core cannot be imported."""

import numpy as np
import pytest

from benchdnn_py.common.attr import (Depthwise, Eltwise, Modes, OScale, PostOps,
                                     ScaleEntry, Scales, Sum, ZeroPointEntry, ZeroPoints,
                                     modes_of, parse_dropout, parse_fpmath, parse_oscale,
                                     parse_post_ops, parse_rounding, parse_scales,
                                     parse_zero_points)
from benchdnn_py.engine.options import Option, parse_list
from benchdnn_py.errors import UsageError


def _core_error() -> str | None:
    try:
        import benchdnn_py.core  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - not built, or mid-rebuild: any failure
        return f"{type(exc).__name__}: {exc}"
    return None


_CORE_ERROR = _core_error()
needs_core = pytest.mark.skipif(_CORE_ERROR is not None,
                                reason=f"needs the kernel core ({_CORE_ERROR})")


@needs_core
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


@needs_core
def test_aliases_print_canonically():
    assert str(parse_post_ops("eltwise_relu+srelu:2")) == "relu+soft_relu:2"


@needs_core
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


@needs_core
def test_comma_list_gives_one_case_per_chain_and_empty_means_none():
    from benchdnn_py.engine import harness

    plan = harness.plan(["--conv", "--attr-post-ops=,relu,sum:0.5+tanh", "ic3ih5oc3kh3"])
    assert [str(c.values["attr-post-ops"]) for c in plan.cases] == ["", "relu", "sum:0.5+tanh"]
    assert plan.cases[0].values["attr-post-ops"] == PostOps()


# --- --attr-scales -------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "src:common:2.5",
    "src:common:0",
    "wei:per_oc",
    "dst:per_tensor",
    "src:per_dim_0",
    "src:per_dim_1",
    "wei:per_dim_01",
    "dst:per_dim_2",
    "dst:per_dim_3",
    "wei:3",
    "src:0",
    "src:common:2:f16",
    "dst:common:0.25:bf16",
    "wei:per_oc:e8m0",
    "wei:per_oc:f8_e5m2",
    "src:per_tensor:f8_e4m3",
    "wei:per_oc:f32:2x1",              # groups force the dt to print, even f32
    "src:common:1:f16:1x128",
    "src:common:0.5+dst:common:4+wei:per_oc",
    "src:common:1e+10+wei:per_oc",     # %g's exponent sign is not an entry separator
    "src:common:1.5e-07",
    "src:common:0.1234567",            # more than %g's six digits: printed exactly
])
def test_scales_print_back_as_given(text):
    scales = parse_scales(text)
    assert str(scales) == text
    assert parse_scales(str(scales)) == scales
    assert scales


@pytest.mark.parametrize("text,canonical", [
    ("src0:common:2", "src:common:2"),                    # src0 is an alias of src
    ("SRC:COMMON:2", None),                               # ARG is case-sensitive
    ("src:COMMON:2", "src:common:2"),                     # POLICY is not; printed lowercase
    ("wei:Per_OC", "wei:per_oc"),
    ("src:per_dim_1", "src:per_dim_1"),                   # same mask as per_oc: name kept
    ("src:007", "src:7"),
    ("src:common:2.50", "src:common:2.5"),
    ("src:common:2:f32", "src:common:2"),                 # the default dt is not printed
    ("src:common:2:dnnl_f16", "src:common:2:f16"),
    ("wei:per_oc+dst:common:3+src:common:2", "src:common:2+dst:common:3+wei:per_oc"),
    ("src:common:10000000000", "src:common:1e+10"),
])
def test_scales_print_canonically(text, canonical):
    if canonical is None:
        with pytest.raises(UsageError):
            parse_scales(text)
        return
    scales = parse_scales(text)
    assert str(scales) == canonical
    assert parse_scales(canonical) == scales


def test_scales_accessors():
    scales = parse_scales("wei:per_oc:bf16:1x4+src0:common:0.5+dst:per_tensor")
    src, wei, dst = scales.get("src"), scales.get("wei"), scales.get("dst")
    assert src == ScaleEntry("src", "common", 0.5) == scales.get("src0")
    assert (src.arg, src.policy, src.mask, src.scale, src.dt, src.groups) == (
        "src", "common", 0, 0.5, "f32", ())
    assert src.is_common and not wei.is_common and not dst.is_common
    assert (wei.arg, wei.policy, wei.scale, wei.dt, wei.groups) == (
        "wei", "per_oc", None, "bf16", (1, 4))
    assert wei.mask == 1                                  # conv weights: dim 0 is oc
    assert wei.mask_for(5, grouped=True) == 3             # grouped: g and oc
    assert wei.mask_for(4) == 1
    assert dst.mask_for(4) == 0b1111 and dst.mask_for(5) == 0b11111
    assert dst.mask == (1 << 12) - 1                      # every dimension
    assert parse_scales("dst:per_oc").get("dst").mask == 2   # activations: dim 1 is oc
    assert parse_scales("src:per_dim_01").get("src").mask == 3
    assert parse_scales("src:per_dim_3").get("src").mask == 8
    assert parse_scales("wei:5").get("wei").mask_for(5, grouped=True) == 5
    assert [e.arg for e in scales.entries] == ["src", "dst", "wei"]
    assert parse_scales("src:common:2").get("wei") is None


def test_empty_scales_are_falsy():
    assert parse_scales("") == Scales()
    assert not Scales() and str(Scales()) == ""
    assert Scales().get("src") is None


def test_scales_built_in_any_order_compare_equal():
    a, b = ScaleEntry("wei", "per_oc"), ScaleEntry("src", "common", 2.0)
    assert Scales((a, b)) == Scales((b, a)) == parse_scales("src:common:2+wei:per_oc")


@pytest.mark.parametrize("text,fragment", [
    ("src:common:", "dangling symbol at the end of input `src:common:`"),
    ("src:", "dangling symbol at the end of input `src:`"),
    ("src:common:2:f16:", "dangling symbol at the end of input `src:common:2:f16:`"),
    ("bia:common:2", "argument `bia` in `bia:common:2`"),
    ("msrc:common:2", "expected one of src (or src0), src1, wei, dst, msrcN"),
    ("src:host_scalar", "the host_scalar policy in `src:host_scalar` needs a SCALE"),
    ("src", "`src` has no policy"),
    ("src:per_ic", "policy `per_ic` in `src:per_ic`"),
    ("src:-1", "policy `-1`"),
    ("src:4096", "policy `4096`"),
    ("src:common", "the common policy in `src:common` needs a SCALE"),
    ("src:common:-1", "scale `-1` in `src:common:-1` must be a finite number >= 0"),
    ("src:common:x", "scale `x` in `src:common:x`"),
    ("src:common:nan", "scale `nan`"),
    ("src:common:inf", "scale `inf`"),
    ("src:common:f16", "scale `f16`"),
    ("wei:per_oc:2", "`2` in `wei:per_oc:2`: only the common and host_scalar policies "
                     "take a SCALE"),
    ("dst:per_tensor:0.5:f16", "`0.5` in `dst:per_tensor:0.5:f16`"),
    ("src:common:2:s8", "data type `s8` in `src:common:2:s8`"),
    ("wei:per_oc:u8", "data type `u8`"),
    ("src:common:2:f16:3", "groups `3` in `src:common:2:f16:3`"),
    ("src:common:2:f16:0x4", "groups `0x4`"),
    ("src:common:2:f16:1x2x3", "groups `1x2x3`"),
    ("src:common:2:f16:1x2:x", "`src:common:2:f16:1x2:x` has too many fields"),
    ("src:common:2+src:common:3", "argument `src` is given twice"),
    ("src:common:2+src0:common:3", "argument `src` is given twice (`src0:common:3`)"),
    ("src:common:2+", "empty entry"),
    ("+src:common:2", "empty entry"),
    ("src:common:2++wei:per_oc", "empty entry"),
])
def test_scales_errors_name_the_token(text, fragment):
    with pytest.raises(UsageError) as err:
        parse_scales(text)
    message = str(err.value)
    assert fragment in message
    assert message.startswith("--attr-scales") and "\n" not in message


def test_scales_comma_list_gives_one_case_per_item_and_empty_means_none():
    option = Option("attr-scales", parse_scales, Scales(), "", is_list=True)
    values = parse_list(option, ",src:common:2,wei:per_oc+dst:common:0.5")
    assert values == (Scales(), parse_scales("src:common:2"),
                      parse_scales("wei:per_oc+dst:common:0.5"))
    assert [str(v) for v in values] == ["", "src:common:2", "dst:common:0.5+wei:per_oc"]
    assert parse_list(option, "") == (Scales(),)


# --- --attr-zero-points --------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "src:common:2",
    "src:common:-1",
    "dst:common:0",
    "wei:common:3",
    "wei:per_oc",
    "dst:per_dim_1",
    "src:per_tensor:u8",
    "src:common:1:s8",
    "dst:common:-4:s4",
    "src:per_oc:u4",
    "src:common:1:s32:1x4",            # groups force the dt to print, even s32
    "src:common:3+dst:common:-4+wei:per_oc:s8",
    "src:2",
])
def test_zero_points_print_back_as_given(text):
    zps = parse_zero_points(text)
    assert str(zps) == text
    assert parse_zero_points(str(zps)) == zps
    assert zps


@pytest.mark.parametrize("text,canonical", [
    ("src:common:2.0", "src:common:2"),                   # an integer-valued number
    ("src:common:1e+1", "src:common:10"),
    ("src0:COMMON:2", "src:common:2"),
    ("src:common:2:s32", "src:common:2"),
    ("src:common:2:dnnl_u8", "src:common:2:u8"),
    ("dst:common:1+src:common:2", "src:common:2+dst:common:1"),
])
def test_zero_points_print_canonically(text, canonical):
    zps = parse_zero_points(text)
    assert str(zps) == canonical
    assert parse_zero_points(canonical) == zps


def test_zero_points_accessors():
    zps = parse_zero_points("dst:per_oc:u8+src:common:-3")
    src, dst = zps.get("src"), zps.get("dst")
    assert src == ZeroPointEntry("src", "common", -3) == zps.get("src0")
    assert (src.arg, src.policy, src.mask, src.zp, src.dt, src.groups) == (
        "src", "common", 0, -3, "s32", ())
    assert isinstance(src.zp, int) and src.is_common
    assert (dst.zp, dst.dt, dst.mask, dst.is_common) == (None, "u8", 2, False)
    assert zps.get("wei") is None
    assert parse_zero_points("") == ZeroPoints() and not ZeroPoints()
    assert str(ZeroPoints()) == ""


@pytest.mark.parametrize("text,fragment", [
    ("src:common:1.5", "zero point `1.5` in `src:common:1.5` must be an integer"),
    ("src:common:x", "zero point `x`"),
    ("src:common:inf", "zero point `inf`"),
    ("src:common", "the common policy in `src:common` needs a ZP"),
    ("wei:per_oc:1", "`1` in `wei:per_oc:1`: only the common and host_scalar policies "
                     "take a ZP"),
    ("src:common:1:f32", "data type `f32` in `src:common:1:f32`"),
    ("src:common:1:", "dangling symbol at the end of input `src:common:1:`"),
    ("src2:common:1", "argument `src2`"),
    ("src:per_ic", "policy `per_ic`"),
    ("src:common:1:s8:4", "groups `4`"),
    ("src:common:1+src:common:2", "argument `src` is given twice"),
    ("src:common:1+", "empty entry"),
    ("src:common:+2", "dangling symbol at the end of input `src:common:`"),  # + joins entries
])
def test_zero_points_errors_name_the_token(text, fragment):
    with pytest.raises(UsageError) as err:
        parse_zero_points(text)
    message = str(err.value)
    assert fragment in message
    assert message.startswith("--attr-zero-points") and "\n" not in message


# --- --attr-oscale (DNNL 1.x) ----------------------------------------------------------------

@pytest.mark.parametrize("text,policy,scale", [
    ("common:2.5", "common", 2.5),
    ("common:0", "common", 0.0),
    ("per_oc", "per_oc", None),
    ("per_oc:2.5", "per_oc", 2.5),
    ("per_oc:0.1234567", "per_oc", 0.1234567),
])
def test_oscale_prints_back_as_given(text, policy, scale):
    oscale = parse_oscale(text)
    assert (oscale.policy, oscale.scale) == (policy, scale)
    assert str(oscale) == text
    assert parse_oscale(str(oscale)) == oscale


def test_oscale_normalizes_case_and_numbers():
    assert str(parse_oscale("COMMON:2.50")) == "common:2.5"
    assert str(parse_oscale("Per_OC")) == "per_oc"
    assert str(parse_oscale("per_oc:1e+10")) == "per_oc:1e+10"


def test_oscale_accessors():
    common, per_oc = parse_oscale("common:0.5"), parse_oscale("per_oc")
    assert common.is_common and common.mask == 0
    assert not per_oc.is_common and per_oc.mask == 2
    assert parse_oscale("") == OScale() and not OScale() and str(OScale()) == ""
    assert common and per_oc


@pytest.mark.parametrize("text,fragment", [
    ("common", "the common policy in `common` needs a SCALE"),
    ("common:-1", "scale `-1` in `common:-1` must be a finite number >= 0"),
    ("per_oc:x", "scale `x` in `per_oc:x`"),
    ("per_oc:-2", "scale `-2`"),
    ("per_dim_1", "policy `per_dim_1` in `per_dim_1`; expected common:SCALE or per_oc"),
    ("none", "policy `none`"),
    ("common:1:2", "`common:1:2` has too many fields"),
    ("common:", "dangling symbol at the end of input `common:`"),
    ("per_oc:", "dangling symbol at the end of input `per_oc:`"),
])
def test_oscale_errors_name_the_token(text, fragment):
    with pytest.raises(UsageError) as err:
        parse_oscale(text)
    message = str(err.value)
    assert fragment in message
    assert message.startswith("--attr-oscale") and "\n" not in message


def test_oscale_comma_list():
    option = Option("attr-oscale", parse_oscale, OScale(), "", is_list=True)
    values = parse_list(option, "common:1,per_oc,")
    assert [str(v) for v in values] == ["common:1", "per_oc", ""]


# --- benchdnn's whole vocabulary: every argument, policy and post-op kind parses ------------

def test_every_benchdnn_argument_parses_and_prints_in_its_arg_id_order():
    text = ("attr_post_op_dw_wei:per_oc+msrc2:common:1+wei:per_ocic+dst:host_scalar:2"
            "+src1:per_tensor+src0:mx")
    scales = parse_scales(text)
    assert str(scales) == ("src:mx+src1:per_tensor+dst:host_scalar:2+wei:per_ocic+msrc2:common:1"
                           "+attr_post_op_dw_wei:per_oc")
    assert parse_scales(str(scales)) == scales
    assert scales.get("dst").is_common and scales.get("dst").scale == 2.0
    assert scales.get("wei").mask == 3 and scales.get("src").mask_for(4) == 15


@pytest.mark.parametrize("text,extra", [
    ("add:f32", 1), ("binary_add:f32:per_oc", 1), ("mul:s8:per_oc", 1),
    ("add:u8:14:aBcd32b", 1), ("max:bf16:0", 1), ("sub:f16:per_tensor", 1),
    ("div:s32:2:abcd:1x2x3x4", 1), ("ge:f32:per_dim_01:grouped", 1), ("add", 1),
    ("select:f32", 1), ("select:f32.per_oc.abcd:per_tensor.acdb", 1), ("prelu", 1),
    ("prelu:per_oc", 1), ("prelu:3", 1), ("sum+add:f32:per_oc+relu+prelu:common", 2),
    ("dw:k3s1p1+mul:f32", 1), ("sum+tanh:0:0:2.5", 0),
])
def test_binary_and_prelu_entries_round_trip(text, extra):
    chain = parse_post_ops(text)
    assert str(chain) == text and parse_post_ops(str(chain)) == chain
    assert len(chain.extra_inputs) == extra


@pytest.mark.parametrize("text,fragment", [
    ("add:f33", "data type `f33` in `add:f33`"),
    ("add:f32:per_ic", "policy `per_ic` in `add:f32:per_ic`"),
    ("add:f32:0:nchx", "tag `nchx` in `add:f32:0:nchx`"),
    ("add:f32:0:abcd:2y3", "strides `2y3` in `add:f32:0:abcd:2y3`"),
    ("add:f32:0:abcd:1x1:9", "`add:f32:0:abcd:1x1:9` has too many fields"),
    ("prelu:per_oc:2", "`prelu:per_oc:2` has too many fields"),
    ("prelu:per_what", "policy `per_what`"),
    ("pow2:f32", "unknown post-op `pow2`"),
])
def test_binary_and_prelu_errors_name_the_token(text, fragment):
    with pytest.raises(UsageError) as err:
        parse_post_ops(text)
    assert fragment in str(err.value) and str(err.value).startswith("--attr-post-ops")


def test_mode_attributes_parse_print_and_say_what_does_not_run():
    values = {"attr-fpmath": parse_fpmath("bf16:true"), "attr-acc-mode": "relaxed",
              "attr-rounding-mode": parse_rounding("dst:stochastic:7"),
              "attr-dropout": parse_dropout("0.5:12:undef"), "attr-scratchpad": "user",
              "attr-deterministic": True}
    modes = modes_of(values)
    assert modes.options() == [
        "--attr-scratchpad=user", "--attr-fpmath=bf16:true", "--attr-acc-mode=relaxed",
        "--attr-rounding-mode=dst:stochastic:7", "--attr-deterministic=true",
        "--attr-dropout=0.5:12:undef"]
    assert "scratchpad=user" in modes.unimplemented()
    # a driver whose native primitives take the driver's work memory runs it, there only
    assert Modes(scratchpad="user").unimplemented(native=frozenset({"scratchpad"})) is None
    assert "scratchpad=user" in Modes(scratchpad="user").unimplemented(
        "onednn", frozenset({"scratchpad"}))
    # what the kernels honour by computing strictly: every fpmath and accumulation mode
    assert Modes(fpmath=parse_fpmath("tf32"), acc_mode="f16",
                 deterministic=True).unimplemented() is None
    assert "stochastic" in Modes(rounding=parse_rounding("dst:stochastic")).unimplemented()
    assert "takes no dropout" in Modes(dropout=parse_dropout("0.25")).unimplemented()
    assert Modes(dropout=parse_dropout("0.25")).unimplemented(
        native=frozenset({"dropout"})) is None
    drop = parse_dropout("0.3:-5:axb:7:true")
    assert (drop.p, drop.seed, drop.mask_tag, drop.offset) == (np.float32(0.3), -5, "axb", 7)
    drop = parse_dropout("1")
    assert (drop.p, drop.seed, drop.mask_tag, drop.offset) == (1.0, 0, "any", 0)
    assert "onednn backend" in Modes(fpmath=parse_fpmath("bf16")).unimplemented("onednn")
    assert Modes().options() == [] and modes_of({}) == Modes()


@pytest.mark.parametrize("parse,text,fragment", [
    (parse_fpmath, "bf8", "--attr-fpmath=bf8: unknown fpmath mode"),
    (parse_fpmath, "bf16:maybe", "`maybe` in `bf16:maybe` is not a boolean"),
    (parse_rounding, "src:stochastic", "argument `src`"),
    (parse_rounding, "dst:random", "unknown rounding mode"),
    (parse_rounding, "dst:stochastic:x", "seed `x`"),
    (parse_dropout, "1.5", "probability `1.5` must be in [0, 1]"),
    (parse_dropout, "0.5:1:abcq", "mask tag `abcq`"),
    (parse_dropout, "0.5:1:any:-2", "offset `-2`"),
])
def test_mode_attribute_errors_name_the_token(parse, text, fragment):
    with pytest.raises(UsageError) as err:
        parse(text)
    assert fragment in str(err.value) and "\n" not in str(err.value)
