"""The sum driver: options, problems, and one case from creation to verdict.

Case flow (correctness): each source is filled (cfg.fill_source) in its type and placed
in its layout; the kernel writes a poisoned, guarded dst; the reference adds the scaled
sources in double and the comparison rounds it to dst's type. Performance: real-valued
fill, warm-up, timed runs, GB/s.

Memory formats: each source has its tag (--stag, one for all when a single one is given)
and dst its own (--dtag; `undef` and `any` take source 0's). The kernels add dense
tensors of one memory order element by element, so they run on dst's layout when it is
dense (else plain), and every tensor in another layout goes through the reorder route.
In place, dst is source 0's memory.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, dt_names, layout, post_ops, reorders
from ...common.check import CompareSetup, compare, memory_faults
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter
from ...engine.memory import Guarded
from ...engine.options import Option, bool_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import ProblemError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import (Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported,
                    create_routed)
from . import backend_torch, cfg, ref
from .desc import Dims, parse_dims, parse_scales, parse_sdt, per_source


OPTIONS = (
    Option("sdt", parse_sdt, ("f32", "f32"), "the sources' types, joined by : (two or more)",
           is_list=True),
    Option("ddt", dt_names.option("ddt"), "f32", "dst's type", is_list=True),
    Option("stag", layout.tags_option("stag"), (layout.parse_tag("abx"),),
           "the sources' tags joined by : (one applies to all)", is_list=True),
    Option("dtag", layout.tag_or_undef_option("dtag"), None,
           "dst's tag; undef (default) or any: source 0's", is_list=True),
    Option("scales", parse_scales, (1.0,), "the sources' scales joined by : (one applies "
           "to all)", is_list=True),
    Option("inplace", bool_value("inplace"), False, "dst overwrites source 0", is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces dims[0] (0: the descriptor's)",
           is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels) or torch "
           "(PyTorch's mul and add_)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS: dict[str, Any] = {"torch": backend_torch}

PERF_FIELDS = frozenset({"sdt", "ddt", "stag", "dtag", "mb"})
CSV_PERF_FIELDS = "%sdt%,%ddt%,%stag%,%dtag%"


@dataclasses.dataclass(frozen=True)
class SumProblem:
    desc: Dims
    sdt: tuple[str, ...]
    ddt: str
    stag: tuple[layout.Tag, ...]      # one per source
    dtag: layout.Tag | None           # None: undef
    scales: tuple[float, ...]         # one per source, as f32 values
    inplace: bool
    impl_filter: ImplFilter
    user_mb: int
    modes: attr.Modes = attr.Modes()
    backend: str = backends.NATIVE
    given_stag: tuple[layout.Tag, ...] = ()     # as the user gave them (the repro's)
    given_scales: tuple[float, ...] = ()

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if self.sdt != ("f32", "f32"):
            parts.append(f"--sdt={':'.join(self.sdt)}")
        if self.ddt != "f32":
            parts.append(f"--ddt={self.ddt}")
        stag = self.given_stag or self.stag
        if [t.text for t in stag] != ["abx"]:
            parts.append(f"--stag={':'.join(str(t) for t in stag)}")
        if self.dtag is not None:
            parts.append(f"--dtag={self.dtag}")
        scales = self.given_scales or self.scales
        if scales != (1.0,):
            parts.append(f"--scales={':'.join(attr.number_text(s) for s in scales)}")
        if self.inplace:
            parts.append("--inplace=true")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def dims(self) -> tuple[int, ...]:
        return self.desc.dims

    @property
    def nelems(self) -> int:
        return math.prod(self.dims)

    def src_layout(self, i: int) -> layout.Layout:
        return tensor_layout(self.stag[i], self.dims)

    @property
    def dst_layout(self) -> layout.Layout:
        """dst's tag's layout, or source 0's (undef, any)."""
        if self.dtag is None or self.dtag.is_any:
            return self.src_layout(0)
        return tensor_layout(self.dtag, self.dims)

    @property
    def kernel_layout(self) -> layout.Layout:
        """Where the kernel adds: dst's memory when dense, else plain."""
        lay = self.dst_layout
        return lay if layout.dense_order(lay) is not None else layout.plain(self.dims)


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> SumProblem:
    desc = parse_dims(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    n = len(values["sdt"])
    stag = per_source(values["stag"], n, "stag")
    scales = per_source(values["scales"], n, "scales")
    tags = [("stag", t) for t in stag] + [("dtag", values["dtag"])]
    for name, tag in tags:                    # the rank check, at parse time
        if tag is not None:
            try:
                tensor_layout(tag, desc.dims)
            except ProblemError as exc:
                raise ProblemError(str(exc).replace("--tag=", f"--{name}=")) from None
    return SumProblem(desc, values["sdt"], values["ddt"], stag, values["dtag"],
                      tuple(float(np.float32(s)) for s in scales), values["inplace"],
                      values["impl_filter"], values["mb"], attr.modes_of(values),
                      values["backend"], values["stag"], values["scales"])


def invalid(prb: SumProblem) -> str | None:
    """In place, dst replaces source 0: one type and one layout (benchdnn's rule)."""
    if not prb.inplace:
        return None
    if prb.sdt[0] != prb.ddt:
        return f"in place with source 0 of {prb.sdt[0]} and --ddt={prb.ddt}"
    if not prb.dst_layout.same_memory(prb.src_layout(0)):
        return f"in place with --stag={prb.stag[0]} and --dtag={prb.dtag}"
    return None


def unsupported(prb: SumProblem) -> tuple[Status, str] | None:
    for dt in (*prb.sdt, prb.ddt):
        if dt not in cfg.CFG:
            return Status.UNIMPLEMENTED, f"{dt}: sum has no {dt} implementation"
    if invalid(prb):
        return Status.SKIPPED, Reason.INVALID_CASE.value
    return prb.modes.verdict(prb.backend, frozenset({"scratchpad"}))


def route_layouts(prb: SumProblem) -> tuple[dict, dict, dict, tuple, tuple]:
    """(memory layouts, kernel layouts, types, inputs, outputs) of the case's tensors."""
    n = len(prb.sdt)
    mem = {f"src{i}": prb.src_layout(i) for i in range(n)}
    mem["dst"] = prb.dst_layout
    k = prb.kernel_layout
    kernel = {name: k for name in mem}
    dts = {f"src{i}": prb.sdt[i] for i in range(n)} | {"dst": prb.ddt}
    return mem, kernel, dts, tuple(f"src{i}" for i in range(n)), ("dst",)


def create(prb: SumProblem, res: CaseResult) -> Created | None:
    fault = core.active_op_fault()
    return create_routed(prb, res, route_layouts(prb), core.sum_impls,
                         lambda impl: core.SumPrimitive(impl, prb.sdt, prb.ddt, fault),
                         BACKENDS)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    srcs: list[np.ndarray]                # logical f32 values, exact in their types
    out: Guarded                          # dst, in its layout


def prepare(prb: SumProblem, prim: core.SumPrimitive, route: reorders.Route,
            perf: bool) -> Buffers:
    n = prb.nelems
    srcs, mems = [], {}
    for i, dt in enumerate(prb.sdt):
        values = cfg.perf_values(n, i, dt) if perf else cfg.fill_source(n, i, dt)
        srcs.append(values.reshape(prb.dims))
        mems[f"src{i}"] = reorders.place_values(values, prb.src_layout(i), dt)
    out = reorders.output_buffer(prb.dst_layout, prb.ddt)
    if prb.inplace:
        out.array[:] = mems["src0"]
        mems["src0"] = out.array
    k_in, k_out, wrap = route.bind(mems, {"dst": out.array})
    # each tensor in the kernels' layout (dense; another backend's: the memory's)
    k = {name: lay.size for name, lay in route.kernel.items()}
    run = wrap(prim.bind([k_in[f"src{i}"][:k[f"src{i}"]] for i in range(len(prb.sdt))],
                         k_out["dst"][:k["dst"]], prb.scales))
    return Buffers(srcs=srcs, out=out, outs=(out,), run=run)


def reference(prb: SumProblem, bufs: Buffers) -> np.ndarray:
    return ref.forward(bufs.srcs, prb.scales)


def compare_setup(prb: SumProblem) -> CompareSetup:
    dtc = cfg.CFG[prb.ddt]
    # a sum of values of both signs is 0 now and then: benchdnn's default zero trust
    return CompareSetup("DST", cfg.threshold(prb.ddt, len(prb.sdt)),
                        post_ops.zero_trust_percent(attr.PostOps(), prb.ddt),
                        integral=dtc.integral, eps=dtc.eps, dt=prb.ddt)


def judge(prb: SumProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    got = reorders.read(bufs.out.array, prb.dst_layout).reshape(prb.dims)
    verdict = compare(exp, got, compare_setup(prb))
    res.take_verdict(verdict, prb.dims, verbose)
    res.take_memory_fault(memory_faults("DST", prb.dst_layout, bufs.out.array, None))


def perf_record(prb: SumProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    n = prb.nelems
    # Bytes that must cross memory per run: every source read, dst written.
    ibytes = sum(core.numpy_dtype(dt).itemsize for dt in prb.sdt) * n
    obytes = core.numpy_dtype(prb.ddt).itemsize * n
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "sum",
        "prb": f"{ctx.settings.repro_prefix()}--sum {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "sdt": ":".join(prb.sdt),
        "ddt": prb.ddt, "stag": ":".join(str(t) for t in prb.stag),
        "dtag": str(prb.dtag) if prb.dtag is not None else "undef", "attr": "",
    }
    # One operation per element and source.
    return PerfRecord(text, float(n * len(prb.sdt)), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


class Steps(CaseSteps):
    driver = "sum"

    create = staticmethod(create)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: SumProblem) -> tuple[Status, str] | None:
        return unsupported(prb) or backend_unsupported("sum", prb, BACKENDS)

    def skip_note(self, prb: SumProblem) -> str | None:
        return invalid(prb)

    def footprint(self, prb: SumProblem) -> int:
        # the sources (f32 values and their memory), dst, the route's scratch, and the
        # reference's and the compare's double arrays
        n = prb.nelems
        return n * (len(prb.sdt) * (4 + 4 + 8 + 4) + 8 * 8) + 2 * prb.dst_layout.size * 4

    def tensor_bytes(self, prb: SumProblem, prim: Created) -> int:
        n = prb.nelems
        return n * (sum(core.numpy_dtype(dt).itemsize for dt in prb.sdt[prb.inplace:])
                    + core.numpy_dtype(prb.ddt).itemsize)

    def layouts(self, prb: SumProblem, prim: Created) -> str:
        srcs = " ".join(f"src{i}={prb.src_layout(i).describe()}" for i in range(len(prb.sdt)))
        return f"layout {srcs} dst={prb.dst_layout.describe()}"

    def prepare(self, prb: SumProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: SumProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
