"""The torch backend of the concat driver: the same problems, fill, reference check and
timing loop, executed by torch.cat with `out=` into dst's memory (torch loaded lazily:
backends/torch.py).

Tensors are contiguous views of the driver's memories with their dims in memory order and
the axis moved along (torch.cat's `out=` writes a contiguous output): every tensor of a
case must have one dense memory order. torch.cat copies without arithmetic, so every type
torch has runs, into a dst of the same type (or a float dst of any float sources); scales
and other layouts are UNIMPLEMENTED.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...backends import torch as torch_backend
from ...status import Status
from ..base import CaseResult

TYPES = (*torch_backend.FLOAT_DTYPES, "s32", "s8", "u8")


def unsupported(prb) -> tuple[Status, str] | None:
    torch, why = torch_backend.load()
    if torch is None:
        return Status.UNIMPLEMENTED, why
    floats = prb.sdt in torch_backend.FLOAT_DTYPES and prb.ddt in torch_backend.FLOAT_DTYPES
    if prb.sdt not in TYPES or not (prb.sdt == prb.ddt or floats):
        return (Status.UNIMPLEMENTED, f"--sdt={prb.sdt} --ddt={prb.ddt}: torch.cat writes "
                f"its sources' type ({', '.join(TYPES)}), or a float one from float sources")
    if prb.scales:
        return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: torch.cat takes no "
                "scales")
    if memory_order(prb) is None:
        return (Status.UNIMPLEMENTED, "the torch backend runs tensors of one dense memory "
                "order (torch.cat writes a contiguous output)")
    return None


def memory_order(prb) -> tuple[int, ...] | None:
    """The one dense memory order of the case's tensors, or None."""
    return torch_backend.one_dense_order(
        [prb.src_layout(i) for i in range(prb.n_src)] + [prb.dst_layout])


class _Concat:
    """The primitive, with the native primitive's bind interface (the kernels' walk and
    scales arguments are theirs: unused here)."""

    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        self.memory_bytes = 0

    def bind(self, srcs: list[np.ndarray], dst: np.ndarray, outer=None, sizes=None,
             inner=None, scales=None) -> Callable[[], None]:
        torch, prb = self.torch, self.prb
        order = memory_order(prb)
        xs = [torch_backend.memory_order_view(torch, a, order, dims)
              for a, dims in zip(srcs, prb.desc.srcs)]
        y = torch_backend.memory_order_view(torch, dst, order, prb.dims)
        axis = order.index(prb.axis)

        def run() -> None:
            torch.cat(xs, dim=axis, out=y)
        run.keep = (srcs, dst, xs, y)
        return run

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Concat | None:
    return torch_backend.create_in_case(res, prb.impl_filter,
                                        lambda torch: _Concat(torch, prb))
