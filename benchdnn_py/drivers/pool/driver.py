"""The pooling driver: options, problems, and one case from creation to verdict.

Case flow (correctness): fill src (integers of the case's type) -> forward into a poisoned
(NaN for floats), guarded dst of that type, with a workspace pre-filled with poison when
the implementation asks for one (training max) -> reference in double on the exactly
widened inputs -> compare dst after rounding the reference to the type; a workspace entry
still holding the poison fails the case. Backward data: the forward-training primitive
runs first as a service step to produce the workspace, then diff_dst is filled and the
backward runs on it; only diff_src is compared (against a reference that finds the maxima
in src itself, so a workspace pointing at the wrong tap, or never written, shows up as
wrong gradients).

Memory formats (--tag, one for src and dst, as benchdnn's): any tag of layout.py. Inputs
are filled plain and placed into the tag's layout by the reorder kernels outside the
timed region. When the tag's memory is one the kernels run on (KERNEL_LAYOUTS: plain,
channels last, blocked by 8 or 16), the rows of that layout run on it directly
(`pool_nhwc:avx512`, `pool_blocked:avx2`, ...); any other layout, or a case whose native
rows are all filtered out, is served by the reorder route (reorders.Route,
`<impl>+reorder`: the input reordered to plain scratch, a plain kernel, the output
reordered back with its padded tail zeroed, all timed). The workspace is internal to the
primitive (its size from the chosen row's query, its order the row's own), so it is only
passed from the service forward-training step to backward on the same row and layout.
Outputs are read back through their layout's offsets, and a blocked output's padded tail
must hold zeros (check.memory_faults).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, dt_names, eltwise, fill, layout, post_ops, reorders
from ...common.check import CompareSetup, compare, memory_faults, round_to_dt
from ...common.layout import tensor_layout
from ...core import PoolAlg, PoolLayout, PoolShape, Prop
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter, first_accepting
from ...engine.memory import Guarded
from ...engine.options import Option, enum_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import UsageError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported
from . import backend_onednn, cfg, ref
from .desc import PoolDesc, parse_pool


class Dir(enum.Enum):
    FWD_D = "FWD_D"     # forward training: max also writes the workspace
    FWD_I = "FWD_I"     # forward inference: no workspace
    BWD_D = "BWD_D"     # backward data

    @property
    def prop(self) -> Prop:
        return {Dir.FWD_D: Prop.FWD_TRAINING, Dir.FWD_I: Prop.FWD_INFERENCE,
                Dir.BWD_D: Prop.BWD_DATA}[self]


ALGS = {"max": PoolAlg.MAX, "avg_np": PoolAlg.AVG_NP, "avg_p": PoolAlg.AVG_P}
ALG_SPELLINGS = {"max": "max", "pooling_max": "max", "avg_np": "avg_np",
                 "pooling_avg_exclude_padding": "avg_np", "avg_p": "avg_p",
                 "pooling_avg_include_padding": "avg_p"}


def _parse_dt(text: str) -> tuple[str, ...]:
    """SRC[:DST], kept as given (one or two names) so that the repro prints it back."""
    names = [dt_names.parse_name(n, "dt", text) for n in text.split(":")]
    if len(names) not in (1, 2):
        raise UsageError(f"--dt={text}: expected SRC or SRC:DST")
    return tuple(names)


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_D,
           "propagation direction", is_list=True),
    Option("dt", _parse_dt, ("f32",), "data types, SRC[:DST]", is_list=True),
    Option("tag", layout.tag_option("tag"), layout.parse_tag("abx"),
           "memory tag of src and dst: any tag (abx, nhwc, nChw16c, aBx8b, ...)",
           is_list=True),
    Option("alg", enum_value("alg", ALG_SPELLINGS, case_insensitive=False), "max",
           "max, avg_np (exclude padding), avg_p (include padding)", is_list=True),
    Option("mb", int_value("mb", 0), 0, "minibatch override (0: the descriptor's)",
           is_list=True),
    Option("attr-post-ops", attr.parse_post_ops, attr.PostOps(),
           "post-op chains of eltwise, binary and prelu entries (as --conv's)", is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels) or onednn "
           "(oneDNN's pooling primitives)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS = {"onednn": backend_onednn}

PERF_FIELDS = frozenset({"dir", "sdt", "tag", "alg", "prop", "mb"})
CSV_PERF_FIELDS = "%dir%,%sdt%,%tag%,%alg%"


@dataclasses.dataclass(frozen=True)
class PoolProblem:
    desc: PoolDesc
    dir: Dir
    dt: tuple[str, ...]         # SRC[:DST] as given
    tag: layout.Tag
    alg: str
    impl_filter: ImplFilter
    user_mb: int
    backend: str = backends.NATIVE
    post_ops: attr.PostOps = attr.PostOps()
    modes: attr.Modes = attr.Modes()

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if self.dir is not Dir.FWD_D:
            parts.append(f"--dir={self.dir.value}")
        if self.dt != ("f32",):
            parts.append(f"--dt={':'.join(self.dt)}")
        if self.tag.text != "abx":
            parts.append(f"--tag={self.tag}")
        if self.alg != "max":
            parts.append(f"--alg={self.alg}")
        if self.post_ops:
            parts.append(f"--attr-post-ops={self.post_ops}")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def types(self) -> tuple[str, str]:
        """(src, dst) data types; one given name is both."""
        return self.dt[0], self.dt[-1]

    @property
    def kalg(self) -> PoolAlg:
        return ALGS[self.alg]

    def dims(self, name: str) -> tuple[int, ...]:
        """Logical dims of src or dst: mb, ic, then the spatial sizes the problem has."""
        d = self.desc
        sizes = d.i if name == "src" else d.o
        return (d.mb, d.ic) + tuple(sizes[a] for a in d.spatial_axes)

    def layout(self, name: str) -> layout.Layout:
        return tensor_layout(self.tag, self.dims(name))

    @functools.cached_property
    def shape(self) -> PoolShape:
        d = self.desc
        return PoolShape(d.mb, d.ic, d.i, d.o, d.k, d.s, d.p, d.dil)


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> PoolProblem:
    desc = parse_pool(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    dims = (desc.mb, desc.ic) + tuple(desc.i[a] for a in desc.spatial_axes)
    tensor_layout(values["tag"], dims)     # the rank check, at parse time
    return PoolProblem(desc, values["dir"], values["dt"], values["tag"], values["alg"],
                       values["impl_filter"], values["mb"], values["backend"],
                       values["attr-post-ops"], attr.modes_of(values))


def unsupported(prb: PoolProblem) -> tuple[Status, str] | None:
    missing = [t for t in prb.dt if t not in cfg.CFG]
    if missing:
        return Status.UNIMPLEMENTED, f"--dt={':'.join(prb.dt)}: {missing[0]} has no implementation"
    if prb.post_ops and prb.dir is Dir.BWD_D:
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: post-ops apply to "
                "forward propagation only")
    verdict = post_ops.memory_bound_verdict(prb.post_ops, prb.modes, prb.backend,
                                            "a pooling", prb.dims("dst"),
                                            native=frozenset({"scratchpad"}))
    if verdict:
        return verdict
    if cfg.not_supported(prb.types, prb.dir is Dir.BWD_D):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    if prb.alg == "avg_np" and ref.has_empty_window(prb.desc):
        return Status.SKIPPED, Reason.INVALID_CASE.value    # 0 taps: nothing to divide by
    return None


# The layouts the kernels take, as the tags whose dense memory they are (first match wins:
# with one channel, plain and channels last are one memory).
KERNEL_LAYOUTS = ((layout.parse_tag("abx"), PoolLayout.NCX),
                  (layout.parse_tag("axb"), PoolLayout.NXC),
                  (layout.parse_tag("aBx8b"), PoolLayout.NCX8C),
                  (layout.parse_tag("aBx16b"), PoolLayout.NCX16C))


def kernel_layout(prb: PoolProblem) -> PoolLayout | None:
    """The kernels' layout whose memory both src and dst of the case have; None when there
    is none (the case takes the reorder route)."""
    for tag, code in KERNEL_LAYOUTS:
        if all(prb.layout(t).same_memory(tag.layout(prb.dims(t))) for t in ("src", "dst")):
            return code
    return None


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One way to run a case: a row on a layout, natively or behind the reorder route (its
    name then carries `+reorder`, so that --impl/--skip-impl select it by what results
    print)."""

    impl: core.ImplInfo
    layout: PoolLayout
    routed: bool

    @property
    def name(self) -> str:
        return self.impl.name + (reorders.ROUTE_SUFFIX if self.routed else "")


def candidates(prb: PoolProblem) -> list[Candidate]:
    """The rows of the case's own layout (native), then the plain rows behind the route
    when the case's layout is not plain."""
    native = kernel_layout(prb)
    table = core.pool_impls()
    out = [Candidate(i, native, False) for i in table
           if native is not None and native in core.pool_impl_layouts(i)]
    if native is not PoolLayout.NCX:
        out += [Candidate(i, PoolLayout.NCX, True) for i in table
                if PoolLayout.NCX in core.pool_impl_layouts(i)]
    return out


def create(prb: PoolProblem, prop: Prop,
           res: CaseResult) -> tuple[core.PoolPrimitive, bool] | None:
    """(the primitive of the first candidate the filter allows and that accepts, whether it
    is routed); None with res set when none does."""
    fault = core.active_op_fault()
    with res.timers("create_pd"):
        table = candidates(prb)

    def build(c: Candidate) -> tuple[core.PoolPrimitive, bool]:
        shape = dataclasses.replace(prb.shape, layout=c.layout)
        return core.PoolPrimitive(c.impl, shape, prb.kalg, prop, fault, prb.dt[0],
                                  bool(prb.post_ops), prb.types[1],
                                  prb.modes.scratchpad == "user"), c.routed
    return first_accepting(table, prb.impl_filter, build, res)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    """Tensors of the case's type (plain layout: logical order is memory order)."""

    src: np.ndarray
    out: Guarded                          # dst (forward) or diff_src (backward)
    ws: np.ndarray | None = None          # the workspace, as the primitive sized it
    diff_dst: np.ndarray | None = None
    src1: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # post-op inputs


# The route's tensor names per direction: (input, output) and the logical tensor of each.
_ROUTE = {True: (("diff_dst", "dst"), ("diff_src", "src")),
          False: (("src", "src"), ("dst", "dst"))}


def make_route(prb: PoolProblem, res: CaseResult, routed: bool = True) -> reorders.Route | None:
    """The reorder route between the tag's layouts and the kernels' plain ones (empty for
    plain, and for a native primitive: routed False); None, UNIMPLEMENTED, when a layout
    cannot be reordered."""
    (src_n, src_t), (out_n, out_t) = _ROUTE[prb.dir is Dir.BWD_D]
    tensors = {src_n: src_t, out_n: out_t}

    def kernel(t: str) -> layout.Layout:
        return layout.plain(prb.dims(t)) if routed else prb.layout(t)
    try:
        with res.timers("create_prim"):
            return reorders.Route({n: prb.layout(t) for n, t in tensors.items()},
                                 {n: kernel(t) for n, t in tensors.items()},
                                 {src_n: prb.types[0], out_n: prb.types[1]}, (src_n,), (out_n,),
                                 fault=core.active_op_fault())
    except core.Unimplemented as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None


def prepare(prb: PoolProblem, prim: core.PoolPrimitive, route: reorders.Route,
            perf: bool) -> Buffers:
    """Fills the inputs (plain), places them into the case's layout, allocates the queried
    workspace (poisoned), runs the service forward-training step for backward (the same
    row on src in the kernel's layout: the plain values behind the route, the placed ones
    natively), and binds the execution through the route."""
    s, dt, is_max = prb.shape, prb.dt[0], prb.kalg is PoolAlg.MAX
    dtc, dtype = cfg.CFG[dt], core.numpy_dtype(dt)
    lo, hi = cfg.fill_range(dtc, is_max)
    if prb.types[1] != dt:   # a dst type of its own: values both types hold, unsaturated
        dst_lo, dst_hi = cfg.fill_range(cfg.CFG[prb.types[1]], is_max)
        lo, hi = max(lo, dst_lo), min(hi, dst_hi)

    def values(kind: fill.Kind, shape: tuple[int, ...]) -> np.ndarray:
        n = math.prod(shape)
        data = fill.real_fill(n, kind, *dtc.perf) if perf else fill.int_fill(n, kind, lo, hi)
        return round_to_dt(data, dt).astype(dtype).reshape(shape)

    def placed(values: np.ndarray, name: str) -> np.ndarray:
        return reorders.place(values.reshape(-1), prb.layout(name), dt)

    src = values(fill.Kind.SRC, s.src_shape)
    if not isinstance(prim, core.PoolPrimitive):   # another backend, on the layouts
        return _prepare_backend(prb, prim, src, values, placed)
    if prb.dir is not Dir.BWD_D:
        out = reorders.output_buffer(prb.layout("dst"), prb.types[1])
        bufs = Buffers(src=src, out=out, outs=(out,), run=None)
        if prim.workspace.nbytes:
            bufs.ws = prim.workspace.allocate(cfg.WORKSPACE_POISON)
        bufs.src1 = post_ops.fill_src1(prb.post_ops, prb.dims("dst"))
        k_in, k_out, wrap = route.bind({"src": placed(src, "src")}, {"dst": bufs.out.array})
        chain = post_ops.kernel_chain(prb.post_ops, bufs.src1, prb.dims("dst"))
        bufs.run = wrap(prim.bind_fwd(k_in["src"], k_out["dst"], bufs.ws, chain))
        return bufs
    ks = prim.shape             # the kernel's shape: the case's, in the kernel's layout
    service = core.PoolPrimitive(prim.impl, ks, prb.kalg, Prop.FWD_TRAINING, prim.fault, dt)
    out = reorders.output_buffer(prb.layout("src"), dt)
    bufs = Buffers(src=src, out=out, outs=(out,), run=None)
    if service.workspace.nbytes:
        bufs.ws = service.workspace.allocate(cfg.WORKSPACE_POISON)
    service_src = src.reshape(-1) if ks.layout is PoolLayout.NCX else placed(src, "src")
    service.bind_fwd(service_src, np.empty(ks.elems(s.dst_shape), dtype), bufs.ws)()
    bufs.diff_dst = values(fill.Kind.DST, s.dst_shape)
    k_in, k_out, wrap = route.bind({"diff_dst": placed(bufs.diff_dst, "dst")},
                                   {"diff_src": bufs.out.array})
    bufs.run = wrap(prim.bind_bwd(k_in["diff_dst"], bufs.ws, k_out["diff_src"]))
    return bufs


def _prepare_backend(prb: PoolProblem, prim, src: np.ndarray, values, placed) -> Buffers:
    """prepare for another backend's primitive: it runs on the case's layouts (no route)
    and sizes its own workspace, which its forward training pass fills for backward."""
    s, dt = prb.shape, prb.dt[0]
    ws = prim.new_workspace()
    if prb.dir is not Dir.BWD_D:
        out = reorders.output_buffer(prb.layout("dst"), prb.types[1])
        return Buffers(src=src, out=out, outs=(out,), ws=ws,
                       run=prim.bind_fwd(placed(src, "src"), out.array, ws))
    prim.service_forward(placed(src, "src"), ws)
    out = reorders.output_buffer(prb.layout("src"), dt)
    diff_dst = values(fill.Kind.DST, s.dst_shape)
    return Buffers(src=src, out=out, outs=(out,), ws=ws, diff_dst=diff_dst,
                   run=prim.bind_bwd(placed(diff_dst, "dst"), ws, out.array))


def reference(prb: PoolProblem, bufs: Buffers) -> np.ndarray:
    """The reference on the inputs widened exactly to f32 (it computes in double). A max
    over a window with no tap starts, and stays, at the lowest value of the dst type
    (reference 9.3), which the C reference's -FLT_MAX is only for f32."""
    src = bufs.src.astype(np.float32)
    if prb.dir is Dir.BWD_D:
        return ref.backward(prb.shape, prb.kalg, src, bufs.diff_dst.astype(np.float32))
    exp = ref.forward(prb.shape, prb.kalg, src)
    if prb.kalg is PoolAlg.MAX:
        np.maximum(exp, cfg.lowest(prb.types[1]), out=exp)
    if prb.post_ops:   # on the 5D dst, each input broadcast against it
        inputs = {name: post_ops.src1_values_5d(v, v.ndim) for name, v in bufs.src1.items()}
        exp = post_ops.chain_reference(exp, prb.post_ops, inputs).astype(np.float64)
    return exp


def judge(prb: PoolProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    dt = prb.types[1]
    dtc, is_max = cfg.CFG[dt], prb.kalg is PoolAlg.MAX
    backward = prb.dir is Dir.BWD_D
    # rule 5 for f16 (reference 6.6): an output type whose range results may leave
    # eltwise post-ops bring their tolerance and, where their formula can, NaN and Inf
    elts = prb.post_ops.eltwise
    trh = max([cfg.threshold(dtc, is_max)] + [eltwise.ALGS[e.name].trh for e in elts])
    setup = CompareSetup("SRC" if backward else "DST", trh,
                         cfg.ZERO_TRUST_BWD_PERCENT if backward else cfg.ZERO_TRUST_FWD_PERCENT,
                         integral=dtc.integral, eps=dtc.eps, dt=dt, eltwise=bool(elts),
                         allow_nans=dt == "f16" or post_ops.nans_possible(prb.post_ops))
    lay = prb.layout("src" if backward else "dst")
    verdict = compare(exp, reorders.read(bufs.out.array, lay).reshape(exp.shape), setup)
    axes = prb.desc.spatial_axes
    sizes = prb.desc.i if backward else prb.desc.o
    logical = (prb.desc.mb, prb.desc.ic) + tuple(sizes[a] for a in axes)
    res.take_verdict(verdict, logical, verbose)
    # the memory beyond the points: a blocked layout's padded tail must hold zeros
    fault = memory_faults("SRC" if backward else "DST", lay, bufs.out.array, None)
    if fault:
        res.take_memory_fault(fault)
        return
    # (another backend's workspace has its own format: its entries are not checked)
    if not backward and bufs.ws is not None and not verdict.failed \
            and prb.backend == backends.NATIVE:
        unwritten = int(np.count_nonzero(bufs.ws == cfg.WORKSPACE_POISON))
        if unwritten:
            res.status, res.reason = Status.FAILED, "workspace left unwritten"
            res.diagnostics.append(f"[WORKSPACE]: {unwritten} of {bufs.ws.size} entries "
                                   f"still hold the poison value {cfg.WORKSPACE_POISON}")


def perf_record(prb: PoolProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    ws_bytes = bufs.ws.nbytes if bufs.ws is not None else 0
    s = prb.shape
    src_b = core.numpy_dtype(prb.types[0]).itemsize * math.prod(s.src_shape)
    dst_b = core.numpy_dtype(prb.types[1]).itemsize * math.prod(s.dst_shape)
    # forward reads src, writes dst (+ the workspace); backward reads diff_dst (+ the
    # workspace), writes diff_src
    if prb.dir is Dir.BWD_D:
        ibytes, obytes = dst_b + ws_bytes, src_b
    else:
        ibytes, obytes = src_b, dst_b + ws_bytes
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "pool",
        "prb": f"{ctx.settings.repro_prefix()}--pool {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "sdt": ":".join(prb.dt), "tag": str(prb.tag), "alg": prb.alg,
        "attr": f"--attr-post-ops={prb.post_ops}" if prb.post_ops else "",
        "prop": {Dir.FWD_D: "forward_training", Dir.FWD_I: "forward_inference",
                 Dir.BWD_D: "backward_data"}[prb.dir],
    }
    return PerfRecord(text, float(ref.count_ops(prb.desc)), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


def create_with_route(prb: PoolProblem, res: CaseResult) -> Created | None:
    """The primitive with its reorder route (empty for a native row), or None with res
    set; another backend's primitive runs on the layouts themselves (no route)."""
    if prb.backend != backends.NATIVE:
        prim = BACKENDS[prb.backend].create(prb, res)
        return None if prim is None else Created(prim)
    created = create(prb, prb.dir.prop, res)
    if created is None:
        return None
    prim, routed = created
    route = make_route(prb, res, routed)
    return None if route is None else Created(prim, route, prim.info)


def _footprint(prb: PoolProblem) -> int:
    """src, dst, their f64 references, diff tensors and compare temporaries."""
    s = prb.shape
    return 8 * 6 * (math.prod(s.src_shape) + math.prod(s.dst_shape))


def _tensor_bytes(prb: PoolProblem, prim: Created) -> int:
    """src and dst (diff_src and diff_dst) in the case's type, and the workspace."""
    s, size = prb.shape, core.numpy_dtype(prb.dt[0]).itemsize
    return size * (math.prod(s.src_shape) + math.prod(s.dst_shape)) + prim.prim.workspace_bytes


class Steps(CaseSteps):
    driver = "pool"

    footprint = staticmethod(_footprint)
    tensor_bytes = staticmethod(_tensor_bytes)
    create = staticmethod(create_with_route)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: PoolProblem) -> tuple[Status, str] | None:
        """The problem itself (and the native kernels' types), then the backend's limits."""
        return unsupported(prb) or backend_unsupported("pooling", prb, BACKENDS)

    def skip_note(self, prb: PoolProblem) -> str | None:
        return cfg.not_supported(prb.types, prb.dir is Dir.BWD_D)

    def layouts(self, prb: PoolProblem, prim: Created) -> str:
        return f"layout {prb.tag}={prb.layout('src').describe()}"

    def prepare(self, prb: PoolProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: PoolProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
