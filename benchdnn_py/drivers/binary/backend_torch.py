"""The torch backend of the binary driver: the same problems, fill, reference check and
timing loop, executed by PyTorch's elementwise operators (torch loaded lazily:
backends/torch.py).

Operators, as a PyTorch user writes them, each with `out=` into dst's memory:
    ADD SUB MUL DIV        torch.add, torch.sub, torch.mul, torch.div
    MAX MIN                torch.maximum, torch.minimum
    GE GT LE LT EQ NE      torch.ge, ... (into a float dst: 1 or 0)
    SELECT                 torch.where(src2 != 0, src0, src1)
Scales multiply the sources first (torch.mul, timed); sum and eltwise post-ops follow as
torch operators. Tensors are strided views of the driver's memories (any plain layout);
torch broadcasts size-1 dims as the primitive does. torch computes in the promoted type
of the sources and rounds into dst: a dst more precise than that type would hold its
rounding, and is UNIMPLEMENTED; torch's integer arithmetic wraps where oneDNN's
saturates, so integer types are too, as are blocked layouts and binary and prelu post-op
entries.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import torch as torch_backend
from ...common.attr import Eltwise, Sum
from ...status import Status
from ..base import CaseResult

SIGNIFICAND_BITS = {"f32": 24, "f16": 11, "bf16": 8}
OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "maximum",
       "min": "minimum", "ge": "ge", "gt": "gt", "le": "le", "lt": "lt", "eq": "eq",
       "ne": "ne"}
# Eltwise post-ops as torch expressions of x (alpha a, beta b).
ELTWISE = {
    "relu": lambda t, x, a, b: t.where(x > 0, x, x * a),
    "abs": lambda t, x, a, b: t.abs(x),
    "linear": lambda t, x, a, b: x * a + b,
    "tanh": lambda t, x, a, b: t.tanh(x),
    "logistic": lambda t, x, a, b: t.sigmoid(x),
    "exp": lambda t, x, a, b: t.exp(x),
    "square": lambda t, x, a, b: x * x,
    "sqrt": lambda t, x, a, b: t.sqrt(x),
}


def unsupported(prb) -> tuple[Status, str] | None:
    verdict = torch_backend.float_verdict((*prb.sdt, prb.ddt), "binary")
    if verdict:
        return verdict
    compute = prb.sdt[0] if prb.sdt[0] == prb.sdt[1] else "f32"   # torch's promotion
    if SIGNIFICAND_BITS[compute] < SIGNIFICAND_BITS[prb.ddt]:
        return (Status.UNIMPLEMENTED, f"--sdt={':'.join(prb.sdt)} --ddt={prb.ddt}: torch "
                f"computes in the sources' type ({compute}), less precise than dst")
    for name, lay in (("src0", prb.src_layout(0)), ("src1", prb.src_layout(1)),
                      ("dst", prb.dst_layout)):
        if not lay.is_plain:
            return (Status.UNIMPLEMENTED, f"{name} in the blocked layout {lay.name}: torch "
                    "tensors are strided")
    for e in prb.post_ops.entries:
        if not (isinstance(e, Sum) and not e.dt and not e.zero_point
                or isinstance(e, Eltwise) and e.name in ELTWISE and e.scale == 1.0):
            return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: `{e}`: the torch "
                    f"backend takes sum and the eltwise entries {', '.join(ELTWISE)}")
    return None


class _Binary:
    """The primitive: the native primitive's bind interface (the chain argument is the
    native kernels' own: unused here), its run the torch operators into dst's memory."""

    def __init__(self, torch, prb) -> None:
        self.torch, self.prb = torch, prb
        self.name = torch_backend.impl_name(torch)
        self.info = f"threads={torch.get_num_threads()}"
        self.memory_bytes = 0

    def bind(self, src0: np.ndarray, src1: np.ndarray, src2: np.ndarray | None,
             dst: np.ndarray, chain=None) -> Callable[[], None]:
        torch, prb = self.torch, self.prb
        a = torch_backend.view(torch, src0, prb.src_layout(0))
        b = torch_backend.view(torch, src1, prb.src_layout(1))
        c = None if src2 is None else torch_backend.view(torch, src2, prb.src_layout(2))
        y = torch_backend.view(torch, dst, prb.dst_layout)
        k0, k1 = prb.scale("src"), prb.scale("src1")
        prior = y.clone() if any(isinstance(e, Sum) for e in prb.post_ops.entries) else None
        steps = self._chain(prior)
        op = None if prb.alg == "select" else getattr(torch, OPS[prb.alg])
        comparison = prb.alg in ("ge", "gt", "le", "lt", "eq", "ne")

        def run() -> None:
            x0 = a * k0 if k0 != 1.0 else a
            x1 = b * k1 if k1 != 1.0 else b
            if op is not None and not comparison and not steps:
                op(x0, x1, out=y)
                return
            r = torch.where(c != 0, x0, x1) if op is None else op(x0, x1)
            r = r.to(torch.float32)     # a comparison's bool; the chain in f32
            for step in steps:
                r = step(r)
            y.copy_(r)
        run.keep = (src0, src1, src2, dst, a, b, c, y, prior)
        return run

    def _chain(self, prior) -> list[Callable[[Any], Any]]:
        torch, steps = self.torch, []
        for e in self.prb.post_ops.entries:
            if isinstance(e, Sum):
                steps.append(lambda r, k=e.scale: r + prior.to(torch.float32) * k)
            else:
                f = ELTWISE[e.name]
                steps.append(lambda r, f=f, a=e.alpha, b=e.beta: f(torch, r, a, b))
        return steps

    def close(self) -> None:
        pass


def create(prb, res: CaseResult) -> _Binary | None:
    return torch_backend.create_in_case(res, prb.impl_filter, lambda torch: _Binary(torch, prb))
