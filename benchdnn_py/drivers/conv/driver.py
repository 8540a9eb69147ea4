"""The convolution driver: options, problems, and one case from creation to verdict.

Case flow (correctness): the backend (--backend, benchdnn_py/backends) creates an executor
-> fill src/wei/bias -> bind (native: reorder the weights into the implementation's
layout; torch: wrap the arrays as tensors) -> execute -> collect into a NaN-poisoned,
guarded dst -> reference -> compare every point. Performance: fill with reals, warm up,
time each run of the executor's timed callable. The deconvolution driver runs the same
flow (run_case) with its own fill and reference.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import time
from typing import Any, Callable, Mapping

import numpy as np

from ... import backends, core, eltwise, fill
from ...attr import Eltwise, PostOps, Sum, parse_post_ops
from ...check import CompareSetup, compare, diagnostics
from ...errors import UsageError
from ...memory import Guarded, fits_in_ram
from ...options import Option, enum_value, int_value, regex_value
from ...perf_report import PerfRecord
from ...settings import GlobalSettings
from ...status import Reason, Status
from ...timing import measure
from ..base import CaseResult, RunContext
from ...backends import Executor
from . import cfg
from .desc import ConvDesc, parse_desc
from .ref import compute_ref, count_ops


class Dir(enum.Enum):
    """Propagation directions (benchdnn --dir)."""

    FWD_B = "FWD_B"     # forward training, with bias
    FWD_D = "FWD_D"     # forward training, no bias
    FWD_I = "FWD_I"     # forward inference, no bias (the spec: same math as training)
    BWD_D = "BWD_D"
    BWD_W = "BWD_W"
    BWD_WB = "BWD_WB"
    BWD_DW = "BWD_DW"   # parsed like benchdnn, but not a convolution direction

    @property
    def forward(self) -> bool:
        return self.name.startswith("FWD")

    @property
    def with_bias(self) -> bool:
        return self in (Dir.FWD_B, Dir.BWD_WB)

    @property
    def prop_kind(self) -> str:
        return {Dir.FWD_B: "forward_training", Dir.FWD_D: "forward_training",
                Dir.FWD_I: "forward_inference", Dir.BWD_D: "backward_data"}.get(
                    self, "backward_weights")


@dataclasses.dataclass(frozen=True)
class ImplFilter:
    """--impl (keep names containing any of) or --skip-impl (drop names containing any of);
    they share one setting, so the last one given wins."""

    include: bool = True
    names: tuple[str, ...] = ()

    def allows(self, impl_name: str) -> bool:
        if not self.names:
            return True
        hit = any(n in impl_name for n in self.names)
        return hit if self.include else not hit


def _impl_filter(include: bool):
    def parse(text: str) -> ImplFilter:
        names = tuple(n.strip().strip("'\"") for n in text.split(",") if n.strip())
        return ImplFilter(include, names)
    return parse


def _parse_dt(text: str) -> tuple[str, str, str]:
    names = []
    for item in text.split(":"):
        name = item[5:] if item.startswith("dnnl_") else item
        if name not in cfg.DT_NAMES:
            raise UsageError(f"--dt={text}: unknown data type `{item}`; expected one of "
                             f"{', '.join(cfg.DT_NAMES)}")
        names.append(name)
    if len(names) == 1:
        names *= 3
    if len(names) != 3:
        raise UsageError(f"--dt={text}: expected one data type or three in SRC:WEI:DST "
                         f"order, got {len(names)}")
    return tuple(names)  # type: ignore[return-value]


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_B,
           "propagation direction", is_list=True),
    Option("dt", _parse_dt, ("f32", "f32", "f32"), "data types, SRC[:WEI:DST]", is_list=True),
    Option("attr-post-ops", parse_post_ops, PostOps(),
           "post-op chains: sum[:SCALE], NAME[:ALPHA[:BETA]], dw:kKsSpP joined by +",
           is_list=True),
    Option("mb", int_value("mb", 0), 0, "minibatch override (0: the descriptor's)",
           is_list=True),
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    Option("impl", _impl_filter(True), ImplFilter(),
           "use only implementations whose name contains one of these", key="impl_filter"),
    Option("skip-impl", _impl_filter(False), ImplFilter(),
           "skip implementations whose name contains one of these", key="impl_filter"),
    # Last, so that it expands innermost: `--backend=native,torch` runs each problem on
    # both backends one after the other, and their lines sit side by side.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: " + "; ".join(
               f"{b.name} ({b.description})" for b in backends.BACKENDS.values()),
           is_list=True),
)

PERF_FIELDS = frozenset({"dir", "sdt", "bia_dt", "stag", "wtag", "dtag", "alg", "prop",
                         "cfg", "mb"})
CSV_PERF_FIELDS = "%dir%,%sdt%,%bia_dt%,%stag%,%wtag%,%dtag%,%alg%"


@dataclasses.dataclass(frozen=True)
class ConvProblem:
    desc: ConvDesc
    dir: Dir
    dt: tuple[str, str, str]
    impl_filter: ImplFilter
    user_mb: int
    post_ops: PostOps = PostOps()
    backend: str = backends.NATIVE

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    @property
    def attr_text(self) -> str:
        """The attribute options as the repro prints them (the %attr% perf field)."""
        return f"--attr-post-ops={self.post_ops}" if self.post_ops else ""

    def repro(self, canonical: bool = False) -> str:
        parts = []
        if self.backend != backends.NATIVE:
            parts.append(f"--backend={self.backend}")
        if self.dir is not Dir.FWD_B:
            parts.append(f"--dir={self.dir.value}")
        if self.dt != ("f32", "f32", "f32"):
            parts.append(f"--dt={':'.join(self.dt)}")
        if self.post_ops:
            parts.append(self.attr_text)
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @functools.cached_property
    def ops(self) -> int:
        return count_ops(self.desc)

    @functools.cached_property
    def shape(self) -> core.ConvShape:
        d = self.desc
        return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> ConvProblem:
    desc = parse_desc(text, "conv")
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    return ConvProblem(desc, values["dir"], values["dt"], values["impl_filter"], values["mb"],
                       values["attr-post-ops"], values["backend"])


def unsupported(prb: ConvProblem) -> tuple[Status, str] | None:
    """Why this case cannot run here, or None: the problem itself, then its backend."""
    d = prb.desc
    if prb.dir is Dir.BWD_DW:
        return Status.INVALID_ARGUMENTS, "BWD_DW is not a convolution direction"
    if d.ic % d.g or d.oc % d.g:
        return (Status.INVALID_ARGUMENTS,
                f"ic{d.ic} and oc{d.oc} must both be divisible by g{d.g}")
    if prb.dt != ("f32", "f32", "f32"):
        return Status.UNIMPLEMENTED, f"--dt={':'.join(prb.dt)} has no implementation yet"
    return post_ops_invalid(prb.post_ops, prb.dir) or backends.unsupported(prb)


def post_ops_invalid(post_ops: PostOps, direction: Dir) -> tuple[Status, str] | None:
    """What the spec rules out for f32 whatever runs it: post-ops on a backward pass and
    the int8-only parameters (the reference does not model them either)."""
    if not post_ops:
        return None
    if not direction.forward:
        return (Status.UNIMPLEMENTED, "post-ops apply to forward propagation only: the "
                "fused result keeps no intermediate for the backward pass")
    for e in post_ops.entries:
        if isinstance(e, Eltwise) and e.scale != 1.0:
            return Status.UNIMPLEMENTED, f"`{e}`: the eltwise scale is for int8 convolutions only"
        if isinstance(e, Sum) and (e.zero_point or e.dt):
            return (Status.UNIMPLEMENTED, f"`{e}`: a sum zero point or data type is for int8 "
                    "convolutions (not implemented yet)")
    return None


# The f32 chains the spec's support matrix lists: eltwise, sum, sum then eltwise.
F32_CHAINS = ((Eltwise,), (Sum,), (Sum, Eltwise))


def native_post_ops_unsupported(post_ops: PostOps) -> tuple[Status, str] | None:
    """What the C kernels do not fuse: the spec's f32 support matrix, and no depthwise
    fusion yet (post_ops_invalid has already run)."""
    if not post_ops:
        return None
    for e in post_ops.entries:
        if not isinstance(e, (Sum, Eltwise)):
            return (Status.UNIMPLEMENTED, f"`{e}`: the depthwise fusion post-op has no "
                    "implementation yet")
    shape = tuple(type(e) for e in post_ops.entries)
    if shape not in F32_CHAINS:
        return (Status.UNIMPLEMENTED, f"f32 convolutions take eltwise, sum, or sum then "
                f"eltwise; `{post_ops}` is none of them")
    return None


def kernel_post_ops(post_ops: PostOps) -> tuple[core.PostOp, ...]:
    """The chain in the C core's terms."""
    ops = []
    for e in post_ops.entries:
        if isinstance(e, Sum):
            ops.append(core.PostOp(core.PostKind.SUM, scale=e.scale))
        else:
            ops.append(core.PostOp(core.PostKind.ELTWISE, eltwise.ALGS[e.name].code, e.scale,
                                   e.alpha, e.beta))
    return tuple(ops)


def apply_post_ops(ref: np.ndarray, post_ops: PostOps, prior: np.ndarray | None) -> np.ndarray:
    """The reference's post-ops, in double, as the spec writes them: sum
    dst = scale * dst_prior + ref; eltwise dst = scale * f(dst)."""
    out = ref
    for e in post_ops.entries:
        if isinstance(e, Sum):
            out = out + e.scale * prior.astype(np.float64).reshape(out.shape)
        else:
            out = e.scale * eltwise.apply(e.name, out, e.alpha, e.beta)
    return out


KERNEL_DIR = {Dir.FWD_B: core.Direction.FWD, Dir.FWD_D: core.Direction.FWD,
              Dir.FWD_I: core.Direction.FWD, Dir.BWD_D: core.Direction.BWD_DATA,
              Dir.BWD_W: core.Direction.BWD_WEIGHTS, Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


@dataclasses.dataclass(frozen=True)
class Tensor:
    """A tensor of a case: its data kind (fill seed and diagnostics tag) and logical shape
    (the shape diagnostics index failing points by)."""

    kind: fill.Kind
    tag: str
    shape: tuple[int, ...]          # the C core's 3D-form shape
    logical: tuple[int, ...]


def tensors(desc: ConvDesc, shape: core.ConvShape) -> dict[str, Tensor]:
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    wei_logical = ((desc.g, desc.oc // desc.g, desc.ic // desc.g) if desc.has_groups
                   else (desc.oc, desc.ic // desc.g)) + pick(desc.k)
    return {
        "src": Tensor(fill.Kind.SRC, "SRC", shape.src_shape, (desc.mb, desc.ic) + pick(desc.i)),
        "wei": Tensor(fill.Kind.WEI, "WEI", shape.wei_shape, wei_logical),
        "bia": Tensor(fill.Kind.BIA, "BIA", (shape.oc,), (shape.oc,)),
        "dst": Tensor(fill.Kind.DST, "DST", shape.dst_shape, (desc.mb, desc.oc) + pick(desc.o)),
    }


def fill_prior_dst(t: dict[str, Tensor], dtc: cfg.DtCfg, perf: bool) -> np.ndarray:
    """The destination's contents before a sum post-op reads them (reference 6.4)."""
    n = math.prod(t["dst"].shape)
    data = (fill.real_fill(n, fill.Kind.DST, *dtc.perf) if perf
            else fill.int_fill(n, fill.Kind.DST, *dtc.dst))
    return data


def fill_inputs(prb_dir: Dir, shape: core.ConvShape, t: dict[str, Tensor], dtc: cfg.DtCfg,
                perf: bool) -> dict[str, np.ndarray]:
    """The inputs of a direction (reference 6.2 to 6.4). The operand whose products form
    the long accumulation chain is sparse: src forward, diff_dst backward."""
    taps = shape.k[0] * shape.k[1] * shape.k[2]
    ranges = {"src": dtc.src, "wei": dtc.wei, "bia": dtc.bia, "dst": dtc.dst}
    if prb_dir.forward:
        names, sparse, other = ["src", "wei"], "src", "wei"
        n_acc = taps * (shape.ic // shape.g)
        if prb_dir.with_bias:
            names.append("bia")
    elif prb_dir is Dir.BWD_D:
        names, sparse, other = ["dst", "wei"], "dst", "wei"
        n_acc = taps * (shape.oc // shape.g)
    else:
        names, sparse, other = ["src", "dst"], "dst", "src"
        n_acc = shape.mb * shape.o[0] * shape.o[1] * shape.o[2]
    density = cfg.density(dtc, n_acc, ranges[sparse], ranges[other])
    out = {}
    for name in names:
        n = math.prod(t[name].shape)
        if perf:
            data = fill.real_fill(n, t[name].kind, *dtc.perf)
        else:
            data = fill.int_fill(n, t[name].kind, *ranges[name],
                                 density if name == sparse else 1.0)
        out[name] = data.reshape(t[name].shape)
    return out


def outputs(prb_dir: Dir, t: dict[str, Tensor]) -> dict[str, Guarded]:
    """Output buffers: NaN-poisoned (an unwritten point fails) inside guard zones."""
    if prb_dir.forward:
        names = ["dst"]
    elif prb_dir is Dir.BWD_D:
        names = ["src"]
    else:
        names = ["wei", "bia"] if prb_dir.with_bias else ["wei"]
    return {name: Guarded(math.prod(t[name].shape), np.nan) for name in names}


def bind(prim: core.ConvPrimitive, prb_dir: Dir, inputs: dict[str, np.ndarray],
         wei_packed: np.ndarray | None, outs: dict[str, Guarded]):
    """The native kernel's timed callable for a direction (weights already packed)."""
    if prb_dir.forward:
        return prim.bind(inputs["src"], wei_packed, inputs.get("bia"), outs["dst"].array)
    if prb_dir is Dir.BWD_D:
        return prim.bind_bwd_data(inputs["dst"], wei_packed, None, outs["src"].array)
    return prim.bind_bwd_weights(inputs["src"], inputs["dst"], outs["wei"].array,
                                 outs["bia"].array if "bia" in outs else None)


def reference(prb_dir: Dir, shape: core.ConvShape,
              inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if prb_dir.forward:
        return {"dst": compute_ref(shape, inputs["src"], inputs["wei"], inputs.get("bia"))}
    if prb_dir is Dir.BWD_D:
        return {"src": core.ref_conv_bwd_data(shape, inputs["dst"], inputs["wei"])}
    wei, bia = core.ref_conv_bwd_weights(shape, inputs["src"], inputs["dst"],
                                         prb_dir.with_bias)
    return {"wei": wei, "bia": bia} if prb_dir.with_bias else {"wei": wei}


def compare_setups(desc: ConvDesc, dtc: cfg.DtCfg,
                   post_ops: PostOps = PostOps()) -> dict[str, CompareSetup]:
    """How each output tensor is compared: threshold and zero trust (reference 6.6 to 6.8).
    Eltwise post-ops bring their tolerance from the eltwise table, benchdnn's rules 8 and
    9, NaN/Inf where the formula can produce them, and relaxed zero trust after
    negative-to-zero functions."""
    exceeds = any(o > i for o, i in zip(desc.o, desc.i))
    in_pts, out_pts = math.prod(desc.i), math.prod(desc.o)
    elts = post_ops.eltwise
    zeroing = any(eltwise.zeroes_negatives(e.name, e.alpha) for e in elts)
    dst = CompareSetup(
        "DST", max([dtc.trh] + [eltwise.ALGS[e.name].trh for e in elts]),
        cfg.dst_zero_trust_percent(exceeds or zeroing),
        allow_nans=any(eltwise.ALGS[e.name].nan_inf_possible for e in elts),
        eltwise=bool(elts), exp_post_op=any(e.name.startswith("exp") for e in elts))
    return {
        "dst": dst,
        "src": CompareSetup("SRC", dtc.trh, cfg.src_zero_trust_percent(desc.s)),
        "wei": CompareSetup("WEI", dtc.trh, cfg.wei_zero_trust_percent(desc.k, in_pts, out_pts)),
        "bia": CompareSetup("BIA", dtc.trh, cfg.BIA_ZERO_TRUST_PERCENT),
    }


def judge(res: CaseResult, refs: dict[str, np.ndarray], outs: dict[str, Guarded],
          t: dict[str, Tensor], setups: dict[str, CompareSetup], verbose: int) -> None:
    """Compares every output tensor (in order) and sets the case's status and counts."""
    failed = mistrusted = False
    for name, ref in refs.items():
        verdict = compare(ref, outs[name].array.reshape(ref.shape), setups[name])
        res.diagnostics += diagnostics(verdict, t[name].logical, verbose)
        res.errors += verdict.errors
        res.total += verdict.total
        failed |= verdict.failed
        mistrusted |= verdict.mistrusted
    res.status = (Status.FAILED if failed else
                  Status.MISTRUSTED if mistrusted else Status.PASSED)


def footprint_bytes(shape: core.ConvShape) -> int:
    elems = [math.prod(shape.src_shape), math.prod(shape.wei_shape), math.prod(shape.dst_shape)]
    # Every tensor, weights twice (user and implementation layouts), the f64 reference of
    # the largest and compare temporaries.
    return int(4 * (elems[0] + 2 * elems[1] + elems[2]) + 8 * 4 * max(elems))


def create(shape: core.ConvShape, kernel_dir: core.Direction, with_bias: bool,
           impl_filter: ImplFilter, res: CaseResult,
           post_ops: PostOps = PostOps()) -> core.ConvPrimitive | None:
    """The first implementation, in the table's order of preference, that the CPU runs, the
    filter allows and that accepts the problem; sets SKIPPED/UNIMPLEMENTED otherwise."""
    fault = core.active_fault()
    with res.timers("create_pd"):
        candidates = [i for i in core.conv_impls()
                      if core.isa_supported(i.isa) and impl_filter.allows(i.name)]
    with res.timers("create_prim"):
        for impl in candidates:
            try:
                return core.ConvPrimitive(impl, shape, kernel_dir, with_bias, fault,
                                          post_ops=kernel_post_ops(post_ops))
            except core.Unimplemented:
                continue
    if any(core.isa_supported(i.isa) and not impl_filter.allows(i.name)
           for i in core.conv_impls()):
        res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
    else:
        res.status, res.reason = Status.UNIMPLEMENTED, "no implementation accepts this problem"
    return None


def perf_record(driver: str, prb, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], shape: core.ConvShape, ops: int) -> PerfRecord:
    with_bias = prb.dir.with_bias
    ibytes = 4 * int(math.prod(shape.src_shape) + math.prod(shape.wei_shape)
                     + (shape.oc if with_bias else 0))
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": driver,
        "prb": f"{ctx.settings.repro_prefix()}--{driver} {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "sdt": ":".join(prb.dt), "cfg": ":".join(prb.dt),
        "bia_dt": "f32" if with_bias else "undef",
        "stag": "any", "wtag": "any", "dtag": "any", "alg": "direct", "attr": prb.attr_text,
        "prop": prb.dir.prop_kind,
    }
    return PerfRecord(text, float(ops), ibytes, 4 * int(math.prod(shape.dst_shape)), times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb)


def measure_into(res: CaseResult, run_once, ctx: RunContext) -> list[float]:
    start = time.perf_counter()
    times = measure(run_once, ctx.settings.max_ms_per_prb, ctx.settings.fix_times_per_prb)
    res.timers.seconds["execute"] += time.perf_counter() - start
    return times


@dataclasses.dataclass(frozen=True)
class CaseSteps:
    """What differs between the drivers that share run_case (conv, deconv)."""

    driver: str
    shape: Callable[[Any], core.ConvShape]     # the user's tensors
    fill: Callable[[Any, dict[str, Tensor], cfg.DtCfg, bool], dict[str, np.ndarray]]
    reference: Callable[[Any, dict[str, np.ndarray]], dict[str, np.ndarray]]


def run_case(prb, ctx: RunContext, steps: CaseSteps) -> CaseResult:
    """One case, from the checks to the verdict and timings, on prb.backend."""
    res = CaseResult(Status.UNTESTED)
    mode = ctx.settings.mode
    if mode.list_only:
        res.status = Status.LISTED
        return res
    blocker = unsupported(prb)
    if blocker:
        res.status, res.reason = blocker
        return res
    shape = steps.shape(prb)
    if not fits_in_ram(footprint_bytes(shape)):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if ctx.settings.verbose >= 1:
        ctx.log(f"run: --{steps.driver} {prb.repro(ctx.settings.canonical)}")
    executor = backends.create(prb, res)
    if executor is None:
        return res
    try:
        _execute(prb, ctx, steps, shape, executor, res)
    finally:
        executor.close()
    return res


def _execute(prb, ctx: RunContext, steps: CaseSteps, shape: core.ConvShape,
             executor: Executor, res: CaseResult) -> None:
    mode = ctx.settings.mode
    res.impl = executor.name
    if ctx.settings.verbose >= 5:
        ctx.log(f"implementation: {executor.name}" +
                (f" ({executor.info})" if executor.info else ""))
    create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
    dtc = cfg.CFG[prb.dt[2]]
    t = tensors(prb.desc, shape)
    outs = outputs(prb.dir, t)
    run_once = None
    has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
    if mode.correctness:
        with res.timers("fill"):
            inputs = steps.fill(prb, t, dtc, False)
            prior = fill_prior_dst(t, dtc, perf=False) if has_sum else None
            if prior is not None:   # the sum reads it; the execution overwrites it
                outs["dst"].array[:] = prior
            run_once, collect = executor.bind(inputs, outs)
        with res.timers("execute"):
            run_once()
        collect()
        if not all(o.intact() for o in outs.values()):
            res.status, res.reason = Status.FAILED, "wrote outside an output buffer"
            return
        with res.timers("compute_ref"):
            refs = steps.reference(prb, inputs)
            if prb.post_ops:
                refs["dst"] = apply_post_ops(refs["dst"], prb.post_ops, prior)
        with res.timers("compare"):
            judge(res, refs, outs, t, compare_setups(prb.desc, dtc, prb.post_ops),
                  ctx.settings.verbose)
    if mode.performance:
        if run_once is None:
            with res.timers("fill"):
                inputs = steps.fill(prb, t, dtc, True)
                if has_sum:
                    outs["dst"].array[:] = fill_prior_dst(t, dtc, perf=True)
                run_once, _ = executor.bind(inputs, outs)
            res.status = Status.EXECUTED
        times = measure_into(res, run_once, ctx)
        res.perf = perf_record(steps.driver, prb, ctx, executor.name, times, create_s, shape,
                               prb.ops)


STEPS = CaseSteps(
    "conv", shape=lambda prb: prb.shape,
    fill=lambda prb, t, dtc, perf: fill_inputs(prb.dir, prb.shape, t, dtc, perf),
    reference=lambda prb, inputs: reference(prb.dir, prb.shape, inputs))


def run(prb: ConvProblem, ctx: RunContext) -> CaseResult:
    return run_case(prb, ctx, STEPS)
