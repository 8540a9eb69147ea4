"""Runs a plan: one case after another, each line printed and flushed as soon as the case
ends, so an interrupted run keeps everything it already reported."""

from __future__ import annotations

import os
import time
from typing import TextIO

from . import perf_report
from .drivers.base import CaseResult, RunContext
from .errors import BenchError, ProblemError
from .harness import Plan
from .report import RunSummary, result_line
from .results import ResultsWriter
from .status import Reason, Status

DEBUG_ENV = "BENCHDNN_PY_DEBUG"


class _Out:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


def run_plan(plan: Plan, stdout: TextIO, stderr: TextIO,
             results: ResultsWriter | None = None) -> RunSummary:
    """Runs every case; with ``results``, each case's record is written (and flushed) right
    after its lines, so a killed run's file holds every case it printed."""
    out, err = _Out(stdout), _Out(stderr)
    summary = RunSummary()
    driver = plan.driver
    idx = 0
    printed_template: str | None = None
    start = time.perf_counter()
    try:
        for case in plan.cases:
            settings = case.settings
            case_start = time.perf_counter()
            try:
                prb = driver.make_problem(case.values, case.desc_text, settings)
                repro = prb.repro(settings.canonical)
                error = None
            except ProblemError as exc:
                prb, repro, error = None, case.desc_text, exc
            match = case.values.get("match")
            if match is not None and not match.search(repro):
                continue
            ctx = RunContext(settings, idx, out)
            if error is not None:
                err(f"ERROR: {error} ({case.source})")
                result = CaseResult(Status.INVALID_ARGUMENTS)
            else:
                result = _run_case(driver.run, prb, ctx, err)
            summary.timers.add(result.timers)
            ms = (time.perf_counter() - case_start) * 1e3
            line = result_line(idx, result.status, result.reason, result.errors, result.total,
                               ms, settings.repro_prefix(), driver.name, result.impl, repro)
            for diag in result.diagnostics:
                out(diag)
            if result.status is not Status.EXECUTED:
                out(line)
            if result.perf is not None:
                template = settings.perf_template.resolve(driver.csv_perf_fields)
                if template != printed_template:
                    out(f"Template entries: {template}")
                    out(perf_report.header(template))
                    printed_template = template
                out(perf_report.render(template, result.perf))
                summary.perf.append((repro, result.perf))
            if results is not None:
                results.write_case(case, prb, result, idx, ms)
            summary.counts.add(result.status)
            if result.impl:
                summary.impl_hits[result.impl] += 1
            if result.status.is_failure:
                summary.failed_lines.append(line)
            idx += 1
    except KeyboardInterrupt:
        summary.interrupted = True
    summary.wall_seconds = time.perf_counter() - start
    return summary


def _run_case(run, prb, ctx: RunContext, err) -> CaseResult:
    """A driver failure is that case's failure, never the run's: it is reported in one line
    and counted, and the batch goes on."""
    try:
        return run(prb, ctx)
    except MemoryError:
        return CaseResult(Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value)
    except BenchError as exc:
        err(f"ERROR: {exc}")
        return CaseResult(Status.FAILED, str(exc).splitlines()[0][:200])
    except Exception as exc:  # noqa: BLE001 - any defect becomes this case's verdict
        if os.environ.get(DEBUG_ENV):
            raise
        err(f"ERROR: internal error on this case: {type(exc).__name__}: {exc} "
            f"(set {DEBUG_ENV}=1 for the traceback)")
        return CaseResult(Status.UNTESTED, f"internal error: {type(exc).__name__}")
