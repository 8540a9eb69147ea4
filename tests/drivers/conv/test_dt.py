"""Conv data types (benchdnn_py/drivers/conv/dt.py): --dt, --bia-dt and --cfg parsing, and
the spec's data-type table against the whole cross product of common types and directions.

Loaded from its file: importing the package benchdnn_py.drivers.conv imports the driver
and with it the kernel core, which dt.py must not need.
"""

from __future__ import annotations

import enum
import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

import benchdnn_py
from benchdnn_py.common.attr import parse_oscale, parse_scales, parse_zero_points
from benchdnn_py.errors import UsageError
from benchdnn_py.status import Status

DT_PATH = Path(benchdnn_py.__file__).parent / "drivers" / "conv" / "dt.py"


def _load_dt():
    name = "benchdnn_py.drivers.conv.dt"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, DT_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module      # dataclasses look their module up while decorating
    spec.loader.exec_module(module)
    return module


dt = _load_dt()


def test_module_needs_no_kernel_core():
    code = (f"import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location("
            f"'benchdnn_py.drivers.conv.dt', {str(DT_PATH)!r})\n"
            f"m = importlib.util.module_from_spec(spec)\n"
            f"sys.modules[spec.name] = m\n"
            f"spec.loader.exec_module(m)\n"
            f"print(sorted(k for k in sys.modules if k.startswith('benchdnn_py')))\n")
    root = str(DT_PATH.parents[3])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    assert "benchdnn_py.core" not in out and "_core" not in out
    assert "benchdnn_py.drivers.conv.driver" not in out


# --- --dt, --bia-dt ----------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("f32", ("f32", "f32", "f32")),
    ("bf16", ("bf16", "bf16", "bf16")),
    ("u8:s8:f32", ("u8", "s8", "f32")),
    ("f32:bf16:bf16", ("f32", "bf16", "bf16")),
    ("dnnl_s8", ("s8", "s8", "s8")),
    ("dnnl_u8:s8:dnnl_s32", ("u8", "s8", "s32")),
    ("f8_e5m2:f8_e4m3:f4_e2m1", ("f8_e5m2", "f8_e4m3", "f4_e2m1")),
])
def test_dt_broadcasts_one_name_and_takes_three(text, expected):
    assert dt.parse_dt(text) == expected


# Reference 3.1, the --dt row.
BENCHDNN_DT_NAMES = ("f32 bf16 f16 f64 s32 s8 u8 s4 u4 f8_e5m2 f8_e4m3 f4_e2m1 e8m0 s64 "
                     "boolean undef").split()


def test_every_benchdnn_dt_name_parses():
    assert set(dt.DT_NAMES) == set(BENCHDNN_DT_NAMES)
    for name in BENCHDNN_DT_NAMES:
        assert dt.parse_dt(name) == (name,) * 3
        assert dt.parse_dt("dnnl_" + name) == (name,) * 3


@pytest.mark.parametrize("text,fragments", [
    ("f32:f32", ["--dt=f32:f32", ("expects either a single input or three inputs in SRC, "
                                  "WEI, DST order. Current size is: 2.")]),
    ("u8:s8:s8:f32", ["--dt=u8:s8:s8:f32", "Current size is: 4."]),
    ("q8", ["unknown data type `q8`", "f32, bf16, f16"]),
    ("f32:int8:f32", ["unknown data type `int8`", "--dt=f32:int8:f32"]),
    ("f32::f32", ["unknown data type ``"]),
    ("F32", ["unknown data type `F32`"]),
])
def test_dt_errors_name_the_token(text, fragments):
    with pytest.raises(UsageError) as err:
        dt.parse_dt(text)
    for fragment in fragments:
        assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_bia_dt_parses_one_name():
    assert dt.parse_bia_dt("f32") == "f32"
    assert dt.parse_bia_dt("dnnl_bf16") == "bf16"
    assert dt.parse_bia_dt("undef") == "undef"
    with pytest.raises(UsageError, match="--bia-dt=x8: unknown data type `x8`"):
        dt.parse_bia_dt("x8")
    with pytest.raises(UsageError, match="unknown data type `f32:f32`"):
        dt.parse_bia_dt("f32:f32")


@pytest.mark.parametrize("direction,triple,given,effective", [
    ("FWD_B", ("f32",) * 3, "undef", "f32"),
    ("BWD_WB", ("bf16", "bf16", "bf16"), "undef", "f32"),
    ("FWD_B", ("f16",) * 3, "undef", "f32"),          # benchdnn: f32, not the data's f16
    ("FWD_B", ("f64",) * 3, "undef", "f64"),          # f64 weights keep an f64 bias
    ("FWD_B", ("f16",) * 3, "f16", "f16"),
    ("BWD_WB", ("bf16", "f32", "bf16"), "bf16", "bf16"),
    ("FWD_D", ("f32",) * 3, "f32", "undef"),          # no bias: --bia-dt describes nothing
    ("FWD_I", ("u8", "s8", "s8"), "s32", "undef"),
    ("BWD_D", ("f32",) * 3, "undef", "undef"),
    ("BWD_W", ("f32",) * 3, "bf16", "undef"),
])
def test_effective_bias_dt(direction, triple, given, effective):
    assert dt.effective_bia_dt(direction, triple, given) == effective


@pytest.mark.parametrize("direction,triple,given,option", [
    ("FWD_B", ("f16",) * 3, "f16", "--bia-dt=f16"),
    ("BWD_WB", ("bf16",) * 3, "bf16", "--bia-dt=bf16"),
    ("FWD_B", ("f32",) * 3, "f32", ""),               # what undef gives: nothing to say
    ("FWD_B", ("f64",) * 3, "f64", ""),
    ("FWD_B", ("f32",) * 3, "undef", ""),
    ("FWD_D", ("f16",) * 3, "f16", ""),               # no bias in this direction
    ("BWD_D", ("bf16",) * 3, "bf16", ""),
])
def test_bias_dt_prints_only_when_it_changes_the_case(direction, triple, given, option):
    assert dt.bia_dt_option(direction, triple, given) == option


def test_directions_accept_enum_members_and_reject_bwd_dw():
    class Dir(enum.Enum):
        FWD_B = "FWD_B"
        BWD_DW = "BWD_DW"

    assert dt.effective_bia_dt(Dir.FWD_B, ("f32",) * 3) == "f32"
    assert dt.classify(Dir.FWD_B, ("f32",) * 3) is None
    with pytest.raises(ValueError, match="BWD_DW"):
        dt.classify(Dir.BWD_DW, ("f32",) * 3)


def test_int8_helpers():
    assert dt.is_int8(("u8", "s8", "f32")) and dt.is_int8(("s8", "s8", "s8"))
    assert not dt.is_int8(("f32", "s8", "s8")) and not dt.is_int8(("s8", "f32", "s8"))
    assert dt.acc_dt(("u8", "s8", "u8")) == "s32"
    assert dt.acc_dt(("bf16", "bf16", "f32")) == "f32"
    assert dt.acc_dt(("f64",) * 3) == "f64"
    assert dt.has(("bf16", "f32", "bf16"), "f32") and not dt.has(("f32",) * 3, "f16")


# --- --cfg (DNNL 1.x) --------------------------------------------------------------------

# Reference 3.1, the --cfg row, name by name (NAME spells SRC, WEI, DST in order).
REFERENCE_CFGS = {
    "f32": ("f32:f32:f32", None),
    "f64": ("f64:f64:f64", None),
    "f32f32s8": ("f32:f32:s8", None),
    "u8s8f32": ("u8:s8:f32", None),
    "u8s8s32": ("u8:s8:s32", None),
    "u8s8s8": ("u8:s8:s8", None),
    "u8s8u8": ("u8:s8:u8", None),
    "s8s8f32": ("s8:s8:f32", None),
    "s8s8s32": ("s8:s8:s32", None),
    "s8s8s8": ("s8:s8:s8", None),
    "s8s8u8": ("s8:s8:u8", None),
    "f32_wino": ("f32:f32:f32", "wino"),
    "f16": ("f16:f16:f16", None),
    "f16f16s8": ("f16:f16:s8", None),
    "bf16bf16bf16": ("bf16:bf16:bf16", None),
    "bf16bf16f32": ("bf16:bf16:f32", None),
    "bf16f32bf16": ("bf16:f32:bf16", None),
    "f32bf16bf16": ("f32:bf16:bf16", None),
}


@pytest.mark.parametrize("name", REFERENCE_CFGS)
def test_cfg_is_a_spelling_of_dt_and_alg(name):
    triple, alg = REFERENCE_CFGS[name]
    cfg = dt.parse_cfg(name)
    assert cfg.dt == tuple(triple.split(":"))
    assert cfg.dt == dt.parse_dt(triple)
    assert cfg.alg == alg
    int8 = name.startswith(("u8", "s8"))
    assert cfg.acc == ("s32" if int8 else "f64" if name == "f64" else "f32")
    assert str(cfg) == name


def test_cfg_table_has_exactly_the_reference_names():
    assert set(dt.CFGS) == set(REFERENCE_CFGS)


@pytest.mark.parametrize("text", ["f32_f32", "u8s8", "F32", "", "wino"])
def test_unknown_cfg_lists_the_accepted_names(text):
    with pytest.raises(UsageError) as err:
        dt.parse_cfg(text)
    message = str(err.value)
    assert f"unknown configuration `{text}`" in message
    assert all(name in message for name in REFERENCE_CFGS)


# --- The spec's data-type table ----------------------------------------------------------

COMMON_DTS = ("f32", "bf16", "f16", "s32", "s8", "u8")
DIRECTIONS = ("FWD_B", "FWD_D", "FWD_I", "BWD_D", "BWD_W", "BWD_WB")

# Written out from the spec's table, independently of dt.SUPPORTED.
_FWD = {"f32:f32:f32", "f16:f16:f16", "bf16:bf16:f32", "bf16:bf16:bf16"} | {
    f"{s}:s8:{d}" for s in ("u8", "s8") for d in ("u8", "s8", "s32", "f32")}
SPEC_ROWS = {
    "FWD_B": _FWD, "FWD_D": _FWD, "FWD_I": _FWD,
    "BWD_D": {"f32:f32:f32", "f32:bf16:bf16", "bf16:bf16:bf16"},
    "BWD_W": {"f32:f32:f32", "bf16:f32:bf16", "bf16:bf16:bf16"},
    "BWD_WB": {"f32:f32:f32", "bf16:f32:bf16", "bf16:bf16:bf16"},
}
# Beyond the spec's table: benchdnn's f32 activations with bf16 or f16 weights (its
# test_conv_ci), run as an f32 convolution on the exactly widened weights.
# Also its int8 convolutions into a bf16 or f16 dst (the f16 ones oneDNN's CPU skips).
for _direction in ("FWD_B", "FWD_D", "FWD_I", "BWD_D"):
    SPEC_ROWS[_direction] = SPEC_ROWS[_direction] | {"f32:bf16:f32", "f32:f16:f32"}
# And f16 into an f32 dst (benchdnn's f16:f16:f32, as bf16:bf16:f32).
for _direction in ("FWD_B", "FWD_D", "FWD_I"):
    SPEC_ROWS[_direction] = SPEC_ROWS[_direction] | {"u8:s8:bf16", "s8:s8:bf16", "u8:s8:f16",
                                                     "s8:s8:f16", "f16:f16:f32"}
# And f16 backward, as bf16's rows.
SPEC_ROWS["BWD_D"] = SPEC_ROWS["BWD_D"] | {"f16:f16:f16", "f32:f16:f16"}
for _direction in ("BWD_W", "BWD_WB"):
    SPEC_ROWS[_direction] = SPEC_ROWS[_direction] | {"f16:f16:f16", "f16:f32:f16"}


def _known_unsupported(s, w, d):
    """Reference 8, conv CPU: f32:f32:s8/u8 dst, bf16:bf16:s8/u8 dst, f16 weights with a
    dst other than f32/f16, int8 src+wei with f16 dst."""
    int8 = ("s8", "u8")
    return ((s, w) == ("f32", "f32") and d in int8 or (s, w) == ("bf16", "bf16") and d in int8
            or w == "f16" and d not in ("f32", "f16")
            or s in int8 and w in int8 and d == "f16")


CROSS = list(itertools.product(DIRECTIONS, COMMON_DTS, COMMON_DTS, COMMON_DTS))


def _expected(direction, s, w, d):
    if f"{s}:{w}:{d}" in SPEC_ROWS[direction]:
        return None
    if _known_unsupported(s, w, d):
        return Status.SKIPPED
    return Status.UNIMPLEMENTED


def test_classify_matches_the_spec_table():
    wrong = []
    for direction, s, w, d in CROSS:
        got = dt.classify(direction, (s, w, d))
        expected = _expected(direction, s, w, d)
        if expected is None:
            ok = got is None
        elif expected is Status.SKIPPED:
            ok = got == (Status.SKIPPED, "Case not supported")
        else:
            ok = (got is not None and got[0] is Status.UNIMPLEMENTED
                  and f"--dt={s}:{w}:{d}" in got[1] and direction in got[1])
        if not ok:
            wrong.append((direction, f"{s}:{w}:{d}", expected, got))
    assert wrong == []


def test_classify_counts():
    results = [dt.classify(direction, (s, w, d)) for direction, s, w, d in CROSS]
    supported = sum(r is None for r in results)
    skipped = sum(r is not None and r[0] is Status.SKIPPED for r in results)
    # the last 3 * 2: int8 into f16, known-unsupported on oneDNN's CPU, runs here forward;
    # the 3 before them: f16:f16:f32 forward
    assert supported == 3 * 12 + 3 + 2 * 3 + 4 * 2 + 3 * 2 + 3 * 2 + 3 + 3 * 2
    assert skipped == 6 * sum(_known_unsupported(*t) for t in
                              itertools.product(COMMON_DTS, repeat=3)) - 3 * 2
    assert len(results) == 6 * 6 ** 3


@pytest.mark.parametrize("direction,triple,bia,supported", [
    ("FWD_B", ("f16",) * 3, "f16", True),
    ("FWD_B", ("f16",) * 3, "f32", True),
    ("FWD_B", ("f16",) * 3, "bf16", False),
    ("FWD_B", ("u8", "s8", "u8"), "s32", True),
    ("FWD_B", ("s8", "s8", "f32"), "u8", True),
    ("FWD_B", ("u8", "s8", "s8"), "f16", False),
    ("FWD_B", ("bf16", "bf16", "bf16"), "bf16", True),
    ("FWD_B", ("bf16", "bf16", "f32"), "f16", False),
    ("FWD_B", ("f32",) * 3, "bf16", False),
    ("BWD_WB", ("bf16", "f32", "bf16"), "bf16", True),
    ("BWD_WB", ("bf16", "bf16", "bf16"), "s8", False),
    ("BWD_WB", ("f32",) * 3, "f32", True),
    ("FWD_D", ("f32",) * 3, "s8", True),             # no bias: --bia-dt is not looked at
    ("BWD_D", ("f32", "bf16", "bf16"), "f16", True),
])
def test_classify_checks_the_bias_of_biased_directions(direction, triple, bia, supported):
    got = dt.classify(direction, triple, bia)
    if supported:
        assert got is None
    else:
        status, reason = got
        assert status is Status.UNIMPLEMENTED
        assert f"--bia-dt={bia}" in reason and direction in reason


def test_classify_reports_types_outside_the_table():
    for direction in dt.DIRECTIONS:   # f64 end to end runs; mixed with f64 does not
        assert dt.classify(direction, ("f64",) * 3) is None
        assert dt.classify(direction, ("f64", "f32", "f64"))[0] is Status.UNIMPLEMENTED
    assert dt.classify("FWD_B", ("f64",) * 3, "f32")[0] is Status.UNIMPLEMENTED
    assert dt.classify("FWD_I", ("s4", "s8", "s8"))[0] is Status.UNIMPLEMENTED
    assert dt.classify("FWD_I", ("f16", "f16", "s8")) == (Status.SKIPPED, "Case not supported")


# --- Attributes the data types allow -------------------------------------------------------

@pytest.mark.parametrize("direction,triple,kwargs,expected", [
    ("FWD_I", ("u8", "s8", "u8"), {"oscale": parse_oscale("per_oc:0.5")}, None),
    ("FWD_B", ("s8", "s8", "f32"), {"oscale": parse_oscale("common:2")}, None),
    ("FWD_B", ("f32",) * 3, {"oscale": parse_oscale("common:2")}, Status.UNIMPLEMENTED),
    ("BWD_D", ("u8", "s8", "u8"), {"oscale": parse_oscale("common:2")}, Status.UNIMPLEMENTED),
    ("FWD_B", ("bf16",) * 3, {"scales": parse_scales("src:common:2")}, Status.UNIMPLEMENTED),
    ("FWD_B", ("f32",) * 3, {"zero_points": parse_zero_points("src:common:1")},
     Status.UNIMPLEMENTED),
    ("FWD_B", ("f32",) * 3, {"oscale": parse_oscale(""), "scales": parse_scales("")}, None),
    ("FWD_B", ("u8", "s8", "s8"), {"scales": parse_scales("src:common:2+wei:per_oc")}, None),
    ("FWD_B", ("u8", "s8", "s8"), {"scales": parse_scales("dst:common:4")}, None),
    ("FWD_B", ("u8", "s8", "s8"), {"scales": parse_scales("dst:per_oc")}, Status.SKIPPED),
    ("FWD_B", ("u8", "s8", "s8"), {"zero_points": parse_zero_points("src:common:2")}, None),
    ("FWD_B", ("u8", "s8", "s8"), {"zero_points": parse_zero_points("src:common:2:u8")},
     Status.SKIPPED),
    ("FWD_B", ("u8", "s8", "s8"), {"zero_points": parse_zero_points("wei:common:1")},
     Status.SKIPPED),
    ("FWD_B", ("u8", "s8", "s8"), {"zero_points": parse_zero_points("dst:per_oc")}, None),
])
def test_attr_unsupported(direction, triple, kwargs, expected):
    got = dt.attr_unsupported(direction, triple, **kwargs)
    if expected is None:
        assert got is None
    else:
        assert got[0] is expected
        if expected is Status.SKIPPED:
            assert got[1] == "Case not supported"
        else:
            assert "int8 forward" in got[1] and direction in got[1]
