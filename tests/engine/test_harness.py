"""The argument stream: sticky options, expansion order, --reset, batch nesting, and the
usage errors that stop a run before it starts (benchdnn reference 1, 3, 4)."""

from pathlib import Path

import pytest

from benchdnn_py.common.direction import Dir
from benchdnn_py.engine import harness
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.errors import UsageError


def cases(*args):
    return harness.plan(list(args)).cases


def test_options_are_sticky_and_apply_only_after_themselves():
    got = cases("--conv", "ic3ih5oc3kh3", "--dir=FWD_D", "ic4ih5oc4kh3", "--mb=1",
                "ic5ih5oc5kh3")
    assert [(c.values["dir"], c.values["mb"]) for c in got] == [
        (Dir.FWD_B, 0), (Dir.FWD_D, 0), (Dir.FWD_D, 1)]


def test_lists_expand_as_cartesian_product_dir_outermost():
    got = cases("--conv", "--mb=1,3", "--dir=FWD_B,FWD_I", "ic3ih5oc3kh3")
    assert [(c.values["dir"].value, c.values["mb"]) for c in got] == [
        ("FWD_B", 1), ("FWD_B", 3), ("FWD_I", 1), ("FWD_I", 3)]


def test_the_cases_of_one_descriptor_share_its_group_and_the_next_descriptor_starts_one():
    got = cases("--conv", "--threads=2,1", "ic3ih5oc3kh3", "--alg=direct,wino",
                "ic4ih5oc4kh3", "ic5ih5oc5kh3")
    groups = [c.group for c in got]
    assert groups[0:2] == [groups[0]] * 2 and groups[2:6] == [groups[2]] * 4
    assert groups[6:8] == [groups[6]] * 2 and len(set(groups)) == 3


def test_empty_value_restores_default():
    got = cases("--conv", "--dir=FWD_I", "--dir=", "ic3ih5oc3kh3")
    assert got[0].values["dir"] is Dir.FWD_B


def test_an_empty_global_value_restores_its_default_and_benchdnn_knobs_parse():
    plan = harness.plan(["--check-ref-impl=true", "--check-ref-impl=", "--mode=P", "--mode=",
                         "--allow-enum-tags-only=false", "--cpu-isa-hints=prefer_ymm",
                         "--engine=cpu:0", "--conv", "ic3ih5oc3kh3"])
    settings = plan.cases[0].settings
    assert not settings.check_ref_impl and settings.mode.letters == "C"
    assert plan.warnings == ["WARNING: --cpu-isa-hints=prefer_ymm: accepted for benchdnn's "
                             "batch files; no effect here: --isa caps the instruction set here"]
    with pytest.raises(UsageError, match="--engine=gpu: expected cpu or cpu:0"):
        harness.plan(["--engine=gpu", "--conv", "ic3ih5oc3kh3"])


def test_benchdnn_knobs_parse_anywhere_and_warn_once_when_they_would_change_something():
    plan = harness.plan(["--cold-cache=wei", "--conv", "--ctx-exe=2", "--start=0",
                         "--mem-check=true", "ic3ih5oc3kh3", "--cold-cache=wei"])
    assert plan.warnings[:2] == [
        "WARNING: --cold-cache=wei: accepted for benchdnn's batch files; no effect here: "
        "flushing the caches between timed runs is not implemented: perf runs time warm "
        "caches",
        "WARNING: --ctx-exe=2: accepted for benchdnn's batch files; no effect here: threading "
        "contexts are not implemented: --threads=N (conv, deconv) sets the threads a case "
        "runs on"]
    assert len(plan.warnings) == 3 and "No problem found" in plan.warnings[2]
    assert len(plan.cases) == 1


@pytest.mark.parametrize("arg,fragment", [
    ("--cold-cache=hot", "--cold-cache=hot: expected none, wei, all or custom"),
    ("--start=-1", "--start=-1: expected an integer >= 0"),
    ("--ctx-init=2:x", "--ctx-init=2:x: expected MAX_CONCURRENCY"),
    ("--mode-modifier=Q", "--mode-modifier=Q: expected letters P and M"),
])
def test_a_knob_value_benchdnn_would_reject_stops_the_run(arg, fragment):
    with pytest.raises(UsageError) as err:
        harness.plan(["--conv", arg, "ic3ih5oc3kh3"])
    assert fragment in str(err.value)


def test_reset_restores_driver_options_but_not_global_ones():
    plan = harness.plan(["--conv", "--mode=L", "--dir=FWD_I", "--mb=4", "--reset",
                         "ic3ih5oc3kh3"])
    case = plan.cases[0]
    assert case.values["dir"] is Dir.FWD_B and case.values["mb"] == 0
    assert case.settings.mode.letters == "L"


def test_global_options_before_the_driver():
    plan = harness.plan(["--mode=P", "-v3", "--conv", "ic3ih5oc3kh3"])
    assert plan.cases[0].settings.mode.letters == "P"
    assert plan.cases[0].settings.verbose == 3


def test_impl_and_skip_impl_share_one_setting():
    got = cases("--conv", "--impl=avx2", "--skip-impl=scalar", "ic3ih5oc3kh3")
    assert got[0].values["impl_filter"] == ImplFilter(False, ("scalar",))


def test_impl_names_select_rows_whatever_variant_of_their_tile_ran():
    """A results name's `@variant` (the tile one execution's data chose) is dropped: the
    filter selects the row, with its route and fault suffixes kept."""
    got = cases("--conv", "--impl=gemm_conv_int8:avx2:shift@pairs16+reorder,scalar@mixed",
                "ic16ih5oc3kh1")
    filt = got[0].values["impl_filter"]
    assert filt == ImplFilter(True, ("gemm_conv_int8:avx2:shift+reorder", "scalar"))
    assert filt.allows("gemm_conv_int8:avx2:shift+reorder")
    assert not filt.allows("gemm_conv_int8:avx2:gather+reorder")
    # a variant alone would leave an empty name, which every row contains
    with pytest.raises(UsageError) as info:
        cases("--conv", "--skip-impl=scalar,@pairs16", "ic16ih5oc3kh1")
    assert str(info.value).startswith("--skip-impl=scalar,@pairs16: `@pairs16` names only")


def test_batch_nesting_relative_paths_and_state_that_persists(tmp_path: Path, monkeypatch):
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "shapes").write_text("# shapes\nic3ih5oc3kh3\nic4ih5oc4kh3\n")
    (tmp_path / "outer").write_text("--dir=FWD_I\n--batch=inner/shapes\n")
    monkeypatch.chdir(tmp_path)
    got = cases("--conv", "--batch=outer", "ic5ih5oc5kh3")
    assert [c.desc_text for c in got] == ["ic3ih5oc3kh3", "ic4ih5oc4kh3", "ic5ih5oc5kh3"]
    assert all(c.values["dir"] is Dir.FWD_I for c in got)   # set inside, still in effect
    # where each came from: file and line
    assert [c.source for c in got] == ["inner/shapes:2", "inner/shapes:3", "command line"]


def test_an_error_in_a_batch_file_names_the_file_and_line(tmp_path: Path, monkeypatch):
    (tmp_path / "inner").write_text("# a typo on line 3\nic3ih5oc3kh3\n--dir=SIDEWAYS ic3ih5oc3kh3\n")
    (tmp_path / "outer").write_text("--reset\n--batch=inner\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as info:
        cases("--conv", "--batch=outer")
    # the innermost file's place, once (the including file adds nothing)
    assert str(info.value).startswith("inner:3: --dir=SIDEWAYS: unknown value `SIDEWAYS`")


def test_option_after_last_problem_is_reported():
    plan = harness.plan(["--conv", "ic3ih5oc3kh3", "--dir=FWD_I"])
    assert plan.warnings == ["conv driver: WARNING: No problem found for a given option!"]
    assert harness.plan(["--conv", "--dir=FWD_I", "ic3ih5oc3kh3"]).warnings == []


def test_self_including_batch_is_stopped(tmp_path: Path, monkeypatch):
    (tmp_path / "loop").write_text("--batch=loop\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="nest more than"):
        cases("--conv", "--batch=loop")


@pytest.mark.parametrize("args,fragment", [
    (["--conv", "--dri=FWD_B", "x"], "unknown option `--dri=FWD_B` for the conv driver; did you mean --dir"),
    (["--conv", "--dir=FWD_X", "x"], "--dir=FWD_X: unknown value `FWD_X`; expected one of FWD_B"),
    (["--conv", "--dt=f32:f32", "x"], "expects either a single input or three inputs"),
    (["--conv", "--dt=f31", "x"], "unknown data type `f31`"),
    (["--conv", "--mb=one", "x"], "--mb=one: expected an integer"),
    (["--conv", "--mode=Q", "x"], "--mode=Q: unknown value"),
    (["--conv", "--canonical=maybe", "x"], "expected true, false, 1 or 0"),
    (["--conv", "--match=(", "x"], "not a valid regular expression"),
    (["--conv", "--batch=does/not/exist"], "cannot open batch file `does/not/exist`"),
    (["--conv", "-x"], "`-x`: options take the `--` prefix"),
    (["--conv", "--dir"], "expected `--dir=VALUE`"),
    (["ic3ih5oc3kh3"], "expected a driver"),
    (["--matmul", "x"], "expected a driver first"),
    ([], "no driver given"),
    (["--conv", "--perf-template=%nope%", "x"], "field `%nope%` is not supported"),
    (["--conv", "--summary=all", "x"], "unknown item `all`"),
])
def test_usage_errors_name_the_token(args, fragment):
    with pytest.raises(UsageError) as err:
        harness.plan(args)
    assert fragment in str(err.value)


def test_max_ms_is_clamped_and_a_negative_fix_times_is_refused():
    plan = harness.plan(["--conv", "--max-ms-per-prb=1", "--fix-times-per-prb=0", "x"])
    assert plan.settings.max_ms_per_prb == 10.0
    assert plan.settings.fix_times_per_prb == 0
    with pytest.raises(UsageError, match="--fix-times-per-prb=-4: expected an integer >= 0"):
        harness.plan(["--conv", "--fix-times-per-prb=-4", "x"])
