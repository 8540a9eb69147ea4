"""The reorder driver: options, problems, and one case from creation to verdict.

Case flow (correctness): the table fill in logical order -> placed into a src buffer of
the source layout by the layout module's offsets (numpy, not the kernel) -> a dst buffer
poisoned everywhere (guard zones around it; the prior dst placed in it for sum) -> the
kernel -> three checks: every logical point equals the reference exactly; every padded
point of a blocked dst is zero; every other position (gaps of non-dense strides, the
offset before a sub-tensor) is untouched. Performance: real-valued fill, warm-up, timed
runs, GB/s over the bytes read and written.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

import numpy as np

from ... import backends, core
from ...common import attr as attrs
from ...common import dt_names, fill, layout, packed
from ...common.check import INT_RANGES, CompareSetup, compare, memory_faults, round_to_dt
from ...engine import case
from ...engine.impl_filter import IMPL_FILTER_OPTIONS, ImplFilter, first_accepting
from ...engine.memory import Guarded, aligned_zeros, poison
from ...engine.options import Option, enum_value, int_value, regex_value
from ...engine.settings import GlobalSettings
from ...errors import ProblemError, UsageError
from ...reports.perf_report import BANDWIDTH, PerfRecord
from ...status import Reason, Status
from ..base import Bound, CaseResult, CaseSteps, Created, RunContext, backend_unsupported
from . import backend_onednn, cfg, ref
from .desc import (DEFAULT_TAG, Dims, Strides, format_strides, parse_dims, parse_strides_option,
                   tag_option, tensor_layout)


def _scales_option(text: str) -> attrs.Scales:
    return attrs.parse_scales(text)


OFLAGS = ("s8s8_comp", "zp_comp")


def _oflag_option(text: str) -> str:
    """--oflag=FLAG:MASK[+...] (benchdnn's compensation flags), canonical text."""
    if not text:
        return ""
    items = []
    for item in text.split("+"):
        flag, _, mask = item.partition(":")
        if flag.lower() not in OFLAGS:
            raise UsageError(f"--oflag={text}: unknown flag `{flag}`; expected "
                             f"{' or '.join(OFLAGS)}")
        if not (mask.isascii() and mask.isdigit()):
            raise UsageError(f"--oflag={text}: `{item}` needs a mask, an integer >= 0 "
                             f"(FLAG:MASK)")
        items.append(f"{flag.lower()}:{int(mask)}")
    return "+".join(items)


CROSS_ENGINES = ("none", "cpu2gpu", "gpu2cpu")


OPTIONS = (
    Option("sdt", dt_names.option("sdt"), "f32", "source data type", is_list=True),
    Option("ddt", dt_names.option("ddt"), "f32", "destination data type", is_list=True),
    Option("stag", tag_option("stag"), layout.parse_tag(DEFAULT_TAG),
           "source format tag (plain, alias, abx/axb, blocked)", is_list=True),
    Option("dtag", tag_option("dtag"), layout.parse_tag(DEFAULT_TAG),
           "destination format tag", is_list=True),
    Option("strides", parse_strides_option, (None, None),
           "SRC:DST plain strides, each S0xS1x...[@OFFSET] or empty", is_list=True),
    Option("oflag", _oflag_option, "", "FLAG:MASK[+...]: compensation the destination "
           "carries (s8s8_comp, zp_comp)", is_list=True),
    Option("runtime-dim-mask", int_value("runtime-dim-mask", 0), 0,
           "dimensions given only at execution (a bit per dimension)", is_list=True),
    Option("cross-engine", enum_value("cross-engine", {c: c for c in CROSS_ENGINES}), "none",
           "none (default), cpu2gpu or gpu2cpu", is_list=True),
    Option("attr-scales", _scales_option, attrs.Scales(),
           "src:common:S+dst:common:S", is_list=True),
    Option("attr-zero-points", attrs.parse_zero_points, attrs.ZeroPoints(),
           "src:common:ZP+dst:common:ZP", is_list=True),
    Option("attr-post-ops", attrs.parse_post_ops, attrs.PostOps(), "sum[:SCALE]",
           is_list=True),
    *attrs.MODE_OPTIONS,
    Option("match", regex_value("match"), None,
           "run only cases whose repro matches this regular expression"),
    *IMPL_FILTER_OPTIONS,
    # Last, so that it expands innermost: each problem's backends run back to back.
    Option("backend", backends.parse, backends.NATIVE,
           "what executes the reorder: native (this project's kernels) or onednn "
           "(oneDNN's reorder primitive)", is_list=True),
)

# --backend -> the module that creates its reorder (unsupported(prb), create(prb, res)),
# other than the native kernels
BACKENDS = {"onednn": backend_onednn}

PERF_FIELDS = frozenset({"sdt", "ddt", "stag", "dtag"})
CSV_PERF_FIELDS = "%sdt%,%ddt%,%stag%,%dtag%"


@dataclasses.dataclass(frozen=True)
class ReorderProblem:
    desc: Dims
    sdt: str
    ddt: str
    stag: layout.Tag
    dtag: layout.Tag
    strides: tuple[Strides, Strides]
    scales: attrs.Scales
    post_ops: attrs.PostOps
    impl_filter: ImplFilter
    src: layout.Layout
    dst: layout.Layout
    backend: str = backends.NATIVE
    zero_points: attrs.ZeroPoints = attrs.ZeroPoints()
    oflag: str = ""
    runtime_dim_mask: int = 0
    cross_engine: str = "none"
    modes: attrs.Modes = attrs.Modes()

    @property
    def desc_text(self) -> str:
        return self.desc.format()

    def repro(self, canonical: bool = False) -> str:
        parts = [f"--backend={self.backend}"] if self.backend != backends.NATIVE else []
        parts.append(f"--sdt={self.sdt} --ddt={self.ddt} --stag={self.stag} --dtag={self.dtag}")
        if self.strides != (None, None):
            parts.append(f"--strides={format_strides(self.strides)}")
        if self.oflag:
            parts.append(f"--oflag={self.oflag}")
        if self.runtime_dim_mask:
            parts.append(f"--runtime-dim-mask={self.runtime_dim_mask}")
        if self.cross_engine != "none":
            parts.append(f"--cross-engine={self.cross_engine}")
        if self.attr_text:
            parts.append(self.attr_text)
        parts.append(self.desc.format(canonical))
        return " ".join(parts)

    @property
    def attr_text(self) -> str:
        parts = [f"--attr-{name}={value}" for name, value in (
            ("scales", self.scales), ("zero-points", self.zero_points),
            ("post-ops", self.post_ops)) if value]
        return " ".join(parts + self.modes.options())

    def scale(self, arg: str) -> float:
        """The common scale of arg (1 when none, or when it has one per point), as its
        type holds it."""
        entry = self.scales.get(arg)
        if entry is None or entry.scale is None:
            return 1.0
        return float(round_to_dt(np.array([entry.scale], np.float32), entry.dt)[0])

    def zero_point(self, arg: str) -> int:
        """The common zero point of arg (0 when none, or when it has one per point)."""
        entry = self.zero_points.get(arg)
        return 0 if entry is None or entry.zp is None else entry.zp

    @functools.cached_property
    def comp(self) -> tuple[tuple[str, ...], int]:
        """The compensations --oflag asks for (core.COMP_ARRAYS names, s8s8 first, as
        they follow the dst data) and their mask; ((), 0) without."""
        if not self.oflag:
            return (), 0
        items = dict(item.split(":") for item in self.oflag.split("+"))
        names = tuple(f"comp_{flag.removesuffix('_comp')}" for flag in ("s8s8_comp", "zp_comp")
                      if flag in items)
        return names, int(next(iter(items.values())))

    def attr_entries(self) -> dict[str, Any]:
        """The per-point attribute arrays (core.REORDER_ARGS names) -> the scale or zero
        point entry each holds (mask, groups, type); common values are not among them."""
        out = {}
        for name, entries, arg in (("src_scales", self.scales, "src"),
                                   ("dst_scales", self.scales, "dst"),
                                   ("src_zps", self.zero_points, "src")):
            entry = entries.get(arg)
            if entry is not None and not entry.is_common:
                out[name] = entry
        return out

    def masks(self) -> dict[str, int]:
        """The per-point attribute arrays, and the compensation, -> their masks over the
        tensor's dims."""
        out = {name: entry.mask_for(len(self.desc.dims))
               for name, entry in self.attr_entries().items()}
        if self.oflag:
            out["comp"] = self.comp[1]
        return out

    @property
    def sum_scale(self) -> float | None:
        sums = [e for e in self.post_ops.entries if isinstance(e, attrs.Sum)]
        return sums[0].scale if sums else None


def make_problem(values: Mapping[str, Any], text: str,
                 settings: GlobalSettings) -> ReorderProblem:
    desc = parse_dims(text)
    strides = values["strides"]
    src = tensor_layout("src", values["stag"], strides[0], desc.dims)
    dst = tensor_layout("dst", values["dtag"], strides[1], desc.dims)
    scales = values["attr-scales"]
    for entry in scales.entries:
        if entry.arg not in ("src", "dst"):
            raise ProblemError(f"--attr-scales={scales}: a reorder has src and dst scales, "
                               f"not `{entry.arg}`")
    dst_scale = scales.get("dst")
    if dst_scale is not None and dst_scale.scale == 0:
        raise ProblemError(f"--attr-scales={scales}: a dst scale of 0 divides by zero")
    zps = values["attr-zero-points"]
    for entry in zps.entries:
        if entry.arg not in ("src", "dst"):
            raise ProblemError(f"--attr-zero-points={zps}: a reorder has src and dst zero "
                               f"points, not `{entry.arg}`")
    ndims = len(desc.dims)
    masks = {int(item.split(":")[1]) for item in values["oflag"].split("+")} \
        if values["oflag"] else set()
    if len(masks) > 1:
        raise ProblemError(f"--oflag={values['oflag']}: both compensations take one mask")
    if masks and max(masks) >> ndims:
        raise ProblemError(f"--oflag={values['oflag']}: mask {max(masks)} names a "
                           f"dimension past the tensor's {ndims}")
    for option, entries in (("scales", scales), ("zero-points", zps)):
        for entry in entries.entries:
            if entry.mask_for(ndims) >> ndims:
                raise ProblemError(f"--attr-{option}={entry}: mask "
                                   f"{entry.mask_for(ndims)} names a dimension past the "
                                   f"tensor's {ndims}")
            if entry.groups and ndims < 2:
                raise ProblemError(f"--attr-{option}={entry}: groups cover the last two "
                                   f"dimensions, and the tensor has {ndims}")
            # a group divides each dimension it covers (in the mask), as oneDNN requires
            for d, k in zip(range(ndims - 2, ndims), entry.groups):
                if entry.mask_for(ndims) >> d & 1 and desc.dims[d] % k:
                    raise ProblemError(f"--attr-{option}={entry}: groups of {k} do not "
                                       f"divide dimension {d} ({desc.dims[d]})")
    return ReorderProblem(desc, values["sdt"], values["ddt"], values["stag"], values["dtag"],
                          strides, scales, values["attr-post-ops"], values["impl_filter"],
                          src, dst, values["backend"], values["attr-zero-points"],
                          values["oflag"], values["runtime-dim-mask"], values["cross-engine"],
                          attrs.modes_of(values))


def unsupported(prb: ReorderProblem) -> tuple[Status, str] | None:
    """What this driver does not implement yet (UNIMPLEMENTED), or None."""
    for option, dt in (("sdt", prb.sdt), ("ddt", prb.ddt)):
        if dt not in cfg.CFG:
            return (Status.UNIMPLEMENTED, f"--{option}={dt}: the reorder kernels take "
                    f"{', '.join(cfg.DTS)}")
    if prb.cross_engine != "none":
        return (Status.UNIMPLEMENTED, f"--cross-engine={prb.cross_engine}: no GPU engine "
                "here")
    for option, entries, dts in (("scales", prb.scales, cfg.SCALE_DTS),
                                 ("zero-points", prb.zero_points, cfg.ZP_DTS)):
        for entry in entries.entries:
            if entry.dt not in dts:
                return (Status.UNIMPLEMENTED, f"--attr-{option}={entry}: {option} are "
                        f"{', '.join(dts)} here")
            if entry.groups and entry.arg != "src":
                return (Status.UNIMPLEMENTED, f"--attr-{option}={entry}: groups on src "
                        "only, as benchdnn's reference reads them")
    for entry in prb.zero_points.entries:
        lo, hi = INT_RANGES[entry.dt]
        if entry.zp is not None and not lo <= entry.zp <= hi:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={entry}: {entry.zp} is "
                    f"outside {entry.dt}'s range [{lo:g}, {hi:g}]")
        if entry.arg == "dst" and not entry.is_common:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={entry}: one dst zero point "
                    "(common), as oneDNN's reorders take")
    if prb.oflag:
        # benchdnn's conditions for compensation (reorder.cpp): not met -> SKIPPED
        ndims = len(prb.desc.dims)
        masks_ok = all(e.mask_for(ndims) == prb.comp[1] for e in prb.scales.entries
                       if not e.is_common)
        if (prb.ddt != "s8" or prb.zero_points or prb.post_ops or prb.runtime_dim_mask
                or not masks_ok):
            return Status.SKIPPED, Reason.CASE_NOT_SUPPORTED.value
    # (a user scratchpad: the kernels need no work memory, so theirs is 0 bytes)
    modes = prb.modes.verdict(prb.backend, native=frozenset({"scratchpad"}))
    if modes:
        return modes
    entries = prb.post_ops.entries
    if any(not isinstance(e, attrs.Sum) or e.zero_point or e.dt for e in entries):
        return Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: only sum[:SCALE]"
    if len(entries) > 1:
        return Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: one sum at most"
    return None


def jobs(prb: ReorderProblem) -> list:
    """The loop nests over src, dst and the per-point attribute arrays (in
    core.REORDER_ARGS order), then the zero jobs of dst's padding."""
    masks = prb.masks()
    args = tuple(layout.broadcast_layout(prb.desc.dims, masks[name])
                 for name in core.REORDER_ARGS if name in masks)
    return layout.copy_jobs(prb.src, prb.dst, args) + layout.zero_jobs(prb.dst)


def create(prb: ReorderProblem, res: CaseResult) -> core.ReorderPrimitive | None:
    """The first implementation, in the table's order, that the CPU runs and the filter
    allows; sets SKIPPED/UNIMPLEMENTED otherwise. With runtime dimensions the primitive is
    created without its loop nests: prepare() builds them for the buffers it binds."""
    fault = core.active_op_fault()
    nests = []
    with res.timers("create_pd"):
        try:
            if prb.runtime_dim_mask:
                layout.check_nesting(prb.src, prb.dst)   # what the tags alone decide
            else:
                nests = jobs(prb)
        except layout.BlocksDoNotNest as exc:
            res.status, res.reason = Status.UNIMPLEMENTED, str(exc)
            return None
    attr = core.ReorderAttr(prb.sdt, prb.ddt, prb.scale("src"), prb.scale("dst"),
                            prb.sum_scale is not None, prb.sum_scale or 1.0,
                            prb.zero_point("src"), prb.zero_point("dst"),
                            frozenset(prb.masks()))
    return first_accepting(core.reorder_impls(), prb.impl_filter,
                           lambda impl: core.ReorderPrimitive(impl, attr, nests, fault), res)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    src: np.ndarray                  # the src buffer (physical, sdt; 4-bit: packed bytes)
    dst: Guarded                     # the dst buffer (physical, ddt; 4-bit: packed bytes)
    # per-point attribute arrays (core.REORDER_ARGS names), shaped to broadcast over dims
    arrays: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    # the compensations (core.COMP_ARRAYS names): views of the dst buffer past its data
    comp: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    src_vals: np.ndarray | None = None   # logical f32 values (correctness)
    prior: np.ndarray | None = None      # logical prior dst (sum)
    before: np.ndarray | None = None     # dst elements before the run (the untouched check)


def prepare(prb: ReorderProblem, prim: core.ReorderPrimitive, perf: bool) -> Buffers:
    if prb.runtime_dim_mask:
        # created without its dims: the loop nests follow the buffers bound now
        prim = core.ReorderPrimitive(prim.impl, prim.attr, jobs(prb), prim.fault)
    src_buf = aligned_zeros(*packed.storage(prb.sdt, prb.src.size))
    n_dst, ddt_np = packed.storage(prb.ddt, prb.dst.size)
    names, mask = prb.comp
    if names:
        # oneDNN's dst memory with compensation: the s8 data, then from the next multiple
        # of 4 bytes each compensation's s32 values (s8s8 first), in one guarded buffer
        n_comp = cfg.comp_count(prb.desc.dims, mask)
        start = -(-n_dst // 4) * 4
        dst = Guarded(start + 4 * n_comp * len(names), poison(np.uint8), np.uint8)
        whole = dst.array
        dst.array = whole[:n_dst].view(ddt_np)
        comp = {name: whole[start + 4 * n_comp * k:start + 4 * n_comp * (k + 1)]
                .view(np.int32) for k, name in enumerate(names)}
    else:
        dst, comp = Guarded(n_dst, poison(ddt_np), ddt_np), {}
    ndims = len(prb.desc.dims)
    arrays = {name: cfg.attr_values(name, e.mask_for(ndims), prb.desc.dims, e.groups, e.dt)
              for name, e in prb.attr_entries().items()}
    bound = {"run": prim.bind(src_buf, dst.array,
                              **{name: a.ravel() for name, a in arrays.items()}, **comp),
             "outs": (dst,), "breach_reason": "wrote outside the dst buffer"}
    n, shape = prb.src.nelems, prb.desc.dims
    if perf:
        packed.place(src_buf, prb.src, prb.sdt,
               cfg.perf_values(n, fill.Kind.SRC, prb.sdt).reshape(shape))
        if prb.sum_scale is not None:
            packed.place(dst.array, prb.dst, prb.ddt,
                   cfg.perf_values(n, fill.Kind.DST, prb.ddt).reshape(shape))
        return Buffers(src=src_buf, dst=dst, arrays=arrays, comp=comp, **bound)
    bufs = Buffers(src=src_buf, dst=dst, arrays=arrays, comp=comp,
                   src_vals=cfg.fill_src(n, prb.sdt).reshape(shape), **bound)
    packed.place(src_buf, prb.src, prb.sdt, bufs.src_vals)
    if prb.sum_scale is not None:
        bufs.prior = cfg.fill_dst(n, prb.ddt).reshape(shape)
        packed.place(dst.array, prb.dst, prb.ddt, bufs.prior)
    bufs.before = packed.elements(dst.array, prb.dst, prb.ddt).copy()
    return bufs


def reference(prb: ReorderProblem, bufs: Buffers) -> np.ndarray:
    a = bufs.arrays
    with np.errstate(all="ignore"):
        return ref.reorder(bufs.src_vals, a.get("src_scales", prb.scale("src")),
                           a.get("dst_scales", prb.scale("dst")), prb.sum_scale, bufs.prior,
                           a.get("src_zps", prb.zero_point("src")), prb.zero_point("dst"))


def judge(prb: ReorderProblem, bufs: Buffers, exp: np.ndarray, res: CaseResult,
          verbose: int) -> None:
    """The three checks of the module docstring; the first that fails names the verdict."""
    out = packed.elements(bufs.dst.array, prb.dst, prb.ddt)
    got = out[prb.dst.offset_table()]
    if prb.ddt in core.PACKED_DTS:
        got = packed.values(got, prb.ddt)
    setup = CompareSetup("DST", cfg.TRH, cfg.ZERO_TRUST_PERCENT,
                         integral=prb.ddt in cfg.INTEGRAL,
                         allow_nans=prb.ddt in cfg.NAN_OUTPUTS, dt=prb.ddt,
                         eps=float(np.finfo(np.float32).eps))
    verdict = compare(exp, got, setup)
    res.take_verdict(verdict, prb.desc.dims, verbose)
    res.take_memory_fault(memory_faults("DST", prb.dst, out, bufs.before))
    names, mask = prb.comp
    if names and res.status is not Status.FAILED:
        # each compensation from the reference values, as the s8 dst stores them
        sums = cfg.comp_sums(verdict.exp.reshape(prb.desc.dims), mask)
        for name in names:
            want = sums * (-128 if name == "comp_s8s8" else -1)
            bad = np.flatnonzero(bufs.comp[name] != want)
            if bad.size:
                res.status = Status.FAILED
                res.reason = (f"{name.removeprefix('comp_')} compensation wrong at "
                              f"{bad.size} of {want.size} values")
                res.diagnostics.append(
                    f"[COMP][{name}] at {', '.join(map(str, bad[:10]))}: expected "
                    f"{', '.join(map(str, want[bad[:10]]))}, got "
                    f"{', '.join(map(str, bufs.comp[name][bad[:10]]))}")
                break


def _bytes_of(dt: str, n: int) -> int:
    return packed.nbytes(n) if dt in core.PACKED_DTS else n * core.numpy_dtype(dt).itemsize


def perf_record(prb: ReorderProblem, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float]) -> PerfRecord:
    # bytes crossing memory per run: every logical src point read, every dst point
    # (padding included) written, and read too with sum
    obytes = _bytes_of(prb.ddt, prb.dst.padded_nelems)
    ibytes = _bytes_of(prb.sdt, prb.src.nelems) + (obytes if prb.sum_scale is not None else 0)
    text = {
        "engine": "cpu", "impl": impl, "name": prb.desc.name, "driver": "reorder",
        "prb": f"{ctx.settings.repro_prefix()}--reorder {prb.repro(ctx.settings.canonical)}",
        "desc": prb.desc.format(ctx.settings.canonical), "sdt": prb.sdt, "ddt": prb.ddt,
        "stag": str(prb.stag), "dtag": str(prb.dtag), "attr": prb.attr_text,
    }
    # %eff%: the share of this machine's measured copy bandwidth (a reorder moves bytes)
    return PerfRecord(text, float(prb.src.nelems), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, 0, limit=BANDWIDTH)


def _shown(prb: ReorderProblem, k: int) -> str:
    """A tensor's layout for -v5: the tag as given = its canonical form (any shows the
    layout it became), or the strides; then the padded dims."""
    tag, lay = (prb.stag, prb.src) if k == 0 else (prb.dtag, prb.dst)
    if prb.strides[k] is not None:
        return f"strides {lay.describe()} {lay.padded_dims}"
    chosen = layout.parse_tag(DEFAULT_TAG) if tag.is_any else tag
    return f"{tag}={chosen.canonical(lay.ndims)} {lay.padded_dims}"


class Steps(CaseSteps):
    driver = "reorder"

    reference = staticmethod(reference)
    judge = staticmethod(judge)

    def unsupported(self, prb: ReorderProblem) -> tuple[Status, str] | None:
        """What the reference and the native kernels take, then the backend's limits."""
        return unsupported(prb) or backend_unsupported("reorder", prb, BACKENDS)

    def footprint(self, prb: ReorderProblem) -> int:
        # buffers, offset tables (int64) and compare temporaries, per element
        return prb.src.size * 8 + prb.dst.size * 8 + prb.src.nelems * 64

    def tensor_bytes(self, prb: ReorderProblem, prim: Created) -> int:
        return _bytes_of(prb.sdt, prb.src.size) + _bytes_of(prb.ddt, prb.dst.size)

    def create(self, prb: ReorderProblem, res: CaseResult) -> Created | None:
        make = create if prb.backend == backends.NATIVE else BACKENDS[prb.backend].create
        prim = make(prb, res)
        return None if prim is None else Created(prim)

    def layouts(self, prb: ReorderProblem, prim: Created) -> str:
        return f"src {_shown(prb, 0)} dst {_shown(prb, 1)}"

    def prepare(self, prb: ReorderProblem, prim: Created, perf: bool) -> Buffers:
        return prepare(prb, prim.prim, perf)

    def perf_record(self, prb: ReorderProblem, ctx: RunContext, impl: str,
                    times: list[float], create_s: tuple[float, float],
                    bound: Buffers) -> PerfRecord:
        return perf_record(prb, ctx, impl, times, create_s)


STEPS = Steps()


def run(prb: ReorderProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
