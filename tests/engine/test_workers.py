"""Cases in worker processes (-j N, --timeout): the same lines and summary as a serial run,
one OpenMP team per worker sized to share the cores, and a case that crashes its worker or
runs out of time is FAILED while the batch goes on."""

from __future__ import annotations

import dataclasses
import multiprocessing
import operator
import pickle
import re
import signal
import xml.etree.ElementTree as ET

import pytest
from conftest import run_cli

from benchdnn_py.engine import harness, runner, workers
from benchdnn_py.status import Status

# 108 cases in about a second; with skip_last_ic most fail, with mismatch dumps.
GRID = ("--dir=FWD_B,BWD_D,BWD_WB", "--batch=problems/shapes_basic")
# ic3 oc5 is the shape BENCHDNN_PY_TEST_FAULT=crash kills (SIGSEGV in forward execute).
CRASHING = "ic3ih5oc5kh3"
WITH_CRASH = ("ic8ih8oc8kh3ph1", CRASHING, "ic4ih6oc4kh3", "g2ic4ih5oc4kh3", "ic3ih7oc5kh3",
              "ic16ih4oc8kh1")


def comparable(lines: list[str]) -> list[str]:
    """The lines with the per-case time, the memory lines (measured; a worker's scratch is
    for its threads) and the timers line left out (they differ)."""
    return [re.sub(r" \(\d+ ms\) ", " ", l) for l in lines
            if not l.startswith(("total: ", "memory: "))]


@pytest.mark.parametrize("jobs", [["-j", "2"], ["--jobs=1"], ["-j2", "--timeout=600"]])
def test_workers_print_what_a_serial_run_prints(jobs):
    args = ("--conv", "-v1", *GRID)
    env = {"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"}
    serial = run_cli(*args, env=env)
    parallel = run_cli(*jobs, *args, env=env)
    assert serial.code == parallel.code == 1
    assert comparable(parallel.lines) == comparable(serial.lines)
    assert serial.summary() == parallel.summary()
    s = parallel.summary()
    assert s["tests"] == 108 and 0 < s["failed"] < 108 and s["passed"] > 0
    # the mismatch dumps and the verbose run: lines are there, in order
    assert any(l.startswith("run: --conv") for l in parallel.lines)
    assert any(l.startswith("[COMPARE_STATS]") for l in parallel.lines)
    assert "worker process" in parallel.err


def test_a_crashing_case_fails_alone_and_the_batch_goes_on(tmp_path):
    xml = tmp_path / "run.xml"
    res = run_cli("--conv", "-j", "2", f"--junit={xml}", f"--results={tmp_path / 'r.jsonl'}",
                  *WITH_CRASH, env={"BENCHDNN_PY_TEST_FAULT": "crash"})
    # (what the run printed, should it go wrong; the race that once failed it in CI is the
    # next test's)
    printed = f"stdout:\n{res.out}\nstderr:\n{res.err}"
    assert res.code == 1, printed
    cases = [l for l in res.lines if re.match(r"^\d+:", l)][:len(WITH_CRASH)]
    assert [l.split(" ")[0] for l in cases] == [
        "0:PASSED", "1:FAILED", "2:PASSED", "3:PASSED", "4:FAILED", "5:PASSED"], printed
    assert cases[1].startswith("1:FAILED (crashed: SIGSEGV) (")
    # the repro line of the crashed case reruns it
    assert cases[1].endswith("__REPRO: --conv ic3ih5oc5oh3kh3ph0")
    assert "ic3ih7oc5oh5kh3ph0" in cases[4]
    s = res.summary()
    assert (s["tests"], s["passed"], s["failed"]) == (6, 4, 2)
    assert "1:FAILED (crashed: SIGSEGV)" in res.out.split("Failed cases summary")[1]
    suite = ET.parse(xml).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("6", "2")
    failures = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [f.find("failure").get("message") for f in failures] == ["crashed: SIGSEGV"] * 2
    assert failures[0].get("name") == "--conv ic3ih5oc5oh3kh3ph0"


def test_one_worker_with_a_timeout_isolates_a_crash_too():
    # The worker is handed the second and third cases while it runs the first: they wait
    # in its pipe when it dies, and a fresh worker runs them.
    res = run_cli("--conv", "--timeout=600", CRASHING, "ic8ih8oc8kh3ph1", "ic4ih6oc4kh3",
                  env={"BENCHDNN_PY_TEST_FAULT": "crash"})
    assert res.code == 1
    assert res.lines[0].startswith("0:FAILED (crashed: SIGSEGV)")
    assert res.lines[1].startswith("1:PASSED")
    assert res.lines[2].startswith("2:PASSED")
    assert res.summary()["tests"] == 3
    assert "1 worker process" in res.err


def test_a_case_past_the_timeout_is_killed_and_the_next_one_runs():
    # The reference alone takes several seconds on this problem.
    res = run_cli("--conv", "--timeout=0.5", "mb32ic64ih64oc64kh3", "ic8ih8oc8kh3ph1")
    assert res.code == 1
    assert re.match(r"^0:FAILED \(timeout after 0\.5s\) \(\d+ ms\) __REPRO: --conv "
                    r"mb32ic64ih64oc64oh62kh3ph0$", res.lines[0])
    assert res.lines[1].startswith("1:PASSED")


def test_each_worker_gets_its_share_of_the_cores():
    plan = harness.plan(["--conv", "ic8ih8oc8kh3", "ic4ih4oc4kh1", "ic3ih5oc4kh3"])
    pool = workers.LocalPool(2)
    tasks = [p.task for p in runner.prepare(plan)]
    outcomes = sorted(pool.run(tasks), key=lambda o: o.seq)
    assert [o.status for o in outcomes] == [Status.PASSED] * 3
    assert pool.threads == workers.threads_per_worker(2)
    assert {o.threads for o in outcomes} == {pool.threads}


def test_the_task_table_reaches_every_worker_in_blocks_also_after_a_crash(monkeypatch):
    # Blocks of two over six cases, two of which crash: each worker, and each one that
    # replaces a crashed worker, is sent the blocks it needs, and every outcome is the
    # case it was sent for.
    monkeypatch.setattr(workers, "TABLE_BLOCK", 2)
    monkeypatch.setenv("BENCHDNN_PY_TEST_FAULT", "crash")
    prepared = runner.prepare(harness.plan(["--conv", *WITH_CRASH]))
    results = list(workers.LocalPool(2).run(p.task for p in prepared))
    lost = [r for r in results if isinstance(r, workers.Lost)]
    assert sorted((r.seq, r.reason) for r in lost) == [(1, "crashed: SIGSEGV"),
                                                       (4, "crashed: SIGSEGV")]
    outcomes = sorted((r for r in results if not isinstance(r, workers.Lost)),
                      key=lambda o: o.seq)
    assert [o.seq for o in outcomes] == [0, 2, 3, 5]
    for o in outcomes:
        assert o.status is Status.PASSED
        assert o.line.endswith(" " + prepared[o.seq].repro), o.line


def test_a_case_sent_to_a_worker_that_just_crashed_runs_on_its_replacement(monkeypatch):
    # The race behind a CI failure: a worker reports case 0 and crashes on case 1, which
    # waited in its pipe, before the parent sends it case 2. The send then meets a closed
    # pipe (it raised BrokenPipeError and ended the run); case 2 must run on the worker
    # that replaces it. Made certain here by letting the worker die before the send.
    monkeypatch.setenv("BENCHDNN_PY_TEST_FAULT", "crash")
    crashing = {1, 4}
    reported = workers._Worker.finished
    dead_before_send = []

    def finished_then_crashed(self):
        reported(self)
        if self.tasks and self.tasks[0] in crashing:
            self.process.join(timeout=60)
            dead_before_send.append(self.process.exitcode)

    monkeypatch.setattr(workers._Worker, "finished", finished_then_crashed)
    prepared = runner.prepare(harness.plan(["--conv", *WITH_CRASH]))
    results = list(workers.LocalPool(1).run(p.task for p in prepared))
    assert dead_before_send == [-signal.SIGSEGV] * 2
    assert sorted((r.seq, r.reason) for r in results if isinstance(r, workers.Lost)) == [
        (1, "crashed: SIGSEGV"), (4, "crashed: SIGSEGV")]
    outcomes = [r for r in results if not isinstance(r, workers.Lost)]
    assert sorted(o.seq for o in outcomes) == [0, 2, 3, 5]
    assert {o.status for o in outcomes} == {Status.PASSED}


def test_a_case_waiting_behind_a_long_one_is_taken_back_by_a_free_worker():
    # Two workers, each handed two cases: the one that gets the long case (its reference
    # takes seconds) has a short one waiting behind it; the other runs its two short cases
    # and is then free. The waiting case is taken back and runs there, so every short case
    # comes back before the long one.
    long_case = "mb32ic64ih64oc64kh3"
    prepared = runner.prepare(harness.plan(["--conv", long_case, "ic8ih8oc8kh3ph1",
                                            "ic4ih6oc4kh3", "ic16ih4oc8kh1"]))
    pool = workers.LocalPool(2)
    results = list(pool.run(p.task for p in prepared))
    assert [r.status for r in sorted(results, key=lambda r: r.seq)] == [Status.PASSED] * 4
    assert pool.taken_back == 1
    assert [r.seq for r in results][-1] == 0


def test_threads_per_worker(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(workers, "usable_cores", lambda: 8)
    assert [workers.threads_per_worker(j) for j in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]
    monkeypatch.setenv("OMP_NUM_THREADS", "3")   # the user's choice wins
    assert workers.threads_per_worker(2) == 3


def test_signal_names():
    assert workers.signal_name(-signal.SIGSEGV) == "SIGSEGV"
    assert workers.signal_name(-signal.SIGABRT) == "SIGABRT"
    assert workers.signal_name(3) == "exit status 3"


def test_list_mode_ignores_jobs():
    res = run_cli("--conv", "-j", "2", "--mode=L", "ic8ih8oc8kh3", "ic3ih5oc4kh3")
    assert res.code == 0
    assert [l.split(" ")[0] for l in res.lines[:2]] == ["0:LISTED", "1:LISTED"]
    assert "worker" not in res.err


@pytest.mark.parametrize("args,fragment", [
    (["-j", "x"], "`-j x`: expected -j N with N a positive number"),
    (["-j", "0"], "`-j 0`: expected -j N"),
    (["-j"], "`-j ic8ih8oc8kh3`: expected -j N"),   # -j takes the next token
    (["--jobs=-1"], "--jobs=-1: expected a positive number of worker processes"),
    (["--jobs=two"], "--jobs=two: expected a positive number"),
    (["--timeout=0"], "--timeout=0: expected a number of seconds greater than 0"),
    (["--timeout=soon"], "--timeout=soon: expected a number of seconds"),
    (["--mode=P", "-j", "2"], "--jobs=2: performance modes (--mode=P) time one case at a time"),
    (["--mode=CP", "--jobs=3"], "--jobs=3: performance modes (--mode=CP)"),
    (["--executor=http://h:1"], "--executor=http://h:1: expected local or dask://HOST:PORT"),
    (["--executor=dask://host"], "--executor=dask://host: expected local or dask://HOST:PORT"),
    (["--executor=dask://h:99999"], "expected local or dask://HOST:PORT"),
    (["--executor=dask://127.0.0.1:9", "-j", "2"], "--jobs=2: not with --executor=dask://"),
    (["--executor=dask://127.0.0.1:9", "--timeout=5"], "--timeout=5: not with --executor"),
    (["--mode=P", "--executor=dask://127.0.0.1:9"], "performance modes (--mode=P) time on this"),
    (["--junit="], "--junit=: expected a file name"),
])
def test_bad_run_options_are_one_line_and_exit_2(args, fragment):
    res = run_cli("--conv", *args, "ic8ih8oc8kh3")
    assert res.code == 2, res.out + res.err
    assert res.out == ""
    assert res.err.count("\n") == 1 and res.err.startswith("benchdnn-py: error: ")
    assert fragment in res.err


def test_whole_run_options_after_the_last_problem_apply_without_a_warning(tmp_path):
    res = run_cli("--conv", "ic8ih8oc8kh3", "-j", "2", f"--junit={tmp_path / 'j.xml'}",
                  f"--results={tmp_path / 'r.jsonl'}")
    assert res.code == 0
    assert "No problem found" not in res.err and "2 worker processes" in res.err
    assert (tmp_path / "j.xml").exists() and (tmp_path / "r.jsonl").exists()
    # a per-case option there still warns: it applies to no case
    res = run_cli("--conv", "ic8ih8oc8kh3", "--mode=L")
    assert "No problem found for a given option!" in res.err


def test_workers_started_early_are_stopped_when_no_case_runs():
    import multiprocessing
    # --match leaves nothing: the workers spawned while planning are killed at once.
    plan = harness.plan(["--conv", "--jobs=2", "--match=nothing", "ic8ih8oc8kh3", "ic4ih4oc4kh1"])
    session = runner.Session(plan, [])
    assert session.todo == [] and session.pool is None
    assert multiprocessing.active_children() == []
    # and with a case to run they are already there when the run begins
    plan = harness.plan(["--conv", "--jobs=2", "ic8ih8oc8kh3"])
    session = runner.Session(plan, [])
    assert len(multiprocessing.active_children()) == 2
    session.close_pool()
    assert multiprocessing.active_children() == []


class _FailsToUnpickle:
    """Pickles fine, raises ZeroDivisionError when a worker loads it."""

    def __reduce__(self):
        return operator.truediv, (1, 0)


def test_a_task_table_that_does_not_load_stops_the_run_instead_of_respawning():
    # A worker that cannot load its cases used to die and be replaced, case after case,
    # by workers that died the same way: the run crawled on, one lost case per respawn.
    prepared = runner.prepare(harness.plan(["--conv", "ic8ih8oc8kh3ph1", "ic4ih6oc4kh3"]))
    tasks = [dataclasses.replace(p.task, prb=_FailsToUnpickle()) for p in prepared]
    pool = workers.LocalPool(2)
    with pytest.raises(workers.WorkerError, match=r"could not read the cases it was sent "
                       r"\(ZeroDivisionError: division by zero\)"):
        list(pool.run(tasks))


def test_a_case_taken_back_can_be_sent_to_the_same_worker_again():
    # The parent puts a returned case at the head of its queue, and the next free worker
    # may be the one it came from: that worker has the case's block already, so its row
    # must still be there.
    parent, child = multiprocessing.Pipe()
    inbox = workers._Inbox(child)
    parent.send((0, pickle.dumps(["task0", "task1"])))
    parent.send(0)
    parent.send(1)
    parent.send((workers.TAKE_BACK, 1))
    assert parent.recv() == (workers.RETURNED, 1)
    assert inbox.next_task() == "task0"
    parent.send(1)
    assert inbox.next_task() == "task1"
    parent.send(None)
    assert inbox.next_task() is None
