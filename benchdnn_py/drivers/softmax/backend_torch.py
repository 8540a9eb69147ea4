"""The torch backend of the softmax driver: the same problems, fill, reference check and
timing loop, executed by PyTorch's softmax operators (torch loaded lazily:
backends/torch.py).

Operators, those torch.softmax and its autograd call, each writing into the case's
output memory (`out=`):
    forward     aten._softmax, aten._log_softmax
    backward    aten._softmax_backward_data, aten._log_softmax_backward_data (from dst)
Tensors are contiguous views of the driver's memories with their dims in memory order and
the axis moved along (torch's `out=` here assumes a contiguous output): every tensor of a
case must have one dense memory order. One type: torch computes a softmax in its input's
type (f32, bf16, f16; the 16-bit ones accumulate in f32). Scales, post-ops, dropout,
other layouts and two types are UNIMPLEMENTED.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...backends import torch as torch_backend
from ...common.layout import tensor_layout
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    torch, why = torch_backend.load()
    if torch is None:
        return Status.UNIMPLEMENTED, why
    if prb.sdt != prb.ddt or prb.sdt not in torch_backend.FLOAT_DTYPES:
        return (Status.UNIMPLEMENTED, f"--sdt={prb.sdt} --ddt={prb.ddt}: torch computes a "
                f"softmax in one type, one of {', '.join(torch_backend.FLOAT_DTYPES)}")
    if prb.scales:
        return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: torch's softmax takes "
                "no scales")
    if memory_order(prb) is None:
        return (Status.UNIMPLEMENTED, "the torch backend runs tensors of one dense memory "
                "order (torch's softmax writes its input's)")
    return None


def memory_order(prb) -> tuple[int, ...] | None:
    """The one dense memory order of the case's tensors, or None."""
    if prb.dir.forward:
        return torch_backend.one_dense_order((tensor_layout(prb.stag, prb.dims),
                                              prb.dst_layout))
    return torch_backend.one_dense_order((prb.data_layout, prb.kernel_layout))


class _Softmax:
    """The primitive, with the native primitive's bind_fwd/bind_bwd interface (the
    kernels' walk, chain and dropout arguments are theirs: unused here)."""

    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        self.memory_bytes = 0
        aten = torch.ops.aten
        self.fwd = aten._log_softmax.out if prb.log else aten._softmax.out
        self.bwd = (aten._log_softmax_backward_data.out if prb.log
                    else aten._softmax_backward_data.out)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, walk=None, src_scale: float = 1.0,
                 dst_scale: float = 1.0, chain=None, dropout=None,
                 mask=None) -> Callable[[], None]:
        torch, prb, fwd = self.torch, self.prb, self.fwd
        order = memory_order(prb)
        x = torch_backend.memory_order_view(torch, src, order, prb.dims)
        y = torch_backend.memory_order_view(torch, dst, order, prb.dims)
        axis = order.index(prb.axis)

        def run() -> None:
            fwd(x, axis, False, out=y)
        run.keep = (src, dst, x, y)
        return run

    def bind_bwd(self, dst: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 walk=None) -> Callable[[], None]:
        torch, prb, bwd = self.torch, self.prb, self.bwd
        order = memory_order(prb)
        y, gy, gx = (torch_backend.memory_order_view(torch, a, order, prb.dims)
                     for a in (dst, diff_dst, diff_src))
        axis, dtype = order.index(prb.axis), y.dtype
        kw = "out" if prb.log else "grad_input"

        def run() -> None:
            bwd(gy, y, axis, dtype, **{kw: gx})
        run.keep = (dst, diff_dst, diff_src, y, gy, gx)
        return run

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Softmax | None:
    return torch_backend.create_in_case(res, prb.impl_filter,
                                        lambda torch: _Softmax(torch, prb))
