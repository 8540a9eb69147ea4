"""The oneDNN backend of the softmax driver: oneDNN's softmax primitives on the case's
memory (backends/onednn.py owns the library).

Forward training or inference, with common src and dst scales, and backward data with a
forward-training hint, on the case's layouts: src's and dst's as the driver resolves
them (dst `any` takes src's), and backward's diff tensors in dst's. In place is one
memory for the two tensors. Post-ops and dropout stay on the native kernels (the
driver's verdict); what the loaded oneDNN cannot create is UNIMPLEMENTED with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...common.layout import tensor_layout
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    why = onednn.cannot_run([prb.sdt, prb.ddt])
    return (Status.UNIMPLEMENTED, why) if why else None


def _alg(lib: onednn.Library, prb) -> int:
    return lib.c.dnnl_softmax_log if prb.log else lib.c.dnnl_softmax_accurate


class _Softmax:
    """The created primitive, with the native primitive's bind_fwd/bind_bwd interface
    (the kernels' walk and chain arguments are the native kernels' own: unused here)."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, name: str) -> None:
        c = lib.c
        self.lib, self.prb, self.pd = lib, prb, pd
        if prb.dir.forward:
            self.mds = {"src": lib.arg_md(pd, c.DNNL_ARG_SRC),
                        "dst": lib.arg_md(pd, c.DNNL_ARG_DST)}
        else:
            self.mds = {"dst": lib.arg_md(pd, c.DNNL_ARG_DST),
                        "diff_dst": lib.arg_md(pd, c.DNNL_ARG_DIFF_DST),
                        "diff_src": lib.arg_md(pd, c.DNNL_ARG_DIFF_SRC)}
        self.prim = lib.primitive(pd)
        self.name = name
        self.info = f"isa={lib.isa}"
        self.memory_bytes = lib.scratchpad_bytes(pd)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, walk=None, src_scale: float = 1.0,
                 dst_scale: float = 1.0, chain=None, dropout=None,
                 mask=None) -> Callable[[], None]:
        lib, c, keep = self.lib, self.lib.c, [src, dst]
        src_mem = lib.memory(self.mds["src"], src)
        args = {c.DNNL_ARG_SRC: src_mem,
                c.DNNL_ARG_DST: src_mem if dst is src else lib.memory(self.mds["dst"], dst)}
        for name, arg, value in (("src", c.DNNL_ARG_SRC, src_scale),
                                 ("dst", c.DNNL_ARG_DST, dst_scale)):
            if self.prb.scales.get(name) is not None:
                values = np.array([value], np.float32)
                md = lib.md_of_vector(1, "f32")
                args[c.DNNL_ARG_ATTR_SCALES | arg] = lib.memory(md, values)
                keep += [values, md]
        return lib.timed(self.prim, args, keep)

    def bind_bwd(self, dst: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 walk=None) -> Callable[[], None]:
        lib, c = self.lib, self.lib.c
        dd = lib.memory(self.mds["diff_dst"], diff_dst)
        args = {c.DNNL_ARG_DST: lib.memory(self.mds["dst"], dst), c.DNNL_ARG_DIFF_DST: dd,
                c.DNNL_ARG_DIFF_SRC: dd if diff_src is diff_dst else
                lib.memory(self.mds["diff_src"], diff_src)}
        return lib.timed(self.prim, args, [dst, diff_dst, diff_src])

    def close(self) -> None:
        self.prim = self.pd = None


def create(prb, res: CaseResult) -> _Softmax | None:
    def make_pd(lib: onednn.Library) -> Any:
        c, null = lib.c, lib.ffi.NULL
        alg = _alg(lib, prb)
        src_md = lib.md_of(tensor_layout(prb.stag, prb.dims), prb.sdt)
        dst_md = lib.md_of(prb.dst_layout, prb.ddt)
        if prb.dir.forward:
            attr = lib.attr()
            for name, arg in (("src", c.DNNL_ARG_SRC), ("dst", c.DNNL_ARG_DST)):
                if prb.scales.get(name) is not None:
                    lib.set_scales_mask(attr, arg, 0)
            prop = (c.dnnl_forward_inference if prb.dir.value == "FWD_I"
                    else c.dnnl_forward_training)
            return lib.pd("softmax_forward", prop, alg, src_md, dst_md, prb.axis, attr)
        # backward: dst in its layout, the gradients in the kernels' (the driver's `any`)
        data_md = lib.md_of(prb.data_layout, prb.ddt)
        kernel = prb.kernel_layout
        hint = lib.pd("softmax_forward", c.dnnl_forward_training, alg,
                      lib.md_of(prb.data_layout, prb.sdt), data_md, prb.axis, null)
        return lib.pd("softmax_backward", alg, lib.md_of(kernel, prb.sdt),
                      lib.md_of(kernel, prb.ddt), data_md, prb.axis, hint, null)

    return onednn.create_in_case(res, prb.impl_filter, make_pd,
                                 lambda lib, pd, name: _Softmax(lib, prb, pd, name))
