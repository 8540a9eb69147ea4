"""The torch backend of the ip driver: the same problems, fill, reference check and timing
loop, executed as PyTorch runs a linear layer (torch loaded lazily: backends/torch.py).

Operators (what a PyTorch user runs, and what autograd calls for it):
    forward            torch.nn.functional.linear(src, wei, bias) on src flattened to
                       mb x K (K = ic x spatial) and the weights to oc x K, then the
                       post-ops as torch operators (backends/torch.py's)
    backward data      diff_dst.mm(wei), viewed back as src's shape
    backward weights   diff_dst.t().mm(src), and diff_dst.sum(0) for the bias
The conv backend's limits apply (one floating type for every tensor, plain layouts, no
scales or zero points, sum and eltwise post-ops only): its unsupported() says so.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import torch as torch_backend
from ...common import layout
from ...common.attr import Sum
from ...common.direction import Dir
from ...engine.memory import Guarded
from ..base import CaseResult
from ..conv import backend_torch as conv_torch
from ..conv.prim import logical_dims

unsupported = conv_torch.unsupported


class _Executor:
    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        dims = logical_dims(prb.desc)
        self.layouts = {n: layout.plain(dims[n]) for n in ("src", "wei", "dst")}
        d = prb.desc
        self.k = d.ic * int(np.prod(d.i))
        # the result tensor the operator allocates, and the read-back's copy
        self.memory_bytes = 8 * (d.mb * self.k + d.oc * self.k + d.mb * d.oc)

    def _program(self, t: dict[str, Any]) -> Callable[[], dict[str, Any]]:
        torch, prb = self.torch, self.prb
        if prb.dir.forward:
            x, w, b, prior = t["src"], t["wei"], t.get("bia"), t.get("prior")
            steps = torch_backend.post_op_steps(torch, prb.post_ops)
            linear = torch.nn.functional.linear

            def forward() -> dict[str, Any]:
                y = linear(x, w, b)
                for step in steps:
                    y = step(y, prior)
                return {"dst": y}
            return forward
        if prb.dir is Dir.BWD_D:
            gy, w = t["dst"], t["wei"]
            return lambda: {"src": gy.mm(w)}
        gy, x = t["dst"], t["src"]
        if prb.dir.with_bias:
            return lambda: {"wei": gy.t().mm(x), "bia": gy.sum(0)}
        return lambda: {"wei": gy.t().mm(x)}

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        torch, prb = self.torch, self.prb
        rows = {"src": (prb.desc.mb, self.k), "wei": (prb.desc.oc, self.k),
                "dst": (prb.desc.mb, prb.desc.oc)}
        # zero-copy views of the driver's arrays as matrices; a sum's prior dst is a copy
        # (the output overwrites it)
        t = {n: torch_backend.to_torch(torch, a.reshape(rows[n])) for n, a in inputs.items()
             if n in rows}
        if "bia" in inputs:   # torch's bias has the input's type (exact for the fill)
            t["bia"] = torch_backend.to_torch(torch, inputs["bia"]).to(t["src"].dtype)
        if any(isinstance(e, Sum) for e in prb.post_ops.entries):
            t["prior"] = torch_backend.to_torch(torch, outs["dst"].array.reshape(rows["dst"]).copy())
        return torch_backend.run_and_collect(torch, self._program(t), outs)

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Executor | None:
    return torch_backend.create_in_case(res, prb.impl_filter,
                                        lambda torch: _Executor(torch, prb))
