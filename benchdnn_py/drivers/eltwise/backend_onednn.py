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
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    why = onednn.cannot_run([prb.dt])
    if why:
        return Status.UNIMPLEMENTED, why
    lib, _ = onednn.load()
    if lib.eltwise_alg(prb.alg) is None:
        return Status.UNIMPLEMENTED, f"--alg={prb.alg}: oneDNN {lib.version} has no such eltwise"
    return None


class _Eltwise:
    """The created primitive, with the driver's bind_fwd/bind_bwd interface."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, name: str) -> None:
        # every tensor has the case's layout: one descriptor (the pd's) for all of them
        c = lib.c
        self.lib, self.prb, self.pd = lib, prb, pd
        self.md = lib.arg_md(pd, c.DNNL_ARG_SRC if prb.dir.forward else c.DNNL_ARG_DIFF_DST)
        self.prim = lib.primitive(pd)
        self.name = name
        self.info = f"isa={lib.isa}"
        self.memory_bytes = lib.scratchpad_bytes(pd)

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
    def make_pd(lib: onednn.Library) -> Any:
        c, null = lib.c, lib.ffi.NULL
        md = lib.md_of(prb.layout, prb.dt)
        alg = lib.eltwise_alg(prb.alg)
        if prb.dir.forward:
            prop = (c.dnnl_forward_inference if prb.dir.value == "FWD_I"
                    else c.dnnl_forward_training)
            return lib.pd("eltwise_forward", prop, alg, md, md, prb.alpha, prb.beta, null)
        hint = lib.pd("eltwise_forward", c.dnnl_forward_training, alg, md, md, prb.alpha,
                      prb.beta, null)
        return lib.pd("eltwise_backward", alg, md, md, md, prb.alpha, prb.beta, hint, null)

    return onednn.create_in_case(
        res, prb.impl_filter, make_pd,
        lambda lib, pd, name: _Eltwise(lib, prb, pd, name))
