"""The torch backend of the sum driver: the same problems, fill, reference check and
timing loop, executed as a PyTorch user adds scaled tensors: torch.mul(src0, scale0,
out=dst), then dst.add_(src_i, alpha=scale_i) per further source (torch loaded lazily:
backends/torch.py).

Tensors are strided views of the driver's memories (any plain layout). torch adds in
dst's type, rounding after each source, where the primitive accumulates in f32: within
the threshold (dst's epsilon per source). Float types only: torch's integer arithmetic
wraps where oneDNN's saturates. Blocked layouts are UNIMPLEMENTED.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...backends import torch as torch_backend
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    verdict = torch_backend.float_verdict((*prb.sdt, prb.ddt), "sum")
    if verdict:
        return verdict
    lays = [prb.src_layout(i) for i in range(len(prb.sdt))] + [prb.dst_layout]
    for lay in lays:
        if not lay.is_plain:
            return (Status.UNIMPLEMENTED, f"the blocked layout {lay.name}: torch tensors "
                    "are strided")
    return None


class _Sum:
    """The primitive, with the native primitive's bind interface."""

    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        self.memory_bytes = 0

    def bind(self, srcs: list[np.ndarray], dst: np.ndarray,
             scales: tuple[float, ...]) -> Callable[[], None]:
        torch, prb = self.torch, self.prb
        xs = [torch_backend.view(torch, a, prb.src_layout(i)) for i, a in enumerate(srcs)]
        y = torch_backend.view(torch, dst, prb.dst_layout)
        first, rest = (xs[0], scales[0]), list(zip(xs[1:], scales[1:]))

        def run() -> None:
            torch.mul(first[0], first[1], out=y)
            for x, k in rest:
                y.add_(x, alpha=k)
        run.keep = (srcs, dst, xs, y)
        return run

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Sum | None:
    return torch_backend.create_in_case(res, prb.impl_filter, lambda torch: _Sum(torch, prb))
