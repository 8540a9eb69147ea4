"""What every driver provides, and what a case hands back to the harness.

A driver declares its options (in the order their lists expand), turns option values plus
a descriptor into a problem, and runs a problem in a mode. Everything else (argument
stream, batch files, counting, printing) is shared and lives outside the driver.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Protocol

from ..options import Option
from ..perf_report import DEFAULT_TEMPLATE, PerfRecord
from ..settings import GlobalSettings
from ..status import Status
from ..timing import MachineCheck, Stopwatch, TimingGroup


class Problem(Protocol):
    def repro(self, canonical: bool) -> str:
        """Driver options that differ from their defaults, then the descriptor."""

    @property
    def desc_text(self) -> str: ...


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


@dataclasses.dataclass(frozen=True)
class RunContext:
    settings: GlobalSettings
    idx: int
    log: Callable[[str], None]   # verbose lines, printed to stdout in order
    # --perf-interleave: the group this case is timed with, and its place in it
    group: tuple[TimingGroup, int] | None = None


@dataclasses.dataclass(frozen=True)
class Driver:
    name: str
    options: tuple[Option, ...]
    make_problem: Callable[[Mapping[str, Any], str, GlobalSettings], Problem]
    run: Callable[[Problem, RunContext], CaseResult]
    csv_perf_fields: str                   # driver part of the csv perf template
    perf_fields: frozenset[str]            # template fields this driver can fill
    description: str = ""
    # An option whose every `--NAME=VALUE` names one case, exactly as a descriptor token
    # would (graph: `--case=FILE.json`); empty when the driver has none.
    case_option: str = ""
    # What --perf-template=def (the default) prints for this driver.
    default_perf_template: str = DEFAULT_TEMPLATE

    def option(self, name: str) -> Option | None:
        for opt in self.options:
            if opt.name == name:
                return opt
        return None


def first_accepting(table, allow, build: Callable[[Any], Any], res: "CaseResult") -> Any:
    """The primitive of the first implementation, in ``table``'s order of preference, that
    the filter ``allow`` lets through and ``build`` accepts (it raises core.Unimplemented
    otherwise); None with res SKIPPED (the filter left some out) or UNIMPLEMENTED."""
    from ..core import Unimplemented   # here: the harness imports this module without the core
    from ..status import Reason

    with res.timers("create_pd"):
        candidates = [i for i in table if allow.allows(i.name)]
    with res.timers("create_prim"):
        for impl in candidates:
            try:
                return build(impl)
            except Unimplemented:
                continue
    if len(candidates) < len(table):
        res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
    else:
        res.status, res.reason = Status.UNIMPLEMENTED, "no implementation accepts this problem"
    return None


@dataclasses.dataclass(frozen=True)
class OpSteps:
    """What a single-primitive driver (eltwise, pool) supplies to run_op_case, which owns
    their common case flow. ``prb`` is the driver's problem; buffers are what ``prepare``
    returns: they carry ``out`` (a memory.Guarded output) and ``run`` (the bound execution).
    """

    driver: str
    unsupported: Callable[[Any], "tuple[Status, str] | None"]   # a blocker with its reason
    skip_note: Callable[[Any], "str | None"]       # -v1 detail of a SKIPPED blocker
    footprint: Callable[[Any], int]                # bytes a correctness case allocates
    create: Callable[[Any, CaseResult], Any]       # (primitive, route), or None with res set
    layouts: Callable[[Any], str]                  # -v5 text after the implementation name
    prepare: Callable[[Any, Any, Any, bool], Any]  # (prb, primitive, route, perf) -> buffers
    reference: Callable[[Any, Any], Any]           # (prb, buffers) -> the expected output
    judge: Callable[[Any, Any, Any, CaseResult, int], None]   # (prb, buffers, exp, res, -v)
    # (prb, ctx, implementation, times, (create_pd, create_prim) seconds, buffers)
    perf_record: Callable[[Any, RunContext, str, list, tuple, Any], PerfRecord]


def run_op_case(prb: Any, ctx: RunContext, steps: OpSteps) -> CaseResult:
    """One case of a single-primitive driver, in benchdnn's order: the blockers, the
    memory guard, create (and the reorder route), then in correctness modes fill, execute,
    the guard bands, the reference and the compare, and in performance modes the timing
    loop."""
    from ..drivers.conv.driver import measure_into   # (the harness imports this module
    from ..memory import fits_in_ram                 # without the core)
    from ..status import Reason

    res = CaseResult(Status.UNTESTED)
    mode, verbose = ctx.settings.mode, ctx.settings.verbose
    if mode.list_only:
        res.status = Status.LISTED
        return res
    blocker = steps.unsupported(prb)
    if blocker:
        res.status, res.reason = blocker
        note = steps.skip_note(prb) if res.status is Status.SKIPPED else None
        if verbose >= 1 and note:
            ctx.log(f"skipped: {note}")
        return res
    if not fits_in_ram(steps.footprint(prb)):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if verbose >= 1:
        ctx.log(f"run: --{steps.driver} {prb.repro(ctx.settings.canonical)}")
    created = steps.create(prb, res)
    if created is None:
        return res
    prim, route = created
    res.impl = route.name(prim.name)
    if verbose >= 5:
        ctx.log(f"implementation: {res.impl}; {steps.layouts(prb)}")
    create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
    bufs = None
    if mode.correctness:
        with res.timers("fill"):
            bufs = steps.prepare(prb, prim, route, False)
        with res.timers("execute"):
            bufs.run()
        if not bufs.out.intact():
            res.status, res.reason = Status.FAILED, "wrote outside an output buffer"
            return res
        with res.timers("compute_ref"):
            exp = steps.reference(prb, bufs)
        with res.timers("compare"):
            steps.judge(prb, bufs, exp, res, verbose)
    if mode.performance:
        if bufs is None:
            with res.timers("fill"):
                bufs = steps.prepare(prb, prim, route, True)
            res.status = Status.EXECUTED
        times = measure_into(res, bufs.run, ctx)
        res.perf = steps.perf_record(prb, ctx, res.impl, times, create_s, bufs)
    return res
