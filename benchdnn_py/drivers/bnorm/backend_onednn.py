"""The oneDNN backend of the bnorm driver: oneDNN's batch normalization primitives on the
case's memory (backends/onednn.py owns the library).

Forward training or inference and backward (data: backward_data; data and scale/shift:
backward) with a forward-training hint, on src's layout for every data tensor (oneDNN's
`any` resolves dst and the gradients to it). oneDNN keeps its own workspace (a bit per
point): backward with a fused relu runs oneDNN's forward once, when the case binds its
buffers, to produce it. Post-ops stay on the native kernels (the
driver's verdict); what the loaded oneDNN cannot create (add + relu on a CPU, for one) is
UNIMPLEMENTED with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    why = onednn.cannot_run([prb.dt])
    return (Status.UNIMPLEMENTED, why) if why else None


def _flags(lib: onednn.Library, prb) -> int:
    c = lib.c
    names = {"G": c.dnnl_use_global_stats, "C": c.dnnl_use_scale, "H": c.dnnl_use_shift,
             "R": c.dnnl_fuse_norm_relu, "A": c.dnnl_fuse_norm_add_relu}
    return sum(names[f] for f in prb.flags)


def _fwd_pd(lib: onednn.Library, prb, prop: int) -> Any:
    md = lib.md_of(prb.data_layout, prb.dt)
    return lib.pd("batch_normalization_forward", prop, md, md, prb.desc.eps,
                  _flags(lib, prb), lib.attr())


class _Bnorm:
    """The created primitive, with the native primitive's bind_fwd/bind_bwd interface
    (the kernels' walk, workspace and chain arguments are the native kernels' own: unused
    here)."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, hint: Any, name: str) -> None:
        self.lib, self.prb, self.pd, self.hint = lib, prb, pd, hint
        self.prim = lib.primitive(pd)
        self.name = name
        self.info = f"isa={lib.isa}"
        self.memory_bytes = lib.scratchpad_bytes(pd) + self._ws_bytes(pd)

    def _ws_bytes(self, pd: Any) -> int:
        return self.lib.md_size(self.lib.arg_md(pd, self.lib.c.DNNL_ARG_WORKSPACE))

    def _arg(self, args: dict, keep: list, arg: int, array: np.ndarray | None,
             pd: Any = None) -> None:
        """array as execution argument arg, when the primitive takes one (scratch of its
        size when it takes one the case has no use for: backward_data's diff_scale)."""
        md = self.lib.arg_md(pd or self.pd, arg)
        size = self.lib.md_size(md)
        if size > 0:
            if array is None:
                array = np.zeros(size, np.uint8)
            args[arg] = self.lib.memory(md, array)
            keep.append(array)

    def _workspace(self, pd: Any) -> np.ndarray | None:
        size = self._ws_bytes(pd)
        return np.zeros(size, np.uint8) if size else None

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, walk=None, mean=None, var=None,
                 scale=None, shift=None, src1=None, ws=None,
                 chain=None) -> Callable[[], None]:
        lib, c, keep = self.lib, self.lib.c, [src, dst]
        src_mem = lib.memory(lib.arg_md(self.pd, c.DNNL_ARG_SRC), src)
        args = {c.DNNL_ARG_SRC: src_mem,
                c.DNNL_ARG_DST: src_mem if dst is src
                else lib.memory(lib.arg_md(self.pd, c.DNNL_ARG_DST), dst)}
        for arg, array in ((c.DNNL_ARG_MEAN, mean), (c.DNNL_ARG_VARIANCE, var),
                           (c.DNNL_ARG_SCALE, scale), (c.DNNL_ARG_SHIFT, shift),
                           (c.DNNL_ARG_SRC_1, src1),
                           (c.DNNL_ARG_WORKSPACE, self._workspace(self.pd))):
            self._arg(args, keep, arg, array)
        return lib.timed(self.prim, args, keep)

    def _forward_workspace(self, src: np.ndarray, mean: np.ndarray,
                           var: np.ndarray, scale, shift) -> np.ndarray:
        """oneDNN's own workspace for src: its forward training run once."""
        lib, c = self.lib, self.lib.c
        fwd = lib.primitive(self.hint)
        ws = self._workspace(self.hint)
        dst = np.empty_like(src)
        stats = [np.array(mean), np.array(var)]   # outputs without G: scratch copies
        args = {c.DNNL_ARG_SRC: lib.memory(lib.arg_md(self.hint, c.DNNL_ARG_SRC), src),
                c.DNNL_ARG_DST: lib.memory(lib.arg_md(self.hint, c.DNNL_ARG_DST), dst),
                c.DNNL_ARG_WORKSPACE: lib.memory(lib.arg_md(self.hint,
                                                            c.DNNL_ARG_WORKSPACE), ws)}
        keep = [src, dst, ws, stats]
        for arg, array in ((c.DNNL_ARG_MEAN, stats[0]), (c.DNNL_ARG_VARIANCE, stats[1]),
                           (c.DNNL_ARG_SCALE, scale), (c.DNNL_ARG_SHIFT, shift)):
            self._arg(args, keep, arg, array, self.hint)
        lib.timed(fwd, args, keep)()
        return ws

    def bind_bwd(self, src: np.ndarray, mean: np.ndarray, var: np.ndarray,
                 diff_dst: np.ndarray, diff_src: np.ndarray, walk=None, scale=None,
                 ws=None, diff_src1=None, diff_scale=None, diff_shift=None,
                 shift=None) -> Callable[[], None]:
        """shift: the forward's (with a fused relu, oneDNN's forward makes the workspace
        from it); the rest as the native primitive's."""
        lib, c = self.lib, self.lib.c
        keep = [src, mean, var, diff_dst, diff_src]
        dd = lib.memory(lib.arg_md(self.pd, c.DNNL_ARG_DIFF_DST), diff_dst)
        args = {c.DNNL_ARG_DIFF_DST: dd,
                c.DNNL_ARG_DIFF_SRC: dd if diff_src is diff_dst
                else lib.memory(lib.arg_md(self.pd, c.DNNL_ARG_DIFF_SRC), diff_src)}
        own_ws = (self._forward_workspace(src, mean, var, scale, shift)
                  if self.prb.relu else None)
        for arg, array in ((c.DNNL_ARG_SRC, src), (c.DNNL_ARG_MEAN, mean),
                           (c.DNNL_ARG_VARIANCE, var), (c.DNNL_ARG_SCALE, scale),
                           (c.DNNL_ARG_WORKSPACE, own_ws),
                           (c.DNNL_ARG_DIFF_SRC_1, diff_src1),
                           (c.DNNL_ARG_DIFF_SCALE, diff_scale),
                           (c.DNNL_ARG_DIFF_SHIFT, diff_shift)):
            self._arg(args, keep, arg, array)
        return lib.timed(self.prim, args, keep)

    def close(self) -> None:
        self.prim = self.pd = self.hint = None


def create(prb, res: CaseResult) -> _Bnorm | None:
    hints = {}

    def make_pd(lib: onednn.Library) -> Any:
        c = lib.c
        if prb.dir.forward:
            prop = (c.dnnl_forward_inference if prb.dir.value == "FWD_I"
                    else c.dnnl_forward_training)
            return _fwd_pd(lib, prb, prop)
        hints["fwd"] = hint = _fwd_pd(lib, prb, c.dnnl_forward_training)
        k = prb.diff_layout
        prop = c.dnnl_backward if prb.dir.value == "BWD_DW" else c.dnnl_backward_data
        return lib.pd("batch_normalization_backward", prop, lib.md_of(k, prb.dt),
                      lib.md_of(k, prb.dt), lib.md_of(prb.data_layout, prb.dt),
                      prb.desc.eps, _flags(lib, prb), hint, lib.attr())

    return onednn.create_in_case(res, prb.impl_filter, make_pd,
                                 lambda lib, pd, name: _Bnorm(lib, prb, pd,
                                                              hints.get("fwd"), name))
