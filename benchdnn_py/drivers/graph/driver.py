"""The graph driver: a oneDNN Graph JSON file is one case, run on the conv machinery.

Case flow: read and check the file (desc.py) -> for each convolution of the graph, print
its equivalent conv command as a ``[CONV_REPRO]`` line and run it with the conv driver's
own run (same implementations, fill, reference, compare and timing) -> one verdict, the
worst of the convolutions'. The result line's repro names the file (``--case=FILE``).
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any, Mapping

from ...engine.impl_filter import ImplFilter
from ...engine.settings import GlobalSettings
from ...errors import ProblemError
from ...reports.perf_report import PerfRecord
from ...status import Status
from ..base import CaseResult, Driver, RunContext
from . import desc

CASE_OPTION = "case"
# The conv driver's options that mean the same here; --dir and --dt come from the file.
CONV_OPTIONS = ("mb", "match", "impl", "skip-impl")
CONV_REPRO_TAG = "[CONV_REPRO]"

# Worst first: a graph's verdict is the worst of its convolutions' verdicts.
_SEVERITY = (Status.UNTESTED, Status.FAILED, Status.INVALID_ARGUMENTS, Status.UNIMPLEMENTED,
             Status.SKIPPED, Status.MISTRUSTED, Status.PASSED, Status.EXECUTED, Status.LISTED)


@dataclasses.dataclass(frozen=True)
class GraphProblem:
    path: str                       # the file as the repro prints it
    case: desc.GraphCase | None     # None when the file could not be read or is wrong
    error: str                      # why, then
    impl_filter: ImplFilter
    user_mb: int
    convs: tuple[Any, ...] = ()     # the conv driver's problems, one per convolution

    @property
    def desc_text(self) -> str:
        return self.path

    def repro(self, canonical: bool = False) -> str:
        mb = f"--mb={self.user_mb} " if self.user_mb else ""
        # quoted as a shell would need it (a path with a space), so the line reruns as is
        return f"{mb}--{CASE_OPTION}={shlex.quote(self.path)}"


def conv_problems(conv: Driver, case: desc.GraphCase, values: Mapping[str, Any],
                  settings: GlobalSettings) -> tuple[Any, ...]:
    """Each convolution of the graph as the conv driver's problem, made through its own
    make_problem from the options a conv command line would give (the descriptor's text
    parses back to the same descriptor)."""
    defaults = {o.slot: o.default for o in conv.options}
    return tuple(conv.make_problem({**defaults, "dir": c.dir, "dt": c.dt,
                                    "attr-post-ops": c.post_ops,
                                    "impl_filter": values["impl_filter"], "mb": values["mb"]},
                                   c.desc.format(), settings)
                 for c in case.convs)


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings, *,
                 conv: Driver) -> GraphProblem:
    # A bad file is reported by run(), not raised: its line then carries the reason and
    # the `--case=FILE` repro like every other graph case.
    try:
        path, case = desc.load(text)
        shown, error = desc.display_path(path), ""
    except ProblemError as exc:
        shown, case, error = text, None, str(exc)
    convs = conv_problems(conv, case, values, settings) if case is not None else ()
    return GraphProblem(shown, case, error, values["impl_filter"], values["mb"], convs)


def conv_repro_line(prb, settings: GlobalSettings) -> str:
    """The conv command that runs the same problem (the text after the tag is a complete
    benchdnn-py argument list)."""
    return f"{CONV_REPRO_TAG} {settings.repro_prefix()}--conv {prb.repro(settings.canonical)}"


def run(prb: GraphProblem, ctx: RunContext, *, conv: Driver) -> CaseResult:
    if prb.case is None:
        return CaseResult(Status.INVALID_ARGUMENTS, prb.error)
    if ctx.settings.mode.list_only:
        if not prb.case.unimplemented:
            for conv_prb in prb.convs:
                ctx.log(conv_repro_line(conv_prb, ctx.settings))
        return CaseResult(Status.LISTED)
    if prb.case.unimplemented:
        return CaseResult(Status.UNIMPLEMENTED, prb.case.unimplemented)
    results = []
    for conv_prb in prb.convs:
        # Printed before running, so it is there even if the run dies; its failing points
        # follow it, each convolution's under its own line.
        ctx.log(conv_repro_line(conv_prb, ctx.settings))
        result = conv.run(conv_prb, ctx)
        for line in result.diagnostics:
            ctx.log(line)
        results.append(result)
    return _combine(prb, ctx, results)


def _combine(prb: GraphProblem, ctx: RunContext, results: list[CaseResult]) -> CaseResult:
    worst = min(results, key=lambda r: _SEVERITY.index(r.status))
    res = CaseResult(worst.status, worst.reason)
    res.errors = sum(r.errors for r in results)
    res.total = sum(r.total for r in results)
    res.outputs = sum(r.outputs for r in results)
    # A comma list is also what --impl= accepts, so the repro line still reruns.
    res.impl = ",".join(dict.fromkeys(r.impl for r in results if r.impl))
    for r in results:
        res.timers.add(r.timers)
    records = [r.perf for r in results]
    if records and all(rec is not None for rec in records):
        res.perf = _perf_record(prb, ctx, records)  # type: ignore[arg-type]
    return res


def _perf_record(prb: GraphProblem, ctx: RunContext, records: list[PerfRecord]) -> PerfRecord:
    """One record for the graph. With several convolutions, a timed run of the graph is
    one timed run of each (their j-th samples summed), and the work adds up."""
    text = {key: "+".join(dict.fromkeys(r.text[key] for r in records)) for key in records[0].text}
    text.update(driver="graph", name=Path(prb.path).name,
                prb=f"{ctx.settings.repro_prefix()}--graph {prb.repro(ctx.settings.canonical)}")
    runs = min(len(r.times_ms) for r in records)
    times = [sum(r.times_ms[j] for r in records) for j in range(runs)]
    create = (sum(r.create_ms[0] for r in records), sum(r.create_ms[1] for r in records))
    return PerfRecord(text, sum(r.ops for r in records), sum(r.ibytes for r in records),
                      sum(r.obytes for r in records), times, create, ctx.idx, prb.user_mb,
                      limit=records[0].limit)
