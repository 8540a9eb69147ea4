"""The deconvolution driver: the conv driver's options and case flow (conv.run_case), with
this driver's fill and swap-rule reference. On the native backend the kernels run the
swapped convolution (ref.py explains the swap; bind below routes it). The kernels' own
weights layout is the user's transposed per group (iohw, giohw...: what `any` picks), so
the per-group transpose is the user's reorder into the primitive's layout: as in oneDNN,
only the primitive is timed."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Mapping

import numpy as np

from ... import core
from ...settings import GlobalSettings
from ...status import Status
from ..base import CaseResult, RunContext
from ..conv import driver as conv
from ..conv.driver import Dir
from . import ref
from .desc import parse_deconv

OPTIONS = conv.OPTIONS

# What the kernels run for each deconvolution direction (on the swapped convolution).
KERNEL_DIR = {Dir.FWD_B: core.Direction.BWD_DATA, Dir.FWD_D: core.Direction.BWD_DATA,
              Dir.FWD_I: core.Direction.BWD_DATA, Dir.BWD_D: core.Direction.FWD,
              Dir.BWD_W: core.Direction.BWD_WEIGHTS, Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


@dataclasses.dataclass(frozen=True)
class DeconvProblem(conv.ConvProblem):
    """A convolution problem's fields and repro; the operation count and the user's
    tensors are the deconvolution's."""

    @functools.cached_property
    def ops(self) -> int:
        return ref.count_ops(self.desc)

    @functools.cached_property
    def shape(self) -> core.ConvShape:
        return ref.user_shape(self.desc)

    def kind_unsupported(self):
        """Zero points: the kernels pad with the source zero point in their forward
        direction only, and deconvolution's forward runs their backward data."""
        if self.zero_points:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={self.zero_points}: "
                    "deconvolution takes no zero points (its kernels' padding is the "
                    "swapped convolution's)")
        return None


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> DeconvProblem:
    desc = parse_deconv(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    prb = DeconvProblem(desc, **conv.problem_fields(values))
    prb.requested_layouts    # noqa: B018 - a tag or strides that do not fit: this case's error
    return prb


def kernel_attr(prb: DeconvProblem) -> core.ConvAttr:
    """The swapped convolution's attributes: the deconvolution's src plays the kernels'
    diff_dst (forward) or the deconvolution's diff_dst plays their src (backward), so in
    every direction the kernels' src type is the user's dst type and vice versa."""
    dts, q = conv.tensor_dts(prb), conv.quant_of(prb, prb.desc.oc)
    return core.ConvAttr(dts["dst"], dts["wei"], dts["src"], dts["bia"], q.kind, q.src_scale,
                         q.dst_scale, tuple(float(v) for v in q.wei_scales), 0, q.dst_zp,
                         conv.kernel_post_ops(prb.post_ops))


def _fill(prb: DeconvProblem, t: dict[str, conv.Tensor], perf: bool,
          q: conv.Quant) -> dict[str, np.ndarray]:
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
    return conv.fill_tensors(prb, t, names, sparse, other, n_acc, perf, q)


def bind(prim: core.ConvPrimitive, prb: DeconvProblem, inputs: dict[str, np.ndarray],
         wei_packed: np.ndarray | None, outs: dict[str, np.ndarray]):
    """Native kernels: the timed callable in the swapped convolution's terms, on the
    kernels' own layouts (the weights transposed per group, backends/native.py), given
    in the user's tensor names."""
    if prb.dir.forward:
        return prim.bind_bwd_data(inputs["src"], wei_packed, inputs.get("bia"), outs["dst"])
    if prb.dir is Dir.BWD_D:
        return prim.bind(inputs["dst"], wei_packed, None, outs["src"])
    # diff_bias is the sum of diff_dst (the swapped problem's bias would be src's).
    kernel = prim.bind_bwd_weights(inputs["dst"], inputs["src"], outs["wei"], None)
    bias = None
    dd = inputs["dst"]
    block = prim.attr.layout.block
    if prim.attr.layout is core.ActLayout.NHWC:   # channels last: [points][channels]
        dd = dd.reshape(-1).reshape(-1, dd.shape[1], 1)
    if "bia" in outs and block > 1:   # blocked (f32): [mb][c/B][points][B], padded
        mb, channels, *spatial = prim.shape.src_shape
        blocks = dd.reshape(mb, -(-channels // block), math.prod(spatial), block)
        out = outs["bia"]
        bias = lambda: out.__setitem__(  # noqa: E731
            slice(None), blocks.sum(axis=(0, 2), dtype=np.float32).reshape(-1)[:channels])
    elif "bia" in outs and dd.dtype == np.float32 == outs["bia"].dtype:
        bias = core.bias_grad(dd, outs["bia"])
    elif "bia" in outs:   # bf16: f32 sums of the widened diff_dst, rounded once
        out = outs["bia"]
        axes = (0,) + tuple(range(2, dd.ndim))
        bias = lambda: out.__setitem__(  # noqa: E731
            slice(None), dd.astype(np.float32).sum(axis=axes, dtype=np.float32).astype(out.dtype))
    if bias is None:
        return kernel

    def run() -> None:
        kernel()
        bias()
    return run


def _reference(prb: DeconvProblem, inputs: dict[str, np.ndarray], q: conv.Quant,
               prior, points: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    at = (points or {}).get
    if prb.dir.forward:
        acc = ref.ref_fwd(prb.desc, inputs["src"], inputs["wei"], None, at("dst"))
        return {"dst": conv.forward_epilogue(acc, inputs.get("bia"), q, prb.post_ops, prior,
                                             at("dst"), prb.shape.dst_shape)}
    if prb.dir is Dir.BWD_D:
        return {"src": ref.ref_bwd_data(prb.desc, inputs["dst"], inputs["wei"], at("src"))}
    wei, bia = ref.ref_bwd_weights(prb.desc, inputs["src"], inputs["dst"], prb.dir.with_bias,
                                   at("wei"), at("bia"))
    return {"wei": wei, "bia": bia} if prb.dir.with_bias else {"wei": wei}


STEPS = conv.CaseSteps("deconv", shape=lambda prb: prb.shape, fill=_fill,
                       reference=_reference)


def run(prb: DeconvProblem, ctx: RunContext) -> CaseResult:
    return conv.run_case(prb, ctx, STEPS)
