"""End-of-run output and the rich tables shown on a terminal."""

import io
from collections import Counter

from rich.console import Console

from benchdnn_py.engine.settings import MODES, GlobalSettings, Summary
from benchdnn_py.engine.timing import MachineCheck
from benchdnn_py.reports import text as report
from benchdnn_py.reports.perf_report import PerfRecord
from benchdnn_py.status import Status


def make_run():
    run = report.RunSummary()
    for status in (Status.PASSED, Status.PASSED, Status.FAILED, Status.SKIPPED,
                   Status.UNIMPLEMENTED, Status.INVALID_ARGUMENTS, Status.MISTRUSTED):
        run.counts.add(status)
    run.impl_hits = Counter({"gemm_conv:avx2": 3, "dw_conv_fwd:avx2": 1})
    run.failed_lines = [f"{i}:FAILED (1 ms) __REPRO: --conv x{i}" for i in range(12)]
    run.wall_seconds = 2.0
    run.timers.seconds["compute_ref"] = 1.0
    return run


def test_counts_and_invariant():
    run = make_run()
    assert run.counts.line() == ("tests:7 passed:2 skipped:1 mistrusted:1 unimplemented:1 "
                                 "invalid_arguments:1 failed:3 listed:0")
    assert run.counts.exit_status() == 1


def test_end_of_run_block_order_and_content():
    lines = report.end_of_run(make_run(), GlobalSettings())
    assert lines[1] == "= Implementation statistics (--summary=no-impl to disable) ="
    assert lines[3] == "|   gemm_conv:avx2 : 3 (75%) |"    # right-aligned to the widest
    assert lines[4] == "| dw_conv_fwd:avx2 : 1 (25%) |"
    start = lines.index("= Failed cases summary (--summary=no-failures to disable) =")
    assert lines[start + 2:start + 12] == [f"{i}:FAILED (1 ms) __REPRO: --conv x{i}"
                                          for i in range(10)]
    assert lines[start + 12] == "(... 2 more cases ...)"
    assert lines[-2].startswith("tests:7 ")
    assert lines[-1] == ("total: 2.00s; create_pd: 0.00s (0%); create_prim: 0.00s (0%); "
                         "fill: 0.00s (0%); execute: 0.00s (0%); compute_ref: 1.00s (50%); "
                         "compare: 0.00s (0%);")


def test_perf_mode_has_no_failure_list_and_a_total_perf_line():
    run = make_run()
    rec = PerfRecord({"impl": "i"}, 1e9, 0, 0, [1.0, 3.0], (0.0, 0.0), 0, 0)
    run.perf.append(("x", rec))
    settings = GlobalSettings(mode=MODES["P"], summary=Summary(impl=False))
    lines = report.end_of_run(run, settings)
    assert not any("Failed cases" in l for l in lines)
    assert "total perf: min(ms):1 avg(ms):2" in lines
    assert "compute_ref" not in lines[-1]
    assert not any(l.startswith("perf guard:") for l in lines)   # no case was guarded


def test_the_perf_guard_line_counts_retimed_and_degraded_cases():
    run = make_run()
    run.perf.append(("x", PerfRecord({"impl": "i"}, 1e9, 0, 0, [1.0], (0.0, 0.0), 0, 0)))
    for check in (MachineCheck(0.97, 1), MachineCheck(0.91, 2), MachineCheck(0.5, 3),
                  MachineCheck(0.52, 1)):
        run.guard.add(check)
    lines = report.end_of_run(run, GlobalSettings(mode=MODES["P"]))
    at = lines.index("total perf: min(ms):1 avg(ms):1")
    assert lines[at + 1] == "perf guard: cases:4 retimed:2 degraded:2"


def test_rich_tables_for_a_terminal():
    run = make_run()
    run.perf.append(("mb1ic3ih5oc3oh3kh3ph0", PerfRecord({"impl": "gemm_conv:avx2"},
                                                         2e9, 0, 0, [2.0], (0, 0), 0, 0)))
    buf = io.StringIO()
    report.rich_summary(Console(file=buf, width=160, force_terminal=False), run)
    text = buf.getvalue()
    assert "Cases by status" in text and "Implementations used" in text
    assert "gemm_conv:avx2" in text and "75%" in text
    assert "mb1ic3ih5oc3oh3kh3ph0" in text and "1000.0" in text     # 2e9 ops in 2 ms
