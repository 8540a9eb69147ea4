"""The bnorm driver: options, problems, and one case from creation to verdict.

Case flow (correctness), as benchdnn's: forward fills mean, src (pairs around the mean,
cfg.fill_src), the variance that src has, src1 (add + relu), scale and shift; training
without global stats computes mean and variance, which are compared with the reference's
(exactly), and dst; with global stats (and in inference) they are inputs. Backward fills
the forward's tensors, takes the statistics and the relu's decisions (the workspace)
from the forward's reference, fills a sparse diff_dst, and compares diff_src, diff_src1
(add + relu) and, for BWD_DW with the scale or shift flag, diff_scale and diff_shift.
Performance: real-valued fill, warm-up, timed runs, GB/s.

Memory formats: --tag is src's; dst is `any` (src's layout, as in place needs it), and
backward's diff tensors are `any`: they take the kernel's layout. The kernels walk a dense
tensor as outer x channels x inner in memory order, so every dense plain layout (abx,
axb, ...) runs directly; a blocked one goes through the reorder route (plain scratch,
kernel, reorder back, all timed). With post-ops the kernel layout is channels first or
last (the chain's inputs follow each point's position in one of those). The workspace is
one byte per point in the kernel's layout.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Callable, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, check, dt_names, layout, post_ops, reorders
from ...common.check import FLT_EPSILON, CompareSetup, Verdict, compare, memory_faults
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter
from ...engine.memory import Guarded
from ...engine.options import Option, bool_value, enum_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import UsageError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported
from ..base import create_routed
from . import backend_onednn, backend_torch, cfg, ref
from .desc import BnormDesc, parse_desc


class Dir(enum.Enum):
    FWD_D = "FWD_D"     # forward training: statistics out (without G), workspace out
    FWD_I = "FWD_I"     # forward inference
    BWD_D = "BWD_D"     # backward data
    BWD_DW = "BWD_DW"   # backward data and scale/shift

    @property
    def forward(self) -> bool:
        return self in (Dir.FWD_D, Dir.FWD_I)

    @property
    def prop_kind(self) -> str:
        return {Dir.FWD_D: "forward_training", Dir.FWD_I: "forward_inference",
                Dir.BWD_D: "backward_data", Dir.BWD_DW: "backward"}[self]


# benchdnn's flag letters, in the order it prints them
FLAG_ORDER = "GCHRA"


def parse_flags(text: str) -> str:
    """--flags: any of G (global stats), C (scale), H (shift), R (fused relu), A (fused
    add + relu), in any order; the empty value is none. Canonical: benchdnn's order."""
    bad = [ch for ch in text if ch not in FLAG_ORDER]
    if bad:
        raise UsageError(f"--flags={text}: unknown flag `{bad[0]}`; expected letters of "
                         f"{FLAG_ORDER} (G global stats, C scale, H shift, R fused relu, "
                         "A fused add + relu)")
    return "".join(f for f in FLAG_ORDER if f in text)


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_D,
           "propagation direction: FWD_D, FWD_I, BWD_D or BWD_DW", is_list=True),
    Option("dt", dt_names.option("dt"), "f32", "data type of src, dst and their gradients",
           is_list=True),
    Option("tag", layout.tag_option("tag"), layout.parse_tag("abx"),
           "memory tag of src (dst and the gradients: any)", is_list=True),
    Option("flags", parse_flags, "", "normalization flags: letters of G (global stats), "
           "C (scale), H (shift), R (fused relu), A (fused add + relu)", is_list=True),
    Option("check-alg", enum_value("check-alg", cfg.CHECK_ALGS), cfg.CheckAlg.AUTO,
           "the fill's method: alg_0 (mean 0, sparse src), alg_1 (src in pairs around "
           "a power-of-two mean) or alg_auto"),
    Option("inplace", bool_value("inplace"), False, "dst (diff_src) overwrites src "
           "(diff_dst)", is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces the descriptor's mb (0: keep it)",
           is_list=True),
    Option("debug-check-ws", bool_value("debug-check-ws"), False,
           "accepted for benchdnn's batch files: the workspace is always checked"),
    Option("attr-post-ops", attr.parse_post_ops, attr.PostOps(),
           "forward post-op chains of eltwise, binary and prelu entries (as --conv's)",
           is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels), onednn "
           "(oneDNN's batch normalization primitives) or torch (PyTorch's batch norm "
           "operators)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS = {"onednn": backend_onednn, "torch": backend_torch}
# the backends that apply forward post-op chains: the native kernels fuse them, torch runs
# them as operators after its batch norm
POST_OP_BACKENDS = frozenset({backends.NATIVE, "torch"})
# the backends whose forward folds the normalization into dst = src alpha + beta in f32
# (alpha = g r, beta = b - m alpha): torch's CPU kernels. Where src alpha and m alpha
# nearly cancel, dst keeps their roundings, which the check allows (with_rescues).
FOLDING_BACKENDS = frozenset({"torch"})

PERF_FIELDS = frozenset({"dir", "dt", "tag", "flags", "prop", "mb"})
CSV_PERF_FIELDS = "%dir%,%dt%,%tag%,%flags%"


@dataclasses.dataclass(frozen=True)
class BnormProblem:
    desc: BnormDesc
    dir: Dir
    dt: str
    tag: layout.Tag
    flags: str
    inplace: bool
    check_alg: cfg.CheckAlg
    impl_filter: ImplFilter
    user_mb: int
    post_ops: attr.PostOps = attr.PostOps()
    modes: attr.Modes = attr.Modes()
    backend: str = backends.NATIVE

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if canonical or self.dir is not Dir.FWD_D:
            parts.append(f"--dir={self.dir.value}")
        if canonical or self.dt != "f32":
            parts.append(f"--dt={self.dt}")
        if canonical or self.tag.text != "abx":
            parts.append(f"--tag={self.tag}")
        if canonical or self.flags:
            parts.append(f"--flags={self.flags}")
        if canonical or self.check_alg is not cfg.CheckAlg.AUTO:
            parts.append(f"--check-alg={self.check_alg.value}")
        if canonical or self.inplace:
            parts.append(f"--inplace={str(self.inplace).lower()}")
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
    def channels(self) -> int:
        return self.desc.ic

    @property
    def backward(self) -> bool:
        return not self.dir.forward

    @property
    def glob(self) -> bool:
        return "G" in self.flags

    @property
    def relu(self) -> bool:
        """A fused relu: R, or A's add + relu."""
        return "R" in self.flags or "A" in self.flags

    @property
    def add(self) -> bool:
        return "A" in self.flags

    @property
    def training(self) -> bool:
        return self.dir is not Dir.FWD_I

    @property
    def stats_out(self) -> bool:
        """Forward training without global stats writes mean and variance."""
        return self.dir is Dir.FWD_D and not self.glob

    @property
    def diff_params(self) -> tuple[str, ...]:
        """The per-channel gradients the case computes: BWD_DW's of scale and shift."""
        if self.dir is not Dir.BWD_DW:
            return ()
        return tuple(n for n, f in (("diff_scale", "C"), ("diff_shift", "H"))
                     if f in self.flags)

    @property
    def data_layout(self) -> layout.Layout:
        return tensor_layout(self.tag, self.dims)

    @property
    def kernel_layout(self) -> layout.Layout:
        """Where the kernels run: the data layout itself when dense (with post-ops,
        channels first or last), else plain."""
        lay = self.data_layout
        if layout.dense_order(lay) is not None \
                and (not self.post_ops or layout.channels_last(lay) is not None):
            return lay
        return layout.plain(self.dims)

    @property
    def diff_layout(self) -> layout.Layout:
        """Backward's gradients (`any`): the kernels' layout, or src's on another backend
        (what oneDNN's `any` resolves to)."""
        return self.kernel_layout if self.backend == backends.NATIVE else self.data_layout

    @property
    def lines(self) -> core.Lines:
        """The kernel layout as the kernels walk it: outer x channels x inner."""
        k = self.kernel_layout
        return core.Lines(*layout.around_axis(self.dims, layout.dense_order(k), 1))


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> BnormProblem:
    desc = parse_desc(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    tensor_layout(values["tag"], desc.dims)     # the rank check, at parse time
    return BnormProblem(desc, values["dir"], values["dt"], values["tag"], values["flags"],
                        values["inplace"], values["check-alg"], values["impl_filter"],
                        values["mb"], values["attr-post-ops"], attr.modes_of(values),
                        values["backend"])


def attrs_unsupported(prb: BnormProblem) -> tuple[Status, str] | None:
    """Post-ops backward; benchdnn's verdicts on a sum entry and on a relu with a slope in
    training (oneDNN trains with a plain relu); then what the kernels or the backend
    cannot apply."""
    if prb.post_ops and prb.backward:
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: post-ops apply to "
                "forward propagation")
    for e in prb.post_ops.entries:
        slope_in_training = (isinstance(e, attr.Eltwise) and e.name == "relu"
                             and e.alpha != 0 and prb.training)
        if isinstance(e, attr.Sum) or slope_in_training:
            return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    return post_ops.memory_bound_verdict(prb.post_ops, prb.modes, prb.backend,
                                         "a batch normalization", prb.dims,
                                         native=frozenset({"scratchpad"}),
                                         chains=POST_OP_BACKENDS)


def unsupported(prb: BnormProblem) -> tuple[Status, str] | None:
    if prb.dt not in cfg.CFG:
        if prb.dt == "u8":
            return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value   # (benchdnn's verdict)
        return Status.UNIMPLEMENTED, f"--dt={prb.dt}: bnorm has no {prb.dt} implementation"
    if cfg.CFG[prb.dt].integral and (prb.backward or not prb.glob):
        # oneDNN's int8 batch normalization: inference with global stats only
        return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    return attrs_unsupported(prb)


def route_layouts(prb: BnormProblem) -> tuple[dict, dict, dict, tuple, tuple]:
    """(memory layouts, kernel layouts, types, inputs, outputs) of the case's tensors."""
    k, data = prb.kernel_layout, prb.data_layout
    if prb.dir.forward:
        mem = {"src": data, "dst": data}
        ins, outs = ("src",), ("dst",)
        if prb.add:
            mem["src1"], ins = data, ins + ("src1",)
    else:
        diff = prb.diff_layout
        mem = {"src": data, "diff_dst": diff, "diff_src": diff}
        ins, outs = ("src", "diff_dst"), ("diff_src",)
        if prb.add:
            mem["diff_src1"], outs = diff, outs + ("diff_src1",)
    kernel = {n: k for n in mem}
    return mem, kernel, {n: prb.dt for n in mem}, ins, outs


def create(prb: BnormProblem, res: CaseResult) -> Created | None:
    fault = core.active_op_fault()
    return create_routed(
        prb, res, route_layouts(prb), core.bnorm_impls,
        lambda impl: core.BnormPrimitive(impl, prb.dt, prb.flags, prb.backward,
                                         prb.training, prb.desc.eps, fault),
        BACKENDS)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    """A case's tensors: the logical inputs (f32 values exact in dt, viewed (mb, C,
    spatial)) for the reference, and the buffers the primitive runs on."""

    src: np.ndarray
    mean: np.ndarray | None = None         # inputs: G, or backward's statistics
    var: np.ndarray | None = None
    scale: np.ndarray | None = None
    shift: np.ndarray | None = None
    src1: np.ndarray | None = None         # add + relu (forward)
    diff_dst: np.ndarray | None = None
    kept: np.ndarray | None = None         # backward: the relu's decisions (logical)
    po_src1: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    mag: np.ndarray | None = None          # each point's largest magnitude in the post-op
                                           # chain (flat, logical; reference())
    fold: np.ndarray | None = None         # a folding backend's: each point's magnitude
                                           # of the fold's terms (flat, logical)
    out: Guarded                           # dst or diff_src
    out_layout: layout.Layout
    extra: dict[str, Guarded] = dataclasses.field(default_factory=dict)
    # mean, variance (FWD_D), diff_scale, diff_shift (BWD_DW), diff_src1 (kernel layout),
    # ws (forward training with a relu: u8, kernel layout)


def _flat_c(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, np.float32).reshape(-1)


def fill_inputs(prb: BnormProblem, perf: bool) -> dict[str, np.ndarray]:
    """The forward's inputs, logical (mb, C, spatial): src, mean and var (the fill's, or
    G's given ones), scale, shift and src1 where the flags take them."""
    mb, C = prb.dims[0], prb.channels
    sp = prb.desc.spatial
    n = prb.nelems
    if perf:
        src = cfg.perf_values(n, "src", prb.dt).reshape(mb, C, sp)
        vals = {"src": src, "mean": cfg.perf_values(C, "mean", "f32"),
                "var": cfg.perf_values(C, "var", "f32")}
        if prb.add:
            vals["src1"] = cfg.perf_values(n, "src1", prb.dt).reshape(mb, C, sp)
        if "C" in prb.flags:
            vals["scale"] = cfg.perf_values(C, "scale", "f32")
        if "H" in prb.flags:
            vals["shift"] = cfg.perf_values(C, "shift", "f32")
        return vals
    plan = cfg.FillPlan.of(mb * sp, prb.dt, prb.check_alg)
    mean = cfg.fill_mean(C, plan, prb.glob)
    src = cfg.fill_src(mb, C, sp, mean, plan, prb.glob, prb.dt)
    vals = {"src": src, "mean": mean, "var": cfg.variance(src, mean, prb.glob)}
    if prb.add:
        vals["src1"] = cfg.fill_src1(src, mean, prb.dims[2:], prb.glob, prb.dt)
    if "C" in prb.flags:
        vals["scale"] = cfg.fill_scale(C, prb.glob)
    if "H" in prb.flags:
        vals["shift"] = cfg.fill_shift(C, prb.glob)
    return vals


def stats_buffer(n: int) -> Guarded:
    return reorders.output_buffer(layout.plain((n,)), "f32")


def bound(result: Any, wrap: Callable) -> dict[str, Callable[[], None]]:
    """Bound's run and collect from a primitive's bind result: the native and oneDNN
    primitives return run alone (they write the case's memories), torch's (run, collect)
    (collect copies its results in after timing); run goes through the route's wrap."""
    run, *collect = result if isinstance(result, tuple) else (result,)
    return {"run": wrap(run), **({"collect": collect[0]} if collect else {})}


def prepare(prb: BnormProblem, prim: Any, route: reorders.Route, perf: bool) -> Buffers:
    vals = fill_inputs(prb, perf)
    src_mem = reorders.place_values(vals["src"].reshape(prb.dims), prb.data_layout, prb.dt)
    return (prepare_fwd if prb.dir.forward else prepare_bwd)(prb, prim, route, perf, vals,
                                                              src_mem)


def prepare_fwd(prb: BnormProblem, prim: Any, route: reorders.Route, perf: bool,
                vals: dict[str, np.ndarray], src_mem: np.ndarray) -> Buffers:
    """src (and src1) in src's layout, the statistics (outputs in training without G,
    inputs with it, none in inference without it), the workspace (training with a
    relu), dst."""
    src, dims, C, data, k = vals["src"], prb.dims, prb.channels, prb.data_layout, \
        prb.kernel_layout
    scale, shift = vals.get("scale"), vals.get("shift")
    out = reorders.output_buffer(data, prb.dt)
    if prb.inplace:
        out.array[:] = src_mem
        src_mem = out.array
    ins = {"src": src_mem}
    if prb.add:
        ins["src1"] = reorders.place_values(vals["src1"].reshape(dims), data, prb.dt)
    extra = {}
    if prb.stats_out:
        extra = {"mean": stats_buffer(C), "var": stats_buffer(C)}
        mean, var = extra["mean"].array, extra["var"].array
    elif prb.glob:
        mean, var = _flat_c(vals["mean"]), _flat_c(vals["var"])
    else:       # inference computes its statistics and keeps them
        mean = var = None
    if prb.relu and prb.training:
        extra["ws"] = reorders.output_buffer(k, "u8")
    k_in, k_out, wrap = route.bind(ins, {"dst": out.array})
    po_src1 = post_ops.fill_src1(prb.post_ops, dims)
    chain = post_ops.kernel_chain(prb.post_ops, po_src1, dims,
                                  bool(layout.channels_last(k)))
    runs = bound(prim.bind_fwd(
        k_in["src"], k_out["dst"], prb.lines, mean, var, scale, shift, k_in.get("src1"),
        extra["ws"].array if "ws" in extra else None, chain,
        # (another backend that runs the chain takes its inputs, logical)
        **({"po_src1": po_src1} if po_src1 and prb.backend != backends.NATIVE else {})),
        wrap)
    return Buffers(src=src, mean=vals["mean"] if prb.glob else None,
                   var=vals["var"] if prb.glob else None, scale=scale, shift=shift,
                   src1=vals.get("src1"), po_src1=po_src1, out=out, out_layout=data,
                   extra=extra, outs=(out, *extra.values()), **runs)


def prepare_bwd(prb: BnormProblem, prim: Any, route: reorders.Route, perf: bool,
                vals: dict[str, np.ndarray], src_mem: np.ndarray) -> Buffers:
    """The forward's statistics and relu decisions (from its reference), a sparse
    diff_dst in the gradients' layout, diff_src (and diff_src1, diff_scale,
    diff_shift)."""
    src, dims, C, k = vals["src"], prb.dims, prb.channels, prb.kernel_layout
    scale, shift = vals.get("scale"), vals.get("shift")
    if prb.glob or perf:
        mean, var = _flat_c(vals["mean"]), _flat_c(vals["var"])
    else:
        m, v = ref.stats(src)
        mean, var = _flat_c(m), _flat_c(v)
    kept = None
    if prb.relu:
        y = ref.forward(src, mean, var, prb.desc.eps, scale, shift, vals.get("src1"), True)
        kept = y > 0
    n = prb.nelems
    diff_dst = (cfg.perf_values(n, "diff_dst", prb.dt) if perf
                else cfg.fill_diff_dst(n, prb.dt)).reshape(src.shape)
    diff = prb.diff_layout
    dd_mem = reorders.place_values(diff_dst.reshape(dims), diff, prb.dt)
    out = reorders.output_buffer(diff, prb.dt)
    if prb.inplace:
        out.array[:] = dd_mem
        dd_mem = out.array
    extra = {name: stats_buffer(C) for name in prb.diff_params}
    outs = {"diff_src": out.array}
    if prb.add:
        extra["diff_src1"] = reorders.output_buffer(diff, prb.dt)
        outs["diff_src1"] = extra["diff_src1"].array
    ws = (reorders.place_values(kept.reshape(dims).astype(np.float32), k, "u8")
          if kept is not None else None)
    k_in, k_out, wrap = route.bind({"src": src_mem, "diff_dst": dd_mem}, outs)
    runs = bound(prim.bind_bwd(
        k_in["src"], mean, var, k_in["diff_dst"], k_out["diff_src"], prb.lines, scale, ws,
        k_out.get("diff_src1"),
        extra["diff_scale"].array if "diff_scale" in extra else None,
        extra["diff_shift"].array if "diff_shift" in extra else None,
        # (another backend may rerun the forward for its own workspace: it needs shift)
        **({"shift": shift} if prb.backend != backends.NATIVE else {})), wrap)
    return Buffers(src=src, mean=mean, var=var, scale=scale, shift=shift,
                   diff_dst=diff_dst, kept=kept, out=out, out_layout=diff, extra=extra,
                   outs=(out, *extra.values()), **runs)


def reference(prb: BnormProblem, bufs: Buffers) -> dict[str, np.ndarray]:
    """The expected outputs by compared kind (logical; per-channel ones flat)."""
    eps = prb.desc.eps
    if prb.backward:
        r = ref.backward(bufs.src, bufs.mean, bufs.var, eps, bufs.diff_dst, bufs.scale,
                         bufs.kept, prb.glob)
        exp = {"SRC": r["diff_src"].reshape(prb.dims)}
        if prb.add:
            exp["SRC_1"] = r["diff_src1"].reshape(prb.dims)
        if "diff_scale" in prb.diff_params:
            exp["SC"] = r["diff_scale"]
        if "diff_shift" in prb.diff_params:
            exp["SH"] = r["diff_shift"]
        return exp
    if prb.glob:
        mean, var = bufs.mean, bufs.var
    else:
        mean, var = ref.stats(bufs.src)
    y = ref.forward(bufs.src, mean, var, eps, bufs.scale, bufs.shift, bufs.src1,
                    prb.relu).reshape(prb.dims)
    if prb.backend in FOLDING_BACKENDS:
        bufs.fold = fold_magnitude(prb, bufs, mean, var).reshape(-1)
    if prb.post_ops:
        # (the largest magnitude each point reaches bounds its error: with_rescues)
        y, mag = post_ops.chain_with_magnitude(y, prb.post_ops, bufs.po_src1)
        bufs.mag = mag.reshape(-1)
    exp = {"DST": y}
    if prb.stats_out:
        exp["MEAN"], exp["VAR"] = mean, var
    return exp


def fold_magnitude(prb: BnormProblem, bufs: Buffers, mean: np.ndarray,
                   var: np.ndarray) -> np.ndarray:
    """|src alpha| + |m alpha| + |b| (+ |src1|) per point (mb, C, spatial): the terms of
    dst = src alpha + beta, alpha = g r and beta = b - m alpha, each rounded once in f32,
    which bound the folded dst's error."""
    alpha = 1.0 / np.sqrt(np.asarray(var, np.float64) + prb.desc.eps)
    if bufs.scale is not None:
        alpha = alpha * bufs.scale
    pc = lambda a: np.asarray(a, np.float64)[None, :, None]   # noqa: E731
    mag = np.abs(np.asarray(bufs.src, np.float64) * pc(alpha)) + np.abs(pc(mean * alpha))
    if bufs.shift is not None:
        mag = mag + np.abs(pc(bufs.shift))
    if bufs.src1 is not None:
        mag = mag + np.abs(np.asarray(bufs.src1, np.float64))
    return mag


# compared kind -> the buffer holding it (besides the main output, DST or SRC)
EXTRA_OF = {"MEAN": "mean", "VAR": "var", "SC": "diff_scale", "SH": "diff_shift",
            "SRC_1": "diff_src1"}


def compare_setup(prb: BnormProblem, kind: str, exp: np.ndarray) -> CompareSetup:
    data = kind in ("DST", "SRC", "SRC_1")
    dt = prb.dt if data else "f32"
    with np.errstate(invalid="ignore"):
        ref_zeros = float(np.mean(exp.astype(np.float32) == 0)) if exp.size else 0.0
    # Per-channel outputs: their zeros are the fill's (mean 0 under alg_0, a channel
    # whose sparse diff_dst is all 0): never mistrusted on their own.
    trust = (cfg.zero_trust_percent(prb.dt, prb.relu or post_ops.zero_trust_percent(
        prb.post_ops, prb.dt) > post_ops.DEFAULT_ZERO_TRUST_PERCENT, ref_zeros)
        if data else 100.0)
    return CompareSetup(kind, cfg.threshold(kind, prb.dt), trust,
                        integral=data and cfg.CFG[prb.dt].integral,
                        allow_nans=kind == "DST" and post_ops.nans_possible(prb.post_ops),
                        eltwise=bool(prb.post_ops.eltwise) and kind == "DST",
                        eps=cfg.CFG[dt].eps if dt != "f32" else FLT_EPSILON, dt=dt,
                        norm_fallback=prb.backward)


def with_rescues(v: Verdict, prb: BnormProblem, bufs: Buffers) -> Verdict:
    """Failing dst points that pass after all. benchdnn's shift check, extended to add +
    relu's src1: where the added terms t (shift b, src1) and g (x - m) r nearly cancel,
    dst may keep no correct digit; such a point passes when got - t is within the
    threshold of exp - t relative to |exp - t| (the error of g (x - m) r itself). After a
    post-op chain, a difference within the threshold of the largest magnitude the point
    reached in the chain passes (a binary add can cancel most of a value whose f32
    rounding stays in the result). On a backend that folds the normalization
    (FOLDING_BACKENDS), a difference within the threshold of the fold's terms passes
    (fold_magnitude: where src alpha and m alpha nearly cancel, their roundings stay)."""
    if not v.failed or prb.backward or v.kind != "DST":
        return v
    at = v.failing if v.points is None else v.points[v.failing]
    exp = v.exp_f32[v.failing].astype(np.float64)
    got = v.got[v.failing].astype(np.float64)
    ok = np.zeros(at.size, bool)
    if bufs.mag is not None:
        ok |= np.abs(exp - got) <= v.trh * bufs.mag[at]
    if bufs.fold is not None:
        ok |= np.abs(exp - got) <= v.trh * bufs.fold[at]
    if bufs.shift is not None or bufs.src1 is not None:
        added = np.zeros(at.size)
        if bufs.shift is not None:
            added += bufs.shift.astype(np.float64)[(at // prb.desc.spatial) % prb.channels]
        if bufs.src1 is not None:
            added += bufs.src1.reshape(-1)[at].astype(np.float64)
        delta = np.abs(exp - added)
        cancels = delta / np.where(np.abs(exp) > check.FLT_TINY, np.abs(exp), 1.0) > 1.0
        rel = np.abs((exp - added) - (got - added)) / np.where(delta > check.FLT_TINY,
                                                               delta, 1.0)
        ok |= cancels & (rel <= v.trh)
    return v.keep_failing(v.failing[~ok])


def take_verdicts(res: CaseResult, verdicts: list[tuple[Verdict, tuple[int, ...]]],
                  verbose: int) -> None:
    """Several compared tensors: each one's diagnostics, their counts summed, and the
    worst status (FAILED over MISTRUSTED over PASSED)."""
    errors = total = size = 0
    status = Status.PASSED
    for v, shape in verdicts:
        res.take_verdict(v, shape, verbose)
        errors, total, size = errors + v.errors, total + v.total, size + v.size
        if res.status is Status.FAILED or (res.status is Status.MISTRUSTED
                                           and status is Status.PASSED):
            status = res.status
    res.errors, res.total, res.outputs, res.status = errors, total, size, status


def judge(prb: BnormProblem, bufs: Buffers, exp: dict[str, np.ndarray], res: CaseResult,
          verbose: int) -> None:
    verdicts = []
    for kind, e in exp.items():
        if kind in ("DST", "SRC"):
            got = reorders.read(bufs.out.array, bufs.out_layout).reshape(prb.dims)
        elif kind == "SRC_1":
            got = reorders.read(bufs.extra["diff_src1"].array, bufs.out_layout
                                ).reshape(prb.dims)
        else:
            got = bufs.extra[EXTRA_OF[kind]].array
        shape = prb.dims if e.ndim > 1 else (prb.channels,)
        v = with_rescues(compare(e, got, compare_setup(prb, kind, e)), prb, bufs)
        verdicts.append((v, shape))
    take_verdicts(res, verdicts, verbose)
    if "ws" in bufs.extra and not prb.post_ops and prb.backend == backends.NATIVE \
            and res.status is not Status.FAILED:
        judge_ws(prb, bufs, res)
    res.take_memory_fault(memory_faults("SRC" if prb.backward else "DST", bufs.out_layout,
                                        bufs.out.array, None))


def judge_ws(prb: BnormProblem, bufs: Buffers, res: CaseResult) -> None:
    """The forward's workspace: 1 exactly where dst is positive (benchdnn's rule)."""
    k = prb.kernel_layout
    dst = reorders.read(bufs.out.array, prb.data_layout).astype(np.float32)
    ws = reorders.read(bufs.extra["ws"].array, k)
    bad = np.flatnonzero((ws != 0) != (dst > 0))
    if bad.size:
        res.status = Status.FAILED
        res.reason = f"workspace differs from dst > 0 at {bad.size} of {ws.size} points"


def moved_bytes(prb: BnormProblem) -> tuple[int, int]:
    """(bytes read, bytes written) that must cross memory per run. A pass over a tensor
    larger than the caches reads it again: forward reads src twice when it computes the
    statistics (them, then the normalization) and once otherwise, src1 once, writes dst
    (and a byte per point of workspace); backward reads src and diff_dst (and the
    workspace) twice when it reduces (the gradients' sums, then diff_src) and once
    otherwise (global stats, no diff_scale or diff_shift), writes diff_src (and
    diff_src1)."""
    n, size = prb.nelems, core.numpy_dtype(prb.dt).itemsize
    ws = n if prb.relu and prb.training else 0
    if prb.dir.forward:
        passes = 1 if prb.glob else 2
        return passes * n * size + (n * size if prb.add else 0), n * size + ws
    passes = 2 if (not prb.glob or prb.diff_params) else 1
    return passes * (2 * n * size + ws), n * size * (2 if prb.add else 1)


def perf_record(prb: BnormProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    ibytes, obytes = moved_bytes(prb)
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "bnorm",
        "prb": f"{ctx.settings.repro_prefix()}--bnorm {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "dt": prb.dt, "tag": str(prb.tag), "flags": prb.flags,
        "attr": f"--attr-post-ops={prb.post_ops}" if prb.post_ops else "",
        "prop": prb.dir.prop_kind,
    }
    # One operation per element, as benchdnn counts memory-bound primitives.
    return PerfRecord(text, float(prb.nelems), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


class Steps(CaseSteps):
    driver = "bnorm"

    create = staticmethod(create)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: BnormProblem) -> tuple[Status, str] | None:
        return unsupported(prb) or backend_unsupported("bnorm", prb, BACKENDS)

    def footprint(self, prb: BnormProblem) -> int:
        # the tensors in their layouts and the route's scratch, the fill's int64 and
        # double temporaries, and the reference's and the compare's double arrays
        return prb.nelems * 96 + 4 * prb.data_layout.size * 8

    def tensor_bytes(self, prb: BnormProblem, prim: Created) -> int:
        size, n = core.numpy_dtype(prb.dt).itemsize, prb.nelems
        tensors = 2 + prb.add + (prb.backward and not prb.inplace) - prb.inplace
        return n * size * tensors

    def layouts(self, prb: BnormProblem, prim: Created) -> str:
        return (f"layout src={prb.data_layout.describe()} "
                f"kernel={prb.kernel_layout.describe()}")

    def prepare(self, prb: BnormProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, perf)


STEPS = Steps()


def run(prb: BnormProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
