"""The oneDNN backend of the binary driver: oneDNN's binary primitive on the case's memory
(backends/onednn.py owns the library).

Every algorithm but SELECT (a third input, newer than the oneDNN 3.x API this backend
declares), on the case's layouts (src1's and dst's `any` resolved as the driver resolves
them), with common f32 scales of src0 and src1 and post-op chains of sum and eltwise
entries; in place, src0 and dst are one memory. Binary and prelu entries stay on the
native kernels (UNIMPLEMENTED here); what the loaded oneDNN cannot create is UNIMPLEMENTED
with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...common.attr import Eltwise, Sum
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    why = onednn.cannot_run([*prb.sdt, prb.ddt])
    if why:
        return Status.UNIMPLEMENTED, why
    if prb.alg == "select":
        return (Status.UNIMPLEMENTED, "--alg=select: the oneDNN backend declares oneDNN's "
                "two-input binary primitive")
    lib, _ = onednn.load()
    for e in prb.post_ops.entries:
        if not isinstance(e, (Sum, Eltwise)):
            return (Status.UNIMPLEMENTED, f"--attr-post-ops={prb.post_ops}: `{e}`: the "
                    "oneDNN backend takes sum and eltwise entries")
        if isinstance(e, Eltwise) and e.scale != 1.0:
            return Status.UNIMPLEMENTED, f"`{e}`: oneDNN 3.x eltwise post-ops take no scale"
        if isinstance(e, Eltwise) and lib.eltwise_alg(e.name) is None:
            return Status.UNIMPLEMENTED, f"`{e}`: oneDNN {lib.version} has no such eltwise"
    for e in prb.scales.entries:
        if e.dt != "f32":
            return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: `{e}`: the oneDNN "
                    "backend takes f32 scales")
    return None


class _Binary:
    """The created primitive, with the native primitive's bind interface (the chain
    argument is the native kernels' own: unused here; the post-ops are in the attr)."""

    def __init__(self, lib: onednn.Library, prb, pd: Any, name: str, keep: list) -> None:
        c = lib.c
        self.lib, self.prb, self.pd, self.keep = lib, prb, pd, keep
        self.mds = {arg: lib.arg_md(pd, arg)
                    for arg in (c.DNNL_ARG_SRC_0, c.DNNL_ARG_SRC_1, c.DNNL_ARG_DST)}
        self.prim = lib.primitive(pd)
        self.name = name
        self.info = f"isa={lib.isa}"
        self.memory_bytes = lib.scratchpad_bytes(pd)

    def bind(self, src0: np.ndarray, src1: np.ndarray, src2: np.ndarray | None,
             dst: np.ndarray, chain=None) -> Callable[[], None]:
        lib, c, keep = self.lib, self.lib.c, [src0, src1, dst]
        mem0 = lib.memory(self.mds[c.DNNL_ARG_SRC_0], src0)
        args = {c.DNNL_ARG_SRC_0: mem0,
                c.DNNL_ARG_SRC_1: lib.memory(self.mds[c.DNNL_ARG_SRC_1], src1),
                c.DNNL_ARG_DST: mem0 if dst is src0 else lib.memory(self.mds[c.DNNL_ARG_DST],
                                                                     dst)}
        for name, arg in (("src", c.DNNL_ARG_SRC_0), ("src1", c.DNNL_ARG_SRC_1)):
            if self.prb.scales.get(name) is not None:
                values = np.array([self.prb.scale(name)], np.float32)
                md = lib.md_of_vector(1, "f32")
                args[c.DNNL_ARG_ATTR_SCALES | arg] = lib.memory(md, values)
                keep += [values, md]
        return lib.timed(self.prim, args, keep)

    def close(self) -> None:
        self.prim = self.pd = self.keep = None


def _post_op(lib: onednn.Library, e) -> tuple:
    if isinstance(e, Sum):
        return ("sum", e.scale, e.zero_point,
                lib.data_type(e.dt) if e.dt else lib.c.dnnl_data_type_undef)
    return ("eltwise", lib.eltwise_alg(e.name), e.alpha, e.beta)


def create(prb, res: CaseResult) -> _Binary | None:
    keep: list = []

    def make_pd(lib: onednn.Library) -> Any:
        c = lib.c
        attr = lib.attr()
        keep.append(attr)
        for name, arg in (("src", c.DNNL_ARG_SRC_0), ("src1", c.DNNL_ARG_SRC_1)):
            if prb.scales.get(name) is not None:
                lib.set_scales_mask(attr, arg, 0)
        if prb.post_ops:
            keep.append(lib.set_post_ops(attr, [_post_op(lib, e)
                                                for e in prb.post_ops.entries]))
        alg = getattr(c, f"dnnl_binary_{prb.alg}")
        return lib.pd("binary", alg, lib.md_of(prb.src_layout(0), prb.sdt[0]),
                      lib.md_of(prb.src_layout(1), prb.sdt[1]),
                      lib.md_of(prb.dst_layout, prb.ddt), attr)

    return onednn.create_in_case(res, prb.impl_filter, make_pd,
                                 lambda lib, pd, name: _Binary(lib, prb, pd, name, keep))
