"""Results files: what a run writes (--results), that a killed run keeps its finished
cases, and the one reader (plain, .gz, standard input, and every kind of bad file)."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import signal
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli

from benchdnn_py.reports import results
from benchdnn_py.reports.results import ResultsError, read

DATA = ROOT / "tests" / "data" / "results"


def test_a_perf_run_writes_header_cases_and_footer(tmp_path):
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=4", f"--results={out}",
                  "--dir=FWD_B,BWD_D", "mb1ic8ih6oc8kh3ph1", "g8mb1ic8ih6oc8kh3ph1")
    assert res.code == 0, res.err
    f = read(str(out))
    h = f.header
    assert (h["schema"], h["version"], h["backend"], h["driver"]) == \
        ("benchdnn-py-results", results.SCHEMA_VERSION, "native", "conv")
    assert h["argv"][-1] == "g8mb1ic8ih6oc8kh3ph1" and h["command"].startswith("benchdnn-py --conv")
    env = h["environment"]
    assert env["cpu"]["model"] and env["isa"]["usable"][0] == "scalar"
    assert env["threads"]["max"] >= 1 and env["core"]["compiler"].startswith(("cc", "gcc", "clang"))
    assert env["core"]["flags"].startswith("-O3")
    assert env["packages"]["numpy"] and env["packages"]["cffi"] and env["python"]["version"]
    assert env["git"] is None or re.fullmatch(r"[0-9a-f]{40}", env["git"]["commit"])
    assert re.match(r"\d{4}-\d\d-\d\dT", h["started"])
    assert f.footer["counts"]["tests"] == 4 and f.complete and not f.warnings
    assert [c["idx"] for c in f.cases] == [0, 1, 2, 3]
    perf_lines = [l for l in res.lines if l.startswith("perf,cpu,")]
    for case, line in zip(f.cases, perf_lines):
        assert case["status"] == "EXECUTED" and case["driver"] == "conv"
        assert len(case["samples_ms"]) == 4
        assert case["min_ms"] == min(case["samples_ms"])
        assert case["median_ms"] == pytest.approx(sorted(case["samples_ms"])[1:3][0] / 2
                                                  + sorted(case["samples_ms"])[2] / 2)
        assert case["avg_ms"] == pytest.approx(sum(case["samples_ms"]) / 4)
        assert case["gflops"] == pytest.approx(case["ops"] / case["min_ms"] / 1e6)
        assert case["impl"] == line.split(",")[2]          # the implementation used
        assert case["settings"]["global"]["fix_times_per_prb"] == 4
        assert case["repro"] == "--mode=P --fix-times-per-prb=4 " + case["key"]
        # a perf-only case creates and executes, never references or compares
        service = case["service_ms"]
        assert service["execute"] > 0 and service["create_prim"] > 0
        assert service["compute_ref"] == service["compare"] == 0
        assert sum(service.values()) <= case["wall_ms"]
    assert f.cases[1]["key"] == "--conv --dir=BWD_D mb1ic8ih6oc8oh6kh3ph1"
    assert f.cases[1]["settings"]["driver"]["dir"] == "BWD_D"


def test_perf_cases_record_the_guard_probes_and_the_run_counts_them(tmp_path):
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=3", f"--results={out}",
                  "--dir=FWD_B,BWD_W", "mb1ic8ih6oc8kh3ph1", "mb2ic16ih12oc16kh3ph1")
    assert res.code == 0, res.err
    f = read(str(out))
    assert f.header["run"]["perf_guard"] is True
    checks = [c["machine"] for c in f.cases]
    assert len(checks) == 4
    for check in checks:
        assert 0 < check["share"] < 1.3 and 0 < check["cache"] <= 1.0
        assert 1 <= check["attempts"] <= 3
    retimed = sum(c["attempts"] > 1 for c in checks)
    degraded = sum(c["share"] < 0.85 or c["cache"] < 0.9 for c in checks)
    assert f"perf guard: cases:4 retimed:{retimed} degraded:{degraded}" in res.lines
    # a degraded case says so before its perf line, and its record keeps the line
    for case in f.cases:
        flagged = [d for d in case["diagnostics"] if d.startswith("perf guard:")]
        check = case["machine"]
        assert bool(flagged) == (check["share"] < 0.85 or check["cache"] < 0.9)

    off = tmp_path / "off.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=3", "--perf-guard=false",
                  f"--results={off}", "mb1ic8ih6oc8kh3ph1")
    assert res.code == 0, res.err
    f = read(str(off))
    assert f.header["run"]["perf_guard"] is False
    assert f.cases[0]["machine"] is None and len(f.cases[0]["samples_ms"]) == 3
    assert not any(l.startswith("perf guard:") for l in res.lines)
    # a correctness run times nothing, so nothing is guarded
    res = run_cli("--conv", "mb1ic8ih6oc8kh3ph1")
    assert res.code == 0 and not any(l.startswith("perf guard:") for l in res.lines)


def test_cases_record_their_bytes_and_memory_bound_ones_the_copy_bandwidth(tmp_path):
    """bytes: what each run reads and writes (src, weights, bias, dst in f32, plain
    layouts); a depthwise convolution, bound by memory, also records the copy bandwidth
    its process measured (perf-table reads its GB/s against it), a dense one does not."""
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=2", f"--results={out}",
                  "--stag=abx", "--wtag=abx", "--dtag=abx", "--dir=FWD_B",
                  "mb1ic8ih6oc8kh3ph1", "g8mb1ic8ih6oc8kh3ph1")
    assert res.code == 0, res.err
    dense, depthwise = read(str(out)).cases
    assert dense["bytes"] == 4 * (8 * 36 + 8 * 8 * 9 + 8 + 8 * 36)
    assert depthwise["bytes"] == 4 * (8 * 36 + 8 * 9 + 8 + 8 * 36)
    assert dense["copy_g_per_s"] is None
    assert depthwise["copy_g_per_s"] > 0
    assert depthwise["limit"] == "f32"       # %eff% still against the FMA peak


def test_the_key_has_the_impl_filter_but_not_the_chosen_impl_nor_global_options(tmp_path):
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", "--canonical=true", f"--results={out}", "ic4ih5oc4kh3",
                  "--impl=scalar", "ic4ih5oc4kh3", "--skip-impl=avx512,avx2", "ic4ih5oc4kh3")
    assert res.code == 0
    keys = [c["key"] for c in read(str(out)).cases]
    assert keys == ["--conv ic4ih5oc4oh3kh3ph0", "--conv --impl=scalar ic4ih5oc4oh3kh3ph0",
                    "--conv --skip-impl=avx512,avx2 ic4ih5oc4oh3kh3ph0"]
    cases = read(str(out)).cases
    assert cases[1]["impl"] == "gemm_conv:scalar:gather"
    assert cases[0]["status"] == "PASSED" and cases[0]["samples_ms"] == []
    assert cases[0]["min_ms"] is None and cases[0]["gflops"] is None
    # The record's repro reruns the same case: same key, whatever ran it.
    again = tmp_path / "again.jsonl"
    run_cli(*cases[2]["repro"].split(), f"--results={again}")
    assert [c["key"] for c in read(str(again)).cases] == [keys[2]]


def test_invalid_cases_are_recorded_with_their_status(tmp_path):
    out = tmp_path / "run.jsonl"
    res = run_cli("--conv", f"--results={out}", "ic3ih-5oc3kh3", "g3ic16ih5oc3kh3")
    assert res.code == 1
    cases = read(str(out)).cases
    assert [c["status"] for c in cases] == ["INVALID_ARGUMENTS", "INVALID_ARGUMENTS"]
    assert cases[0]["key"] == "--conv ic3ih-5oc3kh3"
    assert "divisible by g3" in cases[1]["reason"]


def test_gzip_results_round_trip(tmp_path):
    out = tmp_path / "run.jsonl.gz"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=2", f"--results={out}",
                  "ic4ih5oc4kh3")
    assert res.code == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    f = read(str(out))
    assert len(f.cases) == 1 and len(f.cases[0]["samples_ms"]) == 2 and f.complete


@pytest.mark.parametrize("name", ["run.jsonl", "run.jsonl.gz"])
def test_a_killed_run_keeps_every_finished_case(tmp_path, name):
    """Kill -9 in the middle of a batch: every case printed before the last one has its
    record, and the reader returns them (no footer: a warning, not an error)."""
    out = tmp_path / name
    env = {k: v for k, v in os.environ.items() if k != "BENCHDNN_PY_TEST_FAULT"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchdnn_py", "--conv", f"--results={out}",
         "--dir=FWD_B,BWD_D,BWD_WB", "--mb=0,1,4", "--batch=problems/shapes_basic"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    printed = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if re.match(r"^\d+:", line):
            printed.append(line.split("__REPRO: ")[1].strip())
        if len(printed) == 8:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    f = read(str(out))
    assert f.footer is None and any("did not finish" in w for w in f.warnings)
    # The record follows its line, so the 8th line's may not be written yet.
    assert len(f.cases) >= 7
    for record, line in zip(f.cases, printed):
        assert line.endswith(record["key"].split(" ", 1)[1])


def test_stdin_plain_and_gzip(monkeypatch):
    for name in ("marks_new.jsonl", "marks_new.jsonl.gz"):
        data = (DATA / name).read_bytes()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        f = read("-")
        assert f.path == "<stdin>" and len(f.cases) == 13 and f.complete


def _write(tmp_path, text: str | bytes, name: str = "f.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


HEADER = json.dumps({"type": "header", "schema": "benchdnn-py-results", "version": 1})
CASE = json.dumps({"type": "case", "key": "--conv ic1ih1oc1kh1", "samples_ms": [1.0]})


@pytest.mark.parametrize("text,message", [
    ("", "empty, not a results file"),
    ("not json\n", ":1: not a JSON record (Expecting value at column 1: `not json`)"),
    ('{"type": "case"}\n', ":1: not a benchdnn-py results file"),
    (HEADER.replace('"version": 1', '"version": 99') + "\n",
     "schema version 99 was written by a newer benchdnn-py; this one reads versions up to 1"),
    (HEADER + "\n" + "[1, 2]\n", ":2: expected a JSON object"),
    (HEADER + "\n{bad\n" + CASE + "\n", ":2: not a JSON record"),
    (HEADER + "\n" + HEADER + "\n", ":2: a second header"),
    (HEADER + '\n{"type": "case", "samples_ms": []}\n', ":2: case record without a `key`"),
    (HEADER + "\n" + CASE[:-1] + ', "status": ""}\n',
     ':2: `status` must be a case status (PASSED, MISTRUSTED, FAILED, '),
    (b"\x1f\x8b\x08\x00garbage", "gzip data without a complete record"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 20, "corrupt gzip data"),
    (b"\xff\xfe\x00", "not UTF-8 text"),
])
def test_bad_files_are_one_line_errors_naming_the_place(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ResultsError) as err:
        read(path)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ResultsError, match="cannot read: No such file"):
        read(str(tmp_path / "nope.jsonl"))
    with pytest.raises(ResultsError, match="is a directory"):
        read(str(tmp_path))


def test_cut_last_line_is_dropped_with_a_warning_and_unknown_records_skipped(tmp_path):
    path = _write(tmp_path, HEADER + "\n" + CASE + '\n{"type": "note"}\n' + CASE[:20])
    f = read(path)
    assert len(f.cases) == 1
    assert any("last record is cut off" in w for w in f.warnings)
    assert any("no footer record" in w for w in f.warnings)


def test_a_truncated_gzip_stream_yields_its_flushed_records(tmp_path):
    data = gzip.compress((HEADER + "\n" + CASE + "\n").encode())
    f = read(_write(tmp_path, data[:-8], "cut.jsonl.gz"))     # no gzip trailer
    assert len(f.cases) == 1 and any("gzip stream ends early" in w for w in f.warnings)


@pytest.mark.parametrize("value,fragment", [
    ("-", "--results=-: standard output carries the result lines"),
    ("/no/such/dir/run.jsonl", "--results=/no/such/dir/run.jsonl: cannot write: No such file"),
])
def test_unwritable_results_is_a_usage_error(value, fragment):
    res = run_cli("--conv", f"--results={value}", "ic4ih5oc4kh3")
    assert res.code == 2 and res.out == ""
    err = res.err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]
