"""Reorder in the C core (kernels/include/bdnn_reorder.h): attributes and the primitive
running a list of loop-nest jobs."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (DATA_TYPES, ImplInfo, Operands, Unimplemented, _bytes, _runner, _table,
                   _writable, ffi, isa_supported, lib)
from .faults import OpFault, _with_fault


@lru_cache(maxsize=None)
def reorder_impls() -> tuple[ImplInfo, ...]:
    # A reorder converts between any two types: its rows are not per operand class.
    return _table(lib.bdnn_reorder_impl_count, lib.bdnn_reorder_impl_name,
                  lib.bdnn_reorder_impl_isa, lambda i: Operands.F32)


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
        a.src_dt, a.dst_dt = DATA_TYPES[self.src_dt][0], DATA_TYPES[self.dst_dt][0]
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
        if not isa_supported(impl.isa):
            raise Unimplemented(f"{impl.name}: the CPU lacks its ISA")
        self.impl, self.attr, self.fault = impl, attr, fault
        self.name = _with_fault(impl.name, fault)
        self.memory_bytes = 0   # the kernels allocate nothing
        self._attr = attr.cdata()
        self._jobs = ffi.new("bdnn_reorder_job_t[]", max(len(jobs), 1))
        self._njobs = len(jobs)
        self.src_extent = self.dst_extent = 0
        for slot, job in zip(self._jobs, jobs):
            if len(job.loops) > lib.BDNN_REORDER_MAX_LOOPS:
                raise Unimplemented(f"a loop nest of {len(job.loops)} loops")
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
                _bytes(src, self.attr.src_dt), _writable(dst, self.attr.dst_dt),
                int(self.fault))
        return _runner(lib.bdnn_reorder_execute, args, self.name)
