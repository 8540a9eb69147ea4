"""C-boundary wrappers of the eltwise, pooling and reorder kernels
(kernels/include/bdnn_eltwise.h, bdnn_pool.h, bdnn_reorder.h).

They belong in core.py (the one module that calls C) and are kept apart only while
another change edits core.py; fold them in later. Like core.py, this module converts
numpy arrays to checked pointers and C status codes to exceptions; it reuses core's
helpers so both follow one set of rules.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from functools import lru_cache
from typing import Callable

import numpy as np

from . import core
from .core import ImplInfo, Isa, _check, _count, _out_ptr, _ptr
from .errors import BenchError

from ._core import ffi, lib


# -- deliberate defects ----------------------------------------------------------------

class OpFault(enum.IntEnum):
    """Deliberate defects of the eltwise and pooling kernels (tests only), selected by the
    same $BENCHDNN_PY_TEST_FAULT as core.Fault; the values live in these kernels' headers."""

    NONE = 0
    ELT_TAIL_DROPPED = lib.BDNN_ELT_FAULT_TAIL_DROPPED
    POOL_WS_IGNORED = lib.BDNN_POOL_FAULT_WS_IGNORED
    POOL_WS_UNWRITTEN = lib.BDNN_POOL_FAULT_WS_UNWRITTEN
    REORDER_PADDING_GARBAGE = lib.BDNN_REORDER_FAULT_PADDING_GARBAGE
    REORDER_DENSE_DST = lib.BDNN_REORDER_FAULT_DENSE_DST


def active_fault() -> OpFault:
    """The defect $BENCHDNN_PY_TEST_FAULT names for these kernels. A convolution defect
    (core.Fault) leaves them correct, so it reads as none here."""
    name = os.environ.get(core.FAULT_ENV, "").strip()
    if not name:
        return OpFault.NONE
    if name.upper() in OpFault.__members__:
        return OpFault[name.upper()]
    if name.upper() in core.Fault.__members__:
        return OpFault.NONE
    known = [f.name.lower() for f in core.Fault if f] + [f.name.lower() for f in OpFault if f]
    raise BenchError(f"{core.FAULT_ENV}={name}: unknown fault; expected one of "
                     f"{', '.join(known)}")


def _with_fault(name: str, fault: OpFault) -> str:
    return name + (f"+fault:{fault.name.lower()}" if fault else "")


def _table(count, name, isa) -> tuple[ImplInfo, ...]:
    return tuple(ImplInfo(i, ffi.string(name(i)).decode(), Isa(isa(i))) for i in range(count()))


# -- eltwise ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def eltwise_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_elt_impl_count, lib.bdnn_elt_impl_name, lib.bdnn_elt_impl_isa)


def eltwise_supported(alg: int, backward: bool) -> bool:
    return lib.bdnn_elt_supported(alg, int(backward)) == lib.BDNN_STATUS_OK


@dataclasses.dataclass(frozen=True)
class EltwisePrimitive:
    """One implementation of one algorithm and direction. bind_* check the buffers once and
    return a no-argument callable, so timed runs pay only for the C call."""

    impl: ImplInfo
    alg: int
    alpha: float
    beta: float
    backward: bool
    fault: OpFault = OpFault.NONE

    def __post_init__(self) -> None:
        if not core.isa_supported(self.impl.isa):
            raise core.Unimplemented(f"{self.impl.name}: the CPU lacks its ISA")
        _check(lib.bdnn_elt_supported(self.alg, int(self.backward)), self.impl.name)

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        n = src.size
        args = (self.impl.index, self.alg, self.alpha, self.beta,
                _ptr(src, "float[]", np.float32), _out_ptr(dst, n), n, int(self.fault))
        return _runner(lib.bdnn_elt_fwd, args, self.name)

    def bind_bwd(self, x: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 from_dst: bool) -> Callable[[], None]:
        """x: src, or dst for the _dst variants (from_dst)."""
        n = x.size
        args = (self.impl.index, self.alg, int(from_dst), self.alpha, self.beta,
                _ptr(x, "float[]", np.float32), _ptr(diff_dst, "float[]", np.float32, n),
                _out_ptr(diff_src, n), n, int(self.fault))
        return _runner(lib.bdnn_elt_bwd, args, self.name)


def _runner(fn, args, name: str) -> Callable[[], None]:
    def run() -> None:
        status = fn(*args)
        if status:
            _check(status, f"{name} execution")
    return run


# -- pooling ---------------------------------------------------------------------------

class PoolAlg(enum.IntEnum):
    MAX = lib.BDNN_POOL_MAX
    AVG_P = lib.BDNN_POOL_AVG_P
    AVG_NP = lib.BDNN_POOL_AVG_NP


class Prop(enum.IntEnum):
    FWD_TRAINING = lib.BDNN_PROP_FWD_TRAINING
    FWD_INFERENCE = lib.BDNN_PROP_FWD_INFERENCE
    BWD_DATA = lib.BDNN_PROP_BWD_DATA


@lru_cache(maxsize=None)
def pool_impls() -> tuple[ImplInfo, ...]:
    return _table(lib.bdnn_pool_impl_count, lib.bdnn_pool_impl_name, lib.bdnn_pool_impl_isa)


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

    @property
    def src_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.i)

    @property
    def dst_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.o)

    def cdata(self):
        d = ffi.new("bdnn_pool_desc_t *")
        d.mb, d.c = self.mb, self.c
        d.id, d.ih, d.iw = self.i
        d.od, d.oh, d.ow = self.o
        d.kd, d.kh, d.kw = self.k
        d.sd, d.sh, d.sw = self.s
        d.pd, d.ph, d.pw = self.p
        d.dd, d.dh, d.dw = self.dil
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


def pool_workspace(shape: PoolShape, alg: PoolAlg, prop: Prop) -> Workspace:
    ws = ffi.new("bdnn_pool_ws_t *")
    _check(lib.bdnn_pool_workspace(shape.cdata(), int(alg), int(prop), ws), "pool workspace")
    return Workspace(int(ws.bytes), int(ws.elem_bytes))


class PoolPrimitive:
    """One implementation of one pooling algorithm and propagation kind."""

    def __init__(self, impl: ImplInfo, shape: PoolShape, alg: PoolAlg, prop: Prop,
                 fault: OpFault = OpFault.NONE) -> None:
        if not core.isa_supported(impl.isa):
            raise core.Unimplemented(f"{impl.name}: the CPU lacks its ISA")
        self.impl, self.shape, self.alg, self.prop, self.fault = impl, shape, alg, prop, fault
        self._desc = shape.cdata()
        self.workspace = pool_workspace(shape, alg, prop)
        self.name = _with_fault(impl.name, fault)

    def _ws_ptr(self, ws: np.ndarray | None):
        if not self.workspace.nbytes:
            return ffi.NULL
        if ws is None or ws.nbytes != self.workspace.nbytes or not ws.flags.c_contiguous:
            raise ValueError(f"{self.name}: expected a workspace of {self.workspace.nbytes} "
                             f"bytes")
        return ffi.from_buffer("char[]", ws)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray,
                 ws: np.ndarray | None) -> Callable[[], None]:
        s = self.shape
        args = (self.impl.index, self._desc, int(self.alg), int(self.prop),
                _ptr(src, "float[]", np.float32, _count(s.src_shape)),
                _out_ptr(dst, _count(s.dst_shape)), self._ws_ptr(ws), int(self.fault))
        return _runner(lib.bdnn_pool_fwd, args, self.name)

    def bind_bwd(self, diff_dst: np.ndarray, ws: np.ndarray | None,
                 diff_src: np.ndarray) -> Callable[[], None]:
        s = self.shape
        args = (self.impl.index, self._desc, int(self.alg),
                _ptr(diff_dst, "float[]", np.float32, _count(s.dst_shape)), self._ws_ptr(ws),
                _out_ptr(diff_src, _count(s.src_shape)), int(self.fault))
        return _runner(lib.bdnn_pool_bwd, args, self.name)


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


# -- reorder ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def reorder_impls() -> tuple[ImplInfo, ...]:
    return _table(lib.bdnn_reorder_impl_count, lib.bdnn_reorder_impl_name,
                  lib.bdnn_reorder_impl_isa)


@dataclasses.dataclass(frozen=True)
class ReorderAttr:
    """dst = (src * src_scale + sum_scale * dst_prior [if sum]) / dst_scale, in f32 steps,
    rounded to dst_dt (bdnn_reorder.h)."""

    src_dt: str = "f32"
    dst_dt: str = "f32"
    src_scale: float = 1.0
    dst_scale: float = 1.0
    sum: bool = False
    sum_scale: float = 1.0

    def cdata(self):
        a = ffi.new("bdnn_reorder_attr_t *")
        a.src_dt, a.dst_dt = core.DATA_TYPES[self.src_dt][0], core.DATA_TYPES[self.dst_dt][0]
        a.src_scale, a.dst_scale = self.src_scale, self.dst_scale
        a.sum, a.sum_scale = int(self.sum), self.sum_scale
        return a


def _extent(loops, off: int, which: int) -> int:
    """One past the largest offset a job touches in src (which=1) or dst (which=2)."""
    return off + sum((n - 1) * l[which] for l in loops for n in (l[0],)) + 1


class ReorderPrimitive:
    """One implementation running a fixed list of jobs (layout.Job): the layouts were
    turned into loop nests once, so binding and running only pass pointers."""

    def __init__(self, impl: ImplInfo, attr: ReorderAttr, jobs, fault: OpFault = OpFault.NONE):
        if not core.isa_supported(impl.isa):
            raise core.Unimplemented(f"{impl.name}: the CPU lacks its ISA")
        self.impl, self.attr, self.fault = impl, attr, fault
        self.name = _with_fault(impl.name, fault)
        self._attr = attr.cdata()
        self._jobs = ffi.new("bdnn_reorder_job_t[]", max(len(jobs), 1))
        self._njobs = len(jobs)
        self.src_extent = self.dst_extent = 0
        for slot, job in zip(self._jobs, jobs):
            if len(job.loops) > lib.BDNN_REORDER_MAX_LOOPS:
                raise core.Unimplemented(f"a loop nest of {len(job.loops)} loops")
            slot.nloops = len(job.loops)
            for k, (n, ss, ds) in enumerate(job.loops):
                slot.n[k], slot.src_stride[k], slot.dst_stride[k] = n, ss, ds
            slot.src_off, slot.dst_off, slot.zero = job.src_off, job.dst_off, int(job.zero)
            if not job.zero:
                self.src_extent = max(self.src_extent, _extent(job.loops, job.src_off, 1))
            self.dst_extent = max(self.dst_extent, _extent(job.loops, job.dst_off, 2))

    def bind(self, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        """Checks the buffers once (types, and that every job stays inside them)."""
        if src.size < self.src_extent or dst.size < self.dst_extent:
            raise ValueError(f"buffers of {src.size} and {dst.size} elements; the jobs "
                             f"reach {self.src_extent} and {self.dst_extent}")
        args = (self.impl.index, self._attr, self._jobs, self._njobs,
                core._bytes(src, self.attr.src_dt), _writable(dst, self.attr.dst_dt),
                int(self.fault))
        return _runner(lib.bdnn_reorder_execute, args, self.name)


def _writable(array: np.ndarray, dt: str):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return core._bytes(array, dt)


def parallel_memcpy(dst: np.ndarray, src: np.ndarray) -> Callable[[], None]:
    """A callable copying src's bytes into dst on all threads (the bandwidth yardstick)."""
    if dst.nbytes != src.nbytes:
        raise ValueError("memcpy needs buffers of one size")
    args = (_writable(dst, None), core._bytes(src), src.nbytes)
    return lambda: lib.bdnn_parallel_memcpy(*args)
