"""The deconvolution driver: the conv driver's options and case flow, with the kernels run
on the swapped convolution (ref.py explains the swap). The weights reorder into the
kernels' layout includes the per-group transpose, so, as in oneDNN, only the primitive is
timed."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Mapping

import numpy as np

from ... import core, fill
from ...memory import Guarded, fits_in_ram
from ...settings import GlobalSettings
from ...status import Reason, Status
from ..base import CaseResult, RunContext
from ..conv import cfg
from ..conv import driver as conv
from ..conv.desc import ConvDesc
from ...attr import PostOps, Sum
from ..conv.driver import Dir, ImplFilter
from . import ref
from .desc import parse_deconv

OPTIONS = conv.OPTIONS

# What the kernels run for each deconvolution direction (on the swapped convolution).
KERNEL_DIR = {Dir.FWD_B: core.Direction.BWD_DATA, Dir.FWD_D: core.Direction.BWD_DATA,
              Dir.FWD_I: core.Direction.BWD_DATA, Dir.BWD_D: core.Direction.FWD,
              Dir.BWD_W: core.Direction.BWD_WEIGHTS, Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


@dataclasses.dataclass(frozen=True)
class DeconvProblem:
    desc: ConvDesc
    dir: Dir
    dt: tuple[str, str, str]
    impl_filter: ImplFilter
    user_mb: int
    post_ops: PostOps = PostOps()

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    attr_text = conv.ConvProblem.attr_text
    repro = conv.ConvProblem.repro

    @functools.cached_property
    def ops(self) -> int:
        return ref.count_ops(self.desc)


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> DeconvProblem:
    desc = parse_deconv(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    return DeconvProblem(desc, values["dir"], values["dt"], values["impl_filter"], values["mb"],
                         values["attr-post-ops"])


def _fill(prb: DeconvProblem, t: dict[str, conv.Tensor], dtc: cfg.DtCfg,
          perf: bool) -> dict[str, np.ndarray]:
    """Inputs in the user's terms. The sparse operand and its chain length are those of the
    convolution the kernels run (src forward, diff_dst backward), so sums stay exact."""
    d = prb.desc
    taps = math.prod(d.k)
    if prb.dir.forward:
        names, sparse, other, n_acc = ["src", "wei"], "src", "wei", taps * (d.ic // d.g)
        if prb.dir.with_bias:
            names.append("bia")
    elif prb.dir is Dir.BWD_D:
        names, sparse, other, n_acc = ["dst", "wei"], "dst", "wei", taps * (d.oc // d.g)
    else:
        names, sparse, other, n_acc = ["src", "dst"], "dst", "src", d.mb * math.prod(d.i)
    ranges = {"src": dtc.src, "wei": dtc.wei, "bia": dtc.bia, "dst": dtc.dst}
    density = cfg.density(dtc, n_acc, ranges[sparse], ranges[other])
    out = {}
    for name in names:
        n = math.prod(t[name].shape)
        data = (fill.real_fill(n, t[name].kind, *dtc.perf) if perf else
                fill.int_fill(n, t[name].kind, *ranges[name], density if name == sparse else 1.0))
        out[name] = data.reshape(t[name].shape)
    return out


def _bind(prim: core.ConvPrimitive, prb: DeconvProblem, inputs: dict[str, np.ndarray],
          outs: dict[str, Guarded], t: dict[str, conv.Tensor]):
    """Returns (run, collect): run is the timed execution in the swapped convolution's
    terms; collect (untimed, after a run) reorders what the kernels produced in their own
    layout into the user's output buffers."""
    if prb.dir.forward:
        packed = prim.pack_weights(ref.transpose_weights(inputs["wei"]))
        return prim.bind_bwd_data(inputs["src"], packed, inputs.get("bia"),
                                  outs["dst"].array), lambda: None
    if prb.dir is Dir.BWD_D:
        packed = prim.pack_weights(ref.transpose_weights(inputs["wei"]))
        return prim.bind(inputs["dst"], packed, None, outs["src"].array), lambda: None
    # diff_wei comes out transposed (the kernels' layout); diff_bias is the sum of diff_dst.
    wei_t = np.empty(tuple(t["wei"].shape[i] for i in (0, 2, 1, 3, 4, 5)), np.float32)
    kernel = prim.bind_bwd_weights(inputs["dst"], inputs["src"], wei_t, None)
    bias = core.bias_grad(inputs["dst"], outs["bia"].array) if "bia" in outs else None

    def run() -> None:
        kernel()
        if bias is not None:
            bias()

    def collect() -> None:
        outs["wei"].array[:] = ref.transpose_weights(wei_t).ravel()
    return run, collect


def _reference(prb: DeconvProblem, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if prb.dir.forward:
        return {"dst": ref.ref_fwd(prb.desc, inputs["src"], inputs["wei"], inputs.get("bia"))}
    if prb.dir is Dir.BWD_D:
        return {"src": ref.ref_bwd_data(prb.desc, inputs["dst"], inputs["wei"])}
    wei, bia = ref.ref_bwd_weights(prb.desc, inputs["src"], inputs["dst"], prb.dir.with_bias)
    return {"wei": wei, "bia": bia} if prb.dir.with_bias else {"wei": wei}


def _outputs(prb: DeconvProblem, t: dict[str, conv.Tensor]) -> dict[str, Guarded]:
    if prb.dir.forward:
        names = ["dst"]
    elif prb.dir is Dir.BWD_D:
        names = ["src"]
    else:
        names = ["wei", "bia"] if prb.dir.with_bias else ["wei"]
    return {name: Guarded(math.prod(t[name].shape), np.nan) for name in names}


def run(prb: DeconvProblem, ctx: RunContext) -> CaseResult:
    res = CaseResult(Status.UNTESTED)
    mode = ctx.settings.mode
    if mode.list_only:
        res.status = Status.LISTED
        return res
    blocker = conv.unsupported(prb)  # type: ignore[arg-type]
    if blocker:
        res.status, res.reason = blocker
        return res
    shape, kshape = ref.user_shape(prb.desc), ref.swapped_shape(prb.desc)
    if not fits_in_ram(conv.footprint_bytes(shape)):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if ctx.settings.verbose >= 1:
        ctx.log(f"run: --deconv {prb.repro(ctx.settings.canonical)}")

    kernel_dir = KERNEL_DIR[prb.dir]
    # Bias: added by the backward-data kernel in the forward pass; summed separately when
    # computing diff_bias (the swapped problem's bias would be the wrong tensor's sum).
    prim = conv.create(kshape, kernel_dir, prb.dir.forward and prb.dir.with_bias,
                       prb.impl_filter, res, prb.post_ops)
    if prim is None:
        return res
    with prim:
        res.impl = prim.name
        if ctx.settings.verbose >= 5:
            ctx.log(f"implementation: {prim.name}")
        create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
        dtc = cfg.CFG[prb.dt[2]]
        t = conv.tensors(prb.desc, shape)
        outs = _outputs(prb, t)
        run_once = None
        has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
        if mode.correctness:
            with res.timers("fill"):
                inputs = _fill(prb, t, dtc, perf=False)
                prior = conv.fill_prior_dst(t, dtc, perf=False) if has_sum else None
                if prior is not None:   # the sum reads it; the kernel overwrites it
                    outs["dst"].array[:] = prior
                run_once, collect = _bind(prim, prb, inputs, outs, t)
            with res.timers("execute"):
                run_once()
            collect()
            if not all(o.intact() for o in outs.values()):
                res.status, res.reason = Status.FAILED, "wrote outside an output buffer"
                return res
            with res.timers("compute_ref"):
                refs = _reference(prb, inputs)
                if prb.post_ops:
                    refs["dst"] = conv.apply_post_ops(refs["dst"], prb.post_ops, prior)
            with res.timers("compare"):
                conv.judge(res, refs, outs, t, conv.compare_setups(prb.desc, dtc, prb.post_ops),
                           ctx.settings.verbose)
        if mode.performance:
            if run_once is None:
                with res.timers("fill"):
                    inputs = _fill(prb, t, dtc, perf=True)
                    if has_sum:
                        outs["dst"].array[:] = conv.fill_prior_dst(t, dtc, perf=True)
                    run_once, _ = _bind(prim, prb, inputs, outs, t)
                res.status = Status.EXECUTED
            times = conv.measure_into(res, run_once, ctx)
            res.perf = conv.perf_record("deconv", prb, ctx, prim.name, times, create_s, shape,
                                        prb.ops)
    return res
