"""The convolution driver: options, problems, and one case from creation to verdict.

Case flow (correctness): pick the implementation -> fill src/wei/bias -> reorder the
weights into the implementation's layout -> execute into a NaN-poisoned, guarded dst ->
reference -> compare every point. Performance: fill with reals, warm up, time each run.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import time
from typing import Any, Mapping

import numpy as np

from ... import core, fill
from ...check import CompareSetup, compare, diagnostics
from ...errors import UsageError
from ...memory import Guarded, fits_in_ram
from ...options import Option, enum_value, int_value, regex_value
from ...perf_report import PerfRecord
from ...settings import GlobalSettings
from ...status import Reason, Status
from ...timing import measure
from ..base import CaseResult, RunContext
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
    Option("mb", int_value("mb", 0), 0, "minibatch override (0: the descriptor's)",
           is_list=True),
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    Option("impl", _impl_filter(True), ImplFilter(),
           "use only implementations whose name contains one of these", key="impl_filter"),
    Option("skip-impl", _impl_filter(False), ImplFilter(),
           "skip implementations whose name contains one of these", key="impl_filter"),
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

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = []
        if self.dir is not Dir.FWD_B:
            parts.append(f"--dir={self.dir.value}")
        if self.dt != ("f32", "f32", "f32"):
            parts.append(f"--dt={':'.join(self.dt)}")
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
    return ConvProblem(desc, values["dir"], values["dt"], values["impl_filter"], values["mb"])


def _unsupported(prb: ConvProblem) -> tuple[Status, str] | None:
    """Why this case cannot run here, or None."""
    d = prb.desc
    if prb.dir is Dir.BWD_DW:
        return Status.INVALID_ARGUMENTS, "BWD_DW is not a convolution direction"
    if d.ic % d.g or d.oc % d.g:
        return (Status.INVALID_ARGUMENTS,
                f"ic{d.ic} and oc{d.oc} must both be divisible by g{d.g}")
    if not prb.dir.forward:
        return Status.UNIMPLEMENTED, f"--dir={prb.dir.value} has no implementation yet"
    if prb.dt != ("f32", "f32", "f32"):
        return Status.UNIMPLEMENTED, f"--dt={':'.join(prb.dt)} has no implementation yet"
    return None


def _footprint_bytes(shape: core.ConvShape) -> int:
    elems = [math.prod(shape.src_shape), math.prod(shape.wei_shape), math.prod(shape.dst_shape)]
    # src, weights twice (user and implementation layouts), dst, f64 reference, compare temps.
    return int(4 * (elems[0] + 2 * elems[1] + elems[2]) + 8 * elems[2] * 4)


def _create(prb: ConvProblem, res: CaseResult) -> core.ConvPrimitive | None:
    """The first implementation, in the table's order of preference, that the CPU runs, the
    filter allows and that accepts the problem."""
    fault = core.active_fault()
    with res.timers("create_pd"):
        candidates = [i for i in core.conv_impls()
                      if core.isa_supported(i.isa) and prb.impl_filter.allows(i.name)]
    with res.timers("create_prim"):
        for impl in candidates:
            try:
                return core.ConvPrimitive(impl, prb.shape, prb.dir.with_bias, fault)
            except core.Unimplemented:
                continue
    filtered = any(core.isa_supported(i.isa) and not prb.impl_filter.allows(i.name)
                   for i in core.conv_impls())
    if filtered:
        res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
    else:
        res.status, res.reason = Status.UNIMPLEMENTED, "no implementation accepts this problem"
    return None


def _perf_record(prb: ConvProblem, ctx: RunContext, impl: str, times: list[float],
                 create_s: tuple[float, float]) -> PerfRecord:
    shape = prb.shape
    with_bias = prb.dir.with_bias
    ibytes = 4 * int(math.prod(shape.src_shape) + math.prod(shape.wei_shape)
                     + (shape.oc if with_bias else 0))
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "conv",
        "prb": f"{ctx.settings.repro_prefix()}--conv {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "sdt": ":".join(prb.dt), "cfg": ":".join(prb.dt), "bia_dt": "f32" if with_bias else "undef",
        "stag": "any", "wtag": "any", "dtag": "any", "alg": "direct", "attr": "",
        "prop": prb.dir.prop_kind,
    }
    return PerfRecord(text, float(prb.ops), ibytes, 4 * int(math.prod(shape.dst_shape)), times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb)


def run(prb: ConvProblem, ctx: RunContext) -> CaseResult:
    res = CaseResult(Status.UNTESTED)
    mode = ctx.settings.mode
    if mode.list_only:
        res.status = Status.LISTED
        return res
    blocker = _unsupported(prb)
    if blocker:
        res.status, res.reason = blocker
        return res
    shape = prb.shape
    if not fits_in_ram(_footprint_bytes(shape)):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if ctx.settings.verbose >= 1:
        ctx.log(f"run: --conv {prb.repro(ctx.settings.canonical)}")

    prim = _create(prb, res)
    if prim is None:
        return res
    with prim:
        res.impl = prim.name
        if ctx.settings.verbose >= 5:
            ctx.log(f"implementation: {prim.name}")
        create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
        n_src, n_dst = int(math.prod(shape.src_shape)), int(math.prod(shape.dst_shape))
        n_wei = int(math.prod(shape.wei_shape))
        bias = None
        dst = Guarded(n_dst, np.nan)   # unwritten points stay NaN and fail the check
        if mode.correctness:
            dtc = cfg.CFG[prb.dt[2]]
            n_acc = shape.k[0] * shape.k[1] * shape.k[2] * (shape.ic // shape.g)
            with res.timers("fill"):
                src = fill.int_fill(n_src, fill.Kind.SRC, *dtc.src, cfg.density(dtc, n_acc))
                wei = fill.int_fill(n_wei, fill.Kind.WEI, *dtc.wei)
                if prb.dir.with_bias:
                    bias = fill.int_fill(shape.oc, fill.Kind.BIA, *dtc.bia)
                wei_packed = prim.pack_weights(wei)
            run_once = prim.bind(src, wei_packed, bias, dst.array)
            with res.timers("execute"):
                run_once()
            if not dst.intact():
                res.status, res.reason = Status.FAILED, "wrote outside the dst buffer"
                return res
            with res.timers("compute_ref"):
                ref = compute_ref(shape, src, wei, bias)
            with res.timers("compare"):
                exceeds = any(o > i for o, i in zip(shape.o, shape.i))
                setup = CompareSetup("DST", dtc.trh, cfg.dst_zero_trust_percent(exceeds))
                verdict = compare(ref, dst.array.reshape(shape.dst_shape), setup)
            logical = (shape.mb, shape.oc) + tuple(shape.o[a] for a in prb.desc.spatial_axes)
            res.diagnostics += diagnostics(verdict, logical, ctx.settings.verbose)
            res.errors, res.total = verdict.errors, verdict.total
            res.status = (Status.FAILED if verdict.failed else
                          Status.MISTRUSTED if verdict.mistrusted else Status.PASSED)
        if mode.performance:
            if not mode.correctness:
                perf = cfg.CFG[prb.dt[2]].perf
                with res.timers("fill"):
                    src = fill.real_fill(n_src, fill.Kind.SRC, *perf)
                    wei = fill.real_fill(n_wei, fill.Kind.WEI, *perf)
                    if prb.dir.with_bias:
                        bias = fill.real_fill(shape.oc, fill.Kind.BIA, *perf)
                    wei_packed = prim.pack_weights(wei)
                run_once = prim.bind(src, wei_packed, bias, dst.array)
                res.status = Status.EXECUTED
            start = time.perf_counter()
            times = measure(run_once, ctx.settings.max_ms_per_prb,
                            ctx.settings.fix_times_per_prb)
            res.timers.seconds["execute"] += time.perf_counter() - start
            res.perf = _perf_record(prb, ctx, prim.name, times, create_s)
    return res
