"""Reorder in the C core (kernels/include/bdnn_reorder.h): attributes and the primitive
running a list of loop-nest jobs."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (DATA_TYPES, ImplInfo, Operands, Unimplemented, _bytes, _check, _runner,
                   _table, _writable, elements, ffi, isa_supported, lib)
from .faults import OpFault, _with_fault


@lru_cache(maxsize=None)
def reorder_impls() -> tuple[ImplInfo, ...]:
    # A reorder converts between any two types: its rows are not per operand class.
    return _table(lib.bdnn_reorder_impl_count, lib.bdnn_reorder_impl_name,
                  lib.bdnn_reorder_impl_isa, lambda i: Operands.F32)


# The per-point arrays of the generic route, in the C job's arg order: attribute values
# read, then the compensation written (comp: comp_s8s8 and/or comp_zp, given to bind()).
REORDER_ARGS = ("src_scales", "dst_scales", "src_zps", "comp")
COMP_ARRAYS = ("comp_s8s8", "comp_zp")


@dataclasses.dataclass(frozen=True)
class ReorderAttr:
    """dst = ((src - src_zp) * src_scale + sum_scale * (dst_prior - dst_zp) [if sum])
    / dst_scale + dst_zp, in f32 steps, rounded to dst_dt (bdnn_reorder.h). per_point
    names the values read per point from arrays given at bind() (REORDER_ARGS), through
    the jobs' extra strides (layout.Job.args)."""

    src_dt: str = "f32"
    dst_dt: str = "f32"
    src_scale: float = 1.0
    dst_scale: float = 1.0
    sum: bool = False
    sum_scale: float = 1.0
    src_zp: int = 0
    dst_zp: int = 0
    per_point: frozenset[str] = frozenset()

    def cdata(self):
        a = ffi.new("bdnn_reorder_attr_t *")
        a.src_dt, a.dst_dt = DATA_TYPES[self.src_dt][0], DATA_TYPES[self.dst_dt][0]
        a.src_scale, a.dst_scale = self.src_scale, self.dst_scale
        a.sum, a.sum_scale = int(self.sum), self.sum_scale
        a.src_zp, a.dst_zp = self.src_zp, self.dst_zp
        a.per_point = sum(1 << k for k, name in enumerate(REORDER_ARGS)
                          if name in self.per_point)
        return a


def _extent(loops, off: int, which: int) -> int:
    """One past the largest offset a job touches in src (which=1) or dst (which=2)."""
    return off + sum((l[0] - 1) * l[which] for l in loops) + 1


_ARG_TYPES = {"src_scales": np.float32, "dst_scales": np.float32, "src_zps": np.int32,
              "comp": np.int32}


class ReorderPrimitive:
    """One implementation running a fixed list of jobs (layout.Job): the layouts were
    turned into loop nests once, so binding and running only pass pointers. A job's
    extra strides (Job.args) index the per-point arrays, in attr.per_point's order."""

    def __init__(self, impl: ImplInfo, attr: ReorderAttr, jobs, fault: OpFault = OpFault.NONE):
        if not isa_supported(impl.isa):
            raise Unimplemented(f"{impl.name}: the CPU lacks its ISA")
        self.impl, self.attr, self.fault = impl, attr, fault
        self.name = _with_fault(impl.name, fault)
        self.memory_bytes = 0   # the kernels allocate nothing
        # (each bind() makes its own C attributes, with that binding's arrays)
        status = lib.bdnn_reorder_check(impl.index, attr.cdata())
        if status == lib.BDNN_STATUS_UNIMPLEMENTED and "f64" in (attr.src_dt, attr.dst_dt):
            raise Unimplemented("no reorder takes f64 (every route computes in f32)")
        if status == lib.BDNN_STATUS_UNIMPLEMENTED:
            raise Unimplemented(f"{impl.name} takes f32, bf16, f16, s32, s8 and u8 with "
                                f"common scales, no zero points")
        _check(status, impl.name)   # an unknown type: a defect of the caller
        per_point = [k for k, name in enumerate(REORDER_ARGS) if name in attr.per_point]
        names = [REORDER_ARGS[k] for k in per_point]   # the order of Job.args
        self._jobs = ffi.new("bdnn_reorder_job_t[]", max(len(jobs), 1))
        self._njobs = len(jobs)
        self.src_extent = self.dst_extent = 0
        self.arg_extent = dict.fromkeys(names, 0)
        for slot, job in zip(self._jobs, jobs):
            if len(job.loops) > lib.BDNN_REORDER_MAX_LOOPS:
                raise Unimplemented(f"a loop nest of {len(job.loops)} loops")
            if not job.zero and len(job.args) != len(per_point):
                raise ValueError(f"a job indexes {len(job.args)} per-point arrays, the "
                                 f"attributes name {len(per_point)}")
            slot.nloops = len(job.loops)
            for k, (n, ss, ds, *extra) in enumerate(job.loops):
                slot.n[k], slot.src_stride[k], slot.dst_stride[k] = n, ss, ds
                for arg, stride in zip(per_point, extra):
                    slot.arg_stride[arg][k] = stride
            for arg, off in zip(per_point, job.args):
                slot.arg_off[arg] = off
            slot.src_off, slot.dst_off, slot.zero = job.src_off, job.dst_off, int(job.zero)
            if not job.zero:
                self.src_extent = max(self.src_extent, _extent(job.loops, job.src_off, 1))
                for j, (name, off) in enumerate(zip(names, job.args)):
                    self.arg_extent[name] = max(self.arg_extent[name],
                                                _extent(job.loops, off, 3 + j))
            self.dst_extent = max(self.dst_extent, _extent(job.loops, job.dst_off, 2))

    def bind(self, src: np.ndarray, dst: np.ndarray, **arrays: np.ndarray
             ) -> Callable[[], None]:
        """Checks the buffers once (types, and that every job stays inside them). src and
        dst of a 4-bit type are uint8 arrays of packed pairs (extents count elements);
        arrays: the per-point attribute arrays the attributes name (REORDER_ARGS), and for
        comp the compensation outputs (COMP_ARRAYS, int32, either or both)."""
        named = {("comp" if n in COMP_ARRAYS else n) for n in arrays}
        if named != set(self.attr.per_point):
            raise ValueError(f"per-point arrays {sorted(arrays)}; the attributes name "
                             f"{sorted(self.attr.per_point)}")
        if (elements(src, self.attr.src_dt) < self.src_extent
                or elements(dst, self.attr.dst_dt) < self.dst_extent):
            raise ValueError(f"buffers of {src.size} and {dst.size} elements; the jobs "
                             f"reach {self.src_extent} and {self.dst_extent}")
        attr = self.attr.cdata()
        keep = []
        for name, array in arrays.items():
            arg = "comp" if name in COMP_ARRAYS else name
            if arg == "comp":   # written in place: the caller's own int32 array
                if array.dtype != np.int32 or not array.flags.c_contiguous:
                    raise TypeError(f"{name}: expected a C-contiguous int32 array")
                attr.comp_n = array.size
            array = np.ascontiguousarray(array, _ARG_TYPES[arg])
            if array.size < self.arg_extent[arg]:
                raise ValueError(f"{name}: {array.size} values; the jobs reach "
                                 f"{self.arg_extent[arg]}")
            ctype = "float[]" if _ARG_TYPES[arg] is np.float32 else "int32_t[]"
            keep.append(ffi.from_buffer(ctype, array, require_writable=arg == "comp"))
            setattr(attr, name, keep[-1])   # (the cdata owns a reference to array)
        args = (self.impl.index, attr, self._jobs, self._njobs,
                _bytes(src, self.attr.src_dt), _writable(dst, self.attr.dst_dt),
                int(self.fault))
        run = _runner(lib.bdnn_reorder_execute, args, self.name)
        run.keep = keep   # the arrays live as long as the callable
        return run
