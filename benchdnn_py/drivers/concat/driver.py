"""The concat driver: options, problems, and one case from creation to verdict.

Case flow (correctness): each source is filled (cfg.fill_source) in the sources' type and
placed in its layout; the kernel writes a poisoned, guarded dst; the reference joins the
scaled sources in double, and the comparison rounds it to dst's type and wants it exact.
Performance: real-valued fill, warm-up, timed runs, GB/s.

Memory formats: each source has its tag (--stag, one for all when a single one is given)
and dst its own (--dtag; `undef` and `any` take source 0's). The kernels copy runs of a
dense memory order that dst and every source share, so they run on dst's layout when it
is a dense permutation (else plain), each source in the same order of its own dims, and
every tensor in another layout goes through the reorder route.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, dt_names, layout, reorders
from ...common.check import CompareSetup, compare, memory_faults
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter
from ...engine.memory import Guarded
from ...engine.options import Option, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import ProblemError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Status
from ..base import (Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported,
                    create_routed)
from . import backend_torch, cfg, ref
from .desc import ConcatDims, check_axis, dst_dims, order_tag, parse_concat


OPTIONS = (
    Option("sdt", dt_names.option("sdt"), "f32", "the sources' type", is_list=True),
    Option("ddt", dt_names.option("ddt"), "f32", "dst's type", is_list=True),
    Option("stag", layout.tags_option("stag"), (layout.parse_tag("abx"),),
           "the sources' tags joined by : (one applies to all)", is_list=True),
    Option("dtag", layout.tag_or_undef_option("dtag"), None,
           "dst's tag; undef (default) or any: source 0's", is_list=True),
    Option("axis", int_value("axis", 0), 1, "the dimension the sources are joined along",
           is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces every source's dims[0] (0: the "
           "descriptor's)", is_list=True),
    Option("attr-scales", attr.parse_scales, attr.Scales(),
           "scales msrcN:common:SCALE of the sources, joined by +", is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels) or torch "
           "(torch.cat)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS: dict[str, Any] = {"torch": backend_torch}

PERF_FIELDS = frozenset({"sdt", "ddt", "stag", "dtag", "axis", "mb"})
CSV_PERF_FIELDS = "%sdt%,%ddt%,%stag%,%dtag%,%axis%"


@dataclasses.dataclass(frozen=True)
class ConcatProblem:
    desc: ConcatDims
    sdt: str
    ddt: str
    stag: tuple[layout.Tag, ...]      # one per source
    dtag: layout.Tag | None           # None: undef
    axis: int
    impl_filter: ImplFilter
    user_mb: int
    scales: attr.Scales = attr.Scales()
    modes: attr.Modes = attr.Modes()
    backend: str = backends.NATIVE
    given_stag: tuple[layout.Tag, ...] = ()     # as the user gave them (the repro's)

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if self.sdt != "f32":
            parts.append(f"--sdt={self.sdt}")
        if self.ddt != "f32":
            parts.append(f"--ddt={self.ddt}")
        stag = self.given_stag or self.stag
        if [t.text for t in stag] != ["abx"]:
            parts.append(f"--stag={':'.join(str(t) for t in stag)}")
        if self.dtag is not None:
            parts.append(f"--dtag={self.dtag}")
        if self.axis != 1:
            parts.append(f"--axis={self.axis}")
        if self.scales:
            parts.append(f"--attr-scales={self.scales}")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def n_src(self) -> int:
        return len(self.desc.srcs)

    @property
    def dims(self) -> tuple[int, ...]:
        """dst's dims."""
        return dst_dims(self.desc, self.axis)

    def src_layout(self, i: int) -> layout.Layout:
        return tensor_layout(self.stag[i], self.desc.srcs[i])

    @property
    def dst_layout(self) -> layout.Layout:
        if self.dtag is None or self.dtag.is_any:
            # source 0's tag over dst's dims (any: the primitive's choice, as source 0's)
            return tensor_layout(self.stag[0], self.dims)
        return tensor_layout(self.dtag, self.dims)

    @property
    def order(self) -> tuple[int, ...]:
        """The memory order the kernel copies in: dst's when a dense permutation, else the
        logical one."""
        return layout.dense_order(self.dst_layout) or tuple(range(len(self.dims)))

    def kernel_layout(self, dims: tuple[int, ...]) -> layout.Layout:
        return layout.plain(dims, order_tag(self.order))

    def scale(self, i: int) -> float:
        e = self.scales.get(f"msrc{i}")
        return 1.0 if e is None or e.scale is None else float(np.float32(e.scale))


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> ConcatProblem:
    desc = parse_concat(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    check_axis(desc, values["axis"])
    stag = values["stag"]
    n = len(desc.srcs)
    if len(stag) == 1:
        stag = stag * n
    elif len(stag) != n:
        raise ProblemError(f"--stag={':'.join(str(t) for t in stag)}: {len(stag)} tags for "
                           f"{n} sources")
    for i, tag in enumerate(stag):            # the rank check, at parse time
        try:
            tensor_layout(tag, desc.srcs[i])
        except ProblemError as exc:
            raise ProblemError(str(exc).replace("--tag=", "--stag=")) from None
    if values["dtag"] is not None:
        try:
            tensor_layout(values["dtag"], dst_dims(desc, values["axis"]))
        except ProblemError as exc:
            raise ProblemError(str(exc).replace("--tag=", "--dtag=")) from None
    return ConcatProblem(desc, values["sdt"], values["ddt"], stag, values["dtag"],
                         values["axis"], values["impl_filter"], values["mb"],
                         values["attr-scales"], attr.modes_of(values), values["backend"],
                         values["stag"])


def unsupported(prb: ConcatProblem) -> tuple[Status, str] | None:
    for name, dt in (("sdt", prb.sdt), ("ddt", prb.ddt)):
        if dt not in cfg.TYPES:
            return Status.UNIMPLEMENTED, f"--{name}={dt}: concat has no {dt} implementation"
    for e in prb.scales.entries:
        index = e.arg.removeprefix("msrc")
        if not (e.arg.startswith("msrc") and index.isdigit() and int(index) < prb.n_src
                and e.is_common and not e.groups):
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: concat takes "
                    f"a common scale for each of its sources (msrc0 to msrc{prb.n_src - 1})")
    return prb.modes.verdict(prb.backend, frozenset({"scratchpad"}))


def route_layouts(prb: ConcatProblem) -> tuple[dict, dict, dict, tuple, tuple]:
    """(memory layouts, kernel layouts, types, inputs, outputs) of the case's tensors."""
    mem = {f"src{i}": prb.src_layout(i) for i in range(prb.n_src)}
    kernel = {f"src{i}": prb.kernel_layout(prb.desc.srcs[i]) for i in range(prb.n_src)}
    mem["dst"], kernel["dst"] = prb.dst_layout, prb.kernel_layout(prb.dims)
    dts = {f"src{i}": prb.sdt for i in range(prb.n_src)} | {"dst": prb.ddt}
    return mem, kernel, dts, tuple(f"src{i}" for i in range(prb.n_src)), ("dst",)


def create(prb: ConcatProblem, res: CaseResult) -> Created | None:
    fault = core.active_op_fault()
    return create_routed(prb, res, route_layouts(prb), core.concat_impls,
                         lambda impl: core.ConcatPrimitive(impl, prb.sdt, prb.ddt, fault),
                         BACKENDS)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    srcs: list[np.ndarray]                # logical f32 values, exact in the sources' type
    out: Guarded                          # dst, in its layout


def walk(prb: ConcatProblem) -> tuple[int, tuple[int, ...], int]:
    """(outer, each source's axis size, inner) in the kernel's memory order."""
    outer, _, inner = layout.around_axis(prb.dims, prb.order, prb.axis)
    return outer, tuple(d[prb.axis] for d in prb.desc.srcs), inner


def prepare(prb: ConcatProblem, prim: core.ConcatPrimitive, route: reorders.Route,
            perf: bool) -> Buffers:
    srcs, mems = [], {}
    for i, dims in enumerate(prb.desc.srcs):
        n = math.prod(dims)
        values = (cfg.perf_values(n, i, prb.sdt) if perf
                  else cfg.fill_source(n, i, prb.sdt, prb.ddt))
        srcs.append(values.reshape(dims))
        mems[f"src{i}"] = reorders.place_values(values, prb.src_layout(i), prb.sdt)
    out = reorders.output_buffer(prb.dst_layout, prb.ddt)
    k_in, k_out, wrap = route.bind(mems, {"dst": out.array})
    outer, sizes, inner = walk(prb)
    # each tensor in the kernels' layout (dense; another backend's: the memory's)
    k = {name: lay.size for name, lay in route.kernel.items()}
    run = wrap(prim.bind([k_in[f"src{i}"][:k[f"src{i}"]] for i in range(prb.n_src)],
                         k_out["dst"][:k["dst"]], outer, sizes, inner,
                         tuple(prb.scale(i) for i in range(prb.n_src))))
    return Buffers(srcs=srcs, out=out, outs=(out,), run=run)


def reference(prb: ConcatProblem, bufs: Buffers) -> np.ndarray:
    return ref.forward(bufs.srcs, tuple(prb.scale(i) for i in range(prb.n_src)), prb.axis)


def compare_setup(prb: ConcatProblem) -> CompareSetup:
    # one rounding of an exact product: threshold 0; the fill's integers are rarely 0
    return CompareSetup("DST", 0.0, 30.0, integral=prb.ddt in cfg.INTEGRAL,
                        eps=cfg.EPS.get(prb.ddt, 0.0), dt=prb.ddt)


def judge(prb: ConcatProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    got = reorders.read(bufs.out.array, prb.dst_layout).reshape(prb.dims)
    verdict = compare(exp, got, compare_setup(prb))
    res.take_verdict(verdict, prb.dims, verbose)
    res.take_memory_fault(memory_faults("DST", prb.dst_layout, bufs.out.array, None))


def perf_record(prb: ConcatProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    n = math.prod(prb.dims)
    ibytes = core.numpy_dtype(prb.sdt).itemsize * n      # every source read once
    obytes = core.numpy_dtype(prb.ddt).itemsize * n
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "concat",
        "prb": f"{ctx.settings.repro_prefix()}--concat {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "sdt": prb.sdt, "ddt": prb.ddt,
        "stag": ":".join(str(t) for t in prb.stag),
        "dtag": str(prb.dtag) if prb.dtag is not None else "undef", "axis": str(prb.axis),
        "attr": f"--attr-scales={prb.scales}" if prb.scales else "",
    }
    # One operation per element.
    return PerfRecord(text, float(n), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


class Steps(CaseSteps):
    driver = "concat"

    create = staticmethod(create)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: ConcatProblem) -> tuple[Status, str] | None:
        return unsupported(prb) or backend_unsupported("concat", prb, BACKENDS)

    def footprint(self, prb: ConcatProblem) -> int:
        # the sources (f32 values, memory and scratch), dst and its scratch, and the
        # reference's and the compare's double arrays
        n = math.prod(prb.dims)
        return n * (3 * 4 + 4 + 8 * 8) + 2 * prb.dst_layout.size * 4

    def tensor_bytes(self, prb: ConcatProblem, prim: Created) -> int:
        n = math.prod(prb.dims)
        return n * (core.numpy_dtype(prb.sdt).itemsize + core.numpy_dtype(prb.ddt).itemsize)

    def layouts(self, prb: ConcatProblem, prim: Created) -> str:
        srcs = " ".join(f"src{i}={prb.src_layout(i).describe()}" for i in range(prb.n_src))
        return f"layout {srcs} dst={prb.dst_layout.describe()}"

    def prepare(self, prb: ConcatProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: ConcatProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
