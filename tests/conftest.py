"""Shared helpers: run the real command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# OpenMP threads that wait sleep instead of spinning: pytest -n 2 runs two test processes
# whose cases each run on every core, and threads spinning in one take the cores the
# other's need. Set before the C core (and with it libgomp) loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from benchdnn_py import core
from benchdnn_py.drivers.conv import driver as conv_driver
from benchdnn_py.drivers.deconv import driver as deconv_driver
from benchdnn_py.drivers.ip import driver as ip_driver
from benchdnn_py.errors import BenchError
from benchdnn_py.reports.results import SCHEMA, SCHEMA_VERSION, ResultsFile

ROOT = Path(__file__).resolve().parent.parent

# Fuzzing (the *_fuzz.py tests): a few seconds in every run; `pytest
# --hypothesis-profile=nightly` throws a hundred times more examples at the same properties.
settings.register_profile("default", max_examples=50, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")

# The vector instruction sets this CPU runs, widest first, and the widest: tests that force
# an implementation row use these, so that they test the same thing on an AVX2-only
# machine as on an AVX-512 one (a row the CPU cannot run is SKIPPED, not run).
VECTOR_ISAS = [isa for isa in ("avx512", "avx2") if core.isa_supported(core.Isa[isa.upper()])]
BEST_ISA = VECTOR_ISAS[0] if VECTOR_ISAS else "scalar"


# The perf guard's line before a perf case it found degraded says what the machine did at
# that moment, not what the code under test did: kept in `out`, left out of `lines`, whose
# positions the tests index (a loaded CI machine put it first in a CP run's output). The
# guard's tests read it from the results records.
GUARD_DIAGNOSTIC = "perf guard: the machine's "


class Result:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.lines = [l for l in proc.stdout.splitlines() if not l.startswith(GUARD_DIAGNOSTIC)]

    def summary(self) -> dict[str, int]:
        line = next(l for l in self.lines if l.startswith("tests:"))
        return {k: int(v) for k, v in (item.split(":") for item in line.split())}


def run_cli(*args: str, env: dict[str, str] | None = None, module: bool = True,
            cwd: Path = ROOT, timeout: float = 600) -> Result:
    """Runs `python -m benchdnn_py ARGS` (or the installed `benchdnn-py` script)."""
    base = {k: v for k, v in os.environ.items() if k != "BENCHDNN_PY_TEST_FAULT"}
    full_env = {**base, **(env or {})}
    if module:
        cmd = [sys.executable, "-m", "benchdnn_py", *args]
    else:
        script = shutil.which("benchdnn-py")
        if script is None:
            pytest.fail("the benchdnn-py console script is not installed")
        cmd = [script, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return Result(proc)


def assert_one_line(exc: BaseException) -> None:
    """What bad input must raise: one of benchdnn-py's own errors, whose message is the
    one line the command line prints."""
    assert isinstance(exc, BenchError), repr(exc)
    assert str(exc) and "\n" not in str(exc), str(exc)


@pytest.fixture
def cli():
    return run_cli


CASE_LINE = re.compile(r"^(\d+):(\w+) ")


def case_statuses(res: Result) -> list[tuple[str, str]]:
    """(status, line) of every case line of a run (the failed-cases summary repeats
    some; runs that need one line per case pass --summary=no-failures)."""
    return [(m.group(2), line) for line in res.lines if (m := CASE_LINE.match(line))]


def assert_all_passed(res: Result, count: int, impl_prefix: str) -> None:
    """count case lines, every one PASSED on an implementation named impl_prefix...,
    and exit status 0."""
    cases = case_statuses(res)
    assert len(cases) == count, res.out
    assert all(status == "PASSED" for status, _ in cases), \
        [line for status, line in cases if status != "PASSED"][:5]
    assert all(f"--impl={impl_prefix}" in line for _, line in cases)
    assert res.code == 0


def assert_ci_batch_passed(res: Result, minimum: int) -> None:
    """.ci/run's gate on a correctness batch: exit status 0 and more than minimum cases,
    every one PASSED but those forced onto an AVX-512 row (every CI batch forces its
    AVX-512 rows), which are SKIPPED (Skip-impl option hit, their repro naming the row)
    exactly where this CPU lacks AVX-512."""
    assert res.code == 0, res.out[-2000:]
    s = res.summary()
    skipped = [line for status, line in case_statuses(res) if status == "SKIPPED"]
    assert len(skipped) == s["skipped"]
    assert all("(Skip-impl option hit)" in line and re.search(r"__REPRO: .*--impl=\S*avx512", line)
               for line in skipped), skipped[:5]
    assert bool(skipped) == ("avx512" not in VECTOR_ISAS)
    assert s["passed"] + len(skipped) == s["tests"] > minimum


def onednn_runs_bf16(lib) -> bool:
    """Whether the loaded oneDNN implements bf16 primitives on this CPU: oneDNN 3.x does
    from its avx512_core level up (emulating the bf16 instructions where the CPU has none)
    and on avx2_vnni_2; below those it answers `unimplemented` itself."""
    return lib.isa.startswith(("avx512_core", "avx2_vnni_2", "avx10"))


def assert_onednn_cases(res: Result, count: int, lib, allowed: tuple[str, ...] = ("PASSED",)
                        ) -> None:
    """count case lines (one per case: the run passes --summary=no-failures), each with a
    status in allowed and run on a oneDNN implementation; but where oneDNN has no bf16
    (onednn_runs_bf16), a case with a bf16 tensor is UNIMPLEMENTED with oneDNN's own
    status instead. Exit status 0 exactly when no case is; every case that ran names a
    oneDNN implementation."""
    cases = case_statuses(res)
    assert len(cases) == count, res.out[-2000:]
    declined = [line for status, line in cases if status not in allowed]
    if declined:   # bf16 cases oneDNN itself declines on this CPU, and nothing else
        by_onednn = re.compile(rf"UNIMPLEMENTED \(oneDNN {re.escape(lib.version)}: dnnl_\w+: "
                               r"unimplemented\)")
        assert not onednn_runs_bf16(lib), declined[:5]
        assert all("bf16" in line.split("__REPRO: ")[1] and by_onednn.search(line)
                   for line in declined), declined[:5]
    ran = [line for status, line in cases if status in ("PASSED", "MISTRUSTED")]
    assert all("--impl=onednn:" in line for line in ran), ran[:5]
    assert res.code == (1 if declined else 0)


TORCH_REQUIRE_ENV = "BENCHDNN_PY_REQUIRE_TORCH"


@pytest.fixture(scope="session")
def torch():
    """The torch module. Without it the test skips, saying so (the README's plain test
    command installs only the test extra); with BENCHDNN_PY_REQUIRE_TORCH=1 (set by
    .ci/run, which installs the torch extra) it fails instead."""
    try:
        import torch as module
    except ImportError as exc:
        if os.environ.get(TORCH_REQUIRE_ENV) == "1":
            pytest.fail(f"{TORCH_REQUIRE_ENV}=1 but torch cannot be imported ({exc}); install "
                        "the extra: python -m pip install -e '.[test,torch]'")
        pytest.skip("torch is not installed; python -m pip install -e '.[test,torch]' runs "
                    "these tests")
    return module


ONEDNN_REQUIRE_ENV = "BENCHDNN_PY_REQUIRE_ONEDNN"


@pytest.fixture(scope="session")
def onednn_lib():
    """The loaded oneDNN (backends/onednn.py). Without it the test skips, saying so (the
    README's plain test command installs only the test extra); with
    BENCHDNN_PY_REQUIRE_ONEDNN=1 (set by .ci/run, which installs the onednn extra) it
    fails instead."""
    from benchdnn_py.backends import onednn
    loaded, why = onednn.load()
    if loaded is None:
        if os.environ.get(ONEDNN_REQUIRE_ENV) == "1":
            pytest.fail(f"{ONEDNN_REQUIRE_ENV}=1 but oneDNN cannot be loaded: {why}")
        pytest.skip(f"oneDNN is not available ({why}); python -m pip install -e "
                    "'.[test,onednn]' runs these tests")
    return loaded


def cli_threads() -> int:
    """The OpenMP threads a CLI process runs (this one's may differ: an in-process torch
    test sets it)."""
    return int(next(l for l in run_cli("info").lines if l.startswith("threads: ")).split()[1])


# A synthetic results file for compare and its statistics: one case per list of samples.
RESULTS_ENV = {"cpu": {"model": "cpu"}, "isa": {"usable": ["scalar"]}, "threads": {"max": 1}}


def results_file(samples: list[list[float]], name: str) -> ResultsFile:
    header = {"type": "header", "schema": SCHEMA, "version": SCHEMA_VERSION,
              "backend": "native", "environment": RESULTS_ENV}
    cases = [{"type": "case", "key": f"--conv ic{i + 1}ih5oc1kh1", "status": "EXECUTED",
              "samples_ms": s, "impl": "x", "repro": f"--conv ic{i + 1}ih5oc1kh1"}
             for i, s in enumerate(samples)]
    return ResultsFile(name, header, cases, {"type": "footer"})


def conv_steps(prb):
    """The case steps of a conv, deconv or ip problem's driver, whose backends create it."""
    return {"conv": conv_driver.STEPS, "deconv": deconv_driver.STEPS,
            "ip": ip_driver.STEPS}[prb.desc.kind]


def create_executor(prb, res):
    """The executor prb's backend creates (None with res set), as a case's create step."""
    return conv_steps(prb).create(prb, res)


def backend_unsupported(prb):
    """Why the problem or its backend cannot run it, as a case's unsupported step."""
    return conv_steps(prb).unsupported(prb)
