"""A run killed with SIGKILL at any moment, or one of its workers killed, loses nothing that
--resume cannot complete: the results file keeps every case that finished, a case whose
worker was killed from outside runs again, and the completed file equals an uninterrupted
run's, case for case.

The kill points are random (a seeded generator, printed on failure). The suite tries
KILL_POINTS of them for each target; BENCHDNN_PY_KILL_POINTS=20 gives the long run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
KILL_POINTS = int(os.environ.get("BENCHDNN_PY_KILL_POINTS", "2"))
# About 230 cases of conv_ci, in two workers: a few seconds.
RUN = ("--conv", "-j", "2", "--shard=0/60", "--batch=batches/conv_ci")


def cases(path: Path) -> dict[tuple[int, str], tuple[str, str]]:
    """(idx, key) -> (status, reason) of a results file's case records."""
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "case":
            assert (record["idx"], record["key"]) not in out, record["key"]
            out[(record["idx"], record["key"])] = (record["status"], record["reason"])
    return out


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(c) for c in path.read_text().split()]
    except OSError:
        return []


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    path = tmp_path_factory.mktemp("kill") / "whole.jsonl"
    start = time.monotonic()
    res = run_cli(*RUN, f"--results={path}")
    assert res.code == 0, res.out + res.err
    return cases(path), time.monotonic() - start


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("target", ["run", "worker"])
def test_a_killed_run_resumes_to_the_uninterrupted_runs_results(tmp_path, uninterrupted, target):
    whole, seconds = uninterrupted
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for point in range(KILL_POINTS):
        results, junit = tmp_path / f"r{point}.jsonl", tmp_path / f"j{point}.xml"
        files = (f"--results={results}", f"--junit={junit}")
        proc = subprocess.Popen([sys.executable, "-m", "benchdnn_py", *RUN, *files],
                                cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        at = rng.uniform(0.2, 0.9) * seconds
        time.sleep(at)
        where = f"seed {seed}, kill point {point} at {at:.2f} s of {seconds:.2f} s"
        if target == "run":
            proc.send_signal(signal.SIGKILL)
        else:   # one of its workers (if it has started them yet)
            workers = _children(proc.pid)
            if workers:
                os.kill(rng.choice(workers), signal.SIGKILL)
        proc.wait(timeout=600)
        # (a run killed before it wrote its header has nothing to resume: it starts over)
        again = (f"--resume={results}" if results.exists() and results.stat().st_size
                 else f"--results={results}")
        res = run_cli(*RUN, again, f"--junit={junit}", "--replace=true")
        assert res.code == 0, f"{where}\n{res.out}\n{res.err}"
        assert cases(results) == whole, where
        suite = ET.parse(junit).getroot().find("testsuite")
        assert (suite.get("tests"), suite.get("failures")) == (str(len(whole)), "0"), where
