"""The binary driver: options, problems, and one case from creation to verdict.

Case flow (correctness): src0, src1 (and select's condition) are filled (cfg.fill_input)
in their types and placed in their layouts, a sum post-op's prior dst into dst; the kernel
writes a poisoned, guarded dst; the reference computes OP of the scaled sources in double
and the chain in f32, and the comparison rounds it to dst's type. Performance: the same
fill, warm-up, timed runs, GB/s.

Memory formats: src0 has --stag's first tag, src1 its second (`any`: src0's), dst --dtag
(`any`: src0's), each over its own dims. The kernels write dst in its memory order when it
is dense (channels first or last when the chain's binary or prelu entries need each
element's position), else plain; they read a plain source through its strides wherever it
is (broadcast dims stride 0), and a blocked one from a plain copy (the reorder route). In
place, dst is src0's memory.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr, dt_names, layout, post_ops, reorders
from ...common.attr import Binary, Depthwise, Prelu, Sum
from ...common.check import CompareSetup, Verdict, compare, has_gaps, memory_faults
from ...common.layout import tensor_layout
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter
from ...engine.memory import Guarded
from ...engine.options import Option, bool_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import ProblemError, UsageError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import (Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported,
                    create_routed)
from . import backend_onednn, backend_torch, cfg, ref
from .desc import BinaryDims, check_broadcast, dst_dims, parse_binary

ALGS = tuple(core.BINARY_PRIMITIVE_ALGS)


def parse_sdt(text: str) -> tuple[str, str]:
    items = text.split(":")
    if len(items) != 2:
        raise UsageError(f"--sdt={text}: binary takes two sources' types (DT:DT)")
    return tuple(dt_names.parse_name(i, "sdt", text) for i in items)


def parse_stag(text: str) -> tuple[layout.Tag, layout.Tag]:
    tags = layout.tags_option("stag")(text)
    if len(tags) > 2:
        raise UsageError(f"--stag={text}: binary takes two sources' tags (TAG:TAG)")
    return tags if len(tags) == 2 else tags * 2


def parse_alg(text: str) -> str:
    name = text.lower().removeprefix("binary_")
    if name not in core.BINARY_PRIMITIVE_ALGS:
        raise UsageError(f"--alg={text}: unknown binary algorithm; expected one of "
                         f"{', '.join(a.upper() for a in ALGS)}")
    return name


OPTIONS = (
    Option("sdt", parse_sdt, ("f32", "f32"), "src0's and src1's types (DT:DT)",
           is_list=True),
    Option("ddt", dt_names.option("ddt"), "f32", "dst's type", is_list=True),
    Option("stag", parse_stag, (layout.parse_tag("abx"), layout.parse_tag("any")),
           "src0's and src1's tags (TAG:TAG; src1's any: src0's)", is_list=True),
    Option("dtag", layout.tag_option("dtag"), layout.parse_tag("any"),
           "dst's tag (any: src0's)", is_list=True),
    Option("strides", lambda text: layout.parse_strides_option(text, STRIDED),
           (None, None, None), "SRC0:SRC1:DST plain strides, each S0xS1x...[@OFFSET] or "
           "empty (the tensor's tag decides)", is_list=True),
    Option("alg", parse_alg, "add", "the operation: ADD, SUB, MUL, DIV, MAX, MIN, GE, GT, "
           "LE, LT, EQ, NE or SELECT (dst = src2 ? src0 : src1)", is_list=True),
    Option("inplace", bool_value("inplace"), False, "dst overwrites src0", is_list=True),
    Option("mb", int_value("mb", 0), 0, "replaces dims[0] of each source not broadcast "
           "along it (0: the descriptor's)", is_list=True),
    Option("attr-scales", attr.parse_scales, attr.Scales(),
           "common scales of src (src0) and src1, as src:common:0.5+src1:common:2",
           is_list=True),
    Option("attr-post-ops", attr.parse_post_ops, attr.PostOps(),
           "post-op chains of sum, eltwise, binary and prelu entries (as --conv's)",
           is_list=True),
    *attr.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the problem: native (this project's kernels), onednn (oneDNN's "
           "binary primitive) or torch (PyTorch's elementwise operators)", is_list=True),
)

# --backend -> the module that creates its primitive (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS: dict[str, Any] = {"onednn": backend_onednn, "torch": backend_torch}

STRIDED = ("src0", "src1", "dst")     # the tensors --strides names, in its order
PERF_FIELDS = frozenset({"sdt", "ddt", "stag", "dtag", "alg", "mb"})
CSV_PERF_FIELDS = "%sdt%,%ddt%,%stag%,%dtag%,%alg%"
DEFAULT_STAG = ("abx", "any")


@dataclasses.dataclass(frozen=True)
class BinaryProblem:
    desc: BinaryDims
    sdt: tuple[str, str]
    ddt: str
    stag: tuple[layout.Tag, layout.Tag]
    dtag: layout.Tag
    alg: str
    inplace: bool
    impl_filter: ImplFilter
    user_mb: int
    scales: attr.Scales = attr.Scales()
    post_ops: attr.PostOps = attr.PostOps()
    modes: attr.Modes = attr.Modes()
    backend: str = backends.NATIVE
    strides: tuple[layout.Strides, ...] = (None, None, None)   # src0, src1, dst

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        if self.sdt != ("f32", "f32"):
            parts.append(f"--sdt={':'.join(self.sdt)}")
        if self.ddt != "f32":
            parts.append(f"--ddt={self.ddt}")
        if tuple(t.text for t in self.stag) != DEFAULT_STAG:
            parts.append(f"--stag={self.stag[0]}:{self.stag[1]}")
        if not self.dtag.is_any:
            parts.append(f"--dtag={self.dtag}")
        if any(self.strides):
            parts.append(f"--strides={layout.format_strides(self.strides)}")
        if self.alg != "add":
            parts.append(f"--alg={self.alg}")
        if self.inplace:
            parts.append("--inplace=true")
        if self.scales:
            parts.append(f"--attr-scales={self.scales}")
        if self.post_ops:
            parts.append(f"--attr-post-ops={self.post_ops}")
        parts += self.modes.options()
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    def src_dims(self, i: int) -> tuple[int, ...]:
        """src0's (0), src1's (1) or select's condition's (2, src0's) dims."""
        return self.desc.srcs[i if i < 2 else 0]

    @property
    def dims(self) -> tuple[int, ...]:
        """dst's dims."""
        return dst_dims(self.desc)

    @property
    def nelems(self) -> int:
        return math.prod(self.dims)

    def src_tag(self, i: int) -> layout.Tag:
        """src1's `any` is src0's tag, and src0's `any` the plain one."""
        tag = self.stag[1] if i == 1 else self.stag[0]
        if tag.is_any and i == 1:
            tag = self.stag[0]
        return tag

    def src_layout(self, i: int) -> layout.Layout:
        """Its strides when given (select's condition: src0's), else its tag's layout."""
        given = self.strides[min(i, 1) if i < 2 else 0]
        if given is not None:
            return layout.strided_layout(self.src_dims(i), *given)
        return tensor_layout(self.src_tag(i), self.src_dims(i))

    @property
    def dst_layout(self) -> layout.Layout:
        if self.strides[2] is not None:
            return layout.strided_layout(self.dims, *self.strides[2])
        return tensor_layout(self.stag[0] if self.dtag.is_any else self.dtag, self.dims)

    @property
    def inputs(self) -> tuple[str, ...]:
        return ("src0", "src1", "src2") if self.alg == "select" else ("src0", "src1")

    @property
    def has_sum(self) -> bool:
        return any(isinstance(e, Sum) for e in self.post_ops.entries)

    @property
    def broadcasts_src0(self) -> bool:
        """Whether src0 is smaller than dst along some dim (its memory cannot hold dst)."""
        return self.desc.srcs[0] != self.dims

    def scale(self, arg: str) -> float:
        return self.scales.common_value(arg)


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> BinaryProblem:
    desc = parse_binary(text)
    if values["mb"]:
        desc = desc.with_mb(values["mb"], keep_ones=True)
        check_broadcast(desc)
    prb = BinaryProblem(desc, values["sdt"], values["ddt"], values["stag"], values["dtag"],
                        values["alg"], values["inplace"], values["impl_filter"], values["mb"],
                        values["attr-scales"], values["attr-post-ops"],
                        attr.modes_of(values), values["backend"], values["strides"])
    # benchdnn's rule: a tensor takes a tag or strides, not both
    tags = (prb.stag[0].text != DEFAULT_STAG[0], prb.stag[1].text != DEFAULT_STAG[1],
            not prb.dtag.is_any)
    for name, given, tagged in zip(STRIDED, prb.strides, tags):
        if given is not None and tagged:
            raise ProblemError(f"--strides={layout.format_strides(prb.strides)}: {name} "
                               "has both strides and a tag (--stag, --dtag); give one")
    for name, lay in (("stag", lambda: prb.src_layout(0)), ("stag", lambda: prb.src_layout(1)),
                      ("dtag", lambda: prb.dst_layout)):     # the rank check, at parse time
        try:
            lay()
        except ProblemError as exc:
            raise ProblemError(str(exc).replace("--tag=", f"--{name}=")) from None
    return prb


def invalid(prb: BinaryProblem) -> str | None:
    """benchdnn's rules: src0 broadcast into dst cannot be dst's memory (in place) nor
    hold its prior values (sum); in place needs src0's type and layout in dst."""
    if prb.broadcasts_src0 and (prb.inplace or prb.has_sum):
        return (f"src0 ({'x'.join(map(str, prb.desc.srcs[0]))}) is broadcast, so it "
                f"cannot be dst's memory ({'in place' if prb.inplace else 'a sum post-op'})")
    if not prb.inplace:
        return None
    if prb.has_sum:
        return "in place with a sum post-op"
    if prb.sdt[0] != prb.ddt:
        return f"in place with src0 of {prb.sdt[0]} and --ddt={prb.ddt}"
    if not prb.dtag.is_any and not prb.dst_layout.same_memory(prb.src_layout(0)):
        return f"in place with --stag={prb.stag[0]} and --dtag={prb.dtag}"
    return None


def attrs_unsupported(prb: BinaryProblem) -> tuple[Status, str] | None:
    """The attributes the kernels cannot apply: scales other than common src0 and src1
    ones, a dw entry, binary and prelu entries on more than 5 dims, and what
    post_ops.src1_unsupported names."""
    for e in prb.scales.entries:
        if e.arg not in ("src", "src1") or not e.is_common or e.groups:
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: binary takes "
                    "a common scale for src (src0) and for src1")
        if e.dt not in ("f32", "bf16", "f16"):
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: scales of "
                    f"type {e.dt}")
    for e in prb.post_ops.entries:
        if isinstance(e, Depthwise):
            return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: `{e}`: binary "
                    "primitive takes sum, eltwise, binary and prelu post-ops")
        if isinstance(e, Sum) and e.dt and e.dt != prb.ddt and \
                core.numpy_dtype(e.dt).itemsize != core.numpy_dtype(prb.ddt).itemsize:
            return (Status.INVALID_ARGUMENTS, f"--attr-post-ops={prb.post_ops}: `{e}`: a "
                    f"sum's type must be of dst's size ({prb.ddt})")
        if isinstance(e, Sum) and e.dt and e.dt not in cfg.CFG:
            return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: `{e}`: a sum "
                    f"reading dst as {e.dt}")
    sum_dts = {e.dt or prb.ddt for e in prb.post_ops.entries if isinstance(e, Sum)}
    if len(sum_dts) > 1:
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: sums reading dst as "
                f"different types ({', '.join(sorted(sum_dts))})")
    if post_ops.src1_entries(prb.post_ops) and len(prb.dims) > 5:
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: binary and prelu "
                "entries run on tensors of up to 5 dims (mb, channels, 3 spatial)")
    return post_ops.src1_unsupported(prb.post_ops, prb.dims, prb.backend)


def unsupported(prb: BinaryProblem) -> tuple[Status, str] | None:
    for dt in (*prb.sdt, prb.ddt):
        if dt not in cfg.CFG:
            return Status.UNIMPLEMENTED, f"{dt}: binary has no {dt} implementation"
    verdict = attrs_unsupported(prb) or prb.modes.verdict(prb.backend,
                                                          frozenset({"scratchpad"}))
    if verdict:
        return verdict
    if invalid(prb):
        return Status.SKIPPED, Reason.INVALID_CASE.value
    return None


@dataclasses.dataclass(frozen=True)
class Plan:
    """Where the kernel runs: each tensor's memory and kernel layouts, dst's memory order
    (dims outermost first), the sources' strides over it, and whether dst is stored
    channels last (the chain's geometry)."""

    mem: dict[str, layout.Layout]
    kernel: dict[str, layout.Layout]
    order: tuple[int, ...]
    strides: tuple[tuple[int, ...], tuple[int, ...]]
    channels_last: bool


def plan(prb: BinaryProblem) -> Plan:
    mem = {name: prb.src_layout(i) for i, name in enumerate(prb.inputs)}
    mem["dst"] = prb.dst_layout
    dst = mem["dst"]
    order = layout.dense_order(dst)
    positions = any(isinstance(e, (Binary, Prelu)) for e in prb.post_ops.entries)
    if order is None or (positions and layout.channels_last(dst) is None):
        dst = layout.plain(prb.dims)
        order = tuple(range(len(prb.dims)))
    kernel = {"dst": dst}
    for name in prb.inputs:        # plain sources in place, blocked ones from plain copies
        lay = mem[name]
        kernel[name] = lay if lay.is_plain and not lay.offset0 else layout.plain(lay.dims)
    strides = tuple(tuple(kernel[name].strides[d] if kernel[name].dims[d] > 1 else 0
                          for d in order) for name in ("src0", "src1"))
    return Plan(mem, kernel, order, strides, bool(layout.channels_last(dst)))


def create(prb: BinaryProblem, res: CaseResult) -> Created | None:
    fault = core.active_op_fault()
    with res.timers("create_pd"):
        p = plan(prb)
    dims = tuple(prb.dims[d] for d in p.order)
    scales = (prb.scale("src"), prb.scale("src1"))
    dts = {"src0": prb.sdt[0], "src1": prb.sdt[1], "src2": "s8", "dst": prb.ddt}
    created = create_routed(
        prb, res, (p.mem, p.kernel, dts, prb.inputs, ("dst",)), core.binary_impls,
        lambda impl: core.BinaryPrimitive(impl, prb.alg, prb.sdt, prb.ddt, dims, p.strides,
                                          scales, fault),
        BACKENDS, read_outs=("dst",) if prb.has_sum else ())
    if created is not None:
        created.info = (plan_note(prb, p) if prb.backend == backends.NATIVE
                        else created.prim.info)
    return created


def plan_note(prb: BinaryProblem, p: Plan) -> str:
    """-v5's note: dst's memory order and each source's strides over it."""
    order = "".join(layout.LETTERS[d] for d in p.order)
    return (f"order {order} dims {'x'.join(str(prb.dims[d]) for d in p.order)} strides "
            f"src0={'x'.join(map(str, p.strides[0]))} src1={'x'.join(map(str, p.strides[1]))}")


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    srcs: list[np.ndarray]                # logical f32 values of each input, exact
    out: Guarded                          # dst, in its layout
    prior: np.ndarray | None = None       # a sum's prior dst (logical)
    before: np.ndarray | None = None      # dst's buffer before execution (strides' gaps)
    src1: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # post-op inputs


def prepare(prb: BinaryProblem, prim: core.BinaryPrimitive, route: reorders.Route,
            p: Plan) -> Buffers:
    srcs, mems = [], {}
    for i, name in enumerate(prb.inputs):
        dt = prb.sdt[i] if i < 2 else "s8"
        dims = prb.src_dims(i)
        values = cfg.fill_input(math.prod(dims), i, dt).reshape(dims)
        srcs.append(values)
        mems[name] = reorders.place_values(values, prb.src_layout(i), dt)
    out = reorders.output_buffer(prb.dst_layout, prb.ddt)
    prior = None
    if prb.has_sum:
        prior = cfg.fill_prior(prb.nelems, prb.ddt).reshape(prb.dims)
        reorders.place_into(prior, prb.dst_layout, prb.ddt, out.array)
    if prb.inplace:
        out.array[:] = mems["src0"]
        mems["src0"] = out.array
    before = out.array.copy() if has_gaps(prb.dst_layout) else None
    k_in, k_out, wrap = route.bind(mems, {"dst": out.array})
    src1 = post_ops.fill_src1(prb.post_ops, prb.dims)
    # (another backend takes the chain in its attributes: the verdict keeps binary and
    # prelu entries off it)
    # (sum and eltwise entries need no element's position: any rank, as one line)
    chain_dims = prb.dims if len(prb.dims) <= 5 else (prb.nelems,)
    chain = (post_ops.kernel_chain(prb.post_ops, src1, chain_dims, p.channels_last)
             if prb.nelems and prb.backend == backends.NATIVE else None)
    run = wrap(prim.bind(k_in["src0"], k_in["src1"], k_in.get("src2"), k_out["dst"], chain))
    return Buffers(srcs=srcs, out=out, outs=(out,), run=run, prior=prior, src1=src1,
                   before=before)


def reference(prb: BinaryProblem, bufs: Buffers) -> np.ndarray:
    src2 = bufs.srcs[2] if prb.alg == "select" else None
    return ref.forward(prb.alg, bufs.srcs[0], bufs.srcs[1], src2,
                       (prb.scale("src"), prb.scale("src1")), prb.post_ops, bufs.src1,
                       bufs.prior)


def compare_setup(prb: BinaryProblem) -> CompareSetup:
    dtc = cfg.CFG[prb.ddt]
    comparison = prb.alg in post_ops.COMPARISONS or post_ops.has_comparison(prb.post_ops)
    elts = prb.post_ops.eltwise
    return CompareSetup("DST", cfg.threshold(prb.ddt),
                        cfg.ZERO_TRUST_PERCENT_COMPARISON if comparison
                        else post_ops.zero_trust_percent(prb.post_ops, prb.ddt),
                        integral=dtc.integral, allow_nans=post_ops.nans_possible(prb.post_ops),
                        eltwise=bool(elts), exp_post_op=any(e.name == "exp" for e in elts),
                        eps=dtc.eps if prb.ddt != "f32" else cfg.CFG["f32"].eps, dt=prb.ddt)


def with_division_check(v: Verdict, prb: BinaryProblem) -> Verdict:
    """benchdnn's driver check for DIV: a point within dst's epsilon of the expected value
    passes (a quotient rounded to f32, then to a narrower dst, may land a step apart)."""
    if prb.alg != "div" or not v.failed or cfg.CFG[prb.ddt].integral:
        return v
    diff = np.abs(v.exp[v.failing].astype(np.float64) - v.got[v.failing])
    rescued = diff < cfg.threshold(prb.ddt)
    return v.keep_failing(v.failing[~rescued]) if rescued.any() else v


def judge(prb: BinaryProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    got = reorders.read(bufs.out.array, prb.dst_layout).reshape(prb.dims)
    verdict = with_division_check(compare(exp, got, compare_setup(prb)), prb)
    res.take_verdict(verdict, prb.dims, verbose)
    res.take_memory_fault(memory_faults("DST", prb.dst_layout, bufs.out.array, bufs.before))


def input_bytes(prb: BinaryProblem) -> int:
    """Bytes the primitive reads: each input (select's condition s8), a sum's prior dst."""
    size = lambda dt: core.numpy_dtype(dt).itemsize  # noqa: E731
    total = sum(math.prod(prb.src_dims(i)) * size(prb.sdt[i] if i < 2 else "s8")
                for i in range(len(prb.inputs)))
    return total + (prb.nelems * size(prb.ddt) if prb.has_sum else 0) \
        + post_ops.src1_bytes(prb.post_ops, prb.dims)


def perf_record(prb: BinaryProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], bufs: Buffers) -> PerfRecord:
    n = prb.nelems
    obytes = core.numpy_dtype(prb.ddt).itemsize * n
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "binary",
        "prb": f"{ctx.settings.repro_prefix()}--binary {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "sdt": ":".join(prb.sdt),
        "ddt": prb.ddt, "stag": f"{prb.stag[0]}:{prb.stag[1]}", "dtag": str(prb.dtag),
        "alg": prb.alg, "attr": "",
    }
    # One operation per dst element.
    return PerfRecord(text, float(n), input_bytes(prb), obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=BANDWIDTH)


class Steps(CaseSteps):
    driver = "binary"

    create = staticmethod(create)
    reference = staticmethod(reference)
    judge = staticmethod(judge)
    perf_record = staticmethod(perf_record)

    def unsupported(self, prb: BinaryProblem) -> tuple[Status, str] | None:
        return unsupported(prb) or backend_unsupported("binary", prb, BACKENDS)

    def skip_note(self, prb: BinaryProblem) -> str | None:
        return invalid(prb)

    def footprint(self, prb: BinaryProblem) -> int:
        # each input's f32 values and memory (and a route's copy), dst and its scratch,
        # the prior, and the reference's and the compare's double arrays of dst's size
        srcs = sum(math.prod(prb.src_dims(i)) for i in range(len(prb.inputs)))
        return srcs * (4 + 4 + 4) + prb.nelems * (4 + 4 + 4 + 8 * 8) \
            + 2 * prb.dst_layout.size * 4

    def tensor_bytes(self, prb: BinaryProblem, prim: Created) -> int:
        return input_bytes(prb) + core.numpy_dtype(prb.ddt).itemsize * prb.nelems

    def layouts(self, prb: BinaryProblem, prim: Created) -> str:
        srcs = " ".join(f"{name}={prb.src_layout(i).describe()}"
                        for i, name in enumerate(prb.inputs))
        return f"layout {srcs} dst={prb.dst_layout.describe()}"

    def prepare(self, prb: BinaryProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, prim.route, plan(prb))


STEPS = Steps()


def run(prb: BinaryProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
