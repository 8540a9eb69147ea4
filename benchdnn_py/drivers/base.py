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
from ..timing import Stopwatch


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


@dataclasses.dataclass(frozen=True)
class RunContext:
    settings: GlobalSettings
    idx: int
    log: Callable[[str], None]   # verbose lines, printed to stdout in order


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
