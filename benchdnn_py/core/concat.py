"""Concat in the C core (kernels/include/bdnn_concat.h): the implementation table and the
primitive."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, ffi, lib
from .faults import OpFault, _with_fault


@lru_cache(maxsize=None)
def concat_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_concat_impl_count, lib.bdnn_concat_impl_name,
                  lib.bdnn_concat_impl_isa, lib.bdnn_concat_impl_operands)


@dataclasses.dataclass(frozen=True)
class ConcatPrimitive:
    """One implementation joining sources of src_dt into dst_dt. bind checks the buffers
    once and returns a no-argument callable, so timed runs pay only for the C call."""

    impl: ImplInfo
    src_dt: str
    dst_dt: str
    fault: OpFault = OpFault.NONE
    memory_bytes = 0   # the kernels allocate nothing

    def __post_init__(self) -> None:
        _check(lib.bdnn_concat_status(self.impl.index, DATA_TYPES[self.src_dt][0],
                                      DATA_TYPES[self.dst_dt][0]),
               f"{self.impl.name} with {self.src_dt} -> {self.dst_dt}")

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind(self, srcs: list[np.ndarray], dst: np.ndarray, outer: int,
             axis_sizes: tuple[int, ...], inner: int,
             scales: tuple[float, ...]) -> Callable[[], None]:
        """srcs: dense, outer x axis_sizes[s] x inner each; dst: outer x sum x inner, in
        the same memory order."""
        if not len(srcs) == len(axis_sizes) == len(scales):
            raise ValueError("one axis size and one scale per source")
        pointers = [_bytes(a, self.src_dt, outer * k * inner)
                    for a, k in zip(srcs, axis_sizes)]
        c_srcs = ffi.new("void *[]", [ffi.cast("void *", p) for p in pointers])
        c_sizes = ffi.new("int64_t[]", list(axis_sizes))
        c_scales = ffi.new("float[]", [float(s) for s in scales])
        n = outer * sum(axis_sizes) * inner
        args = (self.impl.index, len(srcs), DATA_TYPES[self.src_dt][0], c_srcs, c_sizes,
                c_scales, DATA_TYPES[self.dst_dt][0], _out_bytes(dst, self.dst_dt, n), outer,
                inner, int(self.fault))
        run = _runner(lib.bdnn_concat, args, self.name)
        run.keep = (pointers, c_srcs, c_sizes, c_scales, srcs)   # what the C arrays hold
        return run
