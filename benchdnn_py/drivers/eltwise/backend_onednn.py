"""The oneDNN backend of the eltwise driver: oneDNN's eltwise primitives on the case's
memory (backends/onednn.py owns the library).

Forward training or inference, and backward data with a forward-training hint, on the
case's tag's layout for every tensor (in place when --inplace=true: one memory for src
and dst). The backward of a _dst algorithm reads dst, which the driver's service forward
computes before the case (as for the native kernels; the reference reads the same
values). What the loaded oneDNN cannot create is UNIMPLEMENTED with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...common import layout
from ...status import Reason, Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    lib, why = onednn.load()
    if lib is None:
        return Status.UNIMPLEMENTED, why
    unmet = onednn.cap_unmet(lib)
    if unmet:
        return Status.UNIMPLEMENTED, unmet
    if not lib.c.has(f"dnnl_{prb.dt}"):
        return Status.UNIMPLEMENTED, f"oneDNN {lib.version} has no data type {prb.dt}"
    if lib.eltwise_alg(prb.alg) is None:
        return Status.UNIMPLEMENTED, f"--alg={prb.alg}: oneDNN {lib.version} has no such eltwise"
    return None


class _Eltwise:
    """The created primitive, with the driver's bind_fwd/bind_bwd interface."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, md: Any) -> None:
        self.lib, self.prb, self.pd, self.md = lib, prb, pd, md
        self.prim = lib.primitive(pd)
        self.name = onednn.impl_name(lib.impl_info(pd))
        self.info = f"isa={lib.isa}"

    def _memory(self, array: np.ndarray, keep: list) -> Any:
        keep.append(array)
        return self.lib.memory(self.md, array)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        c, keep = self.lib.c, []
        mem = self._memory(src, keep)
        args = {c.DNNL_ARG_SRC: mem,
                c.DNNL_ARG_DST: mem if dst is src else self._memory(dst, keep)}
        return self.lib.timed(self.prim, args, keep)

    def bind_bwd(self, x: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 from_dst: bool) -> Callable[[], None]:
        """x: src, or dst for the _dst algorithms (from_dst)."""
        c, keep = self.lib.c, []
        dd = self._memory(diff_dst, keep)
        args = {c.DNNL_ARG_DST if from_dst else c.DNNL_ARG_SRC: self._memory(x, keep),
                c.DNNL_ARG_DIFF_DST: dd,
                c.DNNL_ARG_DIFF_SRC: dd if diff_src is diff_dst else
                self._memory(diff_src, keep)}
        return self.lib.timed(self.prim, args, keep)

    def forward_values(self, src: np.ndarray, dst: np.ndarray) -> None:
        """The service forward of a _dst backward: dst = f(src) on plain buffers, by
        oneDNN's forward primitive."""
        lib, c = self.lib, self.lib.c
        md = lib.md_of(layout.plain(tuple(self.prb.desc.dims)), self.prb.dt)
        pd = lib.pd("eltwise_forward", c.dnnl_forward_training, lib.eltwise_alg(self.prb.alg),
                    md, md, self.prb.alpha, self.prb.beta, lib.ffi.NULL)
        keep = [src, dst]
        lib.timed(lib.primitive(pd), {c.DNNL_ARG_SRC: lib.memory(md, src),
                                      c.DNNL_ARG_DST: lib.memory(md, dst)}, keep)()

    def close(self) -> None:
        self.prim = self.pd = None


def create(prb, res: CaseResult) -> _Eltwise | None:
    lib, why = onednn.load()
    if lib is None:
        res.status, res.reason = Status.UNIMPLEMENTED, why
        return None
    c = lib.c
    try:
        with res.timers("create_pd"):
            md = lib.md_of(prb.layout, prb.dt)
            alg = lib.eltwise_alg(prb.alg)
            null = lib.ffi.NULL
            if prb.dir.forward:
                prop = (c.dnnl_forward_inference if prb.dir.value == "FWD_I"
                        else c.dnnl_forward_training)
                pd = lib.pd("eltwise_forward", prop, alg, md, md, prb.alpha, prb.beta, null)
            else:
                hint = lib.pd("eltwise_forward", c.dnnl_forward_training, alg, md, md,
                              prb.alpha, prb.beta, null)
                pd = lib.pd("eltwise_backward", alg, md, md, md, prb.alpha, prb.beta, hint,
                            null)
            name = onednn.impl_name(lib.impl_info(pd))
            if not prb.impl_filter.allows(name):
                res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
                return None
        with res.timers("create_prim"):
            return _Eltwise(lib, prb, pd, md)
    except onednn.Failed as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"oneDNN {lib.version}: {exc}"
        return None
