"""The case engine: the one flow every driver's case runs, in benchdnn's order.

    list only            -> LISTED
    steps.unsupported    -> its (status, reason): a limit of the problem, the kernels or
                            the backend, decided before anything is allocated
    memory guard         -> SKIPPED when steps.footprint (the driver's buffers) would not
                            fit in the run's RAM budget
    steps.create         -> the primitive (or res set: SKIPPED by --impl, UNIMPLEMENTED)
    memory guard         -> the estimate (steps.estimate: the footprint in the layouts
                            the primitive resolved, plus its own memory, prim.memory_bytes:
                            packed weights, scratch, a backend's copies): SKIPPED if it
                            cannot fit; else held in the budget (shared with the run's
                            other workers) while the case runs, and the peak RSS the case
                            reached measured against it
    correctness modes:   steps.prepare (fill, bind) -> execute -> collect -> the guard
                         bands -> steps.reference -> steps.judge (compare, memory checks)
    performance modes:   steps.prepare (perf fill, when not done) -> the timing loop
                         (measure_into) -> steps.perf_record

A driver supplies the steps (drivers.base.CaseSteps); everything else, including the
service timers each step is counted under, lives here once.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import TYPE_CHECKING, Callable

from .. import core
from ..common.check import Verdict, diagnostics
from ..reports.perf_report import PerfRecord, machine_limit
from ..status import Reason, Status
from . import memory
from .settings import GlobalSettings
from .timing import (WAIT_TIMER, MachineCheck, MachineGuard, Stopwatch, TimingGroup, measure,
                     measure_turns)

if TYPE_CHECKING:   # pragma: no cover
    from ..drivers.base import CaseSteps


@dataclasses.dataclass
class CaseResult:
    status: Status
    reason: str = ""
    errors: int = 0
    total: int = 0                 # points compared
    outputs: int = 0               # points the compared tensors hold (> total: sampled)
    impl: str = ""
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    perf: PerfRecord | None = None
    timers: Stopwatch = dataclasses.field(default_factory=Stopwatch)
    machine: MachineCheck | None = None   # the perf guard's probes around the timing
    memory: memory.CaseMemory | None = None   # the memory guard's estimate, and the peak

    def take_verdict(self, verdict: Verdict, shape: tuple[int, ...], verbose: int) -> None:
        """A compared tensor's verdict: its diagnostic lines (points in shape's logical
        order), its counts, and FAILED, MISTRUSTED or PASSED."""
        self.diagnostics += diagnostics(verdict, shape, verbose)
        self.errors, self.total, self.outputs = verdict.errors, verdict.total, verdict.size
        self.status = (Status.FAILED if verdict.failed else
                       Status.MISTRUSTED if verdict.mistrusted else Status.PASSED)

    def take_memory_fault(self, fault: tuple[str, list[str]] | None) -> None:
        """check.memory_faults' finding, if any: FAILED with its reason and lines."""
        if fault:
            self.status = Status.FAILED
            self.reason, extra = fault
            self.diagnostics += extra


@dataclasses.dataclass(frozen=True)
class RunContext:
    settings: GlobalSettings
    idx: int
    log: Callable[[str], None]   # verbose lines, printed to stdout in order
    # --perf-interleave: the group this case is timed with, and its place in it
    group: tuple[TimingGroup, int] | None = None


def run(prb, ctx: RunContext, steps: "CaseSteps") -> CaseResult:
    """One case of a driver, from its blockers to its verdict and timings."""
    res = CaseResult(Status.UNTESTED)
    settings = ctx.settings
    if settings.mode.list_only:
        res.status = Status.LISTED
        return res
    blocker = steps.unsupported(prb)
    if blocker:
        res.status, res.reason = blocker
        note = steps.skip_note(prb) if res.status is Status.SKIPPED else None
        if settings.verbose >= 1 and note:
            ctx.log(f"skipped: {note}")
        return res
    budget = memory.budget()
    footprint = steps.footprint(prb)
    if not budget.fits(footprint):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if settings.verbose >= 1:
        ctx.log(f"run: --{steps.driver} {prb.repro(settings.canonical)}")
    with core.threads(steps.threads(prb)):   # creation plans for the threads it runs on
        prim = steps.create(prb, res)
        if prim is None:
            return res
        try:
            estimate = steps.estimate(prb, prim)
            if not budget.fits(estimate):
                res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
                return res
            res.timers.seconds[WAIT_TIMER] += budget.hold(estimate)   # (until the case ends)
            # (after create: a backend loaded on first use is not the case's memory)
            rss = memory.PeakRss()
            try:
                _execute(prb, ctx, steps, prim, res, rss)
            finally:
                _measured(res, ctx, memory.CaseMemory(
                    steps.tensor_bytes(prb, prim), estimate, rss.added(),
                    getattr(prim, "scratchpad_bytes", None)))
        finally:
            prim.close()
    return res


def _measured(res: CaseResult, ctx: RunContext, used: memory.CaseMemory) -> None:
    res.memory = used
    if ctx.settings.verbose >= 2:
        ctx.log(used.line())
    if used.over:
        res.diagnostics.append(used.diagnostic())


def _execute(prb, ctx: RunContext, steps: "CaseSteps", prim, res: CaseResult,
             rss: memory.PeakRss | None = None) -> None:
    mode, verbose = ctx.settings.mode, ctx.settings.verbose
    res.impl = prim.name
    if verbose >= 5:
        info = f" ({prim.info})" if prim.info else ""
        ctx.log(f"implementation: {prim.name}{info}; {steps.layouts(prb, prim)}")
    if ctx.settings.check_ref_impl and "ref" in prim.name:
        res.status = Status.FAILED
        res.reason = f"--check-ref-impl: `{prim.name}` is a reference implementation"
        return
    create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
    bound = None
    if mode.correctness:
        with res.timers("fill"):
            bound = steps.prepare(prb, prim, False)
        with res.timers("execute"):
            bound.run()
        res.impl = prim.name   # a row choosing its tile per execution names the one it ran
        bound.collect()
        breach = bound.breach()
        if breach:
            res.status, res.reason = Status.FAILED, breach
            return
        with res.timers("compute_ref"):
            expected = steps.reference(prb, bound)
        with res.timers("compare"):
            steps.judge(prb, bound, expected, res, verbose)
    if mode.performance:
        if bound is None:
            with res.timers("fill"):
                bound = steps.prepare(prb, prim, True)
            res.status = Status.EXECUTED
        times = measure_into(res, bound.run, ctx, rss)
        res.impl = prim.name   # the perf fill's data may choose another tile
        res.perf = steps.perf_record(prb, ctx, res.impl, times, create_s, bound)


# -- timing ------------------------------------------------------------------------------

def measure_into(res: CaseResult, run_once, ctx: RunContext,
                 rss: memory.PeakRss | None = None) -> list[float]:
    """The case's timed runs; with --perf-guard (default), between compute probes, and
    what they read in res.machine (a degraded machine also as a diagnostic line). Timed
    with a group, its peak RSS (rss) counts its own stretches and the shared timing's."""
    settings = ctx.settings
    if ctx.group is not None:   # timed with its group: the execute timer takes its share
        group, member = ctx.group
        if rss is not None:
            rss.pause()
        try:
            times, res.machine = group.offer(member, run_once)
        finally:
            if rss is not None:
                rss.resume(group.rss_added)
        if res.machine is not None and res.machine.degraded:
            res.diagnostics.append(res.machine.diagnostic())
        res.timers.seconds["execute"] += group.seconds
        return times
    start = time.perf_counter()
    if settings.perf_guard:
        times, res.machine = machine_guard().measure(run_once, settings.max_ms_per_prb,
                                                     settings.fix_times_per_prb)
        if res.machine.degraded:
            res.diagnostics.append(res.machine.diagnostic())
    else:
        times = measure(run_once, settings.max_ms_per_prb, settings.fix_times_per_prb)
    res.timers.seconds["execute"] += time.perf_counter() - start
    return times


def group_timing(settings: GlobalSettings):
    """How a --perf-interleave group (its members' shared settings) is timed
    (TimingGroup.run's timing): in turns, between the perf guard's probes on the most
    threads of its cases (the compute a probe reads is all the cores the group uses)."""
    def timing(runs, threads):
        def turns():
            return measure_turns(runs, settings.max_ms_per_prb, settings.fix_times_per_prb)
        with core.threads(threads):
            return machine_guard().guarded(turns) if settings.perf_guard else (turns(), None)
    return timing


@functools.cache
def machine_guard() -> MachineGuard:
    """One per process: it remembers whether the machine stayed degraded."""
    return MachineGuard(core.probe_peak, functools.partial(machine_limit, "f32"),
                        core.max_threads, cache_probe=core.probe_cache,
                        remeasure=core.remeasure_limits)
