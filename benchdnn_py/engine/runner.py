"""Runs a plan: which cases (--match, --shard, --resume), where (this process, local
worker processes, a Dask cluster), and everything printed and written about them.

Wherever the cases run, each becomes a CaseOutcome (execute.run_task) and this module alone
prints it, writes it to the results and JUnit files and counts it, in submission order: a
reorder buffer holds cases that finish early. Every case's lines are printed and its
records written as soon as it and every case before it have finished, so an interrupted
run keeps everything it already reported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

from .. import backends, core
from ..drivers import names_an_implementation
from ..errors import UsageError
from ..reports import perf_report
from ..reports.junit import JUnitWriter, run_properties
from ..reports.results import ResultsError, ResultsWriter, case_key, read, run_json
from ..reports.text import RunSummary, result_line
from ..status import Status
from . import memory
from . import shard as sharding
from .case import group_timing
from .execute import CaseOutcome, CaseTask, lost_outcome, repro_of, run_task, selection_of
from .harness import Plan, PlannedCase
from .impl_filter import without_variant
from .progress import NoBar
from .settings import DASK_SCHEME, GlobalSettings
from .timing import TimingGroup
from .workers import KILLED_REASON, DaskPool, LocalPool, Lost, WorkerError


@dataclasses.dataclass
class Prepared:
    """A case of this run, as the parent keeps it: the task a worker gets, and what the
    parent needs to report the case if no outcome comes back."""

    task: CaseTask
    case: PlannedCase
    prb: Any
    repro: str
    key: str          # results.case_key: what --resume matches on, with the index


def prepare(plan: Plan) -> list[Prepared]:
    """Makes every problem (cheap: no tensors), drops the cases --match leaves out, and
    numbers the rest: the index a result line prints."""
    out: list[Prepared] = []
    for case in plan.cases:
        prb, repro, error = repro_of(case)
        match = case.values.get("match")
        if match is not None and not match.search(repro):
            continue
        key = case_key(case.driver.name, case.values,
                       case.unparsed_repro if prb is None
                       else prb.repro(False) if case.settings.canonical else repro)
        task = CaseTask(len(out), len(out), case.driver.name, case.values, case.desc_text,
                        case.settings, case.source, case.batch, case.given, prb=prb,
                        repro=repro, error=str(error) if error is not None else "")
        out.append(Prepared(task, case, prb, repro, key))
    return out


def check_run_options(s: GlobalSettings) -> None:
    """Combinations refused before anything runs (UsageError, one line each)."""
    dask = s.executor.startswith(DASK_SCHEME)
    if s.mode.performance and s.jobs > 1:
        raise UsageError(f"--jobs={s.jobs}: performance modes (--mode={s.mode.letters}) time "
                         f"one case at a time on an otherwise idle machine; use --jobs=1 "
                         f"or leave it out")
    if s.mode.performance and dask:
        raise UsageError(f"--executor={s.executor}: performance modes (--mode="
                         f"{s.mode.letters}) time on this machine only; leave --executor out")
    if dask and s.jobs:
        raise UsageError(f"--jobs={s.jobs}: not with --executor={s.executor}, whose workers "
                         f"set how many cases run at once")
    if dask and s.timeout:
        raise UsageError(f"--timeout={s.timeout:g}: not with --executor={s.executor} (a "
                         f"Dask worker cannot stop a running case); use local workers")
    if s.junit and s.junit in (s.results, s.resume):
        raise UsageError(f"--junit={s.junit}: the same file as --results/--resume")
    check_outputs(s)


def _same_file(a: str, b: str) -> bool:
    return bool(a and b) and os.path.abspath(a) == os.path.abspath(b)


def check_outputs(s: GlobalSettings) -> None:
    """A run overwrites no file it was not told to: a --results or --junit file that exists
    is refused unless --replace=true, or it is the run --resume completes (its results
    file, continued; its JUnit file, written again for the whole run)."""
    if s.replace:
        return
    for option, path in (("--results", s.results), ("--junit", s.junit)):
        if not path or not os.path.exists(path):
            continue
        if s.resume and (option == "--junit" or _same_file(path, s.resume)):
            continue
        hint = f", or --resume={path} to complete its run" if option == "--results" else ""
        raise UsageError(f"{option}={path}: the file exists; name a new file, pass "
                         f"--replace=true to overwrite it{hint}")


class Session:
    """One run of a plan, set up: every usage error is raised by the constructor, before
    any case runs; run() then runs the cases and closes the files."""

    def __init__(self, plan: Plan, argv: list[str], env: Mapping[str, str] = os.environ,
                 backend_names: list[str] | None = None) -> None:
        self.plan = plan
        s = plan.settings
        check_run_options(s)
        self.notes: list[str] = []
        self.pool: LocalPool | DaskPool | None = None
        local = s.mode.execute and not s.executor.startswith(DASK_SCHEME) and (
            s.jobs or s.timeout)
        if local:
            # Spawned now, the workers import numpy and the core while this process makes
            # the cases below.
            self.pool = LocalPool(s.jobs or 1, s.timeout)
            self.pool.start()
        try:
            self._set_up(plan, argv, env, backend_names)
        except BaseException:
            self.close_pool()
            raise

    def _set_up(self, plan: Plan, argv: list[str], env: Mapping[str, str],
                backend_names: list[str] | None) -> None:
        s = plan.settings
        cases = prepare(plan)
        shard = s.shard or sharding.from_env(env)
        if shard is not None:
            s = dataclasses.replace(s, shard=shard)
            total = len(cases)
            cases = [p for p in cases
                     if sharding.owner(sharding.canonical_line(p.case, p.prb), shard.total)
                     == shard.index]
            sharding.acknowledge(env)
            self.notes.append(f"benchdnn-py: shard {shard}: {len(cases)} of {total} cases")
        self.settings = s
        head, self.resumed, cases = self._resume(s, cases)
        # A case's results record (a few hundred JSON-ready fields) is built, and sent back
        # by a worker, only for a run that writes one.
        records = bool(s.results or s.resume or s.junit)
        self.todo = []
        for seq, p in enumerate(cases):
            task = dataclasses.replace(p.task, seq=seq, record=records)
            self.todo.append(dataclasses.replace(p, task=task))
        self.jobs, self.threads = 1, core.max_threads()
        if not self.todo:
            self.close_pool()
        elif isinstance(self.pool, LocalPool):
            self.jobs, self.threads = self.pool.jobs, self.pool.threads
        elif s.mode.execute and s.executor.startswith(DASK_SCHEME):
            self.pool = DaskPool(s.executor)
            self.jobs = 0
        if self.pool is not None and any(interleaved(p) for p in self.todo):
            raise UsageError("--perf-interleave=true: its cases are timed together in this "
                             "process; leave --jobs and --timeout out")
        if self.pool is not None:
            self.notes.append(f"benchdnn-py: running on {self.pool.describe()}")
        self.writer: ResultsWriter | None = None
        self.junit: JUnitWriter | None = None
        if backend_names is None:   # the header records each backend the cases use
            backend_names = backends.used_by([p.case for p in cases])
        # The header loads those backends, and oneDNN takes its instruction-set cap once, at
        # load: the first case's --isa is in force by then, as when that case loads it.
        if cases:
            core.cap_isa(cases[0].case.settings.isa)
        self._open_files(s, argv, head, backend_names)

    # -- setup ------------------------------------------------------------------------
    def _resume(self, s: GlobalSettings, cases: list[Prepared]):
        """(header of the resumed file, [(case, record)] already done, cases to run)."""
        if not s.resume:
            return None, [], cases
        try:
            earlier = read(s.resume)
        except ResultsError as exc:
            raise UsageError(f"--resume={s.resume}: {exc}") from None
        if earlier.header.get("driver") != self.plan.driver.name:
            raise UsageError(f"--resume={s.resume}: a --{earlier.header.get('driver')} run, "
                             f"this is --{self.plan.driver.name}")
        # A case whose worker was killed from outside (SIGKILL: a user, a scheduler, the
        # OOM killer) has no verdict of its own: it runs again.
        killed = [r for r in earlier.cases if r.get("reason") == KILLED_REASON]
        done = {(r.get("idx"), r["key"]): r for r in earlier.cases
                if r.get("reason") != KILLED_REASON}
        resumed = [(p, done[(p.task.idx, p.key)]) for p in cases
                   if (p.task.idx, p.key) in done]
        if earlier.cases and not resumed:
            raise UsageError(f"--resume={s.resume}: none of its {len(earlier.cases)} cases "
                             f"is a case of this run (another batch, shard or option?)")
        if len(resumed) + len(killed) < len(earlier.cases):
            self.notes.append(f"benchdnn-py: --resume={s.resume}: "
                              f"{len(earlier.cases) - len(resumed) - len(killed)} of its "
                              f"cases are not cases of this run; they are left out")
        if killed:
            self.notes.append(f"benchdnn-py: --resume={s.resume}: {len(killed)} case(s) "
                              f"whose worker was killed ({KILLED_REASON}) run again")
        taken = {id(p) for p, _ in resumed}
        self.notes.append(f"benchdnn-py: --resume={s.resume}: {len(resumed)} of {len(cases)} "
                          f"cases already done; running {len(cases) - len(resumed)}")
        return earlier.header, resumed, [p for p in cases if id(p) not in taken]

    def _open_files(self, s: GlobalSettings, argv: list[str], head, backend_names) -> None:
        driver = self.plan.driver.name
        run = run_json(s)
        prior = [r for _, r in self.resumed] if s.resume else None
        path = s.results or s.resume
        if path:
            same = s.resume and os.path.abspath(path) == os.path.abspath(s.resume)
            self.writer = ResultsWriter(path, driver, argv, backend_names,
                                        head=head if same else None, prior=prior, run=run,
                                        option="--results" if s.results else "--resume")
        if s.junit:
            executor = s.executor if self.pool is None or self.jobs == 0 else (
                f"local, {self.jobs} workers")
            self.junit = JUnitWriter(s.junit, f"benchdnn-py --{driver}",
                                     run_properties(s, self.jobs, self.threads, executor))

    def close_pool(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    # -- running ----------------------------------------------------------------------
    def run(self, stdout: TextIO, stderr: TextIO, bar=None) -> RunSummary:
        with _Interrupts() as stops:
            return self._run(stdout, stderr, bar, stops)

    def _run(self, stdout: TextIO, stderr: TextIO, bar, stops: _Interrupts) -> RunSummary:
        bar = bar or NoBar()
        summary = RunSummary()
        emit = _Emitter(self, summary, stdout, stderr, bar, stops)
        for note in self.notes:
            emit.err(note)
        start = time.perf_counter()
        bar.start(len(self.resumed) + len(self.todo), done=len(self.resumed))
        for p, record in self.resumed:
            emit.resumed(p, record)
        pending: dict[int, CaseOutcome] = {}
        try:
            if self.pool is None:
                memory.keep_freed_memory(memory.budget().keep)
                for members in timing_groups(self.todo):
                    if len(members) == 1:
                        emit.case(members[0], run_task(members[0].task, log=emit.out,
                                                       err=emit.err))
                    else:
                        for p, outcome in zip(members, _run_group(members, emit)):
                            emit.case(p, outcome)
            else:
                self._run_pool(emit, pending)
        except KeyboardInterrupt:
            summary.interrupted = True
        except WorkerError as exc:
            summary.error = str(exc)
        finally:
            stops.stopping = True
            # Cases that finished after one still running: measured, so kept.
            for seq in sorted(pending):
                emit.case(self.todo[seq], pending.pop(seq))
            bar.stop()
            self.close_pool()
            summary.wall_seconds = time.perf_counter() - start
            summary.failed_lines = [line for _, line in sorted(emit.failed)]
            if self.writer is not None:
                self.writer.close(summary.counts.values, summary.interrupted,
                                  summary.wall_seconds)
            if self.junit is not None:
                self.junit.close()
        return summary

    def _run_pool(self, emit: "_Emitter", pending: dict[int, CaseOutcome]) -> None:
        results: Iterator[CaseOutcome | Lost] = self.pool.run(p.task for p in self.todo)
        next_seq = 0
        try:
            for item in results:
                if isinstance(item, Lost):
                    p = self.todo[item.seq]
                    item = lost_outcome(p.task, p.prb, p.repro, item.reason, item.ms)
                pending[item.seq] = item
                while next_seq in pending:
                    emit.case(self.todo[next_seq], pending.pop(next_seq))
                    next_seq += 1
        finally:
            results.close()   # stops the workers (kills those still running a case)


def interleaved(p: Prepared) -> bool:
    s = p.case.settings
    return s.perf_interleave and s.mode.performance


def timing_groups(todo: list[Prepared]) -> Iterator[list[Prepared]]:
    """The cases in order, in runs to time together: consecutive --perf-interleave cases of
    one descriptor (PlannedCase.group); every other case alone."""
    for _, run in itertools.groupby(todo, key=lambda p: p.case.group if interleaved(p)
                                    else ("alone", p.task.seq)):
        yield list(run)


def _run_group(members: list[Prepared], emit: "_Emitter") -> list[CaseOutcome]:
    """The cases of one timing group, each up to its timing, then timed together
    (TimingGroup), then each to its end."""
    group = TimingGroup(core.max_threads, core.set_threads, memory.PeakRss)

    def work(i: int, p: Prepared):
        return lambda: run_task(p.task, log=emit.out, err=emit.err, group=(group, i))

    return group.run([work(i, p) for i, p in enumerate(members)],
                     group_timing(members[0].case.settings))


class _Interrupts:
    """Ctrl-C and SIGTERM as KeyboardInterrupt, held back while a case is printed, written
    and counted (hold): one arriving between a case's results record and its count would
    leave the results file a case more than the summary. A held one is raised as the case
    is done. Installed for a run (in the main thread: only it can set handlers), the
    earlier handlers restored after it."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.held = self.pending = False
        # set once the run is stopping: later signals are ignored, so that a second Ctrl-C
        # cannot cut the files' closing short
        self.stopping = False
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self.saved = {sig: signal.signal(sig, self._stop) for sig in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

    def _stop(self, signum, frame) -> None:
        if self.held or self.stopping:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        self.held = True
        try:
            yield
        finally:
            self.held = False
        if self.pending and not self.stopping:
            self.pending = False
            raise KeyboardInterrupt


class _Emitter:
    """Prints, writes and counts the outcomes, one case at a time, in order."""

    def __init__(self, session: Session, summary: RunSummary, stdout: TextIO,
                 stderr: TextIO, bar, stops: _Interrupts) -> None:
        self.s, self.summary, self.bar, self.stops = session, summary, bar, stops
        self.stdout, self.stderr = stdout, stderr
        self.stdout_tty = bool(getattr(stdout, "isatty", lambda: False)())
        self.printed_template: str | None = None
        self.failed: list[tuple[int, str]] = []
        self.driver = session.plan.driver

    def out(self, line: str) -> None:
        if self.bar.active and self.stdout_tty:
            self.bar.print(line)
            return
        self.stdout.write(line + "\n")
        self.stdout.flush()

    def err(self, line: str) -> None:
        if self.bar.active:
            self.bar.print(line)
            return
        self.stderr.write(line + "\n")
        self.stderr.flush()

    def case(self, p: Prepared, o: CaseOutcome) -> None:
        with self.stops.hold():   # all of a case or none of it
            self._case(p, o)

    def _case(self, p: Prepared, o: CaseOutcome) -> None:
        for line in o.errors:
            self.err(line)
        for line in o.log + o.diagnostics:
            self.out(line)
        if o.status is not Status.EXECUTED:
            self.out(o.line)
        if o.perf is not None:
            template = p.case.settings.perf_template.resolve(self.driver.csv_perf_fields)
            if template != self.printed_template:
                self.out(f"Template entries: {template}")
                self.out(perf_report.header(template))
                self.printed_template = template
            self.out(perf_report.render(template, o.perf))
            self.summary.perf.append((p.repro, o.perf))
        if o.machine is not None:
            self.summary.guard.add(o.machine)
        if o.memory is not None and o.memory.over:
            self.summary.memory_over += 1
        for name, seconds in o.timers.items():
            self.summary.timers.seconds[name] += seconds
        if self.s.writer is not None:
            self.s.writer.write_record(o.record)
        self._count(p, o.status, o.impl, o.line, o.record)
        self.bar.advance(o.status)

    def resumed(self, p: Prepared, record: dict[str, Any]) -> None:
        """A case --resume found done: counted (and listed if it failed) as it was."""
        status = Status(record["status"])
        line = result_line(p.task.idx, status, record.get("reason") or "",
                           record.get("errors") or 0, record.get("total") or 0,
                           record.get("wall_ms") or 0.0, p.case.settings.repro_prefix(),
                           self.driver.name, record.get("impl") or "", p.repro,
                           selection_of(p.case, record.get("reason") or ""))
        self._count(p, status, record.get("impl") or "", line, record)
        self.bar.advance(status, step=0)

    def _count(self, p: Prepared, status: Status, impl: str, line: str,
               record: dict[str, Any]) -> None:
        self.summary.counts.add(status)
        if impl:
            self.summary.impl_hits[impl] += 1
        if status.is_failure:
            self.failed.append((p.task.idx, line))
        if self.s.junit is not None:
            self.s.junit.add(record, p.case.batch, line)


def selection_warnings(plan: Plan, summary: RunSummary) -> list[str]:
    """What a finished run selected that the user likely did not mean (it still exits 0,
    as benchdnn does, but never silently): --impl names that no implementation that ran
    contains (a typo: the cases only they select are SKIPPED; not in list mode, where
    nothing runs), --skip-impl names that no implementation of any table contains (a
    typo: they skip nothing), and a run that selected no case at all."""
    filters = [f for case in plan.cases if (f := case.values.get("impl_filter")) is not None]
    names = {include: dict.fromkeys(n for f in filters if f.include is include for n in f.names)
             for include in (True, False)}
    out = [f"--skip-impl name `{n}` is part of no implementation name (it skips nothing)"
           for n in names[False] if not names_an_implementation(n)]
    if not plan.settings.mode.list_only:
        out += [f"--impl name `{n}` is part of no implementation that ran (cases only it "
                f"selected are SKIPPED)"
                for n in names[True]
                if not any(n in without_variant(impl) for impl in summary.impl_hits)]
    if summary.counts.values["tests"] == 0:
        why = ("no problem was given (on the command line or in the batch files)"
               if not plan.cases else "--match or --shard left every case out")
        out.append(f"the run selected no case: {why}")
    return out
