"""The convolution problem and the options that make it: benchdnn's conv options in the
order their lists expand, the problem they give with a descriptor, and its canonical
repro line."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

from ... import backends, core
from ...common import layout
from ...common.attr import (MODE_OPTIONS, Depthwise, Modes, OScale, PostOps, Scales,
                            ZeroPoints, modes_of, parse_oscale, parse_post_ops, parse_scales,
                            parse_zero_points)
from ...common.check import FULL, Check
from ...common.direction import Dir
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter
from ...engine.options import Option, enum_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import UsageError
from ...status import Status
from . import dt as dtypes
from . import formats
from .attrs import dw_entry
from .desc import ConvDesc, parse_desc
from .prim import logical_dims
from .ref import count_ops

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
           "post-op chains: sum[:SCALE], NAME[:ALPHA[:BETA[:SCALE]]], dw:kKsSpP, "
           "ALG:DT[:MASK[:TAG]] (binary), prelu[:MASK] joined by +", is_list=True),
    *MODE_OPTIONS,
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
    check: Check = FULL                  # --check (a global option: --reset keeps it)
    formats: formats.Formats = formats.Formats()
    threads: int = 0                     # --threads (0: the process's OpenMP count)
    modes: Modes = Modes()               # --attr-scratchpad, --attr-fpmath, ...

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
        return " ".join(parts + self.modes.options())

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
                zero_points=values["attr-zero-points"],
                formats=formats.formats_of(values), threads=values["threads"],
                modes=modes_of(values))


def problem_of(cls: type[ConvProblem], desc: ConvDesc, values: Mapping[str, Any],
               settings: GlobalSettings) -> ConvProblem:
    """A problem of class cls (conv's, deconv's, ip's) over a parsed descriptor, --mb
    applied; a tag or strides that do not fit the descriptor raise here (this case's
    error)."""
    if values["mb"]:
        desc = desc.with_mb(values["mb"])
    prb = cls(desc, **problem_fields(values), check=settings.check)
    prb.requested_layouts    # noqa: B018 - raises on layouts that do not fit
    return prb


def make_problem(values: Mapping[str, Any], text: str, settings: GlobalSettings) -> ConvProblem:
    return problem_of(ConvProblem, parse_desc(text, "conv"), values, settings)
