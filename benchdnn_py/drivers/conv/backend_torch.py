"""The torch backend of the conv and deconv drivers: the same problems, fill, reference
check and timing loop, executed by PyTorch's CPU operators. torch is loaded lazily
(backends/torch.py): benchdnn-py works without it, and --backend=torch then reports each
case UNIMPLEMENTED with how to get it.

Operators (what a PyTorch user runs, and what autograd calls):
    conv   forward           torch.nn.functional.conv{1,2,3}d
    deconv forward           torch.nn.functional.conv_transpose{1,2,3}d
    backward data, weights   torch.ops.aten.convolution_backward (transposed for deconv),
                             autograd's own backward of convolution. torch.nn.grad's
                             conv*_input/conv*_weight call the same operator, but they
                             exist for convolution only and cannot take a bias gradient.
    post-ops                 after the operator, in the chain's order: eltwise as torch
                             operators (in place where torch has one), sum as an in-place
                             add of scale * prior dst (backends/torch.py's post_op_steps)
Tensors are contiguous NCHW (torch's default) wrapped around the drivers' arrays with
torch.from_numpy; the deconvolution weights are transposed per group into torch's
(in, out/g, k) layout before timing, as the native kernels' weights reorder is.

Padding: torch pads both sides alike (p), the problem has p on the left and p_r on the
right (desc.p_r, negative when the last input rows are unread). The problem is computed
as the convolution C (deconvolution: the swapped convolution, ref.py) with padding p on an
input extended by max(0, p_r - p) zeros on the right; that gives at least the problem's
outputs, the first ones being exactly its outputs, and the rest are cropped (a view). For
backward passes diff_dst is extended by zeros to those extra outputs, which contribute
nothing. The zero extensions are F.pad calls inside the timed callable (a user with
asymmetric padding pays for them too); they are needed only when p_r > p or when the
extra outputs exist, never for the networks in problems/.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from ... import core
from ...backends import torch as torch_backend
from ...common import layout
from ...common.attr import Eltwise, Sum
from ...common.direction import Dir
from ...engine.memory import Guarded
from ...status import Reason, Status
from ..base import CaseResult
from . import formats
from .prim import tensors

# Data types this backend maps to torch dtypes. torch computes a convolution in one type:
# every tensor of a case must have it (bf16:bf16:f32 and the int8 rows are not expressible).
DTYPES = {"f32": "float32", "bf16": "bfloat16"}


def unsupported(prb) -> tuple[Status, str] | None:
    """torch itself missing, or what torch's operators cannot express. Sum and eltwise
    entries run as separate operators, so any order of them works (the native kernels
    take only the spec's f32 chains)."""
    torch, why = torch_backend.load()
    if torch is None:
        return Status.UNIMPLEMENTED, why
    if prb.dt[0] not in DTYPES or len(set(prb.dt)) != 1:
        return (Status.UNIMPLEMENTED, f"--dt={':'.join(prb.dt)}: torch runs a convolution "
                f"in one data type, one of {', '.join(DTYPES)}")
    if prb.bia_dt not in ("undef", "f32", prb.dt[0]):
        return Status.UNIMPLEMENTED, f"--bia-dt={prb.bia_dt}: no torch bias of that type"
    if prb.oscale or prb.scales or prb.zero_points:
        return Status.UNIMPLEMENTED, "torch's float convolutions take no scales or zero points"
    if any(lay is not None and not lay.same_memory(layout.plain(lay.dims))
           for lay in prb.requested_layouts.values()):
        return (Status.UNIMPLEMENTED, "the torch backend runs plain layouts only (any, "
                "nchw, oihw...); other --stag/--wtag/--dtag/--strides run natively")
    table = torch_backend.eltwise_ops(torch)
    for e in prb.post_ops.entries:
        if isinstance(e, Eltwise) and e.name not in table:
            return Status.UNIMPLEMENTED, f"`{e}`: no torch expression of this eltwise yet"
        if not isinstance(e, (Sum, Eltwise)):
            return (Status.UNIMPLEMENTED, (f"`{e}`: torch has no fused depthwise post-op "
                                           "(it would be a second convolution, another "
                                           "problem)"))
    return None


# --------------------------------------------------------------------------------------
# Geometry: the problem in torch's symmetric-padding terms
# --------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Geometry:
    """Per spatial axis present, in the terms of the convolution C that torch computes
    (deconvolution: C is the swapped convolution; C's input is its dst, C's output its
    src). See the module docstring."""

    transposed: bool
    in_ext: tuple[int, ...]       # zeros appended to C's input (max(0, p_r - p))
    out_ext: tuple[int, ...]      # extra outputs of C beyond the problem's
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]     # torch's: tap spacing, our dilation + 1
    output_padding: tuple[int, ...]   # transposed only: makes C's input size exact

    @property
    def src_ext(self) -> tuple[int, ...]:
        return self.out_ext if self.transposed else self.in_ext

    @property
    def dst_ext(self) -> tuple[int, ...]:
        return self.in_ext if self.transposed else self.out_ext


def geometry(desc) -> Geometry:
    transposed = desc.kind == "deconv"
    c_in, c_out = (desc.o, desc.i) if transposed else (desc.i, desc.o)
    axes = desc.spatial_axes
    in_ext, out_ext, op = [], [], []
    for a in axes:
        p, p_r, s = desc.p[a], desc.p_r[a], desc.s[a]
        ek = (desc.k[a] - 1) * (desc.dil[a] + 1) + 1
        ext = max(0, p_r - p)
        span = c_in[a] + ext + 2 * p - ek     # C's padded input minus one kernel
        in_ext.append(ext)
        out_ext.append(span // s + 1 - c_out[a])
        op.append(span % s)                   # < s, as torch requires
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    return Geometry(transposed, tuple(in_ext), tuple(out_ext), pick(desc.s), pick(desc.p),
                    tuple(d + 1 for d in pick(desc.dil)),
                    tuple(op) if transposed else (0,) * len(axes))


# --------------------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------------------

def _logical(desc) -> dict[str, tuple[int, ...]]:
    """The user tensors in torch's shapes (spatial axes present only)."""
    pick = lambda t: tuple(t[a] for a in desc.spatial_axes)  # noqa: E731
    g, k = desc.g, pick(desc.k)
    return {"src": (desc.mb, desc.ic) + pick(desc.i), "dst": (desc.mb, desc.oc) + pick(desc.o),
            # conv: (oc, ic/g, k); deconv (torch's transposed layout): (ic, oc/g, k)
            "wei": ((desc.ic, desc.oc // g) if desc.kind == "deconv"
                    else (desc.oc, desc.ic // g)) + k}


def _torch_weights(desc, wei: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Our [g][oc/g][ic/g][k] weights in torch's layout: the same memory for conv; for
    deconv the per-group transpose to [g][ic/g][oc/g][k] (a copy, made before timing)."""
    if desc.kind == "deconv":
        wei = np.ascontiguousarray(np.swapaxes(wei, 1, 2))
    return wei.reshape(shape)


def _from_torch_weights(desc, w: np.ndarray) -> np.ndarray:
    """The inverse of _torch_weights, flattened into our layout."""
    g = desc.g
    if desc.kind == "deconv":
        w = w.reshape((g, desc.ic // g, desc.oc // g) + w.shape[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(w).ravel()


class _Program:
    """The torch calls of one problem, built over given tensors (real ones for runs, meta
    ones to check at creation that torch accepts the problem)."""

    def __init__(self, torch, prb, geo: Geometry) -> None:
        self.torch, self.prb, self.geo = torch, prb, geo
        self.shapes = _logical(prb.desc)
        self.nd = len(geo.stride)
        F = torch.nn.functional
        if geo.transposed:
            fwd = getattr(F, f"conv_transpose{self.nd}d")
            self.forward_op = lambda x, w, b: fwd(x, w, b, geo.stride, geo.padding,
                                                  geo.output_padding, prb.desc.g, geo.dilation)
        else:
            fwd = getattr(F, f"conv{self.nd}d")
            self.forward_op = lambda x, w, b: fwd(x, w, b, geo.stride, geo.padding,
                                                  geo.dilation, prb.desc.g)
        self.post_ops = torch_backend.post_op_steps(torch, prb.post_ops)

    def _pad(self, x, ext: tuple[int, ...]):
        """x extended by ext zeros at the end of each spatial axis (F.pad: last axis
        first), or x itself."""
        if not any(ext):
            return x
        pads = []
        for e in reversed(ext):
            pads += [0, e]
        return self.torch.nn.functional.pad(x, pads)

    def _crop(self, y, shape: tuple[int, ...]):
        """The first `shape` points of y (a view; y may hold extra outputs)."""
        if tuple(y.shape) == shape:
            return y
        return y[(slice(None), slice(None)) + tuple(slice(0, n) for n in shape[2:])]

    def _backward(self, gy, x, w, bias: bool, mask: tuple[bool, bool, bool]):
        geo = self.geo
        return self.torch.ops.aten.convolution_backward(
            gy, x, w, [self.prb.desc.oc] if bias else None, list(geo.stride),
            list(geo.padding), list(geo.dilation), geo.transposed, list(geo.output_padding),
            self.prb.desc.g, list(mask))

    def build(self, t: dict[str, Any]) -> Callable[[], dict[str, Any]]:
        """The timed callable over tensors t (src, wei, bia, dst as the direction needs;
        prior for a sum). It returns the results keyed like the drivers' outputs, cropped
        to the problem's sizes (views), for collect to copy."""
        prb, geo, shapes = self.prb, self.geo, self.shapes
        d = prb.dir
        if d.forward:
            x, w, b, prior = t["src"], t["wei"], t.get("bia"), t.get("prior")
            steps = self.post_ops

            def forward() -> dict[str, Any]:
                y = self._crop(self.forward_op(self._pad(x, geo.src_ext), w, b), shapes["dst"])
                for step in steps:
                    y = step(y, prior)
                return {"dst": y}
            return forward
        if d is Dir.BWD_D:
            gy, w = t["dst"], t["wei"]
            # convolution_backward reads only the shape of the input for diff_src; a real
            # (unwritten) tensor, as autograd passes, keeps torch's layout choice honest.
            x_ext = self.torch.empty(self._ext_shape("src"), dtype=gy.dtype, device=gy.device)

            def backward_data() -> dict[str, Any]:
                dx = self._backward(self._pad(gy, geo.dst_ext), x_ext, w, False,
                                    (True, False, False))[0]
                return {"src": self._crop(dx, shapes["src"])}
            return backward_data
        gy, x = t["dst"], t["src"]
        with_bias = d.with_bias
        w_like = self.torch.empty(shapes["wei"], dtype=x.dtype, device=x.device)

        def backward_weights() -> dict[str, Any]:
            _, dw, db = self._backward(self._pad(gy, geo.dst_ext), self._pad(x, geo.src_ext),
                                       w_like, with_bias, (False, True, with_bias))
            return {"wei": dw, "bia": db} if with_bias else {"wei": dw}
        return backward_weights

    def _ext_shape(self, name: str) -> tuple[int, ...]:
        shape = self.shapes[name]
        ext = self.geo.src_ext if name == "src" else self.geo.dst_ext
        return shape[:2] + tuple(n + e for n, e in zip(shape[2:], ext))

    def meta_check(self) -> None:
        """Runs the program on meta tensors (shapes only, no data): torch's own argument
        checks, at creation time. Raises what torch raises."""
        torch, shapes = self.torch, self.shapes
        meta = {name: torch.empty(shape, device="meta") for name, shape in shapes.items()}
        meta["bia"] = torch.empty((self.prb.desc.oc,), device="meta")
        meta["prior"] = torch.empty(shapes["dst"], device="meta")
        if not (self.prb.dir.forward and self.prb.dir.with_bias):
            del meta["bia"]
        self.build(meta)()


def _torch_memory(s: core.ConvShape, transposed: bool, threads: int) -> int:
    """What torch allocates beyond the driver's arrays, about: each tensor twice more in
    f32 (its outputs, copies in its own layouts, the weights transpose, the read-back) and
    an im2col or col2im buffer of one image per thread (its non-oneDNN paths): a column
    per output point of a convolution, per input point of a transposed one."""
    tensors = sum(math.prod(shape) for shape in (s.src_shape, s.wei_shape, s.dst_shape))
    columns = ((s.oc * math.prod(s.i)) if transposed else (s.ic * math.prod(s.o))) \
        // s.g * math.prod(s.k)
    return 4 * (2 * tensors + threads * columns)


class _Executor:
    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.program = _Program(torch, prb, geometry(prb.desc))
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        t = tensors(prb.desc, prb.shape)
        self.layouts = {n: layout.plain(t[n].logical) for n in formats.OPTIONS}
        self.memory_bytes = _torch_memory(prb.shape, prb.desc.kind == "deconv",
                                          torch.get_num_threads())

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        torch, prb, shapes = self.torch, self.prb, self.program.shapes
        # Zero-copy views of the drivers' arrays; only the deconvolution weights transpose
        # (and a sum's prior dst, which the outputs will overwrite) are copies.
        t = {name: torch_backend.to_torch(torch, a.reshape(shapes[name])) for name, a in inputs.items()
             if name in ("src", "dst")}
        if "wei" in inputs:
            t["wei"] = torch_backend.to_torch(torch, _torch_weights(prb.desc, inputs["wei"], shapes["wei"]))
        if "bia" in inputs:
            # torch's bias has the input's type: a bf16 case's f32 bias is converted
            # (exactly, for the correctness fill's small integers).
            t["bia"] = torch_backend.to_torch(torch, inputs["bia"]).to(t["src"].dtype)
        if any(isinstance(e, Sum) for e in prb.post_ops.entries):
            t["prior"] = torch_backend.to_torch(torch, outs["dst"].array.reshape(shapes["dst"]).copy())
        return torch_backend.run_and_collect(
            torch, self.program.build(t), outs,
            lambda name, arr: _from_torch_weights(prb.desc, arr) if name == "wei" else arr)

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Executor | None:
    torch, why = torch_backend.load()
    if torch is None:    # unsupported() has reported it; kept for direct callers
        res.status, res.reason = Status.UNIMPLEMENTED, why
        return None
    # the threads the case runs on (its --threads, set around it for OpenMP): ours and
    # torch's stay equal case by case
    torch.set_num_threads(core.max_threads())
    with res.timers("create_pd"):
        if not prb.impl_filter.allows(torch_backend.impl_name(torch)):
            res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
            return None
    with res.timers("create_prim"):
        executor = _Executor(torch, prb)
        try:
            executor.program.meta_check()
        except (RuntimeError, ValueError, NotImplementedError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            res.status, res.reason = Status.UNIMPLEMENTED, f"torch rejects this problem: {first}"
            return None
    return executor
