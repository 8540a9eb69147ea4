"""What every driver provides: the one contract between a driver and the case engine.

A driver declares its options (in the order their lists expand), turns option values plus
a descriptor into a problem, and supplies the steps of a case (CaseSteps) that the engine
(engine.case.run) runs in one order for every driver. Everything else (argument stream,
batch files, counting, printing, timing) is shared and lives outside the drivers.

Each driver is a folder with the same file roles: ``desc.py`` (descriptor grammar and
canonical printing), ``cfg.py`` (per-data-type numbers: fill ranges, thresholds, each with
its reason), ``ref.py`` (the scalar reference and the op count), ``driver.py`` (options,
problem and the steps); extra roles use the same names wherever they occur (``problem.py``,
``attrs.py``, ``prim.py``, ``formats.py``, ``dt.py``). A driver's ``__init__`` names a role
it does not have.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Callable, Mapping, Protocol

from .. import backends, core
from ..common import reorders
from ..engine.case import CaseResult, RunContext
from ..engine.impl_filter import first_accepting
from ..engine.memory import Guarded
from ..engine.options import Option
from ..engine.settings import GlobalSettings
from ..reports.perf_report import DEFAULT_TEMPLATE, PerfRecord
from ..status import Status

__all__ = ["Bound", "CaseResult", "CaseSteps", "Created", "Driver", "Problem", "RunContext"]


class Problem(Protocol):
    def repro(self, canonical: bool) -> str:
        """Driver options that differ from their defaults, then the descriptor."""

    @property
    def desc_text(self) -> str: ...


class Primitive(Protocol):
    """What create returns: the implementation as results name it, a -v5 note, the bytes
    it holds or will allocate itself (the memory guard adds them to the driver's
    footprint), close()."""

    name: str
    info: str
    memory_bytes: int

    def close(self) -> None: ...


@dataclasses.dataclass
class Created:
    """A created kernel primitive with the reorder route (if any) that serves its layouts."""

    prim: Any
    route: Any = None
    info: str = ""

    @property
    def name(self) -> str:
        return self.route.name(self.prim.name) if self.route is not None else self.prim.name

    @property
    def memory_bytes(self) -> int:
        return self.prim.memory_bytes

    @property
    def scratchpad_bytes(self) -> int | None:
        """The primitive's work memory, when it reports one (results: memory)."""
        return getattr(self.prim, "scratchpad_bytes", None)

    def close(self) -> None:
        """Kernel primitives free their C state when collected; nothing to do now."""


def _nothing() -> None:
    """collect() of an execution that writes straight into the driver's buffers."""


@dataclasses.dataclass(kw_only=True)
class Bound:
    """A case's buffers bound to the primitive: ``run`` is the timed callable and nothing
    else; ``collect`` (untimed, after a run) moves results into the guarded outputs."""

    run: Callable[[], None]
    outs: tuple[Guarded, ...]
    collect: Callable[[], None] = _nothing
    # what a write outside an output's guard bands is reported as
    breach_reason: str = "wrote outside an output buffer"

    def breach(self) -> str | None:
        return None if all(out.intact() for out in self.outs) else self.breach_reason


class CaseSteps(abc.ABC):
    """The steps of one case, in the order engine.case.run calls them."""

    driver: str   # the driver's name (--NAME)

    @abc.abstractmethod
    def unsupported(self, prb) -> tuple[Status, str] | None:
        """(status, reason) when the case cannot run here, decided before allocating."""

    def skip_note(self, prb) -> str | None:
        """The -v1 detail of a SKIPPED blocker."""
        return None

    @abc.abstractmethod
    def footprint(self, prb) -> int:
        """Bytes the driver allocates for a correctness case, at its peak, in the layouts
        requested: the tensors in their layouts (padding included), their fill and
        reference copies, the compare's temporaries, and a route's reorder buffers where
        the primitive does not count them (the memory guard; the primitive's own memory
        is prim.memory_bytes)."""

    def estimate(self, prb, prim) -> int:
        """The memory guard's estimate once the primitive exists: the footprint (a driver
        may size it by the layouts the primitive resolved) and the primitive's own
        memory."""
        return self.footprint(prb) + prim.memory_bytes

    @abc.abstractmethod
    def tensor_bytes(self, prb, prim) -> int:
        """Bytes of the problem's tensors in the layouts the case ran on (reported with
        the peak RSS)."""

    def threads(self, prb) -> int:
        """OpenMP threads to create and run on (0: the process's count)."""
        return 0

    @abc.abstractmethod
    def create(self, prb, res: CaseResult) -> Primitive | None:
        """The primitive, or None with res.status and res.reason set."""

    @abc.abstractmethod
    def layouts(self, prb, prim) -> str:
        """-v5 text after the implementation name: the layouts the case runs on."""

    @abc.abstractmethod
    def prepare(self, prb, prim, perf: bool) -> Bound:
        """Fill the inputs (perf: the performance fill) and bind the execution."""

    @abc.abstractmethod
    def reference(self, prb, bound: Bound) -> Any:
        """The expected outputs, from the scalar reference."""

    @abc.abstractmethod
    def judge(self, prb, bound: Bound, expected: Any, res: CaseResult, verbose: int) -> None:
        """Compare and check memory; sets res's status, counts and diagnostics."""

    @abc.abstractmethod
    def perf_record(self, prb, ctx: RunContext, impl: str, times: list[float],
                    create_s: tuple[float, float], bound: Bound) -> PerfRecord:
        """The perf line's fields."""


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
    # Whether its reference can compute a sample of the outputs (--check=sampled).
    sampled_checks: bool = False

    def option(self, name: str) -> Option | None:
        for opt in self.options:
            if opt.name == name:
                return opt
        return None


def create_routed(prb, res: CaseResult, layouts: tuple, table: Callable[[], Any],
                  make: Callable[[Any], Any], others: Mapping[str, Any],
                  read_outs: tuple[str, ...] = ()) -> Created | None:
    """A memory-bound driver's primitive with its reorder route: the first implementation
    of table (make(impl)) the CPU runs and the filter allows, its tensors routed between
    their memory and the kernels' layouts; or, on another backend, others[backend]'s
    primitive on the memory itself (an empty route). layouts: (memory layouts, kernel
    layouts, types, inputs, outputs) by tensor name; read_outs: outputs the primitive
    reads first (a sum's prior dst). None with res's status set otherwise."""
    fault = core.active_op_fault()
    mem, kernel, dts, ins, outs = layouts
    if prb.backend != backends.NATIVE:
        kernel = dict(mem)
        prim = others[prb.backend].create(prb, res)
    else:
        with res.timers("create_pd"):
            routed = reorders.needs_route(mem, kernel)
        allow = reorders.RouteFilter(prb.impl_filter) if routed else prb.impl_filter
        prim = first_accepting(table(), allow, make, res)
    if prim is None:
        return None
    try:
        with res.timers("create_prim"):
            route = reorders.Route(mem, kernel, dts, ins, outs, read_outs=read_outs,
                                   fault=fault)
    except core.Unimplemented as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None
    return Created(prim, route)


def backend_unsupported(what: str, prb, modules: Mapping[str, Any]) -> tuple[Status, str] | None:
    """Why prb's backend cannot run it, for a driver whose other backends are modules
    (name -> module with unsupported(prb)); None for the native kernels. what names the
    driver's primitive in the reason of a backend without one."""
    if prb.backend == backends.NATIVE:
        return None
    if prb.backend not in modules:
        return (Status.UNIMPLEMENTED, f"--backend={prb.backend}: runs no {what} (its "
                "drivers: " + ", ".join(backends.drivers_of(prb.backend)) + ")")
    return modules[prb.backend].unsupported(prb)
