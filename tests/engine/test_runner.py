"""Stopping and resuming: Ctrl-C (or SIGTERM) keeps a partial summary and whole files
(exit 130), a run killed mid-way leaves no worker behind, and, resumed, ends with the
summary of an uninterrupted run."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest
from conftest import ROOT, Result, cli_threads, run_cli

from benchdnn_py.engine import runner
from benchdnn_py.engine.progress import NoBar
from benchdnn_py.reports.results import read
from benchdnn_py.reports.text import RunSummary
from benchdnn_py.status import Status

# 20 ResNet-50 layers at mb1, about 0.3 s each; right_pad_edge fails the padded ones, so
# the summary has passes and failures to get right.
BATCH = ("--mb=1", "--batch=problems/shapes_resnet_50")
FAULT = {"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"}


def _default_sigint() -> None:
    # A test run started in the background of a non-interactive shell (`cmd &`, nohup)
    # ignores SIGINT, and an ignored SIGINT is inherited: Python would then install no
    # KeyboardInterrupt handler and the run would go on to its end, as it should for a
    # user who launched it so. The run under test gets a terminal's default instead.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR")}
    return subprocess.Popen([sys.executable, "-m", "benchdnn_py", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, **FAULT}, cwd=ROOT, preexec_fn=_default_sigint)


def wait_for_cases(path, n: int, proc: subprocess.Popen, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and sum('"type":"case"' in l for l in path.read_text()
                                 .splitlines()) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    pytest.fail(f"{path}: fewer than {n} cases after {limit_s} s")


def children(pid: int) -> list[int]:
    """The processes whose parent is pid (Linux /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def gone(pids: list[int], limit_s: float = 10) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{p}") and "Z" not in _state(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def finish(proc: subprocess.Popen) -> Result:
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    return Result(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))


@pytest.fixture(scope="module")
def uninterrupted():
    res = run_cli("--conv", *BATCH, env=FAULT)
    assert res.code == 1 and 0 < res.summary()["failed"] < res.summary()["tests"]
    return res


def failed_block(res: Result) -> list[str]:
    start_ = res.lines.index("= Failed cases summary (--summary=no-failures to disable) =")
    return [l.split(" __REPRO: ")[1] for l in res.lines[start_ + 2:]
            if " __REPRO: " in l]


@pytest.mark.parametrize("jobs", [[], ["-j", "2"]])
def test_killed_then_resumed_ends_as_an_uninterrupted_run(tmp_path, uninterrupted, jobs):
    results = tmp_path / "run.jsonl"
    xml = tmp_path / "run.xml"
    proc = start("--conv", *jobs, f"--results={results}", f"--junit={xml}", *BATCH)
    wait_for_cases(results, 5, proc)
    workers = children(proc.pid)
    proc.send_signal(signal.SIGKILL)      # no handler, no footer: the hardest stop
    proc.wait()
    assert gone(workers), "worker processes outlived the killed run"
    killed = read(str(results))
    assert killed.footer is None and 5 <= len(killed.cases) < 20
    ET.parse(xml)                          # still a valid JUnit file

    resumed = run_cli("--conv", *jobs, f"--resume={results}", f"--junit={xml}", *BATCH,
                      env=FAULT)
    assert resumed.code == uninterrupted.code
    assert resumed.summary() == uninterrupted.summary()
    assert failed_block(resumed) == failed_block(uninterrupted)
    assert f"cases already done; running {20 - len(killed.cases)}" in resumed.err
    # Only the cases that had not run print a result line.
    printed = [l for l in resumed.lines[:resumed.lines.index(next(
        l for l in resumed.lines if l.startswith("=")))] if l[0].isdigit()]
    assert len(printed) == 20 - len(killed.cases)
    done = read(str(results))
    assert done.complete and done.footer["counts"] == uninterrupted.summary()
    assert sorted(r["idx"] for r in done.cases) == list(range(20))
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite.get("tests") == "20"
    assert int(suite.get("failures")) == uninterrupted.summary()["failed"]


@pytest.mark.parametrize("jobs,sig", [([], signal.SIGINT), (["-j", "2"], signal.SIGINT),
                                      (["-j", "2"], signal.SIGTERM)])
def test_ctrl_c_prints_the_partial_summary_keeps_the_files_and_exits_130(tmp_path, jobs, sig):
    results = tmp_path / "run.jsonl"
    xml = tmp_path / "run.xml"
    proc = start("--conv", *jobs, f"--results={results}", f"--junit={xml}", *BATCH)
    wait_for_cases(results, 3, proc)
    workers = children(proc.pid)
    proc.send_signal(sig)
    res = finish(proc)
    assert gone(workers)
    assert res.code == 130
    assert "interrupted; the summary above covers the cases that ran" in res.err
    s = res.summary()
    assert 3 <= s["tests"] < 20
    f = read(str(results))
    assert f.footer["interrupted"] and len(f.cases) == s["tests"]
    assert f.footer["counts"] == s
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite.get("tests") == str(s["tests"])
    # Every case counted was printed, in order, and nothing after a gap was lost.
    printed = [int(l.split(":")[0]) for l in res.lines if l[:1].isdigit() and " __REPRO: " in l]
    assert sorted(set(printed)) == sorted(r["idx"] for r in f.cases)


def test_an_interrupt_while_a_case_is_reported_comes_after_the_whole_case():
    """A stop between a case's results record and its count would leave the file a case
    ahead of the summary. The handler is called directly: a real signal reaches the
    handler only in the main thread."""
    stops = runner._Interrupts()
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with stops.hold():
            steps.append("printed")
            stops._stop(signal.SIGTERM, None)    # arrives mid-case: held
            steps += ["written", "counted"]
    assert steps == ["printed", "written", "counted"] and not stops.pending
    with pytest.raises(KeyboardInterrupt):     # between cases: at once
        stops._stop(signal.SIGINT, None)
    stops.stopping = True                      # closing the files: never cut short
    stops._stop(signal.SIGINT, None)
    with stops.hold():
        steps.append("a case kept at the end")
    assert stops.pending and steps[-1] == "a case kept at the end"


def test_a_stop_as_a_cases_record_is_written_still_counts_the_case():
    """The emitter's side: the signal lands right after the results record is written;
    the case is still printed and counted before the run stops."""
    stops = runner._Interrupts()
    records = []

    def write_record(record):
        records.append(record)
        stops._stop(signal.SIGTERM, None)

    session = SimpleNamespace(writer=SimpleNamespace(write_record=write_record), junit=None,
                              plan=SimpleNamespace(driver=None))
    summary, out = RunSummary(), io.StringIO()
    emit = runner._Emitter(session, summary, out, io.StringIO(), NoBar(), stops)
    outcome = SimpleNamespace(errors=[], log=[], diagnostics=[], status=Status.PASSED,
                              line="0:PASSED __REPRO: --conv ic3ih5oc3kh3", perf=None,
                              machine=None, memory=None, timers={}, record={"idx": 0},
                              impl="gemm_conv:avx2")
    with pytest.raises(KeyboardInterrupt):
        emit.case(SimpleNamespace(task=SimpleNamespace(idx=0)), outcome)
    assert records == [{"idx": 0}] and out.getvalue() == outcome.line + "\n"
    assert summary.counts.values["tests"] == summary.counts.values["passed"] == 1


def test_resume_to_another_results_file_copies_the_earlier_cases(tmp_path, uninterrupted):
    first = tmp_path / "first.jsonl"
    run_cli("--conv", f"--results={first}", "--mb=1", "--match=res2a",
            "--batch=problems/shapes_resnet_50", env=FAULT)
    # drop the footer and the last case: a killed run
    lines = first.read_text().splitlines()[:-2]
    first.write_text("\n".join(lines) + "\n")
    second = tmp_path / "second.jsonl"
    res = run_cli("--conv", f"--resume={first}", f"--results={second}", "--mb=1",
                  "--match=res2a", "--batch=problems/shapes_resnet_50", env=FAULT)
    assert res.code in (0, 1)
    full = read(str(second))
    assert full.complete and len(full.cases) == res.summary()["tests"] == len(lines)
    assert first.read_text().splitlines() == lines       # the resumed file is untouched


@pytest.mark.parametrize("content,fragment", [
    (None, "cannot read: No such file or directory"),
    ("not json\n", "not a JSON record"),
])
def test_bad_resume_files_are_one_line(tmp_path, content, fragment):
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_text(content)
    res = run_cli("--conv", f"--resume={path}", "ic4ih4oc4kh1")
    assert res.code == 2 and res.out == ""
    assert res.err.startswith(f"benchdnn-py: error: --resume={path}: ")
    assert fragment in res.err and res.err.count("\n") == 1


def test_resume_refuses_a_file_of_another_run(tmp_path):
    path = tmp_path / "r.jsonl"
    run_cli("--conv", f"--results={path}", "ic4ih4oc4kh1")
    res = run_cli("--conv", f"--resume={path}", "ic8ih8oc8kh3")
    assert res.code == 2
    assert "none of its 1 cases is a case of this run" in res.err
    res = run_cli("--deconv", f"--resume={path}", "ic8ih8oc8kh3")
    assert res.code == 2 and "a --conv run, this is --deconv" in res.err
    assert json.loads(path.read_text().splitlines()[1])["type"] == "case"   # untouched


# -- --perf-interleave: the cases of one descriptor timed together, in turns ------------

def test_timing_groups_join_the_interleaved_perf_cases_of_one_descriptor_only():
    from benchdnn_py.engine import harness
    from benchdnn_py.engine.runner import prepare, timing_groups

    def groups(*args):
        todo = prepare(harness.plan(list(args)))
        return [[p.task.idx for p in g] for g in timing_groups(todo)]

    shapes = ("--threads=2,1", "ic3ih5oc3kh3", "ic4ih5oc4kh3")
    assert groups("--mode=P", "--perf-interleave=true", "--conv", *shapes) == [[0, 1], [2, 3]]
    assert groups("--mode=P", "--conv", *shapes) == [[0], [1], [2], [3]]
    # correctness only: nothing is timed, nothing to interleave
    assert groups("--perf-interleave=true", "--conv", *shapes) == [[0], [1], [2], [3]]
    # the option, like any global one, applies from where it stands
    assert groups("--mode=P", "--conv", "ic3ih5oc3kh3", "--perf-interleave=true",
                  *shapes) == [[0], [1, 2], [3, 4]]


def test_interleaved_cases_are_timed_together_and_reported_in_order(tmp_path):
    results = tmp_path / "r.jsonl"
    most = cli_threads()
    res = run_cli("--mode=CP", "--fix-times-per-prb=4", "--perf-interleave=true",
                  f"--results={results}", "--conv", f"--threads={most},1", "--mb=1",
                  "ic16ih10oc16oh10kh3ph1", "--impl=no_such_row", "ic8ih6oc8oh6kh1ph0")
    assert res.code == 0, res.err
    assert res.summary()["passed"] == 2 and res.summary()["skipped"] == 2
    idx = [int(l.split(":")[0]) for l in res.lines if l[:1].isdigit()]
    assert idx == [0, 1, 2, 3]
    cases = read(results).cases
    timed = [c for c in cases if c.get("samples_ms")]
    assert [c["settings"]["driver"]["threads"] for c in timed] == [most, 1]
    assert all(len(c["samples_ms"]) == 4 and c["settings"]["global"]["perf_interleave"]
               and c["machine"]["attempts"] >= 1 for c in timed)
    # one group, one machine check
    assert timed[0]["machine"] == timed[1]["machine"]


def test_interleaving_refuses_worker_processes_in_one_line():
    res = run_cli("--mode=P", "--perf-interleave=true", "--timeout=60", "--conv",
                  "ic8ih6oc8oh6kh1ph0")
    assert res.code == 2
    assert res.err.strip().splitlines() == [
        "benchdnn-py: error: --perf-interleave=true: its cases are timed together in this "
        "process; leave --jobs and --timeout out"]
