"""Data in and out of a primitive's memories, shared by every driver: a plain layout of
given dims, reorders on this project's kernels (outside the timed region), placing the
user's values into a layout and reading an output back, guarded output buffers, and the
reorder route that lets kernels which run on their own plain layouts serve any layout.
"""

from __future__ import annotations

import numpy as np

from .. import core
from ..engine.memory import Guarded, aligned_array, is_aligned, poison
from . import layout


def reorder(src: layout.Layout, dst: layout.Layout, dt: str,
            fault: core.OpFault = core.OpFault.NONE) -> core.ReorderPrimitive:
    """A same-type reorder from src to dst on the best reorder kernel the CPU runs that
    takes dt (the 8-bit floats: the generic row), dst's padded tail zeroed. Raises
    core.Unimplemented when the layouts cannot be reordered (blocks that do not nest, too
    deep a loop nest)."""
    try:
        jobs = layout.copy_jobs(src, dst) + layout.zero_jobs(dst)
    except layout.BlocksDoNotNest as exc:
        raise core.Unimplemented(str(exc)) from None
    why = "no reorder implementation"
    for impl in core.reorder_impls():
        try:
            return core.ReorderPrimitive(impl, core.ReorderAttr(dt, dt), jobs, fault)
        except core.Unimplemented as exc:
            why = str(exc)
    raise core.Unimplemented(why)


def place(values: np.ndarray, lay: layout.Layout, dt: str) -> np.ndarray:
    """values (plain, the user's layout, of type dt) in a new buffer of layout lay: gaps
    poison, padding zero. Returned as is when lay is the user's layout and values start
    on a cache line. Every memory does (core.ALIGN): numpy's large arrays start 16 bytes
    past a page, where each 64-byte point of a channel block spans two lines and every
    vector load of a point's channels splits."""
    user = layout.plain(lay.dims)
    if lay.same_memory(user):
        if is_aligned(values):
            return values
        out = aligned_array(values.size, values.dtype)
        out[:] = values.reshape(-1)
        return out.reshape(values.shape)
    dtype = core.numpy_dtype(dt)
    buf = aligned_array(lay.size, dtype)
    # every position is a point or padding, both written below, unless the layout has gaps
    if lay.size != lay.padded_nelems:
        buf.fill(poison(dtype))
    if dt in core.DOUBLE_DTS:   # no reorder takes them (f32 inside): by index, bit for bit
        buf[lay.offset_table().reshape(-1)] = values.reshape(-1)
        buf[lay.padding_offsets()] = 0
    else:
        reorder(user, lay, dt).bind(values.reshape(-1), buf)()
    return buf


def needs_route(layouts: dict[str, layout.Layout], kernel: dict[str, layout.Layout]) -> bool:
    """Whether any tensor's memory is not the kernels' layout (Route's arguments): the
    case then runs through the reorder route, and its filter sees the `+reorder` name."""
    return any(not lay.same_memory(kernel[name]) for name, lay in layouts.items())


def place_values(values: np.ndarray, lay: layout.Layout, dt: str) -> np.ndarray:
    """Logical f32 values (any shape) as a new buffer of type dt in layout lay (place)."""
    typed = np.ascontiguousarray(values.reshape(-1).astype(core.numpy_dtype(dt)))
    return place(typed, lay, dt)


def place_into(values: np.ndarray, lay: layout.Layout, dt: str, out: np.ndarray) -> None:
    """values (plain) into the existing buffer out of layout lay (a sum's prior dst)."""
    flat = np.ascontiguousarray(values.reshape(-1), core.numpy_dtype(dt))
    if lay.same_memory(layout.plain(lay.dims)):
        out[:flat.size] = flat
    else:
        reorder(layout.plain(lay.dims), lay, dt).bind(flat, out)()


def output_buffer(lay: layout.Layout, dt: str) -> Guarded:
    """A poisoned, guarded buffer of the whole layout (padding and gaps included)."""
    dtype = core.numpy_dtype(dt)
    return Guarded(lay.size, poison(dtype), dtype)


def read(out: np.ndarray, lay: layout.Layout, points: np.ndarray | None = None) -> np.ndarray:
    """An output's values in logical order (flat), or at linear logical offsets points."""
    if lay.same_memory(layout.plain(lay.dims)):
        flat = out[:lay.nelems]
        return flat if points is None else flat[points]
    if points is None:
        return out[lay.offset_table()].reshape(-1)
    return out[lay.offsets(np.unravel_index(points, lay.dims))]


# -- the reorder route: any layout on kernels that run on their own plain ones -----------

ROUTE_SUFFIX = "+reorder"


class RouteFilter:
    """--impl/--skip-impl applied to the name a routed case shows (`+reorder` included),
    so that the name a result line prints selects the case again; a row named
    family:isa:route (a convolution route) also answers to family:isa+reorder, its name
    before routes were rows of their own."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def allows(self, impl_name: str) -> bool:
        shown = impl_name + ROUTE_SUFFIX
        family = ":".join(impl_name.split(":")[:2]) + ROUTE_SUFFIX
        if family == shown:
            return self.inner.allows(shown)
        if getattr(self.inner, "include", True):   # --impl: either name hits
            return self.inner.allows(shown) or self.inner.allows(family)
        return self.inner.allows(shown) and self.inner.allows(family)


class Route:
    """How a primitive whose kernels run on their own (plain) layouts serves the layouts it
    was given (conv, deconv, eltwise, pooling share it): each input is reordered from its
    memory into a plain scratch buffer, the kernel runs on the scratch, and each output is
    reordered from scratch into its memory (a blocked layout's padded tail zeroed), all
    inside the timed callable: the reorders are part of the primitive, so a reorder defect
    ($BENCHDNN_PY_TEST_FAULT) applies to them. Tensors already in the kernels' layout take
    no reorder; with none to reorder the route is empty and the kernel runs as is.

    layouts: name -> the memory's layout; kernel: name -> the kernels' layout of that
    tensor (same dims); dts: name -> data type; ins/outs: the names the primitive reads and
    writes; read_outs: outputs the kernel also reads first (a sum's prior dst)."""

    def __init__(self, layouts: dict[str, layout.Layout], kernel: dict[str, layout.Layout],
                 dts: dict[str, str], ins, outs, read_outs=(),
                 fault: core.OpFault = core.OpFault.NONE) -> None:
        self.kernel, self.fault = kernel, fault
        self.to_kernel: dict[str, core.ReorderPrimitive] = {}
        self.to_memory: dict[str, core.ReorderPrimitive] = {}
        for name, lay in layouts.items():
            if lay.same_memory(kernel[name]):
                continue
            if name in ins or name in read_outs:
                self.to_kernel[name] = reorder(lay, kernel[name], dts[name], fault)
            if name in outs:
                self.to_memory[name] = reorder(kernel[name], lay, dts[name], fault)
        # what bind allocates: a scratch buffer in the kernels' layout per reordered tensor
        self.scratch_bytes = sum(kernel[n].nelems * core.numpy_dtype(dts[n]).itemsize
                                 for n in {*self.to_kernel, *self.to_memory})

    @property
    def active(self) -> bool:
        return bool(self.to_kernel or self.to_memory)

    def name(self, impl: str) -> str:
        """The implementation's name as results show it: `<impl>+reorder` when routed (a
        kernel fault's `+fault:` suffix kept last, the reorder fault's appended)."""
        if not self.active:
            return impl
        base, sep, kernel_fault = impl.partition("+fault:")
        mine = f"+fault:{self.fault.name.lower()}" if self.fault else ""
        if mine and mine == sep + kernel_fault:     # the kernel names the same fault
            mine = ""
        return base + ROUTE_SUFFIX + sep + kernel_fault + mine

    def _scratch(self, name: str, dtype: np.dtype) -> np.ndarray:
        return aligned_array(self.kernel[name].nelems, dtype)

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, np.ndarray]):
        """(k_in, k_out, wrap): the kernel-layout arrays standing for the memories given
        (flat scratch where a reorder is needed, else the memory itself), and wrap(kernel)
        -> the primitive's callable (reorders around the bound kernel)."""
        before: list = []
        after: list = []
        k_in, k_out = dict(inputs), dict(outs)
        for name, array in inputs.items():
            if name in self.to_kernel:
                k_in[name] = self._scratch(name, array.dtype)
                before.append(self.to_kernel[name].bind(array.reshape(-1), k_in[name]))
        for name, array in outs.items():
            if name in self.to_memory:
                k_out[name] = self._scratch(name, array.dtype)
                if name in self.to_kernel:     # read first, through its layout
                    before.append(self.to_kernel[name].bind(array.reshape(-1), k_out[name]))
                after.append(self.to_memory[name].bind(k_out[name], array.reshape(-1)))

        def wrap(kernel, pre=()):
            """pre: steps of the primitive between the input reorders and the kernel
            (conv's weight re-packing)."""
            if not before and not after and not pre:
                return kernel
            steps = (*before, *pre, kernel, *after)

            def run() -> None:
                for step in steps:
                    step()
            return run
        return k_in, k_out, wrap
