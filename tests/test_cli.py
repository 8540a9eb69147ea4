"""End-to-end runs of the real command line: output lines, exit statuses, bad input."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, case_statuses, run_cli

from benchdnn_py.reports import results

SUMMARY_RE = re.compile(r"^tests:\d+ passed:\d+ skipped:\d+ mistrusted:\d+ unimplemented:\d+ "
                        r"invalid_arguments:\d+ failed:\d+ listed:\d+$")
TOTAL_RE = re.compile(r"^total: \d+\.\d\ds; create_pd: \d+\.\d\ds \(\d+%\); create_prim: "
                      r"\d+\.\d\ds \(\d+%\); fill: .*compare: \d+\.\d\ds \(\d+%\);$")


def check_invariant(res) -> None:
    s = res.summary()
    assert s["tests"] == s["passed"] + s["skipped"] + s["mistrusted"] + s["failed"] + s["listed"]


@pytest.mark.parametrize("module", [False, True])
def test_single_problem_passes_with_benchdnn_lines(module):
    res = run_cli("--conv", "mb1ic64ih56oc64kh3ph1", module=module)
    assert res.code == 0, res.out + res.err
    assert re.match(r"^0:PASSED \(\d+ ms\) __REPRO: --conv --impl=gemm_conv(_blocked)?:\w+:\w+ "
                    r"mb1ic64ih56oc64oh56kh3ph1$", res.lines[0])
    assert ("tests:1 passed:1 skipped:0 mistrusted:0 unimplemented:0 invalid_arguments:0 "
            "failed:0 listed:0") in res.lines
    assert TOTAL_RE.match(res.lines[-1])
    assert "= Implementation statistics (--summary=no-impl to disable) =" in res.lines


def test_depthwise_shorthand_prints_benchdnn_form():
    res = run_cli("--conv", "mb1ic64ih56oc64kh3ph1_dw")
    assert res.code == 0
    assert res.lines[0].endswith("__REPRO: --conv --impl=" + res.lines[0].split("--impl=")[1])
    assert res.lines[0].endswith(" g64mb1ic64ih56oc64oh56kh3ph1")


def test_repro_line_reruns_the_same_case():
    first = run_cli("--conv", "--dir=FWD_I", "--mb=3", "g2ic8ih9iw7oc4kh3kw2sw2ph1")
    repro = first.lines[0].split("__REPRO: ")[1].split()
    again = run_cli(*repro)
    assert again.code == 0
    assert again.lines[0].split("__REPRO: ")[1] == first.lines[0].split("__REPRO: ")[1]


def test_failures_are_listed_with_points_and_exit_1():
    res = run_cli("--conv", "ic8ih6oc8kh3ph1", "ic4ih5oc4kh1",
                  env={"BENCHDNN_PY_TEST_FAULT": "skip_last_ic"})
    assert res.code == 1
    start = res.lines.index("= Failed cases summary (--summary=no-failures to disable) =")
    failed = [l for l in res.lines[:start]
              if re.match(r"^\d+:FAILED \(errors:\d+ total:\d+\)", l)]
    assert len(failed) == 2
    points = [l for l in res.lines if re.match(r"^\[\s*\d+\]\[DST\]\[\d+:\d+:\d+:\d+\] exp_f32:", l)]
    assert 0 < len(points) <= 20
    assert any(l.startswith("[COMPARE_STATS][DST]: trh=0 ") for l in res.lines)
    assert res.lines[start + 2:start + 4] == failed
    assert "+fault:skip_last_ic" in failed[0]
    check_invariant(res)


def test_bad_descriptor_is_counted_and_the_batch_goes_on():
    res = run_cli("--conv", "ic16ih4oc16kh5", "ic16ih-4oc16kh3", "g3ic16ih5oc3kh3",
                  "ic3ih5oc3kh3")
    assert res.code == 1
    assert [l.split(" ")[0] for l in res.lines[:4]] == [
        "0:INVALID_ARGUMENTS", "1:INVALID_ARGUMENTS", "2:INVALID_ARGUMENTS", "3:PASSED"]
    assert "divisible by g3" in res.lines[2]
    errors = [l for l in res.err.splitlines() if l.startswith("ERROR:")]
    assert len(errors) == 2 and "ic16ih4oc16kh5" in errors[0] and "ih-4" in errors[1]
    s = res.summary()
    assert (s["invalid_arguments"], s["failed"], s["passed"]) == (3, 3, 1)


def test_a_bad_descriptor_repro_keeps_the_options_it_was_given():
    # the line must rerun the case: the options as typed (one item of each list, in the
    # driver's order), then the descriptor; the implementation filter selects, so it stays out as on every line
    res = run_cli("--conv", "--dir=BWD_D", "--dt=bf16,f32", "--impl=gemm", "--mb=2",
                  "--attr-post-ops=relu", "ic16ih-4oc16kh3")
    assert res.code == 1
    assert [l.split(" __REPRO: ")[1] for l in res.lines[:2]] == [
        "--conv --dir=BWD_D --dt=bf16 --attr-post-ops=relu --mb=2 ic16ih-4oc16kh3",
        "--conv --dir=BWD_D --dt=f32 --attr-post-ops=relu --mb=2 ic16ih-4oc16kh3"]
    rerun = run_cli(*res.lines[0].split(" __REPRO: ")[1].split())
    assert rerun.lines[0].split(" (")[0] == "0:INVALID_ARGUMENTS"
    assert rerun.lines[0].split(" __REPRO: ")[1] == res.lines[0].split(" __REPRO: ")[1]


@pytest.mark.parametrize("args,fragment", [
    (["--conv", "--dri=FWD_B", "ic3ih5oc3kh3"], "did you mean --dir"),
    (["--conv", "--dir=SIDEWAYS", "ic3ih5oc3kh3"], "unknown value `SIDEWAYS`"),
    (["--conv", "--batch=no/such/file"], "cannot open batch file `no/such/file`"),
    (["--conv", "-q"], "`-q`"),
    (["--nosuchdriver"], "expected a driver first"),
    # a negative count is no longer read as 0, and numbers are ASCII digits only
    (["--mode=P", "--fix-times-per-prb=-3", "--conv", "ic3ih5oc3kh3"],
     "--fix-times-per-prb=-3: expected an integer >= 0"),
    (["--conv", "--mb=\uff11", "ic3ih5oc3kh3"], "--mb=\uff11: expected an integer"),
    (["-j", "\uff12", "--conv", "ic3ih5oc3kh3"], "`-j \uff12`: expected -j N"),
    (["--conv", "--attr-post-ops=sum:\uff10.5", "ic3ih5oc3kh3"], "`\uff10.5` in `sum:\uff10.5`"),
    (["--conv", "--check=sampled:\uff15", "ic3ih5oc3kh3"], "sampled:\uff15"),
    # found by the fuzzing: an empty argument made a case whose repro could not rerun
    (["--graph", ""], "an empty argument (''): expected an option or a problem"),
])
def test_usage_errors_exit_2_with_one_line(args, fragment):
    res = run_cli(*args)
    assert res.code == 2
    assert res.out == ""
    err = res.err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0] and err[0].startswith("benchdnn-py: error:")


def test_trailing_option_warning_and_no_cases():
    res = run_cli("--conv", "--dir=FWD_I")
    assert res.code == 0
    assert "conv driver: WARNING: No problem found for a given option!" in res.err
    assert res.summary()["tests"] == 0


def test_unimplemented_types_and_invalid_directions_have_reasons():
    res = run_cli("--conv", "--dt=f16:f16:u8", "ic3ih5oc3kh3", "--dt=s8:f32:f32",
                  "ic3ih5oc3kh3", "--dt=f32", "--dir=BWD_DW", "ic3ih5oc3kh3")
    assert res.code == 1
    # benchdnn's known-unsupported list: skipped; outside the spec's table: unimplemented
    assert res.lines[0].startswith("0:SKIPPED (Case not supported)")
    assert res.lines[0].endswith("--conv --dt=f16:f16:u8 ic3ih5oc3oh3kh3ph0")
    assert res.lines[1].startswith("1:UNIMPLEMENTED (--dt=s8:f32:f32 on FWD_B: not a data-type")
    assert res.lines[2].startswith("2:INVALID_ARGUMENTS (BWD_DW is not a convolution direction)")


def test_every_row_of_the_data_type_table_runs_and_cfg_prints_as_dt():
    res = run_cli("--conv", "--cfg=u8s8u8,bf16bf16f32", "--attr-oscale=", "mb1ic8ih6oc8kh3ph1",
                  "--cfg=f32bf16bf16", "--dir=BWD_D", "mb1ic8ih6oc8kh3ph1",
                  "--cfg=bf16f32bf16", "--dir=BWD_WB", "mb1ic8ih6oc8kh3ph1")
    assert res.code == 0
    assert all(":PASSED " in l for l in res.lines[:4])
    assert "--dt=u8:s8:u8 " in res.lines[0] and "--dt=bf16:bf16:f32 " in res.lines[1]
    assert "--dir=BWD_D --dt=f32:bf16:bf16 " in res.lines[2]
    assert "--dir=BWD_WB --dt=bf16:f32:bf16 " in res.lines[3]
    assert not any("--cfg" in l for l in res.lines)


def test_impl_filter_exhausted_is_skipped_and_its_repro_names_the_filter():
    res = run_cli("--conv", "--impl=no_such_impl,nor_this", "ic3ih5oc3kh3", "--skip-impl=gemm,dw,"
                  "wino,f64,fused", "ic3ih5oc3kh3")
    assert res.code == 0
    first, second = (l for _, l in case_statuses(res))
    assert first.startswith("0:SKIPPED (Skip-impl option hit) (")
    # no implementation ran: the repro keeps the option that left them all out, and reruns
    # to the same verdict
    assert first.endswith("__REPRO: --conv --impl=no_such_impl,nor_this ic3ih5oc3oh3kh3ph0"), first
    assert second.endswith("__REPRO: --conv --skip-impl=gemm,dw,wino,f64,fused ic3ih5oc3oh3kh3ph0")
    for line in (first, second):
        again = run_cli(*line.split("__REPRO: ")[1].split())
        (status, rerun), = case_statuses(again)
        assert status == "SKIPPED" and rerun.split("__REPRO: ")[1] == line.split("__REPRO: ")[1]


def test_every_isa_variant_can_be_forced():
    res = run_cli("--conv", "--impl=scalar", "ic19ih10oc35kh3ph1", "g8ic8ih9oc8kh3ph1")
    assert res.code == 0
    assert "--impl=gemm_conv:scalar" in res.lines[0]
    assert "--impl=dw_conv_fwd:scalar" in res.lines[1]


def test_match_filters_on_the_repro_without_counting():
    res = run_cli("--conv", "--match=oc8", "ic3ih5oc3kh3", "ic8ih5oc8kh3", "--mb=0,1")
    assert res.summary()["tests"] == 1
    assert res.lines[0].startswith("0:PASSED")


def test_perf_mode_prints_a_perf_line_per_layer():
    res = run_cli("--conv", "--mode=P", "--mb=1", "--fix-times-per-prb=2",
                  "--batch=problems/shapes_resnet_50")
    assert res.code == 0
    perf = [l for l in res.lines if l.startswith("perf,cpu,")]
    assert len(perf) == 20
    assert res.lines[0] == ("Template entries: perf,%engine%,%impl%,%name%,%prb%,%Gops%,"
                            "%+ctime%,%-time%,%-Gflops%,%0time%,%0Gflops%")
    for line in perf:
        fields = line.split(",")
        assert fields[4].startswith("--mode=P --fix-times-per-prb=2 --conv mb1")
        assert float(fields[8]) > 0 and float(fields[10]) > 0          # GFLOPS
    assert not any(re.match(r"^\d+:", l) for l in res.lines)  # EXECUTED lines are silent
    assert any(l.startswith("total perf: min(ms):") for l in res.lines)
    assert res.lines[-1].startswith("total: ") and "compute_ref" not in res.lines[-1]


def test_cp_mode_checks_then_times():
    res = run_cli("--conv", "--mode=CP", "--fix-times-per-prb=3", "--perf-template=csv",
                  "ic16ih7oc16kh3ph1")
    assert res.code == 0
    assert res.lines[0].startswith("0:PASSED (") and "--mode=CP" in res.lines[0]
    header, line = res.lines[2], res.lines[3]
    assert header.startswith("perf,engine,impl,name,dir,sdt,bia_dt,stag,wtag,dtag,alg,attr,desc,")
    assert len(header.split(",")) == len(line.split(","))
    assert line.split(",")[4:7] == ["FWD_B", "f32:f32:f32", "f32"]


def test_list_mode_round_trips_every_problem_file():
    files = sorted(p for p in (ROOT / "problems").iterdir() if p.is_file())
    assert len(files) >= 8
    by_driver = {}
    for path in files:
        driver = next((d for d in ("eltwise", "pool", "softmax", "ip", "bnorm")
                       if path.name.startswith(f"shapes_{d}")), "conv")
        by_driver.setdefault(driver, []).append(path)
    for driver, paths in by_driver.items():   # one run per driver: each file in turn
        res = run_cli(f"--{driver}", "--mode=L", *[f"--batch={p}" for p in paths])
        assert res.code == 0
        descs = [l.split(f"--{driver} ")[1] for l in res.lines if ":LISTED " in l]
        counts = [sum(1 for l in p.read_text().splitlines()
                      if l.strip() and not l.startswith("#")) for p in paths]
        assert len(descs) == sum(counts), driver
        again = run_cli(f"--{driver}", "--mode=L", *[a for d in descs for a in d.split()])
        assert [l.split(f"--{driver} ")[1] for l in again.lines if ":LISTED " in l] == descs


def test_canonical_repro():
    res = run_cli("--conv", "--mode=L", "--canonical=true", "ic16ih7oc16kh3")
    assert res.lines[0] == ("0:LISTED (0 ms) __REPRO: --mode=L --canonical=true --conv "
                            "g1mb2ic16ih7iw7oc16oh5ow5kh3kw3sh1sw1ph0pw0dh0dw0")


def test_summary_switches():
    res = run_cli("--conv", "--summary=no-impl", "ic3ih5oc3kh3")
    assert not any("Implementation statistics" in l for l in res.lines)
    res = run_cli("--conv", "--summary=impl-csv", "ic3ih5oc3kh3")
    assert any(re.match(r"^benchdnn_summary,impl_names,gemm_conv(_blocked)?:\w+:\w+:1$", l)
               for l in res.lines)


def test_verbose_levels():
    res = run_cli("--conv", "-v6", "ic3ih5oc3kh3")
    assert any(l.startswith("run: --conv ic3ih5oc3oh3kh3ph0") for l in res.lines)
    assert any(l.startswith("implementation: ") for l in res.lines)
    assert any(l.startswith("[COMPARE_STATS][DST]: trh=0") for l in res.lines)


def test_help_and_info():
    res = run_cli("--conv", "--help")
    assert res.code == 0 and "--dir=" in res.out and "exit status" in res.out
    res = run_cli("info")
    assert res.code == 0 and "gemm_conv:scalar" in res.out and "threads:" in res.out
    for table in ("conv, deconv and ip", "eltwise", "pool", "reorder", "softmax", "sum",
                  "concat", "binary", "bnorm"):
        assert f"{table} implementations (in order of preference):" in res.out
    assert "reorder:scalar" in res.out and "pool:scalar" in res.out
    # The measured limits, each a positive rate (or "no vector route" without one).
    limits = [l for l in res.lines if l.startswith(("  f32 FMA", "  memory copy"))]
    assert len(limits) == 2 and all(float(l.split()[2]) > 0 for l in limits), limits
    # The core-to-core round trip, a positive time where the process has two threads to pass
    # a line (its own count, printed above: the CLI's may differ from this process's).
    threads = int(next(l for l in res.lines if l.startswith("threads: ")).split()[1])
    trips = [l for l in res.lines if l.startswith("  core to core")]
    assert len(trips) == (1 if threads > 1 else 0), res.out
    assert all(float(l.split()[3]) > 0 and l.split()[4] == "ns" for l in trips), trips


def test_empty_minibatch_and_memory_guard():
    res = run_cli("--conv", "mb0ic3ih5oc3kh3", "ic1000000ih100000oc1000000kh3")
    assert res.code == 0
    assert res.lines[0].startswith("0:PASSED (")
    assert res.lines[1].startswith("1:SKIPPED (Not enough RAM) (")


def test_every_direction_passes_and_prints_its_repro():
    res = run_cli("--conv", "--dir=FWD_B,FWD_D,FWD_I,BWD_D,BWD_W,BWD_WB",
                  "g2mb3ic8ih9iw7oc6kh3kw2sh2sw3ph1pw0dh1")
    assert res.code == 0, res.out
    suffixes = ["--conv --impl=gemm_conv:", "--dir=FWD_D ", "--dir=FWD_I ", "--dir=BWD_D ",
                "--dir=BWD_W ", "--dir=BWD_WB "]
    for line, part in zip(res.lines[:6], suffixes):
        assert line.split(" (")[0].endswith("PASSED") and part in line


def test_deconv_driver_end_to_end():
    res = run_cli("--deconv", "--dir=FWD_B,BWD_D,BWD_WB", "ic16ih4oc16kh3sh2", "ic2ih0oc2kh3")
    assert res.code == 1
    # forward: the backward-data kernels at a stride, where `any` takes channels last
    assert re.match(r"^0:PASSED \(\d+ ms\) __REPRO: --deconv --impl=gemm_conv(_nhwc)?:\w+:\w+ "
                    r"ic16ih4oc16oh9kh3sh2ph0$", res.lines[0])
    assert "--deconv --impl=" in res.lines[1] and "--dir=BWD_D ic16ih4" in res.lines[1]
    assert res.lines[3].startswith("3:INVALID_ARGUMENTS")
    assert "`ih` in `ic2ih0oc2kh3`" in res.err


def test_deconv_output_of_zero_or_less_is_invalid():
    res = run_cli("--deconv", "ic4ih3oc4kh3ph3")       # o = 2 + 2 - 6 + 1 < 1
    assert res.code == 1
    assert res.lines[0].startswith("0:INVALID_ARGUMENTS")
    assert "give oh=" in res.err


# ---- --check=sampled -----------------------------------------------------------------------

def test_sampled_check_end_to_end(tmp_path):
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", "-v2", f"--results={out}", "--check=sampled:500",
                  "--dir=FWD_B,BWD_WB", "mb2ic32ih28oc32kh3ph1", "--check=full", "ic4ih5oc4kh3")
    assert res.code == 0, res.out + res.err
    results_lines = [l for l in res.lines if re.match(r"^\d+:PASSED ", l)]
    # a global option: before the driver in the repro line
    assert re.match(r"^0:PASSED \(\d+ ms\) __REPRO: --check=sampled:500 --conv --impl=\S+ "
                    r"ic32ih28oc32oh28kh3ph1$", results_lines[0])
    assert results_lines[1].split("__REPRO: ")[1].startswith("--check=sampled:500 --conv ")
    assert len(results_lines) == 4 and not any("--check" in l for l in results_lines[2:])
    # -v2 says what a sampled pass checked, and only for sampled cases; backward weights:
    # 500 of the 9216 weights, and all 32 biases (fewer than N).
    assert [l for l in res.lines if l.startswith("[COMPARE_SAMPLED]")] == [
        "[COMPARE_SAMPLED][DST]: checked 500 of 50176 points (--check=sampled)",
        "[COMPARE_SAMPLED][WEI]: checked 500 of 9216 points (--check=sampled)",
        "[COMPARE_SAMPLED][BIA]: checked 32 of 32 points (--check=sampled)"]
    records = results.read(str(out)).cases
    assert [(c["total"], c["output_points"]) for c in records] == [
        (500, 50176), (532, 9248), (72, 72), (148, 148)]
    # the key names the case, whatever checked it: a sampled run compares with a full one
    assert "--check" not in records[0]["key"] and "--check" not in records[2]["key"]
    assert records[0]["repro"].startswith("--check=sampled:500 --conv ")


def test_sampled_check_outlives_a_batch_files_reset(tmp_path):
    """benchdnn's files start with --reset: the command line's --check holds through it,
    as --mode does, until another --check."""
    (tmp_path / "b").write_text("--reset --dir=FWD_B\nmb2ic32ih28oc32kh3ph1\n"
                                "--reset --check=full\nic4ih5oc4kh3\n")
    res = run_cli("--conv", "--check=sampled:500", f"--batch={tmp_path / 'b'}")
    assert res.code == 0, res.out + res.err
    repros = [l.split("__REPRO: ")[1] for l in res.lines if re.match(r"^\d+:PASSED ", l)]
    assert repros[0].startswith("--check=sampled:500 --conv ") and "--check" not in repros[1]


def test_sampled_check_on_a_driver_without_it_exits_2():
    res = run_cli("--pool", "--check=sampled", "mb1ic3ih4kh2")
    assert res.code == 2 and res.out == ""
    assert res.err.strip().splitlines() == [
        "benchdnn-py: error: --check=sampled: the pool driver checks every output point "
        "(--conv and --deconv sample)"]


def test_sampled_check_draws_the_same_points_on_every_run():
    """A defect on the right edge fails the drawn edge points: the same ones in another
    process (another PYTHONHASHSEED), and when the repro line is rerun."""
    args = ("--conv", "-v10", "--check=sampled:40", "ic4ih12oc4kh3ph1")
    fault = {"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"}
    first = run_cli(*args, env={**fault, "PYTHONHASHSEED": "1"})
    second = run_cli(*args, env={**fault, "PYTHONHASHSEED": "2"})
    points = [l for l in first.lines if re.match(r"^\[\s*\d+\]\[DST\]", l)]
    assert first.code == 1 and 0 < len(points) < 40
    assert points == [l for l in second.lines if re.match(r"^\[\s*\d+\]\[DST\]", l)]
    repro = next(l for l in first.lines if l.startswith("0:FAILED")).split("__REPRO: ")[1]
    # (without --impl=: the fault's suffix on the implementation name matches no filter)
    rerun = run_cli("-v10", *[a for a in repro.split() if not a.startswith("--impl=")],
                    env=fault)
    assert points == [l for l in rerun.lines if re.match(r"^\[\s*\d+\]\[DST\]", l)]


@pytest.mark.parametrize("value", ["foo", "sampled:0", "sampled:x", "full:3", "sampled:-1"])
def test_bad_check_values_exit_2_with_one_line(value):
    res = run_cli("--conv", f"--check={value}", "ic3ih5oc3kh3")
    assert res.code == 2 and res.out == ""
    err = res.err.strip().splitlines()
    assert err == [f"benchdnn-py: error: --check={value}: expected full, sampled or sampled:N "
                   "with N a positive number of points (e.g. --check=sampled:1000)"]


def test_sampled_check_catches_kernel_defects_in_every_direction():
    for drv, desc in (("conv", "mb2ic16ih14oc16kh3ph1"), ("deconv", "mb2ic16ih7oc16kh3sh2")):
        res = run_cli(f"--{drv}", "--check=sampled:200", "--dir=FWD_B,BWD_D,BWD_WB", desc,
                      env={"BENCHDNN_PY_TEST_FAULT": "skip_last_tap"})
        assert res.code == 1
        assert res.summary()["failed"] == 3, res.out
        assert all("total:200)" in l or "total:216)" in l
                   for l in res.lines if re.match(r"^\d+:FAILED", l))


def test_memory_formats_end_to_end_with_repro_layouts_and_perf_fields():
    res = run_cli("--conv", "--mode=CP", "--fix-times-per-prb=2", "--perf-template=csv",
                  "-v5", "--stag=nhwc,any", "--wtag=OIhw16i16o", "--dtag=nChw16c",
                  "mb2ic20ih6oc18kh3ph1")
    assert res.code == 0, res.out + res.err
    shown = [l for l in res.lines if l.startswith("implementation: ")]
    assert re.search(r"\+reorder \(threads=\d+, scratchpad \d+ bytes \(library\)\); src nhwc=acdb wei OIhw16i16o=ABcd16b16a "
                     r"padded 32x32x3x3 dst nChw16c=aBcd16b padded 2x32x6x6$", shown[0])
    # dst asks for the block forward: the blocked rows first, src `any` resolved to it
    assert shown[1].startswith("implementation: gemm_conv_blocked:")
    assert " src any=aBcd16b padded " in shown[1]
    case = next(l for l in res.lines if l.startswith("0:PASSED"))
    assert case.endswith("+reorder --stag=nhwc --wtag=OIhw16i16o --dtag=nChw16c "
                         "ic20ih6oc18oh6kh3ph1")
    # the perf fields name the layouts the case ran on, `any` as the one it resolved to
    perf = [l.split(",") for l in res.lines if l.startswith("perf,cpu,")]
    assert [p[7:10] for p in perf] == [["nhwc", "OIhw16i16o", "nChw16c"],
                                       ["aBcd16b", "OIhw16i16o", "nChw16c"]]
    # the repro line, --impl included, runs the case again
    again = run_cli(*case.split(" __REPRO: ")[1].split())
    assert again.code == 0 and again.lines[0].startswith("0:PASSED"), again.out


def test_memory_format_errors_are_one_line_each():
    bad = run_cli("--conv", "--stag=nchw16c", "ic3ih5oc3kh3")
    assert bad.code == 2 and not bad.out
    assert bad.err.strip().count("\n") == 0
    assert "--stag=nchw16c: unknown or invalid tag `nchw16c`" in bad.err
    # a tag that does not fit one problem's rank is that case's error; the batch goes on
    res = run_cli("--conv", "--wtag=OIhw16i16o", "g2ic4ih5oc4kh3", "ic4ih5oc4kh3")
    assert res.code == 1
    assert res.err.strip().splitlines() == [
        "ERROR: --wtag=OIhw16i16o: tag `OIhw16i16o` is for 4 dims, the problem has 5 "
        "(weights with groups: g, oc/g, ic/g, spatial) (command line)"]
    assert res.lines[0].startswith("0:INVALID_ARGUMENTS")
    assert res.lines[1].startswith("1:PASSED")


@pytest.mark.parametrize("isa,row", [("avx2", "gemm_conv_blocked:avx2:direct"),
                                     ("scalar", "gemm_conv:scalar:shift")])
def test_isa_caps_every_row_and_the_repro_line_keeps_it(isa, row):
    from benchdnn_py import core
    if not core.isa_supported(core.Isa[isa.upper()]):
        pytest.skip(f"the CPU has no {isa}")
    res = run_cli(f"--isa={isa}", "--conv", "-j", "2", "--dir=FWD_B,BWD_D",
                  "mb1ic32ih14oc32kh3ph1", "--dir=FWD_B", "--dt=u8:s8:u8", "ic16ih8oc16kh3ph1")
    assert res.code == 0, res.err
    lines = [l for l in res.lines if re.match(r"^\d+:PASSED", l)]
    assert len(lines) == 3
    impls = [re.search(r"--impl=(\S+)", l).group(1) for l in lines]
    assert impls[0] == row
    assert all(i.split(":")[1] == isa for i in impls), impls   # family:isa[:route]
    # the printed line reruns the case under the same cap
    again = run_cli(*lines[2].split("__REPRO: ")[1].split())
    assert again.code == 0 and again.lines[0].startswith("0:PASSED")
    assert f"--isa={isa} " in again.lines[0]


def test_an_unknown_isa_is_one_line_and_exit_2():
    res = run_cli("--isa=sse4", "--conv", "ic16ih8oc16kh3ph1")
    assert res.code == 2
    assert res.err.strip().splitlines() == [
        "benchdnn-py: error: --isa=sse4: unknown instruction set; expected one of scalar, "
        "avx2, avx512, avx512_vnni, avx512_bf16, avx512_amx"]


def test_a_full_width_digit_in_a_descriptor_is_no_digit():
    """`ic４` (U+FF14) is a bad descriptor naming the token, not ic4."""
    res = run_cli("--conv", "ic\uff14ih8oc8kh3")
    assert res.code == 1
    assert "0:INVALID_ARGUMENTS" in res.out
    assert "no value found for `ic` in `ic\uff14ih8oc8kh3`" in res.err


@pytest.mark.parametrize("args,warning", [
    (["--impl=nonexistent", "ic8ih8oc8kh3"],
     "--impl name `nonexistent` is part of no implementation that ran"),
    (["--impl=gemm_conv,nonexistent", "ic8ih8oc8kh3"],
     "--impl name `nonexistent` is part of no implementation that ran"),
    (["--match=no-such-case", "ic8ih8oc8kh3"],
     "the run selected no case: --match or --shard left every case out"),
    (["--batch={empty}"], "the run selected no case: no problem was given"),
    (["--skip-impl=gemm_conv_blokced", "ic8ih8oc8kh3"],
     "--skip-impl name `gemm_conv_blokced` is part of no implementation name (it skips "
     "nothing)"),
])
def test_a_run_that_selects_nothing_says_so_and_exits_0(tmp_path, args, warning):
    empty = tmp_path / "empty_batch"
    empty.write_text("# nothing\n")
    res = run_cli("--conv", *(a.format(empty=empty) for a in args))
    assert res.code == 0
    assert f"benchdnn-py: warning: {warning}" in res.err


@pytest.mark.parametrize("impl", ["--impl=gemm_conv", "--skip-impl=gemm_conv:avx512:shift",
                                  "--skip-impl=torch:2", "--skip-impl=+reorder"])
def test_a_run_that_selects_cases_warns_of_nothing(impl):
    res = run_cli("--conv", impl, "ic8ih8oc8kh3")
    assert res.code == 0 and "warning" not in res.err


def test_files_lists_every_shipped_file_with_its_summary():
    r = run_cli("files")
    assert r.code == 0
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in r.lines}
    on_disk = {p.relative_to(ROOT).as_posix() for kind in ("problems", "batches")
               for p in (ROOT / kind).rglob("*") if p.is_file()}
    assert set(rows) == on_disk
    assert rows["problems/shapes_resnet_50"].startswith("ResNet-50")
    assert f"({len(on_disk)} files in " in r.err


def test_a_graph_path_with_a_space_is_quoted_in_its_repro(tmp_path):
    case = tmp_path / "my cases" / "conv.json"
    case.parent.mkdir()
    case.write_text((ROOT / "problems/graph/conv_1d.json").read_text())
    r = run_cli("--graph", "--mode=L", str(case))
    repro = next(l for l in r.lines if " __REPRO: " in l).split(" __REPRO: ")[1]
    assert repro.endswith(f"--graph --case='{case}'")
    assert run_cli(*shlex.split(repro)).summary()["listed"] == 1


def test_shipped_files_run_from_any_directory(tmp_path):
    r = run_cli("--conv", "--mode=L", "--batch=problems/shapes_mobilenet_v1", cwd=tmp_path)
    listed = sum(1 for line in (ROOT / "problems/shapes_mobilenet_v1").read_text().splitlines()
                 if line.strip() and not line.startswith("#"))
    assert r.code == 0 and r.summary()["listed"] == listed > 0
    r = run_cli("--graph", "--mode=L", "--case=conv_1d.json", cwd=tmp_path)
    assert r.code == 0 and r.summary()["listed"] == 1


def test_color_always_colours_standard_error_even_into_a_pipe():
    sgr = re.compile(r"\x1b\[[0-9;]*m")
    r = run_cli("--color=always", "--conv", "ic3ih5oc3kh3")
    assert r.code == 0 and sgr.search(r.err) and "Cases by status" in r.err
    assert not sgr.search(r.out)             # machine output stays plain
    assert not sgr.search(run_cli("--conv", "ic3ih5oc3kh3").err)
    r = run_cli("--color=sometimes", "--conv", "ic3ih5oc3kh3")
    assert r.code == 2 and "--color=sometimes: unknown value `sometimes`; expected one of " \
        "auto, always, never" in r.err


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_cli_starts_numpy_without_blas_threads():
    """numpy's OpenBLAS starts its threads at import, and they spin after each call,
    taking cores from the kernels' team while a case is timed: the CLI module sets their
    count to 1 before anything imports numpy (a user's own setting stays)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    probe = "import benchdnn_py.cli, os; print(len(os.listdir('/proc/self/task')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == "1", out
