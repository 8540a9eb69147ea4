"""The softmax driver: options, problems, and one case from creation to verdict.

Case flow (correctness): forward fills src with the top-values fill (cfg.fill_forward),
runs into a poisoned, guarded dst, and compares it with the reference in double
(ref.forward, then the attributes: src scale, dropout, post-ops, 1 / dst scale). Backward
fills dst and diff_dst (cfg.fill_backward: the backward takes dst, not src) and compares
diff_src. Performance: real-valued fill, warm-up, timed runs, GB/s.

Memory formats: --stag is src's (backward: dst's, when --dtag is any), --dtag dst's; `any`
takes the other's. The kernels walk a dense tensor as outer x axis x inner in memory order,
so any dense plain layout (abx, axb, acdb, ...) is run on directly; a blocked one is
served by the reorder route (plain scratch, kernel, reorder back, all timed). With post-ops
the kernel layout is channels first or last (the chain's inputs follow each point's
position in one of those); with dropout it must be dst's memory (the draws follow dst's
offsets). Backward's diff tensors are `any`: they take the kernel's layout.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, check, dropout, dt_names, fill, layout, post_ops, reorders
from ...common.check import FLT_EPSILON, CompareSetup, Verdict, compare, memory_faults
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter, first_accepting
from ...engine.memory import Guarded
from ...engine.options import Option, bool_value, enum_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import ProblemError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported
from . import backend_onednn, backend_torch, cfg, ref
from .desc import Dims, check_axis, parse_dims


class Dir(enum.Enum):
    FWD_D = "FWD_D"     # forward training
    FWD_I = "FWD_I"     # forward inference (the same math)
    BWD_D = "BWD_D"     # backward data (from dst and diff_dst)

    @property
    def forward(self) -> bool:
        return self is not Dir.BWD_D

    @property
    def prop_kind(self) -> str:
        return {Dir.FWD_D: "forward_training", Dir.FWD_I: "forward_inference",
                Dir.BWD_D: "backward_data"}[self]


# --alg spellings (benchdnn's, any case) -> the algorithm
ALGS = {"SOFTMAX": "softmax", "softmax_accurate": "softmax", "LOGSOFTMAX": "logsoftmax",
        "softmax_log": "logsoftmax"}
ALG_NAMES = {"softmax": "SOFTMAX", "logsoftmax": "LOGSOFTMAX"}   # how repro lines print them


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_D,
           "propagation direction", is_list=True),
    Option("sdt", dt_names.option("sdt"), "f32", "data type of src (backward: diff_src)",
           is_list=True),
    Option("ddt", dt_names.option("ddt"), "f32", "data type of dst (backward: dst, diff_dst)",
           is_list=True),
    Option("stag", layout.tag_option("stag"), layout.parse_tag("abx"),
           "memory tag of src (backward: of dst when --dtag is any)", is_list=True),
    Option("dtag", layout.tag_option("dtag"), layout.parse_tag("any"),
           "memory tag of dst (any: src's)", is_list=True),
    Option("alg", enum_value("alg", ALGS), "softmax",
           "SOFTMAX (softmax_accurate) or LOGSOFTMAX (softmax_log)", is_list=True),
    Option("axis", int_value("axis", 0), 1, "the dimension the operation runs along",
           is_list=True),
    Option("inplace", bool_value("inplace"), False, "dst (diff_src) overwrites src "
           "(diff_dst)", is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces dims[0] (0: the descriptor's)",
           is_list=True),
    Option("attr-scales", attr.parse_scales, attr.Scales(),
           "scales ARG:common:SCALE for src and dst joined by +", is_list=True),
    Option("attr-post-ops", attr.parse_post_ops, attr.PostOps(),
           "post-op chains of eltwise, binary and prelu entries (as --conv's)", is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels), onednn (oneDNN's "
           "softmax primitives) or torch (PyTorch's softmax operators)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS = {"onednn": backend_onednn, "torch": backend_torch}

PERF_FIELDS = frozenset({"dir", "sdt", "ddt", "stag", "dtag", "alg", "axis", "prop", "mb"})
CSV_PERF_FIELDS = "%dir%,%sdt%,%ddt%,%stag%,%dtag%,%alg%,%axis%"

# output types narrower than f32 that a result computed in f32 is rounded to
ROUNDED_FLOATS = ("bf16", "f16", "f8_e5m2", "f8_e4m3")

# binary post-op inputs (benchdnn's softmax choice): non-negative integers, added to
# outputs that are mostly positive, so that no sum cancels
SRC1_RANGE = (0, 16)


@dataclasses.dataclass(frozen=True)
class SoftmaxProblem:
    desc: Dims
    dir: Dir
    sdt: str
    ddt: str
    stag: layout.Tag
    dtag: layout.Tag
    alg: str
    axis: int
    inplace: bool
    impl_filter: ImplFilter
    user_mb: int
    scales: attr.Scales = attr.Scales()
    post_ops: attr.PostOps = attr.PostOps()
    modes: attr.Modes = attr.Modes()
    backend: str = backends.NATIVE

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if self.dir is not Dir.FWD_D:
            parts.append(f"--dir={self.dir.value}")
        if self.sdt != "f32":
            parts.append(f"--sdt={self.sdt}")
        if self.ddt != "f32":
            parts.append(f"--ddt={self.ddt}")
        if self.stag.text != "abx":
            parts.append(f"--stag={self.stag}")
        if not self.dtag.is_any:
            parts.append(f"--dtag={self.dtag}")
        if self.alg != "softmax":
            parts.append(f"--alg={ALG_NAMES[self.alg]}")
        if self.axis != 1:
            parts.append(f"--axis={self.axis}")
        if self.inplace:
            parts.append("--inplace=true")
        if self.scales:
            parts.append(f"--attr-scales={self.scales}")
        if self.post_ops:
            parts.append(f"--attr-post-ops={self.post_ops}")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def dims(self) -> tuple[int, ...]:
        return self.desc.dims

    @property
    def nelems(self) -> int:
        return math.prod(self.dims)

    @property
    def log(self) -> bool:
        return self.alg == "logsoftmax"

    @property
    def backward(self) -> bool:
        return not self.dir.forward

    @property
    def data_layout(self) -> layout.Layout:
        """The layout of the tensor the user gives: src forward, dst backward."""
        tag = self.stag if self.dir.forward or self.dtag.is_any else self.dtag
        return tensor_layout(tag, self.dims)

    @property
    def kernel_layout(self) -> layout.Layout:
        """Where the kernels run: the data layout itself when dense (with post-ops, channels
        first or last), else plain."""
        lay = self.data_layout
        if layout.dense_order(lay) is not None \
                and (not self.post_ops or layout.channels_last(lay) is not None):
            return lay
        return layout.plain(self.dims)

    @property
    def dst_layout(self) -> layout.Layout:
        """Forward's dst: its tag's layout, or src's (`any`, as in place needs it)."""
        return tensor_layout(self.stag if self.dtag.is_any else self.dtag, self.dims)

    def scale(self, arg: str) -> float:
        return self.scales.common_value(arg)


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> SoftmaxProblem:
    desc = parse_dims(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    check_axis(desc.dims, values["axis"])
    for name in ("stag", "dtag"):         # the rank check, at parse time
        try:
            tensor_layout(values[name], desc.dims)
        except ProblemError as exc:
            raise ProblemError(str(exc).replace("--tag=", f"--{name}=")) from None
    return SoftmaxProblem(desc, values["dir"], values["sdt"], values["ddt"], values["stag"],
                          values["dtag"], values["alg"], values["axis"], values["inplace"],
                          values["impl_filter"], values["mb"], values["attr-scales"],
                          values["attr-post-ops"], attr.modes_of(values), values["backend"])


def invalid(prb: SoftmaxProblem) -> str | None:
    """Why the combination means nothing (SKIPPED, Invalid case), or None: in place needs
    one type and one layout for the tensor that is overwritten and the one that replaces it."""
    if not prb.inplace:
        return None
    if prb.sdt != prb.ddt:
        return f"in place with --sdt={prb.sdt} and --ddt={prb.ddt}"
    if not prb.dtag.is_any and not prb.dtag.layout(prb.dims).same_memory(
            tensor_layout(prb.stag, prb.dims)):
        return f"in place with --stag={prb.stag} and --dtag={prb.dtag}"
    return None


def attrs_unsupported(prb: SoftmaxProblem) -> tuple[Status, str] | None:
    """The attributes the kernels cannot apply: scales other than common src and dst ones,
    attributes backward, f64 compute with dropout or post-ops."""
    for e in prb.scales.entries:
        if e.arg not in ("src", "dst") or not e.is_common or e.groups:
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: softmax "
                    "takes a common scale for src and for dst")
        if e.dt not in ("f32", "bf16", "f16"):
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: scales of "
                    "type f32, bf16 or f16")
    if prb.backward and (prb.scales or prb.post_ops or prb.modes.dropout):
        return (Status.UNIMPLEMENTED, "scales, post-ops and dropout apply to forward "
                "propagation")
    if any(isinstance(e, attr.Sum) for e in prb.post_ops.entries):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value   # (benchdnn's verdict)
    verdict = post_ops.memory_bound_verdict(prb.post_ops, prb.modes, prb.backend,
                                            "a softmax", prb.dims,
                                            native=frozenset({"scratchpad", "dropout"}))
    if verdict:
        return verdict
    if "f64" in (prb.sdt, prb.ddt) and (prb.post_ops or prb.modes.dropout):
        return (Status.UNIMPLEMENTED, "f64 softmax runs in double, without post-ops or "
                "dropout (f32 steps)")
    why = dropout_unsupported(prb)
    return (Status.UNIMPLEMENTED, f"--attr-dropout={prb.modes.dropout}: {why}") if why else None


def dropout_unsupported(prb: SoftmaxProblem) -> str | None:
    """Why the kernels cannot apply the case's dropout (None also without one): its draws
    and mask follow dst's memory offsets, so the kernel must run on dst's memory."""
    drop = prb.modes.dropout
    if not drop:
        return None
    if not prb.dst_layout.same_memory(prb.kernel_layout):
        return (f"the kernel runs behind a reorder route for --dtag={prb.dtag}, so its "
                "element offsets are not dst's")
    if drop.mask_tag not in ("any", "undef"):
        mask = tensor_layout(layout.parse_tag(drop.mask_tag), prb.dims)
        if not mask.same_memory(prb.dst_layout):
            return f"the mask tag {drop.mask_tag} is not dst's layout"
    return None


def unsupported(prb: SoftmaxProblem) -> tuple[Status, str] | None:
    for name, dt in (("sdt", prb.sdt), ("ddt", prb.ddt)):
        if dt not in cfg.CFG:
            return Status.UNIMPLEMENTED, f"--{name}={dt}: softmax has no {dt} implementation"
    if prb.backward and (cfg.CFG[prb.sdt].integral or cfg.CFG[prb.ddt].integral):
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value    # no integer gradients
    if prb.backward and {prb.sdt, prb.ddt} & {"f8_e5m2", "f8_e4m3"}:
        return (Status.UNIMPLEMENTED, f"--sdt={prb.sdt} --ddt={prb.ddt}: the 8-bit floats "
                "run forward only")
    if invalid(prb):
        return Status.SKIPPED, Reason.INVALID_CASE.value
    return attrs_unsupported(prb)


def lines(lay: layout.Layout, axis: int) -> core.Lines:
    """The tensor as the kernels walk it in a dense layout: the elements before the axis in
    memory order, the axis, those after it."""
    return core.Lines(*layout.around_axis(lay.dims, layout.dense_order(lay), axis))


def create(prb: SoftmaxProblem, res: CaseResult) -> core.SoftmaxPrimitive | None:
    """The first implementation, in the table's order, that the CPU runs and the filter
    allows; sets SKIPPED/UNIMPLEMENTED otherwise."""
    fault = core.active_op_fault()
    with res.timers("create_pd"):
        mem, kernel = route_layouts(prb)[:2]
        routed = reorders.needs_route(mem, kernel)
    allow = reorders.RouteFilter(prb.impl_filter) if routed else prb.impl_filter
    return first_accepting(
        core.softmax_impls(), allow,
        lambda impl: core.SoftmaxPrimitive(impl, prb.alg, prb.sdt, prb.ddt, prb.backward,
                                           fault), res)


def route_layouts(prb: SoftmaxProblem) -> tuple[dict, dict, dict, tuple, tuple]:
    """(memory layouts, kernel layouts, types, inputs, outputs) of the case's tensors.
    Another backend runs on the memory's layouts themselves (an empty route)."""
    k = prb.kernel_layout
    if prb.dir.forward:
        mem = {"src": tensor_layout(prb.stag, prb.dims), "dst": prb.dst_layout}
        kernel = {"src": k, "dst": k}
        dts, ins, outs = {"src": prb.sdt, "dst": prb.ddt}, ("src",), ("dst",)
    else:
        mem = {"dst": prb.data_layout, "diff_dst": k, "diff_src": k}
        kernel = {n: k for n in mem}
        dts = {"dst": prb.ddt, "diff_dst": prb.ddt, "diff_src": prb.sdt}
        ins, outs = ("dst", "diff_dst"), ("diff_src",)
    if prb.backend != backends.NATIVE:
        kernel = dict(mem)
    return mem, kernel, dts, ins, outs


def make_route(prb: SoftmaxProblem, res: CaseResult) -> reorders.Route | None:
    mem, kernel, dts, ins, outs = route_layouts(prb)
    try:
        with res.timers("create_prim"):
            return reorders.Route(mem, kernel, dts, ins, outs, fault=core.active_op_fault())
    except core.Unimplemented as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    """A case's tensors: the logical inputs (f32 values exact in their types) for the
    reference, and the memory buffers the primitive runs on."""

    src: np.ndarray | None = None         # forward's input (logical)
    dst: np.ndarray | None = None         # backward's inputs (logical)
    diff_dst: np.ndarray | None = None
    out: Guarded                          # dst (forward) or diff_src (backward), memory
    out_layout: layout.Layout
    src1: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    mask: Guarded | None = None           # dropout's mask (u8, dst's layout)
    keep: np.ndarray | None = None        # the reference's dropout decisions (logical)
    mag: np.ndarray | None = None         # each point's largest magnitude in the post-op
                                          # chain (flat, logical; reference())


def fill_src1(prb: SoftmaxProblem) -> dict[str, np.ndarray]:
    """Binary inputs in SRC1_RANGE (mul and div keep their own choices), prelu's weights
    as every driver draws them."""
    values = post_ops.fill_src1(prb.post_ops, prb.dims)
    for i, e in post_ops.src1_entries(prb.post_ops):
        if isinstance(e, attr.Binary) and e.alg not in post_ops.SRC1_CHOICES:
            name = post_ops.src1_name(i)
            shape = values[name].shape
            values[name] = fill.int_fill(math.prod(shape), fill.Kind.POST_SRC1 + i,
                                         *SRC1_RANGE).reshape(shape)
    return values


def prepare(prb: SoftmaxProblem, prim: core.SoftmaxPrimitive, route: reorders.Route,
            perf: bool) -> Buffers:
    n, k = prb.nelems, prb.kernel_layout
    walk = lines(k, prb.axis)
    if prb.dir.forward:
        src = (cfg.perf_values(n, fill.Kind.SRC, prb.sdt).reshape(prb.dims) if perf
               else cfg.fill_forward(prb.dims, prb.axis, prb.sdt, prb.ddt))
        src_mem = reorders.place_values(src, tensor_layout(prb.stag, prb.dims), prb.sdt)
        out = reorders.output_buffer(prb.dst_layout, prb.ddt)
        if prb.inplace:
            out.array[:] = src_mem
            src_mem = out.array
        k_in, k_out, wrap = route.bind({"src": src_mem}, {"dst": out.array})
        src1 = fill_src1(prb)
        chain = post_ops.kernel_chain(prb.post_ops, src1, prb.dims,
                                      bool(layout.channels_last(k)))
        drop = (core.DropoutArgs(prb.modes.dropout.p, prb.modes.dropout.seed,
                                 prb.modes.dropout.offset) if prb.modes.dropout else None)
        mask = (reorders.output_buffer(prb.dst_layout, "u8")
                if drop and prb.modes.dropout.mask_tag != "undef" else None)
        run = wrap(prim.bind_fwd(k_in["src"], k_out["dst"], walk, prb.scale("src"),
                                 prb.scale("dst"), chain, drop,
                                 mask.array if mask else None))
        return Buffers(src=src, out=out, out_layout=prb.dst_layout,
                       outs=(out,) + ((mask,) if mask else ()), run=run, src1=src1,
                       mask=mask)
    if perf:
        dst = cfg.perf_values(n, fill.Kind.DST, prb.ddt).reshape(prb.dims)
        diff_dst = cfg.perf_values(n, fill.Kind.SRC, prb.ddt).reshape(prb.dims)
    else:
        dst = cfg.fill_backward(n, "dst", prb.ddt, prb.log).reshape(prb.dims)
        diff_dst = cfg.fill_backward(n, "diff_dst", prb.ddt, prb.log).reshape(prb.dims)
    dst_mem = reorders.place_values(dst, prb.data_layout, prb.ddt)
    dd_mem = reorders.place_values(diff_dst, k, prb.ddt)
    out = reorders.output_buffer(k, prb.sdt)
    if prb.inplace:
        out.array[:] = dd_mem
        dd_mem = out.array
    k_in, k_out, wrap = route.bind({"dst": dst_mem, "diff_dst": dd_mem},
                                   {"diff_src": out.array})
    run = wrap(prim.bind_bwd(k_in["dst"], k_in["diff_dst"], k_out["diff_src"], walk))
    return Buffers(dst=dst, diff_dst=diff_dst, out=out, out_layout=k, outs=(out,), run=run)


def dropout_keep(prb: SoftmaxProblem) -> np.ndarray:
    """Which elements the case's dropout keeps (logical): each one's draw by its offset in
    dst's memory."""
    drop = prb.modes.dropout
    return dropout.keep_mask(prb.dst_layout.offset_table().reshape(prb.dims), drop.p,
                             drop.seed, drop.offset)


def reference(prb: SoftmaxProblem, bufs: Buffers) -> np.ndarray:
    f64 = "f64" in (prb.sdt, prb.ddt)
    lowest = -float(np.finfo(np.float64).max) if f64 else ref.LOWEST
    if prb.backward:
        return ref.backward(prb.log, bufs.dst, bufs.diff_dst, prb.axis)
    exp = ref.forward(prb.log, bufs.src, prb.axis, lowest) * prb.scale("src")
    if prb.modes.dropout:       # in f32 before a chain, as the kernels' chain starts in f32
        bufs.keep = dropout_keep(prb)
        exp = dropout.apply(exp, bufs.keep, prb.modes.dropout.p,
                            np.float32 if prb.post_ops else np.float64)
    if prb.post_ops:
        # (the largest magnitude each point reaches bounds its error: with_rescues)
        exp, mag = post_ops.chain_with_magnitude(exp, prb.post_ops, bufs.src1)
        bufs.mag = (mag / prb.scale("dst")).reshape(-1)
    return exp * (1.0 / prb.scale("dst"))


def compare_setup(prb: SoftmaxProblem) -> CompareSetup:
    dt = prb.sdt if prb.backward else prb.ddt
    trust = cfg.zero_trust_percent(prb.log, prb.backward, prb.dims[prb.axis], prb.ddt)
    if prb.modes.dropout:   # dropout zeroes a share p of what is left
        trust += (100.0 - trust) * prb.modes.dropout.p
    elts = prb.post_ops.eltwise
    return CompareSetup("SRC" if prb.backward else "DST",
                        cfg.threshold(prb.log, prb.backward, dt, prb.modes.acc_mode),
                        100.0 if post_ops.has_comparison(prb.post_ops) else trust,
                        integral=cfg.CFG[dt].integral,
                        # log-softmax's floor results lie near f32's lowest value (a
                        # scale or post-op takes them to -Inf or NaN), which f16 and the
                        # 8-bit floats round to -Inf anyway
                        allow_nans=prb.log or dt in ("f16", "f8_e5m2", "f8_e4m3")
                        or post_ops.nans_possible(prb.post_ops),
                        eltwise=bool(elts), eps=cfg.CFG[dt].eps if dt != "f32" else FLT_EPSILON,
                        dt=dt, dst_scale=prb.scales.get("dst") is not None)


def with_rescues(v: Verdict, prb: SoftmaxProblem, bufs: Buffers) -> Verdict:
    """Failing points that pass after all: benchdnn's softmax check (an absolute difference
    below f32's epsilon); after a post-op chain, a difference within the f32 threshold of
    the largest magnitude the point reached in the chain (a binary add can cancel most of
    a value whose f32 rounding stays in the result); and, for an output of a narrower
    float type, the rounding of a value within the f32 threshold of the reference (the
    kernels compute in f32, and an f32 result that close to a rounding boundary of bf16 or
    f16 may round to its other side, which a threshold of 0 would call wrong)."""
    if not v.failed:
        return v
    got = v.got[v.failing]
    diff = np.abs(v.exp[v.failing].astype(np.float64) - got)
    ok = diff < FLT_EPSILON
    trh_f32 = cfg.threshold(prb.log, prb.backward, "f32", "strict")
    if bufs.mag is not None:
        at = v.failing if v.points is None else v.points[v.failing]
        ok |= diff <= trh_f32 * bufs.mag[at]
    dt = prb.sdt if prb.backward else prb.ddt
    if dt in ROUNDED_FLOATS:
        exp = v.exp_f32[v.failing].astype(np.float64)
        delta = np.abs(exp) * trh_f32
        for edge in (exp - delta, exp + delta):
            ok |= check.round_to_dt(edge.astype(np.float32), dt) == got
    return v.keep_failing(v.failing[~ok])


def judge(prb: SoftmaxProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    got = reorders.read(bufs.out.array, bufs.out_layout).reshape(prb.dims)
    verdict = with_rescues(compare(exp, got, compare_setup(prb)), prb, bufs)
    res.take_verdict(verdict, prb.dims, verbose)
    if bufs.mask is not None:
        judge_mask(prb, bufs.mask.array, bufs.keep, res)
    res.take_memory_fault(memory_faults("SRC" if prb.backward else "DST", bufs.out_layout,
                                        bufs.out.array, None))


def judge_mask(prb: SoftmaxProblem, mask: np.ndarray, keep: np.ndarray,
               res: CaseResult) -> None:
    """Dropout's mask against the reference's decisions, exactly."""
    got = reorders.read(mask, prb.dst_layout).reshape(-1)
    bad = np.flatnonzero(got != keep.reshape(-1).astype(np.uint8))
    if bad.size:
        res.status = Status.FAILED
        res.reason = f"dropout mask differs at {bad.size} of {got.size} points"


def perf_record(prb: SoftmaxProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    n = prb.nelems
    s_size, d_size = (core.numpy_dtype(dt).itemsize for dt in (prb.sdt, prb.ddt))
    # Bytes that must cross memory per run: forward reads src and writes dst (and
    # dropout's mask, a byte each); backward reads dst and diff_dst, writes diff_src.
    if prb.dir.forward:
        ibytes = s_size * n + post_ops.src1_bytes(prb.post_ops, prb.dims)
        obytes = d_size * n + (n if bufs.mask is not None else 0)
    else:
        ibytes, obytes = 2 * d_size * n, s_size * n
    attrs = " ".join(p for p in (f"--attr-scales={prb.scales}" if prb.scales else "",
                                 f"--attr-post-ops={prb.post_ops}" if prb.post_ops else "",
                                 *prb.modes.options()) if p)
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "softmax",
        "prb": f"{ctx.settings.repro_prefix()}--softmax {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "sdt": prb.sdt, "ddt": prb.ddt, "stag": str(prb.stag), "dtag": str(prb.dtag),
        "alg": ALG_NAMES[prb.alg], "axis": str(prb.axis), "attr": attrs,
        "prop": prb.dir.prop_kind,
    }
    # One operation per element, as benchdnn counts memory-bound primitives.
    return PerfRecord(text, float(n), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


def create_with_route(prb: SoftmaxProblem, res: CaseResult) -> Created | None:
    prim = (create if prb.backend == backends.NATIVE else BACKENDS[prb.backend].create)(
        prb, res)
    route = make_route(prb, res) if prim is not None else None
    return None if route is None else Created(prim, route)


class Steps(CaseSteps):
    driver = "softmax"

    create = staticmethod(create_with_route)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: SoftmaxProblem) -> tuple[Status, str] | None:
        return unsupported(prb) or backend_unsupported("softmax", prb, BACKENDS)

    def skip_note(self, prb: SoftmaxProblem) -> str | None:
        return invalid(prb)

    def footprint(self, prb: SoftmaxProblem) -> int:
        # the tensors and the route's scratch, the fill's (axis x lines) temporaries, and
        # the reference's and the compare's double arrays
        return prb.nelems * (6 * 8 + 8 * 16) + 4 * prb.data_layout.size * 8

    def tensor_bytes(self, prb: SoftmaxProblem, prim: Created) -> int:
        s_size, d_size = (core.numpy_dtype(dt).itemsize for dt in (prb.sdt, prb.ddt))
        n = prb.nelems
        if prb.dir.forward:
            return n * (d_size + (0 if prb.inplace else s_size))
        return n * (2 * d_size + (0 if prb.inplace else s_size))

    def layouts(self, prb: SoftmaxProblem, prim: Created) -> str:
        return (f"layout src={tensor_layout(prb.stag, prb.dims).describe()} "
                f"kernel={prb.kernel_layout.describe()}")

    def prepare(self, prb: SoftmaxProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: SoftmaxProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
