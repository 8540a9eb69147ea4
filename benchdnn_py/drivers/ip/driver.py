"""The inner product driver: the conv driver's options (less --alg) and steps (run by
engine.case), with this driver's descriptor, op count and backends. The parsed
descriptor is the convolution the inner product is (desc.py), so the convolution's
tensors, fill, reference, compare and perf record serve it unchanged; the native backend
runs it as one matrix product (backend_native.py), the oneDNN backend as oneDNN's inner
product primitive, the torch backend as torch's linear layer."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

from ...common.attr import Depthwise
from ...engine import case
from ...engine.settings import GlobalSettings
from ...status import Status
from ..base import CaseResult, RunContext
from ..conv import backend_onednn, problem
from ..conv import driver as conv
from . import backend_native, backend_torch, ref
from .desc import parse_ip

# benchdnn's ip takes the conv options but --alg (an inner product has one algorithm).
OPTIONS = tuple(o for o in problem.OPTIONS if o.name != "alg")

PERF_FIELDS = problem.PERF_FIELDS - {"alg"}
CSV_PERF_FIELDS = "%dir%,%sdt%,%bia_dt%,%stag%,%wtag%,%dtag%"


@dataclasses.dataclass(frozen=True)
class IpProblem(problem.ConvProblem):
    """A convolution problem's fields and repro over the inner product's descriptor."""

    @functools.cached_property
    def ops(self) -> int:
        return ref.count_ops(self.desc)

    def kind_unsupported(self) -> tuple[Status, str] | None:
        dw = next((e for e in self.post_ops.entries if isinstance(e, Depthwise)), None)
        if dw is not None:
            return (Status.UNIMPLEMENTED, f"`{dw}`: depthwise fusion follows a convolution, "
                    "not an inner product")
        return None


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> IpProblem:
    return problem.problem_of(IpProblem, parse_ip(text), values, settings)


class Steps(conv.Steps):
    """The convolution case's steps with this driver's backends."""

    driver = "ip"
    backends = {"native": backend_native, "onednn": backend_onednn, "torch": backend_torch}


STEPS = Steps()


def run(prb: IpProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
