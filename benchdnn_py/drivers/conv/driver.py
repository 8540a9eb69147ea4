"""The convolution driver's steps of a case (engine/case.py runs them): its blockers, the
memory it needs, fill, reference, compare and perf record; the options and the problem
are problem.py's.

Case flow (correctness): the backend (--backend: backend_native.py, backend_torch.py)
creates an executor,
which resolves each tensor's memory layout (--stag/--wtag/--dtag/--strides, `any` to its
own; formats.py) -> fill src/wei/bias in the plain logical layout -> reorder them into
their layouts (untimed) -> bind (native: pack the weights for the kernels, and the
+reorder route for layouts they lack; torch: wrap the arrays as tensors) -> execute ->
collect into NaN-poisoned, guarded outputs of their layouts' sizes -> reference ->
compare every point read through its layout (--check=sampled: the reference computes,
and the compare checks, N points drawn per output tensor), then the outputs' padded
tails and strides' gaps. Performance: fill with reals, warm up, time each run of the
executor's timed callable. The deconvolution driver's steps are these with its own fill,
reference and native backend.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ... import core
from ...backends import Executor
from ...common import check, eltwise, fill, layout, reorders
from ...common.attr import Sum
from ...common.check import CompareSetup, compare, diagnostics, draw_points
from ...common.direction import Dir
from ...common.post_ops import (fill_src1, has_comparison, nans_possible, src1_bytes, src1_dims,
                                src1_entries)
from ...engine import case
from ...engine.memory import Guarded
from ...reports.perf_report import PerfRecord
from ...status import Status
from ..base import Bound, CaseResult, CaseSteps, RunContext
from . import backend_native, backend_onednn, backend_torch, cfg, formats
from . import dt as dtypes
from .attrs import (Quant, dw_invalid, post_ops_invalid, quant_of, src1_unsupported,
                    sum_dt_unsupported)
from .policy import WINO_NEEDS, ran_alg, wino_unmet
from .prim import (Layouts, Tensor, direction_chain, dw_shape_of, layout_of, logical_dims,
                   in_type, operand_class, out_dt, output_names, outputs,
                   primitive_inputs, src1_dims_by_entry, tensor_dts, tensors)
from .problem import ConvProblem
from .ref import reference


def unsupported(prb: ConvProblem) -> tuple[Status, str] | None:
    """Why this problem cannot run, or None (its backend's limits: Steps.unsupported)."""
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
            or src1_unsupported(prb, src1_dims_by_entry(prb))
            or sum_dt_unsupported(prb)
            or prb.modes.verdict(prb.backend, native=frozenset({"scratchpad"}))
            or dw_invalid(prb))


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
    for option, entries in (("scales", prb.scales), ("zero-points", prb.zero_points)):
        for e in entries.entries:
            if e.arg.startswith("attr_post_op_dw"):
                # the dw post-op's own scales (oneDNN 3.x): weights common or per_oc, dst
                # common, f32; its zero points are not implemented
                own_scale = option == "scales" and e.dt == "f32" and not e.groups and (
                    e.is_common or (e.arg == "attr_post_op_dw_wei" and e.policy == "per_oc"))
                if not own_scale:
                    return (Status.UNIMPLEMENTED, f"--attr-{option}={entries}: the "
                            "depthwise post-op takes its own common or per_oc f32 weights "
                            "scales and common f32 dst scale here")
                if prb.dw is None:
                    return (Status.INVALID_ARGUMENTS, f"--attr-{option}={entries}: "
                            f"{e.arg} without a dw post-op")
                continue
            if e.arg not in ("src", "wei", "dst"):
                return (Status.INVALID_ARGUMENTS, f"--attr-{option}={entries}: a "
                        f"{prb.desc.kind}olution has no argument {e.arg}")
    for arg in ("src", "dst"):
        entry = prb.scales.get(arg) if prb.scales else None
        if entry is not None and (not entry.is_common or entry.dt != "f32"):
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: {arg} scales are "
                    "common f32 values here")
    wei = prb.scales.get("wei") if prb.scales else None
    if wei is not None and (not (wei.is_common or wei.policy == "per_oc") or wei.dt != "f32"):
        return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: weights scales are "
                "common or per_oc f32 values here")
    for arg in ("src", "dst"):
        entry = prb.zero_points.get(arg) if prb.zero_points else None
        if entry is None or entry.is_common:
            continue
        if entry.mask_for(len(logical_dims(prb.desc)["dst"])) != 2 or not prb.dir.forward:
            return (Status.UNIMPLEMENTED, f"--attr-zero-points={prb.zero_points}: {arg} "
                    "zero points are common, or per channel (per_dim_1) in forward, here")
    return dtypes.attr_unsupported(prb.dir, prb.dt, oscale=prb.oscale, scales=prb.scales,
                                   zero_points=prb.zero_points)


def fill_prior_dst(prb, t: dict[str, Tensor], perf: bool) -> np.ndarray:
    """The destination's contents before a sum post-op reads them (reference 6.4), in the
    case's dst range (cfg.fill_ranges: wider on Winograd cases, so the sum shows)."""
    n = math.prod(t["dst"].shape)
    if perf:
        return fill.real_fill(n, fill.Kind.DST, *cfg.CFG[prb.dt[2]].perf)
    _, sparse, other, n_acc = direction_chain(prb.dir, prb.shape)
    return fill.int_fill(n, fill.Kind.DST, *case_fill_ranges(prb, sparse, other, n_acc).dst)


def sum_reads(prb, prior: np.ndarray) -> np.ndarray:
    """The prior dst as the sum reads it: with a data type of its own (`sum:1:0:u8` on an
    s8 dst), the stored values' bits reinterpreted as that type."""
    dst_dt = tensor_dts(prb)["dst"]
    sum_dt = next((e.dt for e in prb.post_ops.entries if isinstance(e, Sum)), "")
    if not sum_dt or sum_dt == dst_dt:
        return prior
    stored = prior.astype(core.numpy_dtype(dst_dt))
    return stored.view(core.numpy_dtype(sum_dt)).astype(np.float32)


def case_fill_ranges(prb, sparse: str, other: str, n_acc: int) -> cfg.FillRanges:
    """cfg.fill_ranges for a case: its types, and Winograd's ranges on a Winograd case."""
    return cfg.fill_ranges(prb.dt, tensor_dts(prb)["bia"], out_dt(prb), n_acc, (sparse, other),
                           wino=prb.alg == "wino")


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
        if name == "src" and q is not None and (q.src_zp or q.src_zps is not None):
            # A src zero point (common, or per channel) shifts the drawn values, so that
            # src - zp is the drawn integer (saturated to the type, as the buffer holds it).
            lo, hi = check.INT_RANGES.get(dts["src"], (-np.inf, np.inf))
            shape = t[name].shape
            data = data.reshape(shape)   # (in place: no copies of a large src)
            data += q.src_zero_point(len(shape))
            np.clip(data, lo, hi, out=data)
        out[name] = data.reshape(t[name].shape)
    return out


def fill_inputs(prb, t: dict[str, Tensor], perf: bool, q: Quant | None = None
                ) -> dict[str, np.ndarray]:
    names, sparse, other, n_acc = direction_chain(prb.dir, prb.shape)
    out = fill_tensors(prb, t, names, sparse, other, n_acc, perf, q)
    if prb.dw is not None:
        out.update(fill_dw(prb, t, perf))
    return out


def dw_inputs(prb) -> list[str]:
    """The depthwise step's inputs: its weights, and its bias where the direction has one
    (none without a dw post-op)."""
    if prb.dw is None:
        return []
    return ["dw_wei"] + (["dw_bia"] if prb.dir.with_bias else [])


def fill_dw(prb, t: dict[str, Tensor], perf: bool) -> dict[str, np.ndarray]:
    """The depthwise step's inputs (dw_inputs): their own kinds and seeds, the ranges of
    their types (cfg.CFG's dw_wei and bia)."""
    dts = tensor_dts(prb)
    out = {}
    for name in dw_inputs(prb):
        n, row = math.prod(t[name].shape), cfg.CFG[dts[name]]
        if perf:
            data = fill.real_fill(n, t[name].kind, *row.perf)
            data = np.rint(data) if dts[name] in check.INT_RANGES else data
        else:
            data = fill.int_fill(n, t[name].kind, *(row.dw_wei if name == "dw_wei" else row.bia))
        out[name] = data.reshape(t[name].shape)
    return out


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


def compare_setups(prb, q: Quant | None = None) -> dict[str, CompareSetup]:
    """How each output tensor is compared: output type, threshold and zero trust
    (reference 6.6 to 6.8). Eltwise post-ops bring their tolerance from the eltwise
    table, benchdnn's rules 8 and 9, NaN/Inf where the formula can produce them, and
    relaxed zero trust after negative-to-zero functions or into u8."""
    desc, dts = prb.desc, tensor_dts(prb)
    exceeds = any(o > i for o, i in zip(desc.o, desc.i))
    in_pts, out_pts = math.prod(desc.i), math.prod(desc.o)
    elts = prb.post_ops.eltwise
    zeroing = (any(eltwise.zeroes_negatives(e.name, e.alpha) for e in elts)
               or dts["dst"] == "u8" or has_comparison(prb.post_ops))

    wino = prb.alg == "wino"   # (auto: resolved by then, see _execute)

    def setup(kind: str, name: str, ztp: float, **kw) -> CompareSetup:
        dt = dts[name]
        trh = cfg.CFG[dt].wino_trh if wino else cfg.CFG[dt].trh
        return CompareSetup(kind, trh, ztp, integral=dt in check.INT_RANGES,
                            eps=cfg.eps(dt), dt=dt, norm_fallback=wino, **kw)
    dst = setup("DST", "dst", cfg.dst_zero_trust_percent(exceeds or zeroing),
                allow_nans=nans_possible(prb.post_ops) or dts["dst"] == "f16",
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
        got = reorders.read(outs[name].array, layout_of(t, layouts, name), at)
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


# Bytes per compared point beyond its output buffer: the f64 reference value, its
# conversion to the output's type, and the compare's temporaries (check.compare holds
# about eight f32 or bool arrays of its size); set from measured peaks (int8 forward
# needs the most), with room.
REF_BYTES_PER_POINT = 56
# Bytes per padded point of an output in a blocked layout while the judge checks that
# its padding is zero (the offsets of the padded points and the tests on them), measured.
PADDING_CHECK_BYTES = 32


def footprint_bytes(prb, shape: core.ConvShape, layouts: Layouts | None = None) -> int:
    """What a correctness case allocates at its peak, about: what it holds from its fill
    to its verdict, and the largest of its steps' temporaries. layouts: each tensor's
    memory (None or absent: plain); the requested ones before creation, the ones the
    primitive resolved after it. The primitive's own memory (packed weights, scratch, a
    route's plain copies) is its memory_bytes.

    held: each input as the f32 values it was filled from, and its memory unless that is
      the same array (plain f32): the input in its type, as large as its layout; each
      output as large as its layout, and the contents of its strides' gaps before
      execution; a sum's prior dst (f32); binary and prelu inputs (16 bytes a point).
    temporaries, one step at a time:
      prepare: the plain copy in its type of each input placed into another layout (and
        an f64 input's offset table), and the sum's prior dst in the dst's type (twice
        with a sum type of its own);
      reference: src less a zero point, and REF_BYTES_PER_POINT for each point computed
        (all, or N per output with --check=sampled:N; with a dw post-op, those of the 1x1
        output the depthwise taps read too);
      judge: the reference's values still, and per output read back whole from another
        layout its offset table and values, checking its padding PADDING_CHECK_BYTES a
        padded point, checking its gaps four bytes per position and its offset table."""
    dts = tensor_dts(prb)
    t = tensors(prb.desc, shape, dw_shape_of(prb))
    item = {name: core.numpy_dtype(dt).itemsize for name, dt in dts.items()}
    size = {name: math.prod(tensor.shape) for name, tensor in t.items()}
    lays = {name: layout_of(t, layouts, name) for name in t}
    plain = {name: lay.same_memory(layout.plain(lay.dims)) for name, lay in lays.items()}
    inputs = direction_chain(prb.dir, shape)[0] + dw_inputs(prb)
    outs = output_names(prb.dir)
    held = prepare = 0
    for n in inputs:
        held += 4 * size[n]
        if not plain[n] or dts[n] != "f32":
            held += item[n] * lays[n].size
        if not plain[n] and dts[n] != "f32":   # (f64 is placed by an offset table)
            prepare += (item[n] + (16 if dts[n] in core.DOUBLE_DTS else 0)) * size[n]
    for n in outs:
        held += item[n] * lays[n].size * (2 if check.has_gaps(lays[n]) else 1)
    sums = [e for e in prb.post_ops.entries if isinstance(e, Sum)]
    if sums:
        held += 4 * size["dst"]
        prepare += item["dst"] * size["dst"] + (
            (item["dst"] + 4) * size["dst"] if sums[0].dt not in ("", dts["dst"]) else 0)
    applies_to = src1_dims_by_entry(prb, t["dst"].logical)
    held += sum(16 * math.prod(src1_dims(e, applies_to[i]))
                for i, e in src1_entries(prb.post_ops))
    points = prb.check.points
    computed = {n: size[n] if points is None else min(points, size[n]) for n in outs}
    ref = REF_BYTES_PER_POINT * sum(computed.values())
    if prb.dw is not None:   # the 1x1 output: whole, or where the depthwise taps read
        taps = math.prod(prb.dw_shape.k)
        ref += REF_BYTES_PER_POINT * (math.prod(shape.dst_shape) if points is None
                                      else min(taps * computed["dst"],
                                               math.prod(shape.dst_shape)))
    shifted = 4 * size["src"] if prb.dir.forward and prb.zero_points.get("src") else 0
    judge = 0
    for n in outs:
        lay = lays[n]
        read = (8 + item[n]) * size[n] if points is None and not plain[n] else 0
        padding = PADDING_CHECK_BYTES * (lay.padded_nelems - lay.nelems)
        gaps = 4 * lay.size + 8 * size[n] if check.has_gaps(lay) else 0
        judge = max(judge, read, padding + gaps)
    return int(held + max(prepare, shifted + ref, ref + judge))


def tensor_bytes(prb, shape: core.ConvShape, layouts: Layouts | None) -> tuple[int, int]:
    """Bytes of the forward inputs (src, wei, bias; a dw post-op's weights and bias) and
    output (dst) in their layouts, padded points included."""
    size = {name: core.numpy_dtype(dt).itemsize for name, dt in tensor_dts(prb).items()}
    t = tensors(prb.desc, shape, dw_shape_of(prb))
    lays = {name: layout_of(t, layouts, name) for name in ("src", "wei", "dst")}
    with_bias = prb.dir.with_bias
    ibytes = int(size["src"] * lays["src"].padded_nelems
                 + size["wei"] * lays["wei"].padded_nelems
                 + (size["bia"] * shape.oc if with_bias else 0))
    if prb.dw is not None:   # the depthwise step's weights and bias are inputs too
        ibytes += size["dw_wei"] * math.prod(t["dw_wei"].shape)
        ibytes += size["dw_bia"] * shape.oc if with_bias else 0
    # binary and prelu inputs
    ibytes += src1_bytes(prb.post_ops, src1_dims_by_entry(prb, t["dst"].logical))
    return ibytes, int(size["dst"] * lays["dst"].padded_nelems)


def perf_record(driver: str, prb, ctx: RunContext, impl: str, times: list[float],
                create_s: tuple[float, float], shape: core.ConvShape, ops: int,
                layouts: Layouts | None = None) -> PerfRecord:
    """The perf line's fields; %stag% %wtag% %dtag% name the layouts the case ran on
    (`any` resolved to the implementation's choice), and bytes count padded points."""
    t = tensors(prb.desc, shape, dw_shape_of(prb))
    lays = {name: layout_of(t, layouts, name) for name in ("src", "wei", "dst")}
    ibytes, obytes = tensor_bytes(prb, shape, layouts)
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
    return PerfRecord(text, float(ops), ibytes, obytes, times,
                      (create_s[0] * 1e3, create_s[1] * 1e3), ctx.idx, prb.user_mb,
                      limit=operand_class(prb),
                      memory_bound=shape.g > 1 and shape.g == shape.ic == shape.oc,
                      threads=prb.threads)


@dataclasses.dataclass(kw_only=True)
class Buffers(Bound):
    """A case's tensors: the inputs as exact f32 values (for the reference), the prior dst
    of a sum, what the gaps of non-dense strides held, and the guarded outputs."""

    filled: Any                          # the problem as filled (auto resolved to its alg)
    t: dict[str, Tensor]
    lays: Layouts
    q: Quant
    inputs: dict[str, np.ndarray]
    outputs: dict[str, Guarded]
    prior: np.ndarray | None = None
    before: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


def layouts_text(prb, layouts: Layouts, t: dict[str, Tensor]) -> str:
    """The layouts a case runs on, for -v5: `src any=abcd wei OIhw16i16o=ABcd16b16a ...`."""
    return " ".join(f"{name} {formats.shown(prb.formats, name, layout_of(t, layouts, name))}"
                    for name in formats.OPTIONS)


class Steps(CaseSteps):
    """The convolution case's steps; deconvolution overrides fill and reference."""

    driver = "conv"
    # --backend -> the module that creates its executor (unsupported(prb), create(prb, res))
    backends = {"native": backend_native, "torch": backend_torch,
                "onednn": backend_onednn}

    def unsupported(self, prb) -> tuple[Status, str] | None:
        """The problem itself, then what its backend cannot run."""
        return unsupported(prb) or self.backends[prb.backend].unsupported(prb)

    def footprint(self, prb) -> int:
        return footprint_bytes(prb, prb.shape, prb.requested_layouts)

    def estimate(self, prb, prim: Executor) -> int:
        return footprint_bytes(prb, prb.shape, prim.layouts) + prim.memory_bytes

    def tensor_bytes(self, prb, prim: Executor) -> int:
        return sum(tensor_bytes(prb, prb.shape, prim.layouts))

    def threads(self, prb) -> int:
        return prb.threads

    def create(self, prb, res: CaseResult) -> Executor | None:
        return self.backends[prb.backend].create(prb, res)

    def layouts(self, prb, prim: Executor) -> str:
        return layouts_text(prb, prim.layouts, tensors(prb.desc, prb.shape, dw_shape_of(prb)))

    def fill(self, prb, t: dict[str, Tensor], perf: bool, q: Quant) -> dict[str, np.ndarray]:
        """The inputs as exact f32 values."""
        return fill_inputs(prb, t, perf, q)

    def compute(self, prb, inputs: dict[str, np.ndarray], q: Quant, prior,
                points) -> dict[str, np.ndarray]:
        """The reference outputs, whole or at each output's points (sample_points)."""
        return reference(prb, inputs, q, prior, points)

    def prepare(self, prb, prim: Executor, perf: bool) -> Buffers:
        # --alg=auto is resolved from the created primitive before filling (reference
        # 3.1): the fill and the compare follow the algorithm that runs; the repro keeps
        # auto.
        filled = prb if prb.alg != "auto" else dataclasses.replace(prb, alg=ran_alg(prim.name))
        shape, lays = prb.shape, prim.layouts
        t = tensors(prb.desc, shape, dw_shape_of(prb))
        q = quant_of(prb, shape.oc)
        outs = outputs(prb, t, lays)
        dst_dt = tensor_dts(prb)["dst"]
        has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
        inputs = self.fill(filled, t, perf, q)
        inputs.update(fill_src1(prb.post_ops, src1_dims_by_entry(prb, t["dst"].logical)))
        prior = None
        before: dict[str, np.ndarray] = {}
        if perf:
            if has_sum:
                reorders.place_into(fill_prior_dst(prb, t, perf=True).astype(core.numpy_dtype(dst_dt)),
                                    layout_of(t, lays, "dst"), dst_dt, outs["dst"].array)
        else:
            prior = fill_prior_dst(filled, t, perf=False) if has_sum else None
            if prior is not None:   # the sum reads it; the execution overwrites it
                reorders.place_into(in_type(prior, dst_dt), layout_of(t, lays, "dst"),
                                    dst_dt, outs["dst"].array)
                prior = sum_reads(prb, prior)
            # what the gaps of non-dense strides held (poison, never written by anyone)
            before = {name: out.array.copy() for name, out in outs.items()
                      if check.has_gaps(layout_of(t, lays, name))}
        run_once, collect = prim.bind(primitive_inputs(prb, inputs, t, lays), outs)
        return Buffers(run=run_once, collect=collect, outs=tuple(outs.values()),
                       filled=filled, t=t, lays=lays, q=q, inputs=inputs, outputs=outs,
                       prior=prior, before=before)

    def reference(self, prb, bound: Buffers):
        points = sample_points(prb, self.driver, bound.t)
        return self.compute(prb, bound.inputs, bound.q, bound.prior, points), points

    def judge(self, prb, bound: Buffers, expected, res: CaseResult, verbose: int) -> None:
        refs, points = expected
        judge(res, refs, bound.outputs, bound.t, compare_setups(bound.filled, bound.q),
              verbose, points, bound.lays)
        judge_memory(res, bound.outputs, bound.t, bound.lays, bound.before)

    def perf_record(self, prb, ctx: RunContext, impl: str, times: list[float],
                    create_s: tuple[float, float], bound: Buffers) -> PerfRecord:
        return perf_record(self.driver, prb, ctx, impl, times, create_s, prb.shape, prb.ops,
                           bound.lays)


STEPS = Steps()


def run(prb: ConvProblem, ctx: RunContext) -> CaseResult:
    return case.run(prb, ctx, STEPS)
