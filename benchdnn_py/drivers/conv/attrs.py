"""Convolution attributes: which post-op chains, scales and zero points are valid and
which the kernels take, the kernels' post-op entries, and the quantization (scales, zero
points) the reference applies."""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import core
from ...common import eltwise, fill, layout
from ...common.attr import POLICY_MASKS, Binary, Depthwise, Eltwise, PostOps, Prelu, Sum
from ...common.direction import Dir
from ...errors import ProblemError, UsageError
from ...status import Status
from . import dt as dtypes


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
    int8 = dtypes.is_int8(dt)
    for e in post_ops.entries:
        if isinstance(e, Sum) and e.zero_point and not int8:
            return Status.UNIMPLEMENTED, f"`{e}`: a sum zero point is for int8 convolutions only"
        if isinstance(e, Sum) and e.dt and e.dt != dt[2]:
            return (Status.UNIMPLEMENTED, f"`{e}`: a sum data type other than the "
                    f"destination's ({dt[2]}) is not implemented")
    return None


# -- binary and prelu entries: their extra input ----------------------------------------
#
# Entry i of a chain that reads a tensor of its own (binary src1, prelu weights) gives the
# case an input named src1_{i}: the written tensor's dims (dst; deconvolution's dst), kept
# along the dims its mask names and broadcast (size 1) along the others, in the layout its
# tag or strides give (plain `any` by default).

SRC1_PREFIX = "src1_"
# Types the kernels convert src1 from (bdnn.h, BDNN_POST_BINARY).
SRC1_DTS = ("f32", "bf16", "f16", "s32", "s8", "u8")


def src1_name(index: int) -> str:
    return f"{SRC1_PREFIX}{index}"


def src1_entries(post_ops: PostOps) -> list[tuple[int, Binary | Prelu]]:
    """(index in the chain, entry) of each entry with an extra input."""
    return [(i, e) for i, e in enumerate(post_ops.entries) if isinstance(e, (Binary, Prelu))]


def src1_dt(entry: Binary | Prelu) -> str:
    return entry.dt if isinstance(entry, Binary) else "f32"   # prelu weights are f32


def src1_dims(entry: Binary | Prelu, dst_dims: tuple[int, ...]) -> tuple[int, ...]:
    """The extra input's dims: dst's along the mask's dims (bits past the rank ignored,
    as benchdnn), 1 along the others."""
    text = entry.src1.mask if isinstance(entry, Binary) else entry.mask
    if not text:
        mask = 0
    elif text.isdigit():
        mask = int(text)
    else:
        mask = (1 << len(dst_dims)) - 1 if text in ("per_tensor", "mx", "dynamic_fp") \
            else POLICY_MASKS[text]
    return tuple(n if mask >> d & 1 else 1 for d, n in enumerate(dst_dims))


def src1_layout(entry: Binary | Prelu, dst_dims: tuple[int, ...]) -> layout.Layout:
    """The extra input's memory: its tag's layout (`any`: plain) or its strides; a
    ProblemError naming the token when they do not fit its dims."""
    dims = src1_dims(entry, dst_dims)
    b = entry.src1 if isinstance(entry, Binary) else None
    if b is not None and b.strides:
        return layout.strided_layout(dims, b.strides)
    if b is not None and b.tag and b.tag != "any":
        return layout.tensor_layout(layout.parse_tag(b.tag), dims)
    return layout.plain(dims)


def src1_unsupported(prb, dst_dims: tuple[int, ...]) -> tuple[Status, str] | None:
    """Binary and prelu entries the problem or the kernels cannot run."""
    for _, e in src1_entries(prb.post_ops):
        if isinstance(e, Binary) and not e.dt:
            return (Status.INVALID_ARGUMENTS, f"`{e}`: a binary post-op names src1's data "
                    f"type ({e}:DT)")
        if isinstance(e, Binary) and e.alg == "select":
            return (Status.UNIMPLEMENTED, f"`{e}`: binary select (a third, condition input) "
                    "is not implemented")
        if isinstance(e, Binary) and e.dt not in SRC1_DTS:
            return (Status.UNIMPLEMENTED, f"`{e}`: src1 of type {e.dt}; the kernels take "
                    f"{', '.join(SRC1_DTS)}")
        if isinstance(e, Binary) and e.src1.tag == "grouped":
            return (Status.UNIMPLEMENTED, f"`{e}`: a grouped src1 is not implemented")
        try:
            lay = src1_layout(e, dst_dims)
        except (ProblemError, UsageError) as exc:
            return Status.INVALID_ARGUMENTS, f"`{e}`: {exc}"
        if not lay.is_plain:
            return (Status.UNIMPLEMENTED, f"`{e}`: src1 in the blocked layout {lay.name}; "
                    "the kernels read it through strides (plain layouts) only")
        if prb.backend != "native":
            return (Status.UNIMPLEMENTED, f"`{e}`: the {prb.backend} backend does not run "
                    "binary or prelu post-ops")
        if dw_entry(prb.post_ops) is not None:
            return (Status.UNIMPLEMENTED, f"`{e}`: binary and prelu post-ops beside a "
                    "depthwise post-op are not implemented")
    return None


def src1_kernel_strides(lay: layout.Layout) -> tuple[int, int, int, int, int]:
    """The kernels' strides of an extra input over the written tensor's (mb, c, d, h, w):
    the layout's, 0 along a broadcast (size-1) dim and along the spatial dims the rank
    lacks."""
    st = [0 if n == 1 else s for n, s in zip(lay.dims, lay.strides)]
    return tuple(st[:2] + [0] * (5 - lay.ndims) + st[2:])


def src1_values_5d(values: np.ndarray, ndims: int) -> np.ndarray:
    """Logical src1 values shaped to broadcast against the C core's 5D [mb][c][d][h][w]."""
    shape = values.shape[:2] + (1,) * (5 - ndims) + values.shape[2:]
    return values.reshape(shape)


def src1_at(values5: np.ndarray, dst_shape5: tuple[int, ...], points: np.ndarray
            ) -> np.ndarray:
    """A 5D extra input's values at linear offsets into dst [mb][c][d][h][w]."""
    idx = np.unravel_index(points, dst_shape5)
    return values5[tuple(i if n > 1 else 0 for i, n in zip(idx, values5.shape))]


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
    if post_ops.extra_inputs:   # the low-precision epilogue: entries in any order
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


def kernel_post_ops(post_ops: PostOps, dst_dt: str = "f32",
                    dst_dims: tuple[int, ...] = ()) -> tuple[core.PostOp, ...]:
    """The chain in the C core's terms (dst_dt: the convolution's, for a dw entry;
    dst_dims: the written tensor's logical dims, for binary and prelu entries)."""
    ops = []
    for e in post_ops.entries:
        if isinstance(e, (Binary, Prelu)):
            kind = core.PostKind.BINARY if isinstance(e, Binary) else core.PostKind.PRELU
            alg = core.BINARY_ALGS[e.alg] if isinstance(e, Binary) else 0
            ops.append(core.PostOp(kind, alg, src1_dt=src1_dt(e), src1_strides=(
                src1_kernel_strides(src1_layout(e, dst_dims)))))
        elif isinstance(e, Depthwise):
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
    chain index, broadcastable against acc (or at the points)."""
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
    return out + f32(q.dst_zp) if q.dst_zp else out


# The binary post-op's formulas in f32, as oneDNN defines them (comparisons give 1 or 0).
BINARY_F32 = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "ge": np.greater_equal, "gt": np.greater,
    "le": np.less_equal, "lt": np.less, "eq": np.equal, "ne": np.not_equal,
}


def apply_src1(e: Binary | Prelu, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """dst = dst OP src1 (binary), or dst > 0 ? dst : dst * weight (prelu), in f32."""
    f32 = np.float32
    if isinstance(e, Prelu):
        return np.where(x > 0, x, x * b).astype(f32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return BINARY_F32[e.alg](x, b).astype(f32)
