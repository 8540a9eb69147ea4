"""The convolution driver: options, problems, and one case from creation to verdict.

Case flow (correctness): the backend (--backend, benchdnn_py/backends) creates an executor,
which resolves each tensor's memory layout (--stag/--wtag/--dtag/--strides, `any` to its
own; formats.py) -> fill src/wei/bias in the plain logical layout -> reorder them into
their layouts (untimed) -> bind (native: pack the weights for the kernels, and the
+reorder route for layouts they lack; torch: wrap the arrays as tensors) -> execute ->
collect into NaN-poisoned, guarded outputs of their layouts' sizes -> reference ->
compare every point read through its layout (--check=sampled: the reference computes,
and the compare checks, N points drawn per output tensor), then the outputs' padded
tails and strides' gaps. Performance: fill with reals, warm up, time each run of the
executor's timed callable. The deconvolution driver runs the same flow (run_case) with
its own fill and reference.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import time
from typing import Any, Callable, Mapping

import numpy as np

from ... import backends, check, core, eltwise, fill, layout
from ...attr import (Depthwise, Eltwise, OScale, PostOps, Scales, Sum, ZeroPoints,
                     parse_oscale, parse_post_ops, parse_scales, parse_zero_points)
from ...check import FULL, Check, CompareSetup, compare, diagnostics, draw_points, parse_check
from ...errors import UsageError
from ...memory import Guarded, fits_in_ram
from ...options import Option, enum_value, int_value, regex_value
from ...perf_report import PerfRecord, machine_limit
from ...settings import GlobalSettings
from ...status import Reason, Status
from ...timing import MachineGuard, TimingGroup, measure, measure_turns
from ..base import CaseResult, RunContext, first_accepting
from ...backends import Executor
from . import cfg
from . import dt as dtypes
from . import formats
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


# --impl and --skip-impl, shared by every driver that picks among implementations.
IMPL_FILTER_OPTIONS = (
    Option("impl", _impl_filter(True), ImplFilter(),
           "use only implementations whose name contains one of these", key="impl_filter"),
    Option("skip-impl", _impl_filter(False), ImplFilter(),
           "skip implementations whose name contains one of these", key="impl_filter"),
)


# --alg spellings (reference 3.1) -> the algorithm.
ALGS = {"direct": "direct", "convolution_direct": "direct", "wino": "wino",
        "convolution_wino": "wino", "auto": "auto", "convolution_auto": "auto"}


def _parse_alg(text: str) -> str:
    alg = ALGS.get(text.lower())
    if alg is None:
        raise UsageError(f"--alg={text}: unknown algorithm; expected one of {', '.join(ALGS)}")
    return alg


OPTIONS = (
    Option("dir", enum_value("dir", {d.value: d for d in Dir}), Dir.FWD_B,
           "propagation direction", is_list=True),
    Option("dt", dtypes.parse_dt, ("f32", "f32", "f32"), "data types, SRC[:WEI:DST]",
           is_list=True),
    Option("cfg", dtypes.parse_cfg, ("f32", "f32", "f32"),
           "DNNL 1.x data-type configuration (u8s8u8, bf16bf16f32, f32_wino...): another "
           "spelling of --dt (and --alg), printed back as those", is_list=True, key="dt"),
    Option("bia-dt", dtypes.parse_bia_dt, "undef",
           "bias data type (undef: f32 where the direction has a bias)", is_list=True),
    Option("stag", layout.tag_option("stag"), formats.ANY,
           "src memory format: any (the implementation picks), a plain tag (nchw, nhwc, "
           "chwn, abcd...), abx/axb, or a blocked tag (nChw8c, nChw16c, aBx16b...)",
           is_list=True),
    Option("wtag", layout.tag_option("wtag"), formats.ANY,
           "weights memory format: any, a plain tag (oihw, hwio, ohwi, iohw, goihw...), "
           "or a blocked tag (OIhw16i16o, OIhw16o16i, gOIhw16i16o, Goihw16g...)",
           is_list=True),
    Option("dtag", layout.tag_option("dtag"), formats.ANY,
           "dst memory format (as --stag)", is_list=True),
    Option("strides", formats.parse_strides_option, formats.NO_STRIDES,
           "SRC:WEI:DST plain strides instead of tags, each S0xS1x...[@OFFSET] (elements; "
           "@OFFSET: a sub-tensor starting that far into its buffer) or empty",
           is_list=True),
    Option("alg", _parse_alg, "direct", "algorithm: direct, wino or auto", is_list=True),
    Option("attr-oscale", parse_oscale, OScale(),
           "DNNL 1.x output scales: common:SCALE or per_oc[:SCALE] (int8)", is_list=True),
    Option("attr-scales", parse_scales, Scales(),
           "scales ARG:POLICY[:SCALE] for src, wei, dst joined by + (int8)", is_list=True),
    Option("attr-zero-points", parse_zero_points, ZeroPoints(),
           "zero points ARG:POLICY[:ZP] for src, dst joined by + (int8)", is_list=True),
    Option("attr-post-ops", parse_post_ops, PostOps(),
           "post-op chains: sum[:SCALE], NAME[:ALPHA[:BETA]], dw:kKsSpP joined by +",
           is_list=True),
    Option("check", parse_check, FULL,
           "full (every output point) or sampled[:N] (N points of each output tensor drawn "
           "at random, the same on every rerun of a case; N defaults to "
           f"{check.DEFAULT_SAMPLED_POINTS})", is_list=True),
    Option("mb", int_value("mb", 0), 0, "minibatch override (0: the descriptor's)",
           is_list=True),
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Before --backend, so that `--threads=2,1 --backend=native,torch` runs both backends
    # on each count back to back, and each problem on every count back to back.
    Option("threads", int_value("threads", 0), 0,
           "OpenMP threads the case runs on, 1 up to the process's (0: all of them: "
           "OMP_NUM_THREADS, or the cores over -j); a list runs each count back to back",
           is_list=True),
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
    bia_dt_given: str = "undef"          # --bia-dt as given
    alg: str = "direct"
    oscale: OScale = OScale()
    scales: Scales = Scales()
    zero_points: ZeroPoints = ZeroPoints()
    check: Check = FULL
    formats: formats.Formats = formats.Formats()
    threads: int = 0                     # --threads (0: the process's OpenMP count)

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    @functools.cached_property
    def requested_layouts(self) -> dict[str, layout.Layout | None]:
        """The layout each of src, wei and dst asks for (None: any); ProblemError when
        the options do not fit the problem."""
        dims = logical_dims(self.desc, self.dw_o)
        return {name: formats.requested(self.formats, name, dims[name], self.desc.has_groups)
                for name in formats.OPTIONS}

    @property
    def dw(self) -> Depthwise | None:
        """The depthwise fusion entry of the post-ops, if any."""
        return dw_entry(self.post_ops)

    @functools.cached_property
    def dw_o(self) -> tuple[int, int, int] | None:
        """The depthwise step's output sizes (od, oh, ow) with a dw entry: the case's dst."""
        dw = self.dw
        if dw is None:
            return None
        o = self.desc.o
        if dw.k < 1 or dw.s < 1:   # no output (dw_invalid says so)
            return (o[0], 0, 0)
        return (o[0], *((n + 2 * dw.p - dw.k) // dw.s + 1 for n in o[1:]))

    @property
    def dw_shape(self) -> core.ConvShape:
        """The depthwise step as a convolution of the 1x1 output (g = ic = oc)."""
        d, dw = self.desc, self.dw
        return core.ConvShape(d.oc, d.mb, d.oc, d.oc, d.o, self.dw_o, (1, dw.k, dw.k),
                              (1, dw.s, dw.s), (0, dw.p, dw.p), (0, 0, 0))

    def kind_unsupported(self) -> tuple[Status, str] | None:
        """What this kind of problem (conv here; deconv overrides) cannot run."""
        return None

    @property
    def bia_dt(self) -> str:
        """The bias type the case runs with (undef: the direction has no bias)."""
        return dtypes.effective_bia_dt(self.dir, self.dt, self.bia_dt_given)

    @property
    def attr_text(self) -> str:
        """The attribute options as the repro prints them (the %attr% perf field)."""
        parts = [f"--attr-{name}={value}" for name, value in (
            ("oscale", self.oscale), ("scales", self.scales),
            ("zero-points", self.zero_points), ("post-ops", self.post_ops)) if value]
        return " ".join(parts)

    def repro(self, canonical: bool = False) -> str:
        parts = []
        if self.backend != backends.NATIVE:
            parts.append(f"--backend={self.backend}")
        if self.dir is not Dir.FWD_B:
            parts.append(f"--dir={self.dir.value}")
        if self.dt != ("f32", "f32", "f32"):
            parts.append(f"--dt={':'.join(self.dt)}")
        bia = dtypes.bia_dt_option(self.dir, self.dt, self.bia_dt_given)
        if bia:
            parts.append(bia)
        parts += self.formats.repro()
        if self.alg != "direct":
            parts.append(f"--alg={self.alg}")
        if self.attr_text:
            parts.append(self.attr_text)
        if self.check != FULL:
            parts.append(f"--check={self.check}")
        if self.threads:
            parts.append(f"--threads={self.threads}")
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @functools.cached_property
    def ops(self) -> int:
        """Reference 7's count; with depthwise fusion, the 1x1's plus the depthwise
        step's, each counted as its own convolution."""
        if self.dw is None:
            return count_ops(self.desc)
        s = self.dw_shape
        return count_ops(self.desc) + count_ops(dataclasses.replace(
            self.desc, g=s.g, ic=s.ic, oc=s.oc, i=s.i, o=s.o, k=s.k, s=s.s, p=s.p, dil=s.dil))

    @functools.cached_property
    def shape(self) -> core.ConvShape:
        d = self.desc
        return core.ConvShape(d.g, d.mb, d.ic, d.oc, d.i, d.o, d.k, d.s, d.p, d.dil)


def problem_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """The option values a conv or deconv problem keeps (a --cfg spells --dt and --alg);
    options missing from values take their defaults."""
    values = {**{o.slot: o.default for o in OPTIONS}, **values}
    dt, alg = values["dt"], values["alg"]
    if isinstance(dt, dtypes.Cfg):
        dt, alg = dt.dt, dt.alg or alg
    return dict(dir=values["dir"], dt=dt, impl_filter=values["impl_filter"],
                user_mb=values["mb"], post_ops=values["attr-post-ops"],
                backend=values["backend"], bia_dt_given=values["bia-dt"], alg=alg,
                oscale=values["attr-oscale"], scales=values["attr-scales"],
                zero_points=values["attr-zero-points"], check=values["check"],
                formats=formats.formats_of(values), threads=values["threads"])


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> ConvProblem:
    desc = parse_desc(text, "conv")
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    prb = ConvProblem(desc, **problem_fields(values))
    prb.requested_layouts    # noqa: B018 - a tag or strides that do not fit: this case's error
    return prb


def unsupported(prb: ConvProblem) -> tuple[Status, str] | None:
    """Why this case cannot run here, or None: the problem itself, then its backend."""
    d = prb.desc
    if prb.dir is Dir.BWD_DW:
        return Status.INVALID_ARGUMENTS, "BWD_DW is not a convolution direction"
    if d.ic % d.g or d.oc % d.g:
        return (Status.INVALID_ARGUMENTS,
                f"ic{d.ic} and oc{d.oc} must both be divisible by g{d.g}")
    return (dtypes.classify(prb.dir, prb.dt, prb.bia_dt_given)
            or threads_unavailable(prb)
            or attributes_unsupported(prb)
            or prb.kind_unsupported()
            or post_ops_invalid(prb.post_ops, prb.dir, prb.dt)
            or dw_invalid(prb)
            or backends.unsupported(prb))


def threads_unavailable(prb) -> tuple[Status, str] | None:
    """More threads than the process runs would share its cores (a -j worker's one)."""
    available = core.max_threads()
    if prb.threads > available:
        return (Status.SKIPPED, f"--threads={prb.threads}: this process runs {available} "
                f"OpenMP thread{'s' if available > 1 else ''} (OMP_NUM_THREADS, -j)")
    return None


def attributes_unsupported(prb) -> tuple[Status, str] | None:
    if prb.alg == "wino":
        unmet = wino_unmet(prb)
        if unmet:
            return (Status.UNIMPLEMENTED, f"--alg=wino: Winograd F(4x4,3x3) needs {unmet} "
                    f"({WINO_NEEDS})")
    if prb.oscale and (prb.scales or prb.zero_points):
        return (Status.INVALID_ARGUMENTS, "--attr-oscale (DNNL 1.x) and --attr-scales or "
                "--attr-zero-points (oneDNN 3.x) describe the same scaling: give one form")
    for arg in ("src", "dst"):
        entry = prb.scales.get(arg) if prb.scales else None
        if entry is not None and (not entry.is_common or entry.dt != "f32"):
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: {arg} scales are "
                    "common f32 values here")
    wei = prb.scales.get("wei") if prb.scales else None
    if wei is not None and (wei.policy not in ("common", "per_oc") or wei.dt != "f32"):
        return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: weights scales are "
                "common or per_oc f32 values here")
    for arg in ("src", "dst"):
        entry = prb.zero_points.get(arg) if prb.zero_points else None
        if entry is not None and not entry.is_common:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={prb.zero_points}: {arg} "
                    "zero points are common values here")
    src_zp = prb.zero_points.get("src") if prb.zero_points else None
    if src_zp is not None and prb.dt[0] in check.INT_RANGES:
        lo, hi = check.INT_RANGES[prb.dt[0]]
        if not lo <= src_zp.zp <= hi:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={prb.zero_points}: a src zero "
                    f"point outside {prb.dt[0]}'s range [{lo:g}, {hi:g}] (the kernels pad "
                    "the source with it)")
    return dtypes.attr_unsupported(prb.dir, prb.dt, oscale=prb.oscale, scales=prb.scales,
                                   zero_points=prb.zero_points)


# --alg=wino's domain: the wino_f43 rows' (kernels/conv/conv_wino.c), each requirement
# with its test; the first unmet one names the UNIMPLEMENTED reason.
WINO_DOMAIN: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("a convolution (deconvolution has no Winograd rows)", lambda prb: prb.desc.kind == "conv"),
    ("f32 data", lambda prb: tuple(prb.dt) == ("f32", "f32", "f32")
     and prb.bia_dt in ("f32", "undef")),
    ("a forward direction", lambda prb: prb.dir.forward),
    ("a 2D problem", lambda prb: prb.desc.ndims == 4),
    ("a 3x3 kernel", lambda prb: prb.desc.k[1:] == (3, 3)),
    ("stride 1", lambda prb: prb.desc.s[1:] == (1, 1)),
    ("no dilation", lambda prb: prb.desc.dil[1:] == (0, 0)),
    ("no scales or zero points", lambda prb: not (prb.oscale or prb.scales
                                                  or prb.zero_points)),
    ("no depthwise post-op", lambda prb: prb.dw is None),
)
WINO_NEEDS = "f32, forward, 2D, kh3 kw3, stride 1, no dilation"


def wino_unmet(prb) -> str | None:
    """The first requirement of the Winograd rows this problem does not meet, or None."""
    return next((need for need, ok in WINO_DOMAIN if not ok(prb)), None)


# --alg=auto takes Winograd where it measured faster than direct on this machine class
# (README, "Winograd"): both channel counts per group at least AUTO_WINO_MIN_CHANNELS (at
# 16 the transforms cost as much as the multiplies they save) and at least
# AUTO_WINO_MIN_TILES output tiles of 4x4 over the minibatch (with 4, a 7x7 output at mb1,
# the 36 transformed weight matrices are streamed for too few tiles), and an output of at
# least AUTO_WINO_MIN_OUTPUT points each way (a 7x7 output fills 49 of its four tiles' 64
# points: ResNet-50's res5a_branch2b at mb16 took 1.19x the blocked direct kernel's time).
# Smaller outputs go to Winograd only where the plain rows take them (transformed weights
# past core.WINO_BLOCKED_MAX_U_BYTES: their team mode, conv_wino.c) with at least
# AUTO_WINO_SMALL_MIN_TILES tiles. res5a_branch2b (512 channels, U 38 MB) on Zen 5
# (2026-11-26), direct time over Winograd's: mb4 1.19x, mb8 1.61x, mb16 1.90x on two
# threads, mb4 0.93x, mb8 1.14x, mb16 1.65x on one; the blocked rows on 7x7 outputs (U
# within their bound) 0.70x at 128 channels (mb16) and 0.73x at 256 (mb32).
AUTO_WINO_MIN_CHANNELS = 32
AUTO_WINO_MIN_TILES = 16
AUTO_WINO_MIN_OUTPUT = 8
AUTO_WINO_SMALL_MIN_TILES = 32
# Fewer input channels are Winograd's too where the wino_f43_blocked rows take them: one
# group, src and dst `any` where it resolves to channel blocks (wherever AVX2 runs), at
# least AUTO_WINO_FEW_MIN_IC[block] input channels, and transformed weights U within the
# rows' bound (core.WINO_BLOCKED_MAX_U_BYTES: past it wino_f43 would take the case,
# 0.49x-0.66x direct on conv1_1; at 31 input channels, past 2336 output channels).
# The bound by block, from direct's time over Winograd's (2026-11-27, Zen 5, 2 threads,
# the two timed in turns; ic 3, 8, 16 into oc 16, 32, 64 at 56x56 and 224x224, mb1 and
# mb16), after the direct kernels began storing outputs past 64 MiB by non-temporal stores
# and multiply-adding one output block with embedded broadcasts (VGG-19 conv1_1 at mb16:
# 11.2 ms before, 8.0 after; 3 -> 16 at 224x224: 2.1x faster):
AUTO_WINO_FEW_MIN_IC: dict[int, int] = {
    # AVX-512: ic 3 0.40x-0.97x, ic 8 0.76x-1.06x, ic 16 1.07x-1.21x (mb1), 0.93x-1.68x (mb16)
    16: 16,
    # AVX2: 1.0x-1.7x from ic 3 on (one exception: 3 -> 16 at 224x224, mb16, 0.72x)
    8: 1,
}


def wino_blocked_takes(prb) -> bool:
    """Whether auto's few-channel rule applies: the wino_f43_blocked rows run the case
    (given the Winograd domain) with fewer than AUTO_WINO_MIN_CHANNELS input channels, and
    at least those AUTO_WINO_FEW_MIN_IC asks of the block `any` takes."""
    from ...backends.native import any_layouts   # (it imports this module)
    d = prb.desc
    if not (d.g == 1 and d.ic < AUTO_WINO_MIN_CHANNELS
            and all(prb.requested_layouts[n] is None for n in ("src", "dst"))):
        return False
    block = any_layouts(core.Direction.FWD, prb.shape)[0].act.block   # what `any` takes
    u_bytes = 4 * 36 * d.ic * -(-d.oc // block) * block    # as conv_wino_blk.c's u_bytes
    return (block in AUTO_WINO_FEW_MIN_IC and d.ic >= AUTO_WINO_FEW_MIN_IC[block]
            and u_bytes <= core.WINO_BLOCKED_MAX_U_BYTES)


def resolved_alg(prb) -> str:
    """The algorithm whose rows a case may use: wino or direct (auto decides by the rule
    above; within the wino domain only)."""
    if prb.alg != "auto":
        return prb.alg
    d = prb.desc
    tiles = d.mb * -(-d.o[1] // 4) * -(-d.o[2] // 4)
    plain_u_bytes = 4 * 36 * (d.ic // d.g) * (d.oc // d.g)
    if (wino_unmet(prb) is None and tiles >= AUTO_WINO_MIN_TILES
            and (min(d.o[1], d.o[2]) >= AUTO_WINO_MIN_OUTPUT
                 or plain_u_bytes > core.WINO_BLOCKED_MAX_U_BYTES
                 and tiles >= AUTO_WINO_SMALL_MIN_TILES)
            and (d.ic // d.g >= AUTO_WINO_MIN_CHANNELS and d.oc // d.g >= AUTO_WINO_MIN_CHANNELS
                 or wino_blocked_takes(prb))):
        return "wino"
    return "direct"


def is_wino_row(name: str) -> bool:
    return name.startswith("wino_")


# The rows each algorithm may use (by implementation name).
ALG_ROWS: dict[str, Callable[[str], bool]] = {
    "direct": lambda name: not is_wino_row(name),
    "wino": is_wino_row,
}


def ran_alg(impl_name: str) -> str:
    """The algorithm an implementation (by the name a case reports) computes."""
    return "wino" if is_wino_row(impl_name) else "direct"


def post_ops_invalid(post_ops: PostOps, direction: Dir,
                     dt: tuple[str, str, str] = ("f32", "f32", "f32")) -> tuple[Status, str] | None:
    """What the spec rules out whatever runs it: post-ops on a backward pass, and the
    int8-only parameters on other types."""
    if not post_ops:
        return None
    if not direction.forward:
        return (Status.UNIMPLEMENTED, "post-ops apply to forward propagation only: the "
                "fused result keeps no intermediate for the backward pass")
    int8 = dtypes.is_int8(dt)
    for e in post_ops.entries:
        if isinstance(e, Eltwise) and e.scale != 1.0 and not int8:
            return Status.UNIMPLEMENTED, f"`{e}`: the eltwise scale is for int8 convolutions only"
        if isinstance(e, Sum) and e.zero_point and not int8:
            return Status.UNIMPLEMENTED, f"`{e}`: a sum zero point is for int8 convolutions only"
        if isinstance(e, Sum) and e.dt and e.dt != dt[2]:
            return (Status.UNIMPLEMENTED, f"`{e}`: a sum data type other than the "
                    f"destination's ({dt[2]}) is not implemented")
    return None


def dw_entry(post_ops: PostOps) -> Depthwise | None:
    return next((e for e in post_ops.entries if isinstance(e, Depthwise)), None)


def dw_invalid(prb) -> tuple[Status, str] | None:
    """The spec's rules for depthwise fusion, whatever runs it: one dw entry, after a 2D
    1x1 convolution (forward: post_ops_invalid has run), only eltwise entries beside it,
    the types of the spec's table, an output of at least one point."""
    dw = prb.dw
    if dw is None:
        return None
    d, chain = prb.desc, prb.post_ops
    if sum(isinstance(e, Depthwise) for e in chain.entries) > 1:
        return Status.UNIMPLEMENTED, f"`{chain}`: at most one depthwise (dw) post-op"
    if d.kind != "conv":
        return (Status.UNIMPLEMENTED, f"`{dw}`: the depthwise post-op follows a 1x1 "
                f"convolution only, not a {d.kind}olution")
    if d.ndims != 4 or d.k[1:] != (1, 1):
        return (Status.UNIMPLEMENTED, f"`{dw}`: the depthwise post-op follows a 2D 1x1 "
                f"convolution only (kh = kw = 1); this is a {d.ndims - 2}D "
                f"{'x'.join(str(k) for k in d.k[3 - (d.ndims - 2):])} convolution")
    if not all(isinstance(e, (Eltwise, Depthwise)) for e in chain.entries):
        return (Status.UNIMPLEMENTED, f"`{chain}`: only eltwise post-ops may sit beside the "
                "depthwise post-op (the spec: sum is not supported with it)")
    if dtypes.dw_types(prb.dt[2], dw.dst_dt) is None:
        row = dtypes.DW_TYPES.get(prb.dt[2])
        allowed = ", ".join(row[1]) if row else "none"
        return (Status.UNIMPLEMENTED, f"`{dw}`: after a convolution writing {prb.dt[2]}, the "
                f"depthwise output is one of: {allowed}")
    if dw.k < 1 or dw.s < 1 or min(prb.dw_o[1:]) < 1:
        return (Status.INVALID_ARGUMENTS, f"`{dw}`: the depthwise step of a {d.o[1]}x{d.o[2]}"
                " input has no output point")
    if dw.p >= dw.k:
        return (Status.INVALID_ARGUMENTS, f"`{dw}`: the depthwise padding must be smaller "
                "than its kernel (outputs would read padding only)")
    if prb.zero_points:
        return (Status.UNIMPLEMENTED, f"`{dw}`: zero points with depthwise fusion are not "
                "implemented")
    return None


def split_at_dw(post_ops: PostOps) -> tuple[PostOps, PostOps]:
    """The entries before the dw entry (on the 1x1 output) and after it (on the
    depthwise output)."""
    entries = post_ops.entries
    i = next(i for i, e in enumerate(entries) if isinstance(e, Depthwise))
    return (dataclasses.replace(post_ops, entries=entries[:i]),
            dataclasses.replace(post_ops, entries=entries[i + 1:]))


# The chains of the spec's support matrix: f32 and bf16 (and f16) take eltwise, sum, or
# sum then eltwise; int8 also eltwise then sum.
CHAINS = ((Eltwise,), (Sum,), (Sum, Eltwise))
INT8_CHAINS = CHAINS + ((Eltwise, Sum),)


def native_post_ops_unsupported(post_ops: PostOps,
                                dt: tuple[str, str, str] = ("f32", "f32", "f32")
                                ) -> tuple[Status, str] | None:
    """What the C kernels do not fuse: chains outside the spec's support matrix
    (post_ops_invalid, and dw_invalid for depthwise fusion, have already run)."""
    if not post_ops or dw_entry(post_ops) is not None:
        return None
    shape = tuple(type(e) for e in post_ops.entries)
    if dtypes.is_int8(dt):
        if shape not in INT8_CHAINS:
            return (Status.UNIMPLEMENTED, f"int8 convolutions take eltwise, sum, sum then "
                    f"eltwise, or eltwise then sum; `{post_ops}` is none of them")
    elif shape not in CHAINS:
        return (Status.UNIMPLEMENTED, f"{dt[0]} convolutions take eltwise, sum, or sum then "
                f"eltwise; `{post_ops}` is none of them")
    return None


def kernel_post_ops(post_ops: PostOps, dst_dt: str = "f32") -> tuple[core.PostOp, ...]:
    """The chain in the C core's terms (dst_dt: the convolution's, for a dw entry)."""
    ops = []
    for e in post_ops.entries:
        if isinstance(e, Depthwise):
            wei, bia, out = dtypes.dw_types(dst_dt, e.dst_dt)
            ops.append(core.PostOp(core.PostKind.DW, dw_k=e.k, dw_s=e.s, dw_p=e.p,
                                   dw_wei_dt=wei, dw_bia_dt=bia, dw_dst_dt=out))
        elif isinstance(e, Sum):
            ops.append(core.PostOp(core.PostKind.SUM, scale=e.scale, zero_point=e.zero_point))
        else:
            ops.append(core.PostOp(core.PostKind.ELTWISE, eltwise.ALGS[e.name].code, e.scale,
                                   e.alpha, e.beta))
    return tuple(ops)


def apply_post_ops(ref: np.ndarray, post_ops: PostOps, prior: np.ndarray | None) -> np.ndarray:
    """The reference's post-ops, in double, as the spec writes them: sum
    dst = scale * (dst_prior - zero_point) + ref; eltwise dst = scale * f(dst)."""
    out = ref
    for e in post_ops.entries:
        if isinstance(e, Sum):
            out = out + e.scale * (prior.astype(np.float64).reshape(out.shape) - e.zero_point)
        else:
            out = e.scale * eltwise.apply(e.name, out, e.alpha, e.beta)
    return out


@dataclasses.dataclass(frozen=True)
class Quant:
    """A case's scales and zero points, with the non-common values drawn (reference 6.4):
    what the kernels are given and what the reference applies."""

    kind: core.Scales = core.Scales.NONE
    src_scale: float = 1.0
    dst_scale: float = 1.0
    wei_scales: np.ndarray = dataclasses.field(default_factory=lambda: np.ones(1, np.float32))
    src_zp: int = 0
    dst_zp: int = 0

    def per_oc(self, oc: int) -> np.ndarray:
        return np.broadcast_to(self.wei_scales, (oc,)).astype(np.float64)


# Non-common scales are drawn from these powers of two (reference 6.4), so that scaling
# integer data stays exact in f32 and the threshold can stay 0.
SCALE_VALUES = (0.0625, 0.125, 0.25)


def quant_of(prb, oc: int) -> Quant:
    zp = lambda arg: (prb.zero_points.get(arg).zp if prb.zero_points   # noqa: E731
                      and prb.zero_points.get(arg) else 0)
    src_zp, dst_zp = zp("src"), zp("dst")
    if prb.oscale:
        if prb.oscale.is_common:
            wei = np.array([prb.oscale.scale], np.float32)
        else:   # per_oc draws 6.4's values; per_oc:BASE scales them by BASE
            base = prb.oscale.scale if prb.oscale.scale is not None else 1.0
            wei = base * fill.choice_fill(oc, fill.Kind.SCALES, SCALE_VALUES)
        return Quant(core.Scales.OSCALE, wei_scales=wei.astype(np.float32), src_zp=src_zp,
                     dst_zp=dst_zp)
    if prb.scales:
        common = lambda arg: (prb.scales.get(arg).scale if prb.scales.get(arg)  # noqa: E731
                              else 1.0)
        entry = prb.scales.get("wei")
        if entry is not None and not entry.is_common:
            wei = fill.choice_fill(oc, fill.Kind.SCALES, SCALE_VALUES)
        else:
            wei = np.array([common("wei")], np.float32)
        return Quant(core.Scales.ARGS, common("src"), common("dst"), wei, src_zp, dst_zp)
    return Quant(src_zp=src_zp, dst_zp=dst_zp)


def quantize_reference(acc: np.ndarray, bias: np.ndarray | None, q: Quant,
                       post_ops: PostOps, prior: np.ndarray | None,
                       channels: np.ndarray | None = None) -> np.ndarray:
    """Forward dst from the exact sums acc (double; src zero point already subtracted).
    The spec does the attribute and post-op math in single precision, so this does it
    in f32, in the formula's order (bdnn.h, BDNN_SCALES_*): scales and bias, the
    post-ops (eltwise through the double formulas, rounded to f32), then the dst scale
    and zero point. Without scales or an inexact sum scale it equals the double
    computation: the data are small integers.

    acc is the whole dst [mb][oc][...], or (--check=sampled) the sums at some points,
    with channels their output channels and prior their prior values: the math below is
    element-wise, so it is the same on both."""
    f32 = np.float32
    if channels is None:
        per_oc = (1, acc.shape[1]) + (1,) * (acc.ndim - 2)
        per_channel = lambda v: v.reshape(per_oc)  # noqa: E731
    else:
        per_channel = lambda v: v[channels]  # noqa: E731
    out = acc.astype(f32)
    b = f32(0) if bias is None else per_channel(bias.astype(f32))
    ws = q.wei_scales.astype(f32)
    w = ws if ws.size == 1 else per_channel(ws)
    if q.kind is core.Scales.OSCALE:
        out = (out + b) * w
    elif q.kind is core.Scales.ARGS:
        out = out * (f32(q.src_scale) * w) + b
    elif bias is not None:
        out = out + b
    for e in post_ops.entries:
        if isinstance(e, Sum):
            out = out + f32(e.scale) * (prior.astype(f32).reshape(out.shape) - f32(e.zero_point))
        else:
            with np.errstate(over="ignore"):   # exp and friends may leave f32's range
                out = (e.scale * eltwise.apply(e.name, out.astype(np.float64), e.alpha,
                                               e.beta)).astype(f32)
    if q.kind is core.Scales.ARGS:
        out = out * (f32(1) / f32(q.dst_scale))
    return out + f32(q.dst_zp) if q.dst_zp else out


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


def logical_dims(desc: ConvDesc, dw_o: tuple[int, int, int] | None = None
                 ) -> dict[str, tuple[int, ...]]:
    """The user's dims of src, wei and dst (the order tags and strides refer to):
    (mb, ic, spatial), (g, oc/g, ic/g, spatial) with groups or (oc, ic, spatial), and
    (mb, oc, spatial); dw_o: the depthwise step's output sizes, dst's with a dw post-op."""
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    wei = ((desc.g, desc.oc // desc.g, desc.ic // desc.g) if desc.has_groups
           else (desc.oc, desc.ic // desc.g)) + pick(desc.k)
    return {"src": (desc.mb, desc.ic) + pick(desc.i), "wei": wei,
            "dst": (desc.mb, desc.oc) + pick(dw_o or desc.o)}


def tensors(desc: ConvDesc, shape: core.ConvShape,
            dw: core.ConvShape | None = None) -> dict[str, Tensor]:
    """The case's tensors; with dw (the depthwise step of a dw post-op, dw_shape_of) dst
    is the depthwise step's output, and its weights and bias join the inputs."""
    dims = logical_dims(desc, dw.o if dw is not None else None)
    out = {
        "src": Tensor(fill.Kind.SRC, "SRC", shape.src_shape, dims["src"]),
        "wei": Tensor(fill.Kind.WEI, "WEI", shape.wei_shape, dims["wei"]),
        "bia": Tensor(fill.Kind.BIA, "BIA", (shape.oc,), (shape.oc,)),
        "dst": Tensor(fill.Kind.DST, "DST", dw.dst_shape if dw is not None else shape.dst_shape,
                      dims["dst"]),
    }
    if dw is not None:
        out["dw_wei"] = Tensor(fill.Kind.DW_WEI, "DW_WEI", dw.wei_shape,
                               (dw.oc, 1, 1) + dw.k[1:])
        out["dw_bia"] = Tensor(fill.Kind.DW_BIA, "DW_BIA", (dw.oc,), (dw.oc,))
    return out


def dw_shape_of(prb) -> core.ConvShape | None:
    """The depthwise step of a case with a dw post-op, else None."""
    return prb.dw_shape if prb.dw is not None else None


def case_tensors(prb) -> dict[str, Tensor]:
    return tensors(prb.desc, prb.shape, dw_shape_of(prb))


def out_dt(prb) -> str:
    """The type of the tensor a direction writes: dst, diff_src or diff_weights."""
    if prb.dir.forward:
        return prb.dt[2]
    return prb.dt[0] if prb.dir is Dir.BWD_D else prb.dt[1]


def tensor_dts(prb) -> dict[str, str]:
    """Each tensor's data type, in the user's terms. With a dw post-op dst is the
    depthwise output (the convolution's own dst type, prb.dt[2], is the intermediate's)
    and dw_wei, dw_bia join (dt.DW_TYPES)."""
    dts = {"src": prb.dt[0], "wei": prb.dt[1], "dst": prb.dt[2],
           "bia": prb.bia_dt if prb.bia_dt != "undef" else "f32"}
    dw = getattr(prb, "dw", None)
    if dw is not None:
        dts["dw_wei"], dts["dw_bia"], dts["dst"] = dtypes.dw_types(prb.dt[2], dw.dst_dt)
    return dts


def fill_prior_dst(prb, t: dict[str, Tensor], perf: bool) -> np.ndarray:
    """The destination's contents before a sum post-op reads them (reference 6.4), in the
    case's dst range (cfg.fill_ranges: wider on Winograd cases, so the sum shows)."""
    n = math.prod(t["dst"].shape)
    if perf:
        return fill.real_fill(n, fill.Kind.DST, *cfg.CFG[prb.dt[2]].perf)
    _, sparse, other, n_acc = direction_chain(prb.dir, prb.shape)
    return fill.int_fill(n, fill.Kind.DST, *case_fill_ranges(prb, sparse, other, n_acc).dst)


def case_fill_ranges(prb, sparse: str, other: str, n_acc: int) -> cfg.FillRanges:
    """cfg.fill_ranges for a case: its types, and Winograd's ranges on a Winograd case."""
    return cfg.fill_ranges(prb.dt, tensor_dts(prb)["bia"], out_dt(prb), n_acc, (sparse, other),
                           wino=prb.alg == "wino")


def direction_chain(prb_dir: Dir, shape: core.ConvShape) -> tuple[list[str], str, str, int]:
    """(inputs, sparse operand, the other operand, accumulation chain length) of a
    direction: the operand whose products form the long chain is the sparse one (src
    forward, diff_dst backward; reference 6.3)."""
    taps = shape.k[0] * shape.k[1] * shape.k[2]
    if prb_dir.forward:
        names = ["src", "wei"] + (["bia"] if prb_dir.with_bias else [])
        return names, "src", "wei", taps * (shape.ic // shape.g)
    if prb_dir is Dir.BWD_D:
        return ["dst", "wei"], "dst", "wei", taps * (shape.oc // shape.g)
    return ["src", "dst"], "dst", "src", shape.mb * shape.o[0] * shape.o[1] * shape.o[2]


def fill_tensors(prb, t: dict[str, Tensor], names: list[str], sparse: str, other: str,
                 n_acc: int, perf: bool, q: Quant | None = None) -> dict[str, np.ndarray]:
    """The inputs as f32 arrays of values every type of the case holds exactly (reference
    6.2 to 6.4); the library's buffers are converted from them."""
    dts = tensor_dts(prb)
    r = case_fill_ranges(prb, sparse, other, n_acc)
    ranges = {"src": r.src, "wei": r.wei, "bia": r.bia, "dst": r.dst}
    out = {}
    for name in names:
        n = math.prod(t[name].shape)
        if perf:
            data = fill.real_fill(n, t[name].kind, *cfg.CFG[dts[name]].perf)
            if dts[name] in check.INT_RANGES:
                data = np.rint(data)
        else:
            data = fill.int_fill(n, t[name].kind, *ranges[name],
                                 r.density if name == sparse else 1.0)
            if name == "wei":
                data *= r.wei_mult
        if name == "src" and q is not None and q.src_zp:
            # A common src zero point shifts the drawn values, so that src - zp is the
            # drawn integer (saturated to the type, as the buffer will hold it).
            lo, hi = check.INT_RANGES.get(dts["src"], (-np.inf, np.inf))
            data = np.clip(data + q.src_zp, lo, hi).astype(np.float32)
        out[name] = data.reshape(t[name].shape)
    return out


def fill_inputs(prb, t: dict[str, Tensor], perf: bool, q: Quant | None = None
                ) -> dict[str, np.ndarray]:
    names, sparse, other, n_acc = direction_chain(prb.dir, prb.shape)
    out = fill_tensors(prb, t, names, sparse, other, n_acc, perf, q)
    if prb.dw is not None:
        out.update(fill_dw(prb, t, perf))
    return out


def fill_dw(prb, t: dict[str, Tensor], perf: bool) -> dict[str, np.ndarray]:
    """The depthwise step's weights (and bias, where the direction has one): their own
    kinds and seeds, the ranges of their types (cfg.CFG's dw_wei and bia)."""
    dts = tensor_dts(prb)
    names = ["dw_wei"] + (["dw_bia"] if prb.dir.with_bias else [])
    out = {}
    for name in names:
        n, row = math.prod(t[name].shape), cfg.CFG[dts[name]]
        if perf:
            data = fill.real_fill(n, t[name].kind, *row.perf)
            data = np.rint(data) if dts[name] in check.INT_RANGES else data
        else:
            data = fill.int_fill(n, t[name].kind, *(row.dw_wei if name == "dw_wei" else row.bia))
        out[name] = data.reshape(t[name].shape)
    return out


def library_inputs(prb, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The library's buffers: each input in its own type (exact: the values fit)."""
    dts = tensor_dts(prb)
    return {name: np.ascontiguousarray(a.astype(core.numpy_dtype(dts[name])))
            for name, a in inputs.items()}


def output_names(prb_dir: Dir) -> list[str]:
    """The tensors a direction writes and the compare checks, in order."""
    if prb_dir.forward:
        return ["dst"]
    if prb_dir is Dir.BWD_D:
        return ["src"]
    return ["wei", "bia"] if prb_dir.with_bias else ["wei"]


Layouts = dict[str, layout.Layout]


def layout_of(t: dict[str, Tensor], layouts: Layouts | None, name: str) -> layout.Layout:
    """The layout of a tensor's memory: the executor's choice, else (bias, or no layouts
    given) the user's plain one."""
    lay = (layouts or {}).get(name)
    return lay if lay is not None else formats.plain(t[name].logical)


def outputs(prb, t: dict[str, Tensor], layouts: Layouts | None = None) -> dict[str, Guarded]:
    """Output buffers of the output types, as large as their layouts (padding and gaps
    included), poisoned (an unwritten point fails) inside guard zones."""
    dts = tensor_dts(prb)
    return {name: formats.output_buffer(layout_of(t, layouts, name), dts[name])
            for name in output_names(prb.dir)}


def primitive_inputs(prb, inputs: dict[str, np.ndarray], t: dict[str, Tensor],
                     layouts: Layouts | None) -> dict[str, np.ndarray]:
    """The primitive's input memories: each input in its own type (library_inputs),
    reordered into its layout (untimed, as the user's reorder in oneDNN)."""
    dts = tensor_dts(prb)
    return {name: formats.place(a, layout_of(t, layouts, name), dts[name])
            for name, a in library_inputs(prb, inputs).items()}


def bind(prim: core.ConvPrimitive, prb_dir: Dir, inputs: dict[str, np.ndarray],
         wei_packed: np.ndarray | None, outs: dict[str, np.ndarray]):
    """The native kernel's timed callable for a direction (weights already packed), on
    the kernels' own plain layouts (outs: arrays, or Guarded buffers)."""
    outs = {k: getattr(v, "array", v) for k, v in outs.items()}
    if prb_dir.forward:
        return prim.bind(inputs["src"], wei_packed, inputs.get("bia"), outs["dst"])
    if prb_dir is Dir.BWD_D:
        return prim.bind_bwd_data(inputs["dst"], wei_packed, None, outs["src"])
    return prim.bind_bwd_weights(inputs["src"], inputs["dst"], outs["wei"],
                                 outs.get("bia"))


def sample_points(prb, driver: str, t: dict[str, Tensor]) -> dict[str, np.ndarray] | None:
    """--check=sampled: for each output tensor, the linear offsets the reference computes
    and the compare checks (every offset when the tensor has no more than N); None for a
    full check. Seeded by the case's canonical repro and the tensor, so a rerun of the
    repro line checks the same points."""
    if not prb.check.sampled:
        return None
    line = f"--{driver} {prb.repro(canonical=True)}"
    return {name: draw_points(math.prod(t[name].shape), prb.check.points,
                              f"{line} {t[name].tag}")
            for name in output_names(prb.dir)}


def forward_epilogue(acc: np.ndarray, bias: np.ndarray | None, q: Quant, post_ops: PostOps,
                     prior: np.ndarray | None, points: np.ndarray | None,
                     dst_shape: tuple[int, ...]) -> np.ndarray:
    """quantize_reference on the whole dst, or on the sums at points (offsets into a dst
    of dst_shape [mb][oc][...]) with their channels and prior values."""
    if points is None:
        return quantize_reference(acc, bias, q, post_ops, prior)
    channels = (points // math.prod(dst_shape[2:])) % dst_shape[1]
    return quantize_reference(acc, bias, q, post_ops,
                              None if prior is None else prior.reshape(-1)[points], channels)


def dw_reference(prb, inputs: dict[str, np.ndarray], q: Quant,
                 points: np.ndarray | None) -> np.ndarray:
    """Depthwise fusion as separate plain steps: the 1x1 convolution with its epilogue
    (bias, scales, the entries before dw), rounded to the convolution's dst type as a
    stored output; the depthwise convolution of that (the same C reference); its bias and
    the entries after dw. With points, the whole 1x1 output is computed, then the
    depthwise output at the points only."""
    pre, post = split_at_dw(prb.post_ops)
    acc = compute_ref(prb.shape, inputs["src"], inputs["wei"], None)
    mid = check.round_to_dt(quantize_reference(acc, inputs.get("bia"), q, pre, None),
                            prb.dt[2])
    dw = prb.dw_shape
    acc = compute_ref(dw, np.ascontiguousarray(mid, np.float32), inputs["dw_wei"], None, points)
    return forward_epilogue(acc, inputs.get("dw_bia"), Quant(), post, None, points,
                            dw.dst_shape)


def reference(prb, inputs: dict[str, np.ndarray], q: Quant, prior: np.ndarray | None,
              points: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The spec's formulas in double on the f32 values (C, conv_ref.c), then the scales,
    zero points and post-ops of the forward pass (quantize_reference). With points
    (sample_points), each output holds the values at its points only, in their order."""
    prb_dir, shape = prb.dir, prb.shape
    at = (points or {}).get
    if prb_dir.forward and prb.dw is not None:
        return {"dst": dw_reference(prb, inputs, q, at("dst"))}
    if prb_dir.forward:
        src = inputs["src"] - np.float32(q.src_zp) if q.src_zp else inputs["src"]
        acc = compute_ref(shape, src, inputs["wei"], None, at("dst"))
        return {"dst": forward_epilogue(acc, inputs.get("bia"), q, prb.post_ops, prior,
                                        at("dst"), shape.dst_shape)}
    if prb_dir is Dir.BWD_D:
        return {"src": core.ref_conv_bwd_data(shape, inputs["dst"], inputs["wei"], at("src"))}
    if points is None:
        wei, bia = core.ref_conv_bwd_weights(shape, inputs["src"], inputs["dst"],
                                             prb_dir.with_bias)
        return {"wei": wei, "bia": bia} if prb_dir.with_bias else {"wei": wei}
    out = {"wei": core.ref_conv_bwd_weights_at(shape, inputs["src"], inputs["dst"],
                                               points["wei"])}
    if prb_dir.with_bias:
        out["bia"] = core.ref_conv_bwd_bias_at(shape, inputs["dst"], points["bia"])
    return out


def compare_setups(prb, q: Quant | None = None) -> dict[str, CompareSetup]:
    """How each output tensor is compared: output type, threshold and zero trust
    (reference 6.6 to 6.8). Eltwise post-ops bring their tolerance from the eltwise
    table, benchdnn's rules 8 and 9, NaN/Inf where the formula can produce them, and
    relaxed zero trust after negative-to-zero functions or into u8."""
    desc, dts = prb.desc, tensor_dts(prb)
    exceeds = any(o > i for o, i in zip(desc.o, desc.i))
    in_pts, out_pts = math.prod(desc.i), math.prod(desc.o)
    elts = prb.post_ops.eltwise
    zeroing = any(eltwise.zeroes_negatives(e.name, e.alpha) for e in elts) or dts["dst"] == "u8"

    wino = prb.alg == "wino"   # (auto: resolved by then, see _execute)

    def setup(kind: str, name: str, ztp: float, **kw) -> CompareSetup:
        dt = dts[name]
        trh = cfg.CFG[dt].wino_trh if wino else cfg.CFG[dt].trh
        return CompareSetup(kind, trh, ztp, integral=dt in check.INT_RANGES,
                            eps=cfg.eps(dt), dt=dt, norm_fallback=wino, **kw)
    dst = setup("DST", "dst", cfg.dst_zero_trust_percent(exceeds or zeroing),
                allow_nans=any(eltwise.ALGS[e.name].nan_inf_possible for e in elts)
                or dts["dst"] == "f16",
                eltwise=bool(elts), exp_post_op=any(e.name.startswith("exp") for e in elts),
                dst_scale=q is not None and q.kind is core.Scales.ARGS and q.dst_scale != 1.0)
    dst = dataclasses.replace(dst, trh=max([dst.trh] + [eltwise.ALGS[e.name].trh for e in elts]))
    return {
        "dst": dst,
        "src": setup("SRC", "src", cfg.src_zero_trust_percent(desc.s)),
        "wei": setup("WEI", "wei", cfg.wei_zero_trust_percent(desc.k, in_pts, out_pts)),
        "bia": setup("BIA", "bia", cfg.BIA_ZERO_TRUST_PERCENT),
    }


def judge(res: CaseResult, refs: dict[str, np.ndarray], outs: dict[str, Guarded],
          t: dict[str, Tensor], setups: dict[str, CompareSetup], verbose: int,
          points: dict[str, np.ndarray] | None = None, layouts: Layouts | None = None) -> None:
    """Compares every output tensor (in order; at its points only, when sampled), read
    through its layout, and sets the case's status and counts."""
    failed = mistrusted = False
    for name, ref in refs.items():
        at = (points or {}).get(name)
        got = formats.read(outs[name].array, layout_of(t, layouts, name), at)
        got = got.reshape(ref.shape) if at is None else got
        verdict = compare(ref, got, setups[name], at, math.prod(t[name].shape))
        res.diagnostics += diagnostics(verdict, t[name].logical, verbose)
        res.errors += verdict.errors
        res.total += verdict.total
        res.outputs += verdict.size
        failed |= verdict.failed
        mistrusted |= verdict.mistrusted
    res.status = (Status.FAILED if failed else
                  Status.MISTRUSTED if mistrusted else Status.PASSED)


def judge_memory(res: CaseResult, outs: dict[str, Guarded], t: dict[str, Tensor],
                 layouts: Layouts | None, before: dict[str, np.ndarray]) -> None:
    """The outputs' memory beyond their points (check.memory_faults): a blocked layout's
    padded tail must be zero, the gaps of non-dense strides untouched (before: their
    contents before execution). The first fault fails the case and names the reason."""
    for name, out in outs.items():
        fault = check.memory_faults(t[name].tag, layout_of(t, layouts, name), out.array,
                                    before.get(name))
        if fault:
            res.status = Status.FAILED
            res.reason, extra = fault
            res.diagnostics += extra
            return


# Bytes per compared point beyond its output buffer: the f64 reference value and the
# compare's temporaries (check.compare holds about eight f32 or bool arrays of its size).
REF_BYTES_PER_POINT = 40


def footprint_bytes(prb, shape: core.ConvShape) -> int:
    """What a correctness case allocates at its peak, about: each input in its own type
    and as the f32 values it was filled from, the outputs in their types, the weights
    again in the implementation's layout, the prior dst of a sum post-op (f32, and its
    copy), and REF_BYTES_PER_POINT for every point the reference computes: all of the
    outputs, or N of each with --check=sampled:N. A tensor in a requested layout counts
    the layout's size (padding and gaps included) and, for the route the native kernels
    take and the read-back, a plain copy and an offset table (8 bytes per point)."""
    dts = tensor_dts(prb)
    size = {"src": math.prod(shape.src_shape), "wei": math.prod(shape.wei_shape),
            "bia": shape.oc, "dst": math.prod(shape.dst_shape)}
    extra = 0
    for name, lay in prb.requested_layouts.items():
        if lay is not None:
            item = core.numpy_dtype(dts[name]).itemsize
            extra += item * (lay.size + size[name]) + 8 * size[name]
    item = {name: core.numpy_dtype(dt).itemsize for name, dt in dts.items()}
    inputs, _, _, _ = direction_chain(prb.dir, shape)
    outs = output_names(prb.dir)
    total = sum((item[n] + 4) * size[n] for n in inputs)
    total += sum(item[n] * size[n] for n in outs)
    if "wei" in inputs:
        total += item["wei"] * size["wei"]
    if any(isinstance(e, Sum) for e in prb.post_ops.entries):
        total += 8 * size["dst"]
    points = prb.check.points
    total += REF_BYTES_PER_POINT * sum(size[n] if points is None else min(points, size[n])
                                       for n in outs)
    return int(total + extra)


# The C core's operand class of a direction's multiplied tensors (src and wei forward,
# diff_dst and wei backward data, src and diff_dst backward weights), by their types.
OPERANDS = {("f32", "f32"): core.Operands.F32, ("f16", "f16"): core.Operands.F16,
            ("bf16", "bf16"): core.Operands.BF16, ("u8", "s8"): core.Operands.INT8,
            ("s8", "s8"): core.Operands.INT8}


def operands_of(kernel_dir: core.Direction, attr: core.ConvAttr) -> core.Operands | None:
    x = attr.dst_dt if kernel_dir is core.Direction.BWD_DATA else attr.src_dt
    y = attr.dst_dt if kernel_dir is core.Direction.BWD_WEIGHTS else attr.wei_dt
    return OPERANDS.get((x, y))


def kernel_attr(prb, q: Quant) -> core.ConvAttr:
    dts = tensor_dts(prb)
    return core.ConvAttr(dts["src"], dts["wei"], prb.dt[2], dts["bia"], q.kind, q.src_scale,
                         q.dst_scale, tuple(float(v) for v in q.wei_scales), q.src_zp,
                         q.dst_zp, kernel_post_ops(prb.post_ops, prb.dt[2]))


def create(shape: core.ConvShape, kernel_dir: core.Direction, with_bias: bool,
           impl_filter: ImplFilter, res: CaseResult, post_ops: PostOps = PostOps(),
           attr: core.ConvAttr | None = None, alg: str = "direct") -> core.ConvPrimitive | None:
    """The first implementation, in the table's order of preference, of the algorithm alg
    (resolved: direct or wino) that computes the case's operand types, the CPU runs, the
    filter allows and that accepts the problem; sets SKIPPED/UNIMPLEMENTED otherwise."""
    attr = attr if attr is not None else core.ConvAttr(post_ops=kernel_post_ops(post_ops))
    fault = core.conv_fault(attr.layout)
    operands = operands_of(kernel_dir, attr)
    with res.timers("create_pd"):
        typed = [i for i in core.conv_impls()
                 if i.operands is operands and ALG_ROWS[alg](i.name)]
        runnable = [i for i in typed if core.isa_supported(i.isa)]
    if typed and not runnable:
        res.status, res.reason = Status.SKIPPED, Reason.DATA_TYPE_NOT_SUPPORTED.value
        return None
    return first_accepting(
        runnable, impl_filter,
        lambda impl: core.ConvPrimitive(impl, shape, kernel_dir, with_bias, fault, attr=attr),
        res)


def operand_class(prb) -> str:
    """The types a direction multiplies, as a C operand class name ("f32", "int8", ...).
    In the user's tensor names this is the same for convolution and deconvolution: forward
    src and wei, backward data diff_dst and wei, backward weights src and diff_dst."""
    dts = tensor_dts(prb)
    pair = {Dir.BWD_D: ("dst", "wei"), Dir.BWD_W: ("src", "dst"),
            Dir.BWD_WB: ("src", "dst")}.get(prb.dir, ("src", "wei"))
    operands = OPERANDS.get((dts[pair[0]], dts[pair[1]]))
    return operands.name.lower() if operands is not None else "f32"


def perf_record(driver: str, prb, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], shape: core.ConvShape, ops: int,
                layouts: Layouts | None = None) -> PerfRecord:
    """The perf line's fields; %stag% %wtag% %dtag% name the layouts the case ran on
    (`any` resolved to the implementation's choice), and bytes count padded points."""
    with_bias = prb.dir.with_bias
    size = {name: core.numpy_dtype(dt).itemsize for name, dt in tensor_dts(prb).items()}
    t = tensors(prb.desc, shape, dw_shape_of(prb))
    lays = {name: layout_of(t, layouts, name) for name in ("src", "wei", "dst")}
    ibytes = int(size["src"] * lays["src"].padded_nelems
                 + size["wei"] * lays["wei"].padded_nelems
                 + (size["bia"] * shape.oc if with_bias else 0))
    if prb.dw is not None:   # the depthwise step's weights and bias are inputs too
        ibytes += size["dw_wei"] * math.prod(t["dw_wei"].shape)
        ibytes += size["dw_bia"] * shape.oc if with_bias else 0
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": driver,
        "prb": f"{ctx.settings.repro_prefix()}--{driver} {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "dir": prb.dir.value,
        "sdt": ":".join(prb.dt), "cfg": ":".join(prb.dt),
        "bia_dt": prb.bia_dt,
        "stag": lays["src"].describe(), "wtag": lays["wei"].describe(),
        "dtag": lays["dst"].describe(), "alg": prb.alg, "attr": prb.attr_text,
        "prop": prb.dir.prop_kind,
    }
    return PerfRecord(text, float(ops), ibytes, size["dst"] * lays["dst"].padded_nelems, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=operand_class(prb),
                      memory_bound=shape.g > 1 and shape.g == shape.ic == shape.oc,
                      threads=prb.threads)


def measure_into(res: CaseResult, run_once, ctx: RunContext) -> list[float]:
    """The case's timed runs; with --perf-guard (default), between compute probes, and
    what they read in res.machine (a degraded machine also as a diagnostic line)."""
    settings = ctx.settings
    if ctx.group is not None:   # timed with its group: the execute timer takes its share
        group, member = ctx.group
        times, res.machine = group.offer(member, run_once)
        if res.machine is not None and res.machine.degraded:
            res.diagnostics.append(res.machine.diagnostic())
        res.timers.seconds["execute"] += group.seconds
        return times
    start = time.perf_counter()
    if settings.perf_guard:
        times, res.machine = machine_guard().measure(run_once, settings.max_ms_per_prb,
                                                     settings.fix_times_per_prb)
        if res.machine.degraded:
            res.diagnostics.append(res.machine.diagnostic())
    else:
        times = measure(run_once, settings.max_ms_per_prb, settings.fix_times_per_prb)
    res.timers.seconds["execute"] += time.perf_counter() - start
    return times


def group_timing(settings: GlobalSettings):
    """How a --perf-interleave group (its members' shared settings) is timed
    (TimingGroup.run's timing): in turns, between the perf guard's probes on the most
    threads of its cases (the compute a probe reads is all the cores the group uses)."""
    def timing(runs, threads):
        def turns():
            return measure_turns(runs, settings.max_ms_per_prb, settings.fix_times_per_prb)
        with core.threads(threads):
            return machine_guard().guarded(turns) if settings.perf_guard else (turns(), None)
    return timing


@functools.cache
def machine_guard() -> MachineGuard:
    """One per process: it remembers whether the machine stayed degraded."""
    return MachineGuard(core.probe_peak, functools.partial(machine_limit, "f32"),
                        core.max_threads, cache_probe=core.probe_cache,
                        remeasure=core.remeasure_limits)


@dataclasses.dataclass(frozen=True)
class CaseSteps:
    """What differs between the drivers that share run_case (conv, deconv)."""

    driver: str
    shape: Callable[[Any], core.ConvShape]     # the user's tensors
    # (prb, tensors, perf, quant) -> the inputs as exact f32 values
    fill: Callable[[Any, dict[str, Tensor], bool, Quant], dict[str, np.ndarray]]
    # (prb, f32 inputs, quant, prior dst, points or None) -> the reference outputs, whole
    # or at each output's points (sample_points)
    reference: Callable[[Any, dict[str, np.ndarray], Quant, Any, Any], dict[str, np.ndarray]]


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
    if not fits_in_ram(footprint_bytes(prb, shape)):
        res.status, res.reason = Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value
        return res
    if ctx.settings.verbose >= 1:
        ctx.log(f"run: --{steps.driver} {prb.repro(ctx.settings.canonical)}")
    with core.threads(prb.threads):   # creation plans for the threads it runs on
        executor = backends.create(prb, res)
        if executor is None:
            return res
        try:
            _execute(prb, ctx, steps, shape, executor, res)
        finally:
            executor.close()
    return res


def layouts_text(prb, layouts: Layouts, t: dict[str, Tensor]) -> str:
    """The layouts a case runs on, for -v5: `src any=abcd wei OIhw16i16o=ABcd16b16a ...`."""
    return " ".join(f"{name} {formats.shown(prb.formats, name, layout_of(t, layouts, name))}"
                    for name in formats.OPTIONS)


def _execute(prb, ctx: RunContext, steps: CaseSteps, shape: core.ConvShape,
             executor: Executor, res: CaseResult) -> None:
    mode = ctx.settings.mode
    res.impl = executor.name
    # --alg=auto is resolved from the created primitive before filling (reference 3.1):
    # the fill and the compare follow the algorithm that runs; the repro keeps auto.
    filled = prb if prb.alg != "auto" else dataclasses.replace(prb, alg=ran_alg(executor.name))
    t = tensors(prb.desc, shape, dw_shape_of(prb))
    lays = executor.layouts
    if ctx.settings.verbose >= 5:
        ctx.log(f"implementation: {executor.name}" +
                (f" ({executor.info})" if executor.info else "") +
                f"; {layouts_text(prb, lays, t)}")
    create_s = (res.timers.seconds["create_pd"], res.timers.seconds["create_prim"])
    q = quant_of(prb, shape.oc)
    outs = outputs(prb, t, lays)
    dst_dt = tensor_dts(prb)["dst"]
    dst_dtype = core.numpy_dtype(dst_dt)
    run_once = None
    has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
    if mode.correctness:
        with res.timers("fill"):
            inputs = steps.fill(filled, t, False, q)
            prior = fill_prior_dst(filled, t, perf=False) if has_sum else None
            if prior is not None:   # the sum reads it; the execution overwrites it
                formats.place_into(prior.astype(dst_dtype), layout_of(t, lays, "dst"), dst_dt,
                                   outs["dst"].array)
            # what the gaps of non-dense strides held (poison, never written by anyone)
            before = {name: out.array.copy() for name, out in outs.items()
                      if check.has_gaps(layout_of(t, lays, name))}
            run_once, collect = executor.bind(primitive_inputs(prb, inputs, t, lays), outs)
        with res.timers("execute"):
            run_once()
        collect()
        if not all(o.intact() for o in outs.values()):
            res.status, res.reason = Status.FAILED, "wrote outside an output buffer"
            return
        with res.timers("compute_ref"):
            points = sample_points(prb, steps.driver, t)
            refs = steps.reference(prb, inputs, q, prior, points)
        with res.timers("compare"):
            judge(res, refs, outs, t, compare_setups(filled, q), ctx.settings.verbose, points,
                  lays)
            judge_memory(res, outs, t, lays, before)
    if mode.performance:
        if run_once is None:
            with res.timers("fill"):
                inputs = steps.fill(filled, t, True, q)
                if has_sum:
                    formats.place_into(fill_prior_dst(prb, t, perf=True).astype(dst_dtype),
                                       layout_of(t, lays, "dst"), dst_dt, outs["dst"].array)
                run_once, _ = executor.bind(primitive_inputs(prb, inputs, t, lays), outs)
            res.status = Status.EXECUTED
        times = measure_into(res, run_once, ctx)
        res.perf = perf_record(steps.driver, prb, ctx, executor.name, times, create_s, shape,
                               prb.ops, lays)


STEPS = CaseSteps("conv", shape=lambda prb: prb.shape, fill=fill_inputs, reference=reference)


def run(prb: ConvProblem, ctx: RunContext) -> CaseResult:
    return run_case(prb, ctx, STEPS)
