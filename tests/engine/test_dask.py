"""--executor=dask://HOST:PORT against a Dask distributed cluster the test starts on
loopback: the same lines, results file and summary as a local run; a case that kills its
Dask worker is FAILED and the batch goes on.

Tests that need the `distributed` package skip, saying so, when it is not installed (the
README's plain test command installs only the test extra); with BENCHDNN_PY_REQUIRE_DASK=1
(set by .ci/run, which installs the dask extra) a missing package fails them instead.
Without the package, the CLI's one-line install hint is tested everywhere.
"""

from __future__ import annotations

import os
import re

import pytest
from conftest import run_cli

from benchdnn_py.reports.results import read

REQUIRE_ENV = "BENCHDNN_PY_REQUIRE_DASK"
GRID = ("--dir=FWD_B,BWD_D", "--batch=problems/shapes_basic")


def _distributed():
    try:
        import distributed
    except ImportError:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but the `distributed` package is not installed")
        pytest.skip("the `distributed` package is not installed (pip install -e '.[dask]')")
    return distributed


def _cluster(**kwargs):
    distributed = _distributed()
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    host="127.0.0.1", scheduler_port=0,
                                    dashboard_address=":0", **kwargs)


def _url(cluster) -> str:
    return "dask://" + cluster.scheduler_address.removeprefix("tcp://")


@pytest.fixture(scope="module")
def cluster():
    with _cluster() as c:
        yield c


def comparable(lines):
    return [re.sub(r" \(\d+ ms\) ", " ", l) for l in lines if not l.startswith("total: ")]


def test_a_dask_run_prints_and_writes_what_a_local_run_does(cluster, tmp_path):
    local = run_cli("--conv", f"--results={tmp_path / 'local.jsonl'}", "-v1", *GRID)
    remote = run_cli("--conv", f"--executor={_url(cluster)}", "-v1",
                     f"--results={tmp_path / 'dask.jsonl'}", f"--junit={tmp_path / 'd.xml'}",
                     *GRID)
    assert remote.code == local.code == 0
    assert comparable(remote.lines) == comparable(local.lines)
    assert remote.summary() == local.summary() and remote.summary()["tests"] == 72
    assert f"running on Dask cluster at {cluster.scheduler_address} (2 workers)" in remote.err
    key = lambda r: (r["idx"], r["key"], r["status"], r["impl"])  # noqa: E731
    ran = read(str(tmp_path / "dask.jsonl"))
    assert [key(r) for r in ran.cases] == [key(r) for r in read(str(tmp_path / "local.jsonl")).cases]
    assert ran.header["run"]["executor"] == _url(cluster)


def test_a_case_that_kills_its_dask_worker_fails_alone(monkeypatch):
    _distributed()
    # The workers inherit the fault; the scheduler gives up on a task at the first death
    # of its worker, which also condemns the cases queued on that worker: those are run
    # again alone, and pass.
    dask = pytest.importorskip("dask")
    monkeypatch.setenv("BENCHDNN_PY_TEST_FAULT", "crash")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), _cluster() as c:
        res = run_cli("--conv", f"--executor={_url(c)}", "ic8ih8oc8kh3", "ic3ih5oc5kh3",
                      "ic4ih6oc4kh3")
    assert res.code == 1
    assert [l.split(" ")[0] for l in res.lines[:3]] == ["0:PASSED", "1:FAILED", "2:PASSED"]
    assert res.lines[1].startswith("1:FAILED (crashed: its Dask worker died) (")
    assert res.summary()["failed"] == 1


def test_an_unreachable_scheduler_is_one_line():
    _distributed()
    res = run_cli("--conv", "--executor=dask://127.0.0.1:9", "ic8ih8oc8kh3", timeout=120)
    assert res.code == 2 and res.out == ""
    assert res.err.startswith("benchdnn-py: error: --executor=dask://127.0.0.1:9: cannot "
                              "reach a Dask scheduler at tcp://127.0.0.1:9")
    assert res.err.count("\n") == 1


def test_without_the_package_the_cli_says_how_to_install_it(tmp_path):
    fake = tmp_path / "distributed"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed (test)')\n")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                       os.environ.get("PYTHONPATH")]))}
    res = run_cli("--conv", "--executor=dask://127.0.0.1:8786", "ic8ih8oc8kh3", env=env)
    assert res.code == 2 and res.out == ""
    assert res.err == ("benchdnn-py: error: --executor=dask://127.0.0.1:8786: needs the "
                       "`distributed` package, which is not installed; install it with: "
                       "python -m pip install 'benchdnn-py[dask]'\n")
