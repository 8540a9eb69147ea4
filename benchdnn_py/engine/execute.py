"""One case, the same wherever it runs: in this process, in a local worker process, or
on a Dask worker.

:func:`run_task` turns a :class:`CaseTask` into a :class:`CaseOutcome`. Both are
picklable (a task carries option values and the driver's name, never the driver's
callables), and the outcome holds everything the parent prints and writes for the case:
the result line, the lines before it, the perf record, the results-file record. Only the
parent prints, writes files and counts, in submission order, so a run gives the same lines
however its cases were spread out.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable

from .. import core
from ..drivers import DRIVERS
from ..errors import BenchError, ProblemError
from ..reports.perf_report import PerfRecord
from ..reports.results import case_record
from ..reports.text import result_line
from ..status import Reason, Status
from . import memory
from .case import CaseResult, RunContext
from .harness import PlannedCase
from .memory import CaseMemory
from .settings import GlobalSettings
from .timing import MachineCheck, TimingGroup

DEBUG_ENV = "BENCHDNN_PY_DEBUG"

Log = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class CaseTask:
    seq: int                      # position in this run's submission order
    idx: int                      # the index the result line prints (the same in a shard)
    driver: str
    values: dict[str, Any]
    desc_text: str
    settings: GlobalSettings
    source: str
    batch: str = ""
    given: tuple[str, ...] = ()
    record: bool = True           # build the results-file record (--results, --resume, --junit)
    # The problem, made once when the run was planned (None: the descriptor's error), and
    # the repro the result line prints.
    prb: Any = None
    repro: str = ""
    error: str = ""

    def planned(self) -> PlannedCase:
        return PlannedCase(DRIVERS[self.driver], self.values, self.desc_text, self.settings,
                           self.source, self.batch, self.given)


@dataclasses.dataclass
class CaseOutcome:
    seq: int
    idx: int
    status: Status
    reason: str
    line: str                     # the result line
    impl: str
    ms: float
    record: dict[str, Any] | None  # the results-file record, when the task asks for it
    log: list[str] = dataclasses.field(default_factory=list)          # stdout, verbose
    diagnostics: list[str] = dataclasses.field(default_factory=list)  # stdout, before line
    errors: list[str] = dataclasses.field(default_factory=list)       # stderr
    perf: PerfRecord | None = None
    timers: dict[str, float] = dataclasses.field(default_factory=dict)
    threads: int = 0              # OpenMP threads of the process that ran it
    machine: MachineCheck | None = None   # the perf guard's probes around its timing
    memory: CaseMemory | None = None      # the memory guard's estimate and the peak RSS


def repro_of(case) -> tuple[Any, str, ProblemError | None]:
    """(problem or None, the repro the result line prints, the descriptor's error)."""
    try:
        prb = case.driver.make_problem(case.values, case.desc_text, case.settings)
    except ProblemError as exc:
        return None, case.unparsed_repro, exc
    return prb, prb.repro(case.settings.canonical), None


def run_task(task: CaseTask, log: Log | None = None, err: Log | None = None,
             group: tuple[TimingGroup, int] | None = None) -> CaseOutcome:
    """Runs one case. log/err: print the verbose and error lines as they come (the serial
    path); without them, the lines are kept in the outcome for the parent to print.
    group: time it with the other cases of that group (RunContext.group)."""
    start = time.perf_counter()
    case = task.planned()
    core.cap_isa(case.settings.isa)
    memory.huge_pages(case.settings.mode.performance)
    kept_log: list[str] = []
    kept_err: list[str] = []
    log = log or kept_log.append
    err = err or kept_err.append
    prb, repro, error = task.prb, task.repro, task.error
    if prb is None:
        err(f"ERROR: {error} ({case.source})")
        result = CaseResult(Status.INVALID_ARGUMENTS, error)
    else:
        result = _run_case(case.driver.run, prb, RunContext(case.settings, task.idx, log, group),
                           err)
    ms = (time.perf_counter() - start) * 1e3
    memory.after_case(result.memory.estimate if result.memory else 0)
    return CaseOutcome(
        task.seq, task.idx, result.status, result.reason,
        _line(case, task.idx, result, ms, repro), result.impl, ms,
        case_record(case, prb, result, task.idx, ms) if task.record else None, kept_log,
        list(result.diagnostics),
        kept_err, result.perf, dict(result.timers.seconds), core.max_threads(),
        result.machine, result.memory)


def lost_outcome(task: CaseTask, prb, repro: str, reason: str, ms: float) -> CaseOutcome:
    """The verdict on a case whose worker died or ran out of time: FAILED, with the reason
    (``crashed: SIGSEGV``, ``timeout after 60s``); built by the parent, which kept the
    problem."""
    case = task.planned()
    result = CaseResult(Status.FAILED, reason)
    return CaseOutcome(task.seq, task.idx, result.status, reason,
                       _line(case, task.idx, result, ms, repro), "", ms,
                       case_record(case, prb, result, task.idx, ms) if task.record else None)


def selection_of(case, reason: str) -> str:
    """The --impl or --skip-impl option of a case its filter skipped, for its repro."""
    impl_filter = case.values.get("impl_filter")
    if reason != Reason.SKIP_IMPL_HIT.value or impl_filter is None:
        return ""
    return impl_filter.option()


def _line(case, idx: int, result: CaseResult, ms: float, repro: str) -> str:
    return result_line(idx, result.status, result.reason, result.errors, result.total, ms,
                       case.settings.repro_prefix(), case.driver.name, result.impl, repro,
                       selection_of(case, result.reason))


def _run_case(run, prb, ctx: RunContext, err: Log) -> CaseResult:
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
