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

from ... import core
from ...backends import onednn
from ...status import Status
from ..base import CaseResult


def unsupported(prb) -> tuple[Status, str] | None:
    """What this backend does not pass to oneDNN (the native route runs these)."""
    why = onednn.cannot_run((prb.sdt, prb.ddt))
    if why:
        return Status.UNIMPLEMENTED, why
    packed = [dt for dt in (prb.sdt, prb.ddt) if dt in core.PACKED_DTS]
    if packed:
        return (Status.UNIMPLEMENTED, f"--{'s' if packed[0] == prb.sdt else 'd'}dt="
                f"{packed[0]}: the oneDNN backend does not pass packed 4-bit buffers")
    if prb.zero_points:
        return (Status.UNIMPLEMENTED, f"--attr-zero-points={prb.zero_points}: the oneDNN "
                "backend does not pass zero points")
    per_point = next((e for e in prb.scales.entries if not e.is_common or e.dt != "f32"),
                     None)
    if per_point is not None:
        return (Status.UNIMPLEMENTED, f"--attr-scales={per_point}: the oneDNN backend passes "
                "common f32 scales only")
    if prb.oflag:
        return (Status.UNIMPLEMENTED, f"--oflag={prb.oflag}: the oneDNN backend does not "
                "read compensation back")
    if prb.runtime_dim_mask:
        return (Status.UNIMPLEMENTED, f"--runtime-dim-mask={prb.runtime_dim_mask}: the "
                "oneDNN backend creates its reorders for their dimensions")
    return None


class _Reorder:
    def __init__(self, lib: onednn.Library, prb, pd: Any, name: str) -> None:
        c = lib.c
        self.lib, self.prb, self.pd, self.name = lib, prb, pd, name
        self.mds = (lib.arg_md(pd, c.DNNL_ARG_FROM), lib.arg_md(pd, c.DNNL_ARG_TO))
        self.prim = lib.primitive(pd)
        self.info = f"isa={lib.isa}"
        self.memory_bytes = lib.scratchpad_bytes(pd)

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
    def make_pd(lib: onednn.Library) -> Any:
        c = lib.c
        attr = lib.attr()
        for name, arg in (("src", c.DNNL_ARG_FROM), ("dst", c.DNNL_ARG_TO)):
            if prb.scales.get(name) is not None:
                lib.set_scales_mask(attr, arg, 0)
        if prb.sum_scale is not None:
            lib.set_post_ops(attr, [("sum", prb.sum_scale)])
        # (the pd copies the attr: neither it nor its post-ops need outlive this call)
        return lib.reorder_pd(lib.md_of(prb.src, prb.sdt), lib.md_of(prb.dst, prb.ddt), attr)

    return onednn.create_in_case(res, prb.impl_filter, make_pd,
                                 lambda lib, pd, name: _Reorder(lib, prb, pd, name))
