"""Pooling in the C core (kernels/include/bdnn_pool.h): algorithms, layouts, workspace,
the primitive and the scalar references."""

from __future__ import annotations

import dataclasses
import enum
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (DATA_TYPES, ImplInfo, Operands, Unimplemented, _bytes, _check, _count,
                   _out_bytes, _ptr, _runner, _set_spatial, _table, _typed_row, ffi, lib,
                   max_threads)
from .conv import PostChain, scratchpad_buffer
from .faults import OpFault, _with_fault


class PoolAlg(enum.IntEnum):
    MAX = lib.BDNN_POOL_MAX
    AVG_P = lib.BDNN_POOL_AVG_P
    AVG_NP = lib.BDNN_POOL_AVG_NP


class Prop(enum.IntEnum):
    FWD_TRAINING = lib.BDNN_PROP_FWD_TRAINING
    FWD_INFERENCE = lib.BDNN_PROP_FWD_INFERENCE
    BWD_DATA = lib.BDNN_PROP_BWD_DATA


class PoolLayout(enum.IntEnum):
    """The memory layouts of src and dst the pooling rows run on (bdnn_pool.h): plain,
    channels last (axb), channel-blocked by 8 or 16 (aBx8b, aBx16b); all dense."""

    NCX = lib.BDNN_POOL_LAYOUT_NCX
    NXC = lib.BDNN_POOL_LAYOUT_NXC
    NCX8C = lib.BDNN_POOL_LAYOUT_NCX8C
    NCX16C = lib.BDNN_POOL_LAYOUT_NCX16C

    @property
    def channel_block(self) -> int:
        """Channels are padded up to a multiple of this (1: no padding)."""
        return {PoolLayout.NCX8C: 8, PoolLayout.NCX16C: 16}.get(self, 1)


@lru_cache(maxsize=None)
def pool_impls() -> tuple[ImplInfo, ...]:
    return _table(lib.bdnn_pool_impl_count, lib.bdnn_pool_impl_name, lib.bdnn_pool_impl_isa,
                  lib.bdnn_pool_impl_operands)


def pool_impl_layouts(impl: ImplInfo) -> frozenset[PoolLayout]:
    """The layouts a pooling row runs on (it refuses the others: Unimplemented)."""
    mask = lib.bdnn_pool_impl_layouts(impl.index)
    return frozenset(l for l in PoolLayout if mask >> int(l) & 1)


@dataclasses.dataclass(frozen=True)
class PoolShape:
    """A pooling in the C core's terms: 3D sizes (1D/2D padded with neutral axes)."""

    mb: int
    c: int
    i: tuple[int, int, int]
    o: tuple[int, int, int]
    k: tuple[int, int, int]
    s: tuple[int, int, int]
    p: tuple[int, int, int]
    dil: tuple[int, int, int]
    layout: PoolLayout = PoolLayout.NCX     # of src and dst (the reference takes NCX only)

    @property
    def src_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.i)

    @property
    def dst_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.o)

    def elems(self, shape: tuple[int, ...]) -> int:
        """Elements a src- or dst-shaped buffer holds in this layout (padded tail included)."""
        b = self.layout.channel_block
        return shape[0] * -(-shape[1] // b) * b * _count(shape[2:])

    def cdata(self):
        d = ffi.new("bdnn_pool_desc_t *")
        d.mb, d.c = self.mb, self.c
        _set_spatial(d, self)
        d.layout = int(self.layout)
        return d


@dataclasses.dataclass(frozen=True)
class Workspace:
    """What the C core says a configuration's workspace is: total bytes (0: none) and the
    size of one element."""

    nbytes: int
    elem_bytes: int

    def allocate(self, poison: int) -> np.ndarray:
        """A buffer of the queried size, every element set to ``poison`` (truncated to the
        element size), so that entries a forward pass leaves unwritten stay recognizable."""
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[self.elem_bytes] \
            if self.elem_bytes else np.uint8
        buf = np.empty(self.nbytes // max(self.elem_bytes, 1), dtype)
        buf.fill(poison & ((1 << (8 * dtype().itemsize)) - 1))
        return buf


def pool_workspace(impl: ImplInfo, shape: PoolShape, alg: PoolAlg, prop: Prop) -> Workspace:
    """What row impl needs for this problem (in shape's layout): size, element size; the
    point order is the row's own."""
    ws = ffi.new("bdnn_pool_ws_t *")
    _check(lib.bdnn_pool_workspace(impl.index, shape.cdata(), int(alg), int(prop), ws),
           "pool workspace")
    return Workspace(int(ws.bytes), int(ws.elem_bytes))


class PoolPrimitive:
    """One implementation of one pooling algorithm and propagation kind, on src and dst (or
    their diffs) of the data type dt."""

    def __init__(self, impl: ImplInfo, shape: PoolShape, alg: PoolAlg, prop: Prop,
                 fault: OpFault = OpFault.NONE, dt: str = "f32",
                 post_ops: bool = False, dst_dt: str | None = None,
                 user_scratchpad: bool = False) -> None:
        """post_ops: forward will be given a post-op chain (bind_fwd); dst_dt: forward's
        dst type when not dt. The rows run both on the plain layout only. user_scratchpad:
        each binding gives the kernels a scratchpad of scratchpad_bytes (poisoned), where
        they otherwise allocate their work memory per call."""
        _typed_row(impl, dt, prop is Prop.BWD_DATA)
        self.dst_dt = dst_dt or dt
        if self.dst_dt != dt and (prop is Prop.BWD_DATA or shape.layout is not PoolLayout.NCX):
            raise Unimplemented(f"{impl.name}: a dst type of its own on the plain layout, "
                                "forward, only")
        if self.dst_dt != dt:   # the row's ISA must have dst's conversions (F16C for f16)
            code = DATA_TYPES[self.dst_dt][0]
            operands = {"f32": Operands.F32, "bf16": Operands.BF16,
                        "f16": Operands.F16}.get(self.dst_dt, Operands.INT8)
            _check(lib.bdnn_typed_row_status(int(impl.isa), int(operands), code, 0),
                   f"{impl.name} storing {self.dst_dt}")
        if post_ops and shape.layout is not PoolLayout.NCX:
            raise Unimplemented(f"{impl.name} on the {shape.layout.name.lower()} layout: "
                                "post-ops on the plain layout only")
        self.impl, self.shape, self.alg, self.prop, self.fault = impl, shape, alg, prop, fault
        self.dt = dt
        self._desc = shape.cdata()
        if shape.layout not in pool_impl_layouts(impl):
            raise Unimplemented(f"{impl.name} on the {shape.layout.name.lower()} layout")
        self.workspace = pool_workspace(impl, shape, alg, prop)
        self.name = _with_fault(impl.name, fault)
        backward = prop is Prop.BWD_DATA
        self.scratchpad_bytes = int(lib.bdnn_pool_scratchpad_bytes(
            impl.index, self._desc, int(alg), int(backward), DATA_TYPES[dt][0],
            DATA_TYPES[self.dst_dt][0]))
        if self.scratchpad_bytes < 0:   # (the checks above are the C core's own)
            raise Unimplemented(f"{impl.name}: takes no such problem")
        self.user_scratchpad = user_scratchpad
        self.info = (f"threads={max_threads()}, scratchpad {self.scratchpad_bytes} bytes "
                     f"({'user' if user_scratchpad else 'library'})")
        # The kernels' work memory (a call's, or the scratchpad the driver gives), and the
        # workspace, which the driver allocates in this implementation's size.
        self.memory_bytes = self.scratchpad_bytes + self.workspace_bytes

    @property
    def workspace_bytes(self) -> int:
        """The workspace's size (as the oneDNN backend's pooling primitive names it)."""
        return self.workspace.nbytes

    def _ws_ptr(self, ws: np.ndarray | None):
        if not self.workspace.nbytes:
            return ffi.NULL
        if ws is None or ws.nbytes != self.workspace.nbytes or not ws.flags.c_contiguous:
            raise ValueError(f"{self.name}: expected a workspace of {self.workspace.nbytes} "
                             f"bytes")
        return ffi.from_buffer("char[]", ws)

    def _scratchpad(self) -> tuple[np.ndarray | None, object, int]:
        """(the buffer to keep alive, its pointer, its size): user mode, a scratchpad of
        scratchpad_bytes poisoned 0xFF; library mode, NULL (each call allocates)."""
        if not self.user_scratchpad or not self.scratchpad_bytes:
            return None, ffi.NULL, 0
        buf = scratchpad_buffer(self.scratchpad_bytes)
        return buf, ffi.from_buffer("char[]", buf), buf.size

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, ws: np.ndarray | None,
                 post_chain: PostChain | None = None) -> Callable[[], None]:
        """post_chain: entries over dst (its geometry: c and the output sizes)."""
        s = self.shape
        chain = post_chain.cdata if post_chain is not None else ffi.NULL
        if post_chain is not None:
            post_chain.check(s.elems(s.dst_shape))
        pad, pad_ptr, pad_bytes = self._scratchpad()
        args = (self.impl.index, self._desc, int(self.alg), int(self.prop),
                DATA_TYPES[self.dt][0], DATA_TYPES[self.dst_dt][0], chain,
                _bytes(src, self.dt, s.elems(s.src_shape)),
                _out_bytes(dst, self.dst_dt, s.elems(s.dst_shape)), self._ws_ptr(ws),
                pad_ptr, pad_bytes, int(self.fault))
        run = _runner(lib.bdnn_pool_fwd, args, self.name)
        run.keep = (post_chain, pad)   # what the C arguments only point to
        return run

    def bind_bwd(self, diff_dst: np.ndarray, ws: np.ndarray | None,
                 diff_src: np.ndarray) -> Callable[[], None]:
        s = self.shape
        pad, pad_ptr, pad_bytes = self._scratchpad()
        args = (self.impl.index, self._desc, int(self.alg), DATA_TYPES[self.dt][0],
                _bytes(diff_dst, self.dt, s.elems(s.dst_shape)), self._ws_ptr(ws),
                _out_bytes(diff_src, self.dt, s.elems(s.src_shape)), pad_ptr, pad_bytes,
                int(self.fault))
        run = _runner(lib.bdnn_pool_bwd, args, self.name)
        run.keep = pad
        return run


def ref_pool_fwd(shape: PoolShape, alg: PoolAlg, src: np.ndarray) -> np.ndarray:
    """The scalar reference, forward; dst in float64."""
    dst = np.empty(shape.dst_shape, np.float64)
    _check(lib.bdnn_ref_pool_fwd(shape.cdata(), int(alg),
                                 _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
                                 ffi.from_buffer("double[]", dst)), "reference pooling")
    return dst


def ref_pool_bwd(shape: PoolShape, alg: PoolAlg, src: np.ndarray,
                 diff_dst: np.ndarray) -> np.ndarray:
    """The scalar reference, backward data (max finds its tap in src); diff_src in float64."""
    diff_src = np.empty(shape.src_shape, np.float64)
    _check(lib.bdnn_ref_pool_bwd(shape.cdata(), int(alg),
                                 _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
                                 _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
                                 ffi.from_buffer("double[]", diff_src)),
           "reference pooling backward")
    return diff_src
