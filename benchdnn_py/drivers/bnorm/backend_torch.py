"""The torch backend of the bnorm driver: the same problems, fill, reference check and
timing loop, executed by the operators torch.nn.functional.batch_norm and its autograd
call (torch loaded lazily: backends/torch.py).

    FWD_D          aten.native_batch_norm, training, with running statistics at momentum
                   1: the mean is the running mean, the variance the running variance
                   (torch keeps it unbiased) times (N - 1) / N, in double, after timing
    FWD_I          aten.native_batch_norm, training, without running statistics
    G (forward)    aten.native_batch_norm, not training: mean and variance as its running
                   statistics
    A, R           then dst.add_(src1) (A), dst.relu_() (R or A)
    post-ops       then torch operators per entry (backends/torch.py's post_op_steps)
    BWD_D, BWD_DW  aten.native_batch_norm_backward: training's, with the saved mean and
                   1 / sqrt(variance + eps) (in double, rounded to f32, as torch's forward
                   saves it), or with G not training's; its output mask asks diff_scale
                   and diff_shift (BWD_DW with C, H). With a fused relu, first
                   aten.threshold_backward(diff_dst, the relu's output, 0), that output
                   being the forward's decisions the driver gives every backend (1 where
                   it kept the point); A's diff_src1 is this gradient.
Scale and shift are f32 tensors, 1 and 0 where the flags have none (nn.BatchNorm's affine
default; without an f32 parameter torch keeps a 16-bit input's statistics in its type).
torch's CPU kernels fold the normalization into dst = src alpha + beta (alpha = g r, beta
= b - m alpha, in f32): the driver allows for their roundings (FOLDING_BACKENDS). The
operators allocate their results, as a user's call does; collect copies them into the
case's memories after timing, through strided views (any plain layout). torch's batch
norm has no in-place form: in place, that copy overwrites src (diff_dst). UNIMPLEMENTED:
s8, blocked layouts, an empty minibatch where torch computes statistics or gradients,
training's variance over one point per channel.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ... import core
from ...backends import torch as torch_backend
from ...common import post_ops
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    torch, why = torch_backend.load()
    if torch is None:
        return Status.UNIMPLEMENTED, why
    if prb.dt not in torch_backend.FLOAT_DTYPES:
        return (Status.UNIMPLEMENTED, f"--dt={prb.dt}: torch's batch norm takes the "
                f"floating types {', '.join(torch_backend.FLOAT_DTYPES)}")
    if not prb.data_layout.is_plain:
        return (Status.UNIMPLEMENTED, f"--tag={prb.tag}: the blocked layout "
                f"{prb.data_layout.name}; torch tensors are strided")
    if prb.dims[0] == 0 and prb.backward:
        return (Status.UNIMPLEMENTED, "mb0: torch's CPU batch norm backward divides by the "
                "empty minibatch (a floating-point exception)")
    if prb.dims[0] == 0 and not prb.glob:
        return (Status.UNIMPLEMENTED, "mb0: torch's batch norm computes no statistics over "
                "an empty minibatch (it raises)")
    if prb.stats_out and points(prb) == 1:
        return (Status.UNIMPLEMENTED, "mb x spatial = 1: training's variance comes from "
                "torch's running variance, which is unbiased (divided by N - 1 = 0)")
    return None


def points(prb) -> int:
    """N: the points of a channel."""
    return prb.dims[0] * prb.desc.spatial


class _Bnorm:
    """The primitive, with the native primitive's bind_fwd/bind_bwd interface (the
    kernels' walk and chain arguments are theirs: unused here); each returns (run,
    collect)."""

    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        # the operators' results (dst or diff_src; backward with a relu, its gradient and
        # decisions too)
        self.memory_bytes = (prb.nelems * core.numpy_dtype(prb.dt).itemsize
                             * (1 + 2 * (prb.backward and prb.relu)))
        aten = torch.ops.aten
        self.fwd, self.bwd = aten.native_batch_norm, aten.native_batch_norm_backward
        self.threshold_bwd = aten.threshold_backward

    def _params(self, scale, shift) -> tuple[Any, Any]:
        torch, C = self.torch, self.prb.channels
        w = torch.from_numpy(scale) if scale is not None else torch.ones(C)
        b = torch.from_numpy(shift) if shift is not None else torch.zeros(C)
        return w, b

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, walk=None, mean=None, var=None,
                 scale=None, shift=None, src1=None, ws=None, chain=None,
                 po_src1=None) -> tuple[Callable[[], None], Callable[[], None]]:
        """mean and var: the outputs of training without G, the inputs with it (None in
        inference without G); po_src1: the post-ops' inputs by name (logical)."""
        torch, prb, fwd = self.torch, self.prb, self.fwd
        lay, eps = prb.data_layout, prb.desc.eps
        x = torch_backend.view(torch, src, lay)
        y_mem = torch_backend.view(torch, dst, lay)
        s1 = torch_backend.view(torch, src1, lay) if src1 is not None else None
        w, b = self._params(scale, shift)
        if prb.glob:
            args = (torch.from_numpy(mean), torch.from_numpy(var), False, 0.0)
        elif prb.stats_out:
            rm, rv = torch.zeros(prb.channels), torch.ones(prb.channels)
            args = (rm, rv, True, 1.0)
        else:
            args = (None, None, True, 0.0)
        relu = prb.relu
        # the binary and prelu entries' inputs in their own types (exact for the fill)
        inputs = {}
        for i, e in post_ops.src1_entries(prb.post_ops):
            name = post_ops.src1_name(i)
            typed = po_src1[name].astype(core.numpy_dtype(post_ops.src1_dt(e)))
            inputs[name] = torch_backend.to_torch(torch, typed)
        steps = torch_backend.post_op_steps(torch, prb.post_ops, inputs)
        last: dict[str, Any] = {}

        def run() -> None:
            y = fwd(x, w, b, *args, eps)[0]
            if s1 is not None:
                y.add_(s1)
            if relu:
                y.relu_()
            for step in steps:
                y = step(y, None)
            last["dst"] = y

        def collect() -> None:
            y_mem.copy_(last["dst"])
            if prb.stats_out:
                n = points(prb)
                torch.from_numpy(mean).copy_(rm)
                torch.from_numpy(var).copy_(rv.double() * ((n - 1) / n))
        run.keep = collect.keep = (src, dst, src1, x, y_mem, s1, w, b, args, inputs)
        return run, collect

    def bind_bwd(self, src: np.ndarray, mean: np.ndarray, var: np.ndarray,
                 diff_dst: np.ndarray, diff_src: np.ndarray, walk=None, scale=None,
                 ws=None, diff_src1=None, diff_scale=None, diff_shift=None,
                 shift=None) -> tuple[Callable[[], None], Callable[[], None]]:
        """ws: the forward relu's decisions (u8, the kernel layout); the rest as the
        native primitive's."""
        torch, prb, bwd, threshold_bwd = self.torch, self.prb, self.bwd, self.threshold_bwd
        lay, diff, eps = prb.data_layout, prb.diff_layout, prb.desc.eps
        x = torch_backend.view(torch, src, lay)
        gy = torch_backend.view(torch, diff_dst, diff)
        outs = {"diff_src": torch_backend.view(torch, diff_src, diff)}
        if diff_src1 is not None:
            outs["diff_src1"] = torch_backend.view(torch, diff_src1, diff)
        for name, array in (("diff_scale", diff_scale), ("diff_shift", diff_shift)):
            if array is not None:
                outs[name] = torch.from_numpy(array)
        w, _ = self._params(scale, None)
        m = torch.from_numpy(mean)
        if prb.glob:
            stats = (m, torch.from_numpy(var), None, None, False)
        else:
            invstd = (torch.from_numpy(var).double() + eps).rsqrt().float()
            stats = (None, None, m, invstd, True)
        mask = [True, diff_scale is not None, diff_shift is not None]
        # the relu's output as autograd keeps it: positive exactly where it kept the point
        kept = (torch_backend.view(torch, ws, prb.kernel_layout).to(x.dtype)
                if prb.relu else None)
        last: dict[str, Any] = {}

        def run() -> None:
            g = threshold_bwd(gy, kept, 0) if kept is not None else gy
            gx, gw, gb = bwd(g, x, w, *stats, eps, mask)
            last.update(diff_src=gx, diff_scale=gw, diff_shift=gb, diff_src1=g)

        def collect() -> None:
            for name, out in outs.items():
                out.copy_(last[name])
        run.keep = collect.keep = (src, mean, var, diff_dst, diff_src, ws, x, gy, outs, w,
                                   stats, kept)
        return run, collect

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Bnorm | None:
    return torch_backend.create_in_case(res, prb.impl_filter,
                                        lambda torch: _Bnorm(torch, prb))
