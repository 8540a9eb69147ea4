"""The oneDNN backend of the reorder driver: oneDNN's reorder primitive between the
case's two memories (backends/onednn.py owns the library).

The source and destination descriptors are the case's layouts (tags, blocked tags or
strides; an offset is where the memory's handle points), with the src and dst scales as
common scale masks (their values passed as memories at execution) and the sum post-op
appended. What the loaded oneDNN cannot create is UNIMPLEMENTED with its status.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends import onednn
from ...status import Reason, Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    lib, why = onednn.load()
    if lib is None:
        return Status.UNIMPLEMENTED, why
    unmet = onednn.cap_unmet(lib)
    if unmet:
        return Status.UNIMPLEMENTED, unmet
    for dt in (prb.sdt, prb.ddt):
        if not lib.c.has(f"dnnl_{dt}"):
            return Status.UNIMPLEMENTED, f"oneDNN {lib.version} has no data type {dt}"
    return None


class _Reorder:
    def __init__(self, lib: onednn.Library, prb, pd: Any, prim: Any,
                 mds: tuple[Any, Any], keep: list) -> None:
        self.lib, self.prb, self.pd, self.prim, self.mds, self.keep = \
            lib, prb, pd, prim, mds, keep
        self.name = onednn.impl_name(lib.impl_info(pd))
        self.info = f"isa={lib.isa}"

    def bind(self, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        lib, c, prb = self.lib, self.lib.c, self.prb
        keep: list[Any] = [src, dst]
        args = {c.DNNL_ARG_FROM: lib.memory(self.mds[0], src, prb.src.offset0 * src.itemsize),
                c.DNNL_ARG_TO: lib.memory(self.mds[1], dst, prb.dst.offset0 * dst.itemsize)}
        for name, arg in (("src", c.DNNL_ARG_FROM), ("dst", c.DNNL_ARG_TO)):
            if prb.scales.get(name) is not None:
                values = np.array([prb.scale(name)], np.float32)
                md = lib.md_of_vector(1, "f32")
                args[c.DNNL_ARG_ATTR_SCALES | arg] = lib.memory(md, values)
                keep += [values, md]
        return lib.timed(self.prim, args, keep)

    def close(self) -> None:
        self.prim = self.pd = None


def create(prb, res: CaseResult) -> _Reorder | None:
    lib, why = onednn.load()
    if lib is None:
        res.status, res.reason = Status.UNIMPLEMENTED, why
        return None
    keep: list[Any] = []
    try:
        with res.timers("create_pd"):
            mds = (lib.md_of(prb.src, prb.sdt), lib.md_of(prb.dst, prb.ddt))
            attr = lib.attr()
            for name, arg in (("src", lib.c.DNNL_ARG_FROM), ("dst", lib.c.DNNL_ARG_TO)):
                if prb.scales.get(name) is not None:
                    lib.set_scales_mask(attr, arg, 0)
            if prb.sum_scale is not None:
                keep.append(lib.set_post_ops(attr, [("sum", prb.sum_scale)]))
            pd = lib.reorder_pd(mds[0], mds[1], attr)
            name = onednn.impl_name(lib.impl_info(pd))
            if not prb.impl_filter.allows(name):
                res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
                return None
        with res.timers("create_prim"):
            return _Reorder(lib, prb, pd, lib.primitive(pd), mds, keep + [attr])
    except onednn.Failed as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"oneDNN {lib.version}: {exc}"
        return None
