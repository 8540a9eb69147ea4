"""The eltwise driver: options, problems, and one case from creation to verdict.

Case flow (correctness): fill src with the hard-zone fill, rounded to the case's type ->
forward into a poisoned (NaN for floats), guarded dst (in place: into src's own buffer) ->
reference in double on the exactly widened inputs -> compare after rounding it to the
type. Backward data: the
same forward runs first as a service step when the algorithm's derivative is taken from
dst (the _dst variants), then diff_dst is filled and the backward runs; only diff_src is
compared. Performance: real-valued fill, warm-up, timed runs, GB/s.

Memory formats (--tag, one for every tensor, as benchdnn's): any tag of layout.py. Inputs
are filled plain and placed into the tag's layout by the reorder kernels, outside the
timed region (conv/formats.py). The kernels work element by element on a flat buffer, so
a dense layout without padding (nhwc, acdb, ...) is run on directly; a blocked layout is
served by the reorder route (reorders.Route, `<impl>+reorder`: reorders to plain scratch,
kernel, reorder back, all timed), since running on it would write f(0) into the padded
tail. The output is read back through its layout's offsets and its padded tail must be
zero (check.memory_faults).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, dropout, dt_names, eltwise, fill, layout, post_ops, reorders
from ...common.check import (FLT_EPSILON, MAX_PRINTED_POINTS, CompareSetup, Verdict,
                             compare, memory_faults)
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter, first_accepting
from ...engine.memory import Guarded
from ...engine.options import Option, bool_value, enum_value, float_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import UsageError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported
from . import backend_onednn, cfg, ref
from .desc import Dims, parse_dims


class Dir(enum.Enum):
    FWD_D = "FWD_D"     # forward training
    FWD_I = "FWD_I"     # forward inference (the same math; nothing kept for backward)
    BWD_D = "BWD_D"     # backward data

    @property
    def forward(self) -> bool:
        return self is not Dir.BWD_D

    @property
    def prop_kind(self) -> str:
        return {Dir.FWD_D: "forward_training", Dir.FWD_I: "forward_inference",
                Dir.BWD_D: "backward_data"}[self]


def _parse_alg(text: str) -> str:
    found = eltwise.lookup(text)
    if found is None:
        raise UsageError(f"--alg={text}: unknown eltwise algorithm; expected one of "
                         f"{', '.join(sorted(eltwise.ALGS))}")
    return found[0]


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_D,
           "propagation direction", is_list=True),
    Option("dt", dt_names.option("dt"), "f32", "data type of src and dst", is_list=True),
    Option("tag", layout.tag_option("tag"), layout.parse_tag("abx"),
           "memory tag of src and dst: any tag (abx, nhwc, nChw16c, aBx8b, ...)",
           is_list=True),
    Option("alg", _parse_alg, "relu", "algorithm (eltwise_ prefix allowed)", is_list=True),
    Option("alpha", float_value("alpha"), 0.0, "the algorithm's alpha", is_list=True),
    Option("beta", float_value("beta"), 0.0, "the algorithm's beta", is_list=True),
    Option("inplace", bool_value("inplace"), False, "dst (diff_src) overwrites src "
           "(diff_dst)", is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces dims[0] (0: the descriptor's)",
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
           "(oneDNN's eltwise primitives)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS = {"onednn": backend_onednn}

PERF_FIELDS = frozenset({"dir", "dt", "tag", "alg", "prop", "mb"})
CSV_PERF_FIELDS = "%dir%,%dt%,%tag%,%alg%"


@dataclasses.dataclass(frozen=True)
class EltwiseProblem:
    desc: Dims
    dir: Dir
    dt: str
    tag: layout.Tag
    alg: str
    alpha: float
    beta: float
    inplace: bool
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
        if self.dt != "f32":
            parts.append(f"--dt={self.dt}")
        if self.tag.text != "abx":
            parts.append(f"--tag={self.tag}")
        parts.append(f"--alg={self.alg} --alpha={self.alpha:g} --beta={self.beta:g}")
        if self.inplace:
            parts.append("--inplace=true")
        if self.post_ops:
            parts.append(f"--attr-post-ops={self.post_ops}")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def nelems(self) -> int:
        return math.prod(self.desc.dims)

    @property
    def layout(self) -> layout.Layout:
        """The memory layout of every tensor (`any`: the kernels' own, plain)."""
        return tensor_layout(self.tag, self.desc.dims)

    @property
    def kernel_layout(self) -> layout.Layout:
        """Where the kernel runs: on the memory itself when dense and unpadded (an
        elementwise operation does not care about the order; with post-ops, whose inputs
        follow each point's position, channels first or last only), else plain
        scratch."""
        lay = self.layout
        if lay.padded_dims == lay.dims and lay.size == lay.nelems \
                and (not self.post_ops or layout.channels_last(lay) is not None):
            return lay
        return layout.plain(lay.dims)

    @property
    def backward(self) -> bool:
        return not self.dir.forward

    @property
    def from_dst(self) -> bool:
        return eltwise.ALGS[self.alg].bwd_from_dst


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> EltwiseProblem:
    desc = parse_dims(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    tensor_layout(values["tag"], desc.dims)     # the rank check, at parse time
    return EltwiseProblem(desc, values["dir"], values["dt"], values["tag"], values["alg"],
                          values["alpha"], values["beta"], values["inplace"],
                          values["impl_filter"], values["mb"], values["backend"],
                          values["attr-post-ops"], attr.modes_of(values))


def invalid(prb: EltwiseProblem) -> str | None:
    """Why the combination means nothing (benchdnn 9.2: SKIPPED, Invalid case), or None."""
    a, b, name = prb.alpha, prb.beta, prb.alg
    if name in ("clip", "clip_v2", "clip_v2_dst") and b < a:
        return "clip needs beta >= alpha"
    if name in ("elu_dst", "relu_dst") and a < 0:
        return "the _dst form needs alpha >= 0 (dst must determine src's sign)"
    if name == "round" and (prb.backward or prb.dt != "f32"):
        return "round has no derivative and exists for f32 forward only"
    if prb.backward and prb.inplace and not prb.from_dst:
        return "backward in place needs the _dst form (src would be overwritten)"
    if name == "soft_relu" and a == 0:
        return "soft_relu divides by alpha"
    return None


def unsupported(prb: EltwiseProblem) -> tuple[Status, str] | None:
    if prb.dt not in cfg.CFG:
        return Status.UNIMPLEMENTED, f"--dt={prb.dt} has no implementation"
    if prb.post_ops and (prb.backward or len(prb.desc.dims) > 5):
        why = "apply to forward propagation only" if prb.backward else \
            "run on tensors of up to 5 dims (mb, channels, 3 spatial)"
        return Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: post-ops {why}"
    # (a user scratchpad: the kernels need no work memory, so theirs is 0 bytes)
    verdict = post_ops.memory_bound_verdict(prb.post_ops, prb.modes, prb.backend,
                                            "an eltwise", prb.desc.dims,
                                            native=frozenset({"scratchpad", "dropout"}))
    if verdict:
        return verdict
    why = dropout_unsupported(prb)
    if why:
        return Status.UNIMPLEMENTED, f"--attr-dropout={prb.modes.dropout}: {why}"
    if invalid(prb):
        return Status.SKIPPED, Reason.INVALID_CASE.value
    if cfg.not_supported(prb.alg, prb.dt, prb.backward):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    return None


def dropout_unsupported(prb: EltwiseProblem) -> str | None:
    """Why the kernels cannot apply the case's dropout, or None (also None without one).
    The draws follow each element's offset in dst's memory, and the mask has dst's layout
    (oneDNN's rule), so the kernel must run on dst's memory itself."""
    drop = prb.modes.dropout
    if not drop:
        return None
    if prb.backward:
        return "dropout applies to forward propagation"
    if not prb.layout.same_memory(prb.kernel_layout):
        return (f"the kernel runs on plain scratch behind a reorder route for --tag={prb.tag}"
                ", so its element offsets are not dst's")
    if drop.mask_tag not in ("any", "undef"):
        mask = tensor_layout(layout.parse_tag(drop.mask_tag), prb.desc.dims)
        if not mask.same_memory(prb.layout):
            return f"the mask tag {drop.mask_tag} is not dst's layout ({prb.tag})"
    return None


def dropout_args(prb: EltwiseProblem) -> core.DropoutArgs | None:
    drop = prb.modes.dropout
    return core.DropoutArgs(drop.p, drop.seed, drop.offset) if drop else None


def create(prb: EltwiseProblem, res: CaseResult) -> core.EltwisePrimitive | None:
    """The first implementation, in the table's order, that the CPU runs and the filter
    allows; sets SKIPPED/UNIMPLEMENTED otherwise."""
    fault = core.active_op_fault()
    code = eltwise.ALGS[prb.alg].code
    with res.timers("create_pd"):
        routed = not prb.layout.same_memory(prb.kernel_layout)
    allow = reorders.RouteFilter(prb.impl_filter) if routed else prb.impl_filter
    return first_accepting(
        core.eltwise_impls(), allow,
        lambda impl: core.EltwisePrimitive(impl, code, prb.alpha, prb.beta, prb.backward,
                                           fault, prb.dt), res)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    """A case's tensors: logical-order inputs, widened exactly to f32 (f64 kept as is) for
    the reference, and the memory-order buffers of the case's type the kernel runs on."""

    src: np.ndarray                      # logical
    out: Guarded                         # dst (forward) or diff_src (backward), memory order
    dst: np.ndarray | None = None        # logical forward result (backward _dst forms)
    diff_dst: np.ndarray | None = None   # logical
    src1: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # post-op inputs
    mask: Guarded | None = None          # dropout's mask (u8, dst's layout), when written
    keep: np.ndarray | None = None       # the reference's dropout decisions (logical)


def make_route(prb: EltwiseProblem, res: CaseResult) -> reorders.Route | None:
    """The reorder route between the tag's layout and where the kernel runs (empty when
    they are the same memory); None, UNIMPLEMENTED, when a layout cannot be reordered."""
    names = ("src", "dst") if prb.dir.forward else ("x", "diff_dst", "diff_src")
    # (another backend runs on the layout itself: an empty route)
    kernel = prb.kernel_layout if prb.backend == backends.NATIVE else prb.layout
    try:
        with res.timers("create_prim"):
            return reorders.Route({n: prb.layout for n in names},
                                 {n: kernel for n in names},
                                 {n: prb.dt for n in names}, names[:-1], names[-1:],
                                 fault=core.active_op_fault())
    except core.Unimplemented as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None


def prepare(prb: EltwiseProblem, prim: core.EltwisePrimitive, route: reorders.Route,
            perf: bool) -> Buffers:
    """Fills the inputs (plain) and places them into the case's layout, runs the service
    forward when backward needs dst, and binds the execution (through the route). In
    place, the output buffer starts as a copy of the input memory it replaces."""
    n, shape, dtype, lay = prb.nelems, prb.desc.dims, core.numpy_dtype(prb.dt), prb.layout

    def values(kind: fill.Kind) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(logical f32, plain values of the case's type, the memory in the layout)"""
        data = (cfg.perf_values(n, kind, prb.dt) if perf
                else cfg.fill_values(n, kind, prb.alg, prb.alpha, prb.beta))
        typed = np.ascontiguousarray(cfg.to_dt(data, prb.dt).reshape(-1))
        return (typed.reshape(shape).astype(cfg.logical_dtype(prb.dt)), typed,
                reorders.place(typed, lay, prb.dt))

    src, src_plain, src_mem = values(fill.Kind.SRC)
    if prb.dir.forward:
        out = reorders.output_buffer(lay, prb.dt)
        if prb.inplace:
            out.array[:] = src_mem
            src_mem = out.array
        k_in, k_out, wrap = route.bind({"src": src_mem}, {"dst": out.array})
        src1 = post_ops.fill_src1(prb.post_ops, shape)
        # (another backend takes no chain: the verdict keeps post-ops off it)
        chain = post_ops.kernel_chain(prb.post_ops, src1, shape,
                                      bool(layout.channels_last(prb.kernel_layout)))
        drop = dropout_args(prb)
        # (dropout runs on dst's memory itself: dropout_unsupported)
        mask = (reorders.output_buffer(lay, "u8")
                if drop and prb.modes.dropout.mask_tag != "undef" else None)
        if chain is None and drop is None:
            run = wrap(prim.bind_fwd(k_in["src"], k_out["dst"]))
        else:
            run = wrap(prim.bind_fwd(k_in["src"], k_out["dst"], chain, drop,
                                     mask.array if mask else None))
        return Buffers(src=src, out=out, outs=(out,) + ((mask,) if mask else ()), run=run,
                       src1=src1, mask=mask)
    out = reorders.output_buffer(lay, prb.dt)
    bufs = Buffers(src=src, out=out, outs=(out,), run=None)
    x_mem = src_mem
    if prb.from_dst:
        # the service forward runs on the plain values (on the backend's own forward);
        # its dst is placed like an input
        dst_plain = np.empty(n, dtype)
        if isinstance(prim, core.EltwisePrimitive):
            fwd = core.EltwisePrimitive(prim.impl, prim.alg, prim.alpha, prim.beta, False,
                                        dt=prb.dt)
            fwd.bind_fwd(src_plain, dst_plain)()
        else:
            prim.forward_values(src_plain, dst_plain)
        bufs.dst = dst_plain.reshape(shape).astype(cfg.logical_dtype(prb.dt))
        x_mem = reorders.place(dst_plain, lay, prb.dt)
    bufs.diff_dst, _, dd_mem = values(fill.Kind.DST)
    if prb.inplace:
        bufs.out.array[:] = dd_mem
        dd_mem = bufs.out.array
    k_in, k_out, wrap = route.bind({"x": x_mem, "diff_dst": dd_mem},
                                   {"diff_src": bufs.out.array})
    bufs.run = wrap(prim.bind_bwd(k_in["x"], k_in["diff_dst"], k_out["diff_src"],
                                  prb.from_dst))
    return bufs


def dropout_keep(prb: EltwiseProblem) -> np.ndarray:
    """Which elements the case's dropout keeps (logical shape): the draw of each element's
    offset in dst's memory."""
    drop = prb.modes.dropout
    return dropout.keep_mask(prb.layout.offset_table().reshape(prb.desc.dims), drop.p,
                             drop.seed, drop.offset)


def reference(prb: EltwiseProblem, bufs: Buffers) -> np.ndarray:
    if prb.dir.forward:
        exp = ref.forward(prb.alg, bufs.src, prb.alpha, prb.beta)
        if prb.modes.dropout:      # between the result and the post-ops (oneDNN's order),
            # in f32 before a chain, as the kernels, whose chain starts from f32 values;
            # the decisions kept for judge's mask check
            bufs.keep = dropout_keep(prb)
            exp = dropout.apply(exp, bufs.keep, prb.modes.dropout.p,
                                np.float32 if prb.post_ops else np.float64)
        if prb.post_ops:           # the chain on the f32 result
            exp = post_ops.chain_reference(exp, prb.post_ops, bufs.src1).astype(np.float64)
        return exp
    x = bufs.dst if prb.from_dst else bufs.src
    return ref.backward(prb.alg, x, bufs.diff_dst, prb.alpha, prb.beta, prb.dt == "f64")


def compare_setup(prb: EltwiseProblem) -> CompareSetup:
    """Rule 5 (NaN/Inf legal) for the algorithms that produce them, and for f16 and the
    8-bit floats, whose range (65504; 57344, 448) the hard-zone fill's results leave
    (reference 6.6)."""
    dtc = cfg.CFG[prb.dt]
    # eltwise post-ops bring their tolerance and NaN/Inf where their formula can
    elts = prb.post_ops.eltwise
    trust = cfg.zero_trust_percent(prb.alg, prb.alpha, prb.beta, prb.backward, prb.dt)
    if prb.modes.dropout:   # dropout zeroes a share p of what is left
        trust += (100.0 - trust) * prb.modes.dropout.p
    return CompareSetup("SRC" if prb.backward else "DST",
                        max([cfg.threshold(prb.alg, prb.backward, prb.dt)]
                            + [eltwise.ALGS[e.name].trh for e in elts]),
                        # a comparison post-op writes 0 for every false
                        100.0 if post_ops.has_comparison(prb.post_ops) else trust,
                        integral=dtc.integral,
                        allow_nans=eltwise.ALGS[prb.alg].nan_inf_possible
                        or prb.dt in ("f16", "f8_e5m2", "f8_e4m3")
                        or post_ops.nans_possible(prb.post_ops),
                        eps=dtc.eps if prb.dt != "f32" else FLT_EPSILON, dt=prb.dt)


def with_cancellation_check(v: Verdict, prb: EltwiseProblem, bufs: Buffers) -> Verdict:
    """benchdnn's driver check (compare rule 7): failing points inside a cancellation zone
    pass when the absolute difference is within the threshold (times |diff_dst|). Integer
    outputs (threshold 0) are exact after rounding: no zone applies."""
    if not v.failed or v.trh == 0:
        return v
    zone = ref.cancellation_zone(prb.alg, bufs.src.ravel()[v.failing], prb.alpha,
                                 prb.backward, v.trh,
                                 float(np.finfo(cfg.logical_dtype(prb.dt)).eps))
    scale = np.abs(bufs.diff_dst.ravel()[v.failing]) if prb.backward else 1.0
    diff = np.abs(v.exp[v.failing].astype(np.float64) - v.got[v.failing])
    rescued = zone & (diff <= v.trh * np.maximum(scale, 1.0))
    if not rescued.any():
        return v
    return v.keep_failing(v.failing[~rescued])


def judge(prb: EltwiseProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    got = reorders.read(bufs.out.array, prb.layout).reshape(prb.desc.dims)
    verdict = compare(exp, got, compare_setup(prb))
    verdict = with_cancellation_check(verdict, prb, bufs)
    res.take_verdict(verdict, prb.desc.dims, verbose)
    if bufs.mask is not None:
        judge_mask(prb, bufs.mask.array, bufs.keep, res)
    # the memory beyond the points: a blocked layout's padded tail must hold zeros
    res.take_memory_fault(memory_faults("SRC" if prb.backward else "DST", prb.layout,
                                        bufs.out.array, None))


def judge_mask(prb: EltwiseProblem, mask: np.ndarray, keep: np.ndarray,
               res: CaseResult) -> None:
    """Dropout's mask against the reference's keep decisions, exactly: FAILED, with the
    first differing points, when any element's 0 or 1 differs."""
    got = reorders.read(mask, prb.layout).reshape(-1)
    exp = keep.reshape(-1).astype(np.uint8)
    bad = np.flatnonzero(got != exp)
    if not bad.size:
        return
    res.status = Status.FAILED
    res.reason = f"dropout mask differs at {bad.size} of {got.size} points"
    for i in bad[:MAX_PRINTED_POINTS]:
        idx = ":".join(str(int(c)) for c in np.unravel_index(i, prb.desc.dims))
        res.diagnostics.append(f"[{i:4d}][MASK][{idx}] exp:{exp[i]} got:{got[i]}")


def perf_record(prb: EltwiseProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    n, size = prb.nelems, core.numpy_dtype(prb.dt).itemsize
    # Bytes that must cross memory per run: forward reads src, writes dst (and dropout's
    # mask, a byte each); backward reads x (src or dst) and diff_dst, writes diff_src;
    # each element of the case's type.
    ibytes = size * n * (1 if prb.dir.forward else 2)
    obytes = size * n + (n if bufs.mask is not None else 0)
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "eltwise",
        "prb": f"{ctx.settings.repro_prefix()}--eltwise {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value, "dt": prb.dt,
        "tag": str(prb.tag), "alg": prb.alg, "attr": "", "prop": prb.dir.prop_kind,
    }
    # One operation per element: eltwise has no flop count worth the name.
    return PerfRecord(text, float(n), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


def create_with_route(prb: EltwiseProblem, res: CaseResult) -> Created | None:
    """The primitive with its reorder route, or None with res set."""
    prim = (create if prb.backend == backends.NATIVE else BACKENDS[prb.backend].create)(prb, res)
    route = make_route(prb, res) if prim is not None else None
    return None if route is None else Created(prim, route)


class Steps(CaseSteps):
    driver = "eltwise"

    create = staticmethod(create_with_route)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: EltwiseProblem) -> tuple[Status, str] | None:
        """The problem itself (and the native kernels' types), then the backend's limits."""
        return unsupported(prb) or backend_unsupported("eltwise", prb, BACKENDS)

    def skip_note(self, prb: EltwiseProblem) -> str | None:
        return invalid(prb) or cfg.not_supported(prb.alg, prb.dt, prb.backward)

    def footprint(self, prb: EltwiseProblem) -> int:
        # inputs and output, and the f64 reference's and the compare's temporaries (the
        # widest reference, backward gelu_erf, was measured near 16 arrays of f64)
        return prb.nelems * (4 * core.numpy_dtype(prb.dt).itemsize + 8 * 20)

    def tensor_bytes(self, prb: EltwiseProblem, prim: Created) -> int:
        # src and dst (backward: the saved src or dst, diff_dst, diff_src); one in place
        tensors = (3 if prb.backward else 2) - prb.inplace
        mask = prb.layout.size if prb.modes.dropout else 0
        return tensors * prb.layout.size * core.numpy_dtype(prb.dt).itemsize + mask

    def layouts(self, prb: EltwiseProblem, prim: Created) -> str:
        return f"layout {prb.tag}={prb.layout.describe()}"

    def prepare(self, prb: EltwiseProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: EltwiseProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
