"""The deconvolution driver: the conv driver's options and steps (run by engine.case),
with this driver's problem, fill and swap-rule reference. On the native backend the kernels run the
swapped convolution (ref.py explains the swap; prim.py binds it). The kernels' own
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
from ...common.check import INT_RANGES
from ...common.direction import Dir
from ...engine import case
from ...engine.settings import GlobalSettings
from ...status import Status
from ..base import CaseResult, RunContext
from ..conv import attrs, backend_onednn, backend_torch, prim, problem
from ..conv import driver as conv
from ..conv import ref as conv_ref
from . import backend_native, ref
from .desc import parse_deconv

OPTIONS = problem.OPTIONS


@dataclasses.dataclass(frozen=True)
class DeconvProblem(problem.ConvProblem):
    """A convolution problem's fields and repro; the operation count and the user's
    tensors are the deconvolution's."""

    @functools.cached_property
    def ops(self) -> int:
        return ref.count_ops(self.desc)

    @functools.cached_property
    def shape(self) -> core.ConvShape:
        return ref.user_shape(self.desc)

    def kind_unsupported(self):
        """Zero points (int8 forward, as the convolution's: common src and dst values):
        the kernels' backward data reads the deconvolution's src, filling the taps that
        reach none of it with the zero point, and adds dst's to what it writes. So the
        src zero point must be a value of the src type (the convolution's gather route
        corrects other paddings; backward data does not)."""
        if self.zero_points and self.backend != "native":
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={self.zero_points}: the "
                    f"{self.backend} backend runs deconvolution without zero points")
        src_zp = self.zero_points.get("src") if self.zero_points else None
        if src_zp is not None and src_zp.zp is not None and self.dt[0] in INT_RANGES:
            lo, hi = INT_RANGES[self.dt[0]]
            if not lo <= src_zp.zp <= hi:
                return (Status.UNIMPLEMENTED, f"--attr-zero-points={self.zero_points}: a src "
                        f"zero point outside {self.dt[0]}'s range [{lo:g}, {hi:g}] (the "
                        "backward-data kernels pad the source with it)")
        return None


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> DeconvProblem:
    return problem.problem_of(DeconvProblem, parse_deconv(text), values, settings)


def _fill(prb: DeconvProblem, t: dict[str, prim.Tensor], perf: bool,
          q: attrs.Quant) -> dict[str, np.ndarray]:
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


def _reference(prb: DeconvProblem, inputs: dict[str, np.ndarray], q: attrs.Quant,
               prior, points: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    at = (points or {}).get
    if prb.dir.forward:
        acc = ref.ref_fwd(prb.desc, q.shifted_src(inputs["src"]), inputs["wei"], None, at("dst"))
        return {"dst": conv_ref.forward_epilogue(acc, inputs.get("bia"), q, prb.post_ops, prior,
                                             at("dst"), prb.shape.dst_shape, inputs)}
    if prb.dir is Dir.BWD_D:
        return {"src": ref.ref_bwd_data(prb.desc, inputs["dst"], inputs["wei"], at("src"))}
    wei, bia = ref.ref_bwd_weights(prb.desc, inputs["src"], inputs["dst"], prb.dir.with_bias,
                                   at("wei"), at("bia"))
    return {"wei": wei, "bia": bia} if prb.dir.with_bias else {"wei": wei}


class Steps(conv.Steps):
    """The convolution case's steps with this driver's fill, swap-rule reference and
    native backend."""

    driver = "deconv"
    backends = {"native": backend_native, "torch": backend_torch,
                "onednn": backend_onednn}

    def fill(self, prb, t, perf, q):
        return _fill(prb, t, perf, q)

    def compute(self, prb, inputs, q, prior, points):
        return _reference(prb, inputs, q, prior, points)


STEPS = Steps()


def run(prb: DeconvProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
