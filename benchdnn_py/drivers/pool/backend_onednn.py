"""The oneDNN backend of the pooling driver: oneDNN's pooling primitives on the case's
memory (backends/onednn.py owns the library).

Forward training (max keeps a workspace, in oneDNN's own format) or inference, and
backward data with a forward-training hint, on the case's tag's layout for src and dst.
Backward reads the workspace that the hint's forward primitive writes first, outside the
timed region, as benchdnn runs it. The workspace's format is oneDNN's, so the native
rows' check of unwritten workspace entries does not apply; the backward gradients still
show a workspace that points at the wrong tap. What the loaded oneDNN cannot create is
UNIMPLEMENTED with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...status import Status
from ..base import CaseResult

ALGS = {"max": "pooling_max", "avg_np": "pooling_avg_exclude_padding",
        "avg_p": "pooling_avg_include_padding"}


def unsupported(prb) -> tuple[Status, str] | None:
    why = onednn.cannot_run(prb.types)
    return (Status.UNIMPLEMENTED, why) if why else None


class _Pool:
    """The created primitive (and, for backward, the forward that fills its workspace)."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, fwd_pd: Any, name: str) -> None:
        # (fwd_pd kept: the workspace descriptor below is its memory)
        self.lib, self.prb, self.pd, self.fwd_pd = lib, prb, pd, fwd_pd
        # src and dst in the case's layouts: the descriptors the forward pd holds
        c, fwd = lib.c, fwd_pd if fwd_pd is not None else pd
        self.mds = {"src": lib.arg_md(fwd, c.DNNL_ARG_SRC), "dst": lib.arg_md(fwd, c.DNNL_ARG_DST)}
        self.prim = lib.primitive(pd)
        self.forward = lib.primitive(fwd_pd) if fwd_pd is not None else None
        self.name = name
        self.info = f"isa={lib.isa}"
        self.ws_md = lib.arg_md(fwd_pd if fwd_pd is not None else pd, lib.c.DNNL_ARG_WORKSPACE)
        self.workspace_bytes = lib.md_size(self.ws_md) if self.ws_md else 0
        # its scratchpads, and the workspace (allocated by the driver, in oneDNN's size)
        self.memory_bytes = (lib.scratchpad_bytes(pd) + self.workspace_bytes
                             + (lib.scratchpad_bytes(fwd_pd) if fwd_pd is not None else 0))

    def new_workspace(self) -> np.ndarray | None:
        return np.zeros(self.workspace_bytes, np.uint8) if self.workspace_bytes else None

    def _args(self, pairs: dict[int, tuple[Any, np.ndarray | None]], keep: list) -> dict:
        args = {}
        for arg, (md, array) in pairs.items():
            if array is not None:
                keep.append(array)
                args[arg] = self.lib.memory(md, array)
        return args

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray,
                 ws: np.ndarray | None) -> Callable[[], None]:
        c, keep = self.lib.c, []
        args = self._args({c.DNNL_ARG_SRC: (self.mds["src"], src),
                           c.DNNL_ARG_DST: (self.mds["dst"], dst),
                           c.DNNL_ARG_WORKSPACE: (self.ws_md, ws)}, keep)
        return self.lib.timed(self.prim, args, keep)

    def service_forward(self, src: np.ndarray, ws: np.ndarray | None) -> None:
        """The forward training pass whose workspace backward reads (dst discarded)."""
        c, keep = self.lib.c, []
        dst = np.empty(self.lib.md_size(self.mds["dst"]), np.uint8)
        args = self._args({c.DNNL_ARG_SRC: (self.mds["src"], src),
                           c.DNNL_ARG_DST: (self.mds["dst"], dst),
                           c.DNNL_ARG_WORKSPACE: (self.ws_md, ws)}, keep)
        self.lib.timed(self.forward, args, keep)()

    def bind_bwd(self, diff_dst: np.ndarray, ws: np.ndarray | None,
                 diff_src: np.ndarray) -> Callable[[], None]:
        c, keep = self.lib.c, []
        args = self._args({c.DNNL_ARG_DIFF_DST: (self.mds["dst"], diff_dst),
                           c.DNNL_ARG_DIFF_SRC: (self.mds["src"], diff_src),
                           c.DNNL_ARG_WORKSPACE: (self.ws_md, ws)}, keep)
        return self.lib.timed(self.prim, args, keep)

    def close(self) -> None:
        self.prim = self.forward = self.pd = self.fwd_pd = None


def create(prb, res: CaseResult) -> _Pool | None:
    d, backward = prb.desc, prb.dir.value == "BWD_D"
    fwd = None   # backward's forward-training hint, whose primitive fills the workspace

    def make_pd(lib: onednn.Library) -> Any:
        nonlocal fwd
        c, null = lib.c, lib.ffi.NULL
        src, dst = (lib.md_of(prb.layout(t), dt) for t, dt in zip(("src", "dst"), prb.types))
        geo = [lib._dims(tuple(v[a] for a in d.spatial_axes))
               for v in (d.s, d.k, d.dil, d.p, d.p_r)]
        alg = getattr(c, f"dnnl_{ALGS[prb.alg]}")
        prop = c.dnnl_forward_inference if prb.dir.value == "FWD_I" else c.dnnl_forward_training
        fwd = lib.pd("pooling_forward", prop, alg, src, dst, *geo, null)
        return lib.pd("pooling_backward", alg, src, dst, *geo, fwd, null) if backward else fwd

    return onednn.create_in_case(
        res, prb.impl_filter, make_pd,
        lambda lib, pd, name: _Pool(lib, prb, pd, fwd if backward else None, name))
