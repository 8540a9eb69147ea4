"""Convolution attributes: which post-op chains, scales and zero points are valid and
which the kernels take, the kernels' post-op entries, and the quantization (scales, zero
points) the reference applies."""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import core
from ...common import eltwise, fill
from ...common.post_ops import (DimsArg, apply_src1, entry_dims, kernel_entry,
                                 src1_unsupported as src1_verdict)
from ...common.attr import Binary, Depthwise, Eltwise, PostOps, Prelu, Sum
from ...common.direction import Dir
from ...status import Status
from . import dt as dtypes


# The types a sum may read a destination of each type as (its bits reinterpreted: one
# size).
SUM_DTS = {"s8": ("s8", "u8"), "u8": ("u8", "s8"), "s32": ("s32", "f32"),
           "f32": ("f32", "s32"), "bf16": ("bf16", "f16"), "f16": ("f16", "bf16")}


def sum_dt_unsupported(prb) -> tuple[Status, str] | None:
    """A sum that reinterprets the destination: the native kernels' only."""
    for e in prb.post_ops.entries:
        if isinstance(e, Sum) and e.dt and e.dt != prb.dt[2] and prb.backend != "native":
            return (Status.UNIMPLEMENTED, f"`{e}`: the {prb.backend} backend does not "
                    "reinterpret the destination for a sum")
    return None


def post_ops_invalid(post_ops: PostOps, direction: Dir,
                     dt: tuple[str, str, str] = ("f32", "f32", "f32")) -> tuple[Status, str] | None:
    """What the spec rules out whatever runs it: post-ops on a backward pass, and the
    int8-only parameter (the sum's zero point) on other types. The eltwise scale is the
    post-ops page's dst = scale * f(...) for every type (benchdnn 3.x parses and drops it;
    DNNL 1.x applied it: this tool applies it, as the spec writes)."""
    if not post_ops:
        return None
    if not direction.forward:
        return (Status.UNIMPLEMENTED, "post-ops apply to forward propagation only: the "
                "fused result keeps no intermediate for the backward pass")
    if "f64" in dt:   # oneDNN's f64 convolution takes none either
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={post_ops}: the f64 convolution "
                "takes no post-ops")
    int8 = dtypes.is_int8(dt)
    sums = [e for e in post_ops.entries if isinstance(e, Sum)]
    if len(sums) > 1 and any(e.dt and e.dt != dt[2] for e in sums):
        return (Status.UNIMPLEMENTED, f"`{post_ops}`: a sum that reinterprets the "
                "destination is the chain's only sum here")
    for e in post_ops.entries:
        if isinstance(e, Sum) and e.zero_point and not int8:
            return Status.UNIMPLEMENTED, f"`{e}`: a sum zero point is for int8 convolutions only"
        if isinstance(e, Sum) and e.dt and e.dt not in SUM_DTS.get(dt[2], (dt[2],)):
            return (Status.INVALID_ARGUMENTS, f"`{e}`: a sum data type reads the "
                    f"destination's bits as that type: one of {dt[2]}'s size "
                    f"({', '.join(SUM_DTS.get(dt[2], (dt[2],)))})")
    return None


def src1_unsupported(prb, dst_dims: DimsArg) -> tuple[Status, str] | None:
    """Binary and prelu entries the problem or the kernels cannot run (post_ops.py's
    verdict; dst_dims: per entry with a dw entry, src1_dims_by_entry)."""
    return src1_verdict(prb.post_ops, dst_dims, prb.backend)


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
    if not all(isinstance(e, (Eltwise, Binary, Prelu, Depthwise)) for e in chain.entries):
        return (Status.UNIMPLEMENTED, f"`{chain}`: only eltwise, binary and prelu post-ops "
                "may sit beside the depthwise post-op (the spec: sum is not supported with "
                "it)")
    if prb.dt[0] == "f32" and prb.dt[1] != "f32":
        return (Status.UNIMPLEMENTED, f"`{dw}`: depthwise fusion with {prb.dt[1]} weights "
                "on f32 activations is not implemented")
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


def kernel_post_ops(post_ops: PostOps, dst_dt: str = "f32",
                    dst_dims: DimsArg = ()) -> tuple[core.PostOp, ...]:
    """The chain in the C core's terms (dst_dt: the convolution's, for a dw entry;
    dst_dims: the logical dims of the tensor binary and prelu entries apply to, per entry
    with a dw entry, src1_dims_by_entry)."""
    ops = []
    for i, e in enumerate(post_ops.entries):
        if isinstance(e, Eltwise):
            ops.append(kernel_entry(e, ()))
        elif isinstance(e, (Binary, Prelu)):
            ops.append(kernel_entry(e, entry_dims(dst_dims, i)))
        elif isinstance(e, Depthwise):
            wei, bia, out = dtypes.dw_types(dst_dt, e.dst_dt)
            ops.append(core.PostOp(core.PostKind.DW, dw_k=e.k, dw_s=e.s, dw_p=e.p,
                                   dw_wei_dt=wei, dw_bia_dt=bia, dw_dst_dt=out))
        else:
            ops.append(core.PostOp(core.PostKind.SUM, scale=e.scale, zero_point=e.zero_point,
                                   sum_dt=e.dt if e.dt != dst_dt else ""))
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
    src_zps: np.ndarray | None = None   # per input channel (int32), or None: src_zp
    dst_zps: np.ndarray | None = None   # per output channel, or None: dst_zp
    # the depthwise post-op's own scales (ARGS): its weights' (one, or per channel), its dst's
    dw_wei_scales: np.ndarray | None = None
    dw_dst_scale: float = 1.0
    # the type of quantize_reference's math: f32, as the spec does it, or double for an f64
    # convolution (which takes no scales, zero points or post-ops: only the bias is added)
    compute: type = np.float32

    def src_zero_point(self, ndim: int) -> np.float32 | np.ndarray:
        """The src zero point in f32, broadcastable over a src [mb][c][...] of ndim dims:
        one per channel (axis 1), or the common one (0 without)."""
        if self.src_zps is None:
            return np.float32(self.src_zp)
        return self.src_zps.astype(np.float32).reshape((1, -1) + (1,) * (ndim - 2))

    def shifted_src(self, src: np.ndarray) -> np.ndarray:
        """src less its zero point, as the reference reads it: src itself for a zero point
        of 0 (no copy of a large src)."""
        zp = self.src_zero_point(src.ndim)
        return src - zp if np.any(zp) else src

    def per_oc(self, oc: int) -> np.ndarray:
        return np.broadcast_to(self.wei_scales, (oc,)).astype(np.float64)


# Non-common scales are drawn from these powers of two (reference 6.4), so that scaling
# integer data stays exact in f32 and the threshold can stay 0.
SCALE_VALUES = (0.0625, 0.125, 0.25)
# Per-channel zero points: a few small values, 0 among them, within the source type (the
# kernels pad each channel with its own; a u8 source has no negative ones).
SRC_ZP_VALUES = {"u8": (0.0, 1.0, 2.0, 3.0, 5.0), "s8": (-2.0, -1.0, 0.0, 1.0, 3.0)}
DST_ZP_VALUES = (-1.0, 0.0, 1.0, 2.0)


def _zps(prb, arg: str, n: int) -> np.ndarray | None:
    """The per-channel zero points of arg drawn for n channels, or None when common."""
    entry = prb.zero_points.get(arg) if prb.zero_points else None
    if entry is None or entry.is_common:
        return None
    values = SRC_ZP_VALUES.get(prb.dt[0], SRC_ZP_VALUES["s8"]) if arg == "src" \
        else DST_ZP_VALUES
    kind = fill.Kind.SRC_ZPS if arg == "src" else fill.Kind.DST_ZPS
    return fill.choice_fill(n, kind, values).astype(np.int32)


def dw_quant(q: Quant) -> Quant:
    """The depthwise step's scales (oneDNN 3.x, benchdnn's get_fused_conv_prb): its src
    scale is the 1x1 step's dst scale (the 1x1 output it reads was divided by it), then
    the dw post-op's own weights and dst scales. No scales (or DNNL 1.x output scales,
    which the post-op's own would follow): none."""
    if q.kind is not core.Scales.ARGS:
        return Quant()
    wei = q.dw_wei_scales if q.dw_wei_scales is not None else np.ones(1, np.float32)
    return Quant(core.Scales.ARGS, q.dst_scale, q.dw_dst_scale, wei)


def quant_of(prb, oc: int) -> Quant:
    zp = lambda arg: (prb.zero_points.get(arg).zp if prb.zero_points   # noqa: E731
                      and prb.zero_points.get(arg) else 0)
    src_zp, dst_zp = zp("src") or 0, zp("dst") or 0
    zps = {"src_zps": _zps(prb, "src", prb.desc.ic), "dst_zps": _zps(prb, "dst", oc)}
    if prb.oscale:
        if prb.oscale.is_common:
            wei = np.array([prb.oscale.scale], np.float32)
        else:   # per_oc draws 6.4's values; per_oc:BASE scales them by BASE
            base = prb.oscale.scale if prb.oscale.scale is not None else 1.0
            wei = base * fill.choice_fill(oc, fill.Kind.SCALES, SCALE_VALUES)
        return Quant(core.Scales.OSCALE, wei_scales=wei.astype(np.float32), src_zp=src_zp,
                     dst_zp=dst_zp, **zps)
    if prb.scales:
        common = lambda arg: (prb.scales.get(arg).scale if prb.scales.get(arg)  # noqa: E731
                              else 1.0)
        entry = prb.scales.get("wei")
        if entry is not None and not entry.is_common:
            wei = fill.choice_fill(oc, fill.Kind.SCALES, SCALE_VALUES)
        else:
            wei = np.array([common("wei")], np.float32)
        dw_wei = prb.scales.get("attr_post_op_dw_wei")
        if dw_wei is None:
            dw_wei_scales = None
        elif dw_wei.is_common:
            dw_wei_scales = np.array([dw_wei.scale], np.float32)
        else:   # per_oc: 6.4's values, drawn with the depthwise weights' seed
            dw_wei_scales = fill.choice_fill(oc, fill.Kind.DW_WEI, SCALE_VALUES)
        return Quant(core.Scales.ARGS, common("src"), common("dst"), wei, src_zp, dst_zp,
                     **zps, dw_wei_scales=dw_wei_scales,
                     dw_dst_scale=common("attr_post_op_dw_dst"))
    return Quant(src_zp=src_zp, dst_zp=dst_zp, **zps,
                 compute=np.float64 if prb.dt[2] == "f64" else np.float32)


def quantize_reference(acc: np.ndarray, bias: np.ndarray | None, q: Quant,
                       post_ops: PostOps, prior: np.ndarray | None,
                       channels: np.ndarray | None = None,
                       src1: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """Forward dst from the exact sums acc (double; src zero point already subtracted).
    The spec does the attribute and post-op math in single precision, so this does it
    in f32, in the formula's order (bdnn.h, BDNN_SCALES_*): scales and bias, the
    post-ops (eltwise through the double formulas, rounded to f32), then the dst scale
    and zero point. Without scales or an inexact sum scale it equals the double
    computation: the data are small integers.

    acc is the whole dst [mb][oc][...], or (--check=sampled) the sums at some points,
    with channels their output channels and prior their prior values: the math below is
    element-wise, so it is the same on both. src1: each binary and prelu entry's input by
    chain index, broadcastable against acc (or at the points). (An f64 convolution's q
    computes in double: f32 below is then np.float64.)"""
    f32 = q.compute
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
    for i, e in enumerate(post_ops.entries):
        if isinstance(e, Sum):
            out = out + f32(e.scale) * (prior.astype(f32).reshape(out.shape) - f32(e.zero_point))
        elif isinstance(e, (Binary, Prelu)):
            out = apply_src1(e, out, src1[i].astype(f32))
        else:
            with np.errstate(over="ignore"):   # exp and friends may leave f32's range
                out = (e.scale * eltwise.apply(e.name, out.astype(np.float64), e.alpha,
                                               e.beta)).astype(f32)
    if q.kind is core.Scales.ARGS:
        out = out * (f32(1) / f32(q.dst_scale))
    if q.dst_zps is not None:
        return out + per_channel(q.dst_zps.astype(f32))
    return out + f32(q.dst_zp) if q.dst_zp else out

