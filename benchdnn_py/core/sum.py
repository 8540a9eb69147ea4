"""Sum in the C core (kernels/include/bdnn_sum.h): the implementation table and the
primitive."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, ffi, lib
from .faults import OpFault, _with_fault


@lru_cache(maxsize=None)
def sum_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_sum_impl_count, lib.bdnn_sum_impl_name, lib.bdnn_sum_impl_isa,
                  lib.bdnn_sum_impl_operands)


@dataclasses.dataclass(frozen=True)
class SumPrimitive:
    """One implementation summing sources of the types src_dts into dst_dt. bind checks
    the buffers once and returns a no-argument callable, so timed runs pay only for the C
    call."""

    impl: ImplInfo
    src_dts: tuple[str, ...]
    dst_dt: str
    fault: OpFault = OpFault.NONE
    memory_bytes = 0   # the kernels allocate nothing

    def __post_init__(self) -> None:
        _check(lib.bdnn_sum_status(self.impl.index, len(self.src_dts), self._dts(),
                                   DATA_TYPES[self.dst_dt][0]),
               f"{self.impl.name} with {':'.join(self.src_dts)} -> {self.dst_dt}")

    def _dts(self):
        return ffi.new("int[]", [DATA_TYPES[dt][0] for dt in self.src_dts])

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind(self, srcs: list[np.ndarray], dst: np.ndarray,
             scales: tuple[float, ...]) -> Callable[[], None]:
        """srcs and dst: dense arrays of one memory order, dst possibly srcs[0]."""
        n = dst.size
        if len(srcs) != len(self.src_dts) or len(scales) != len(srcs):
            raise ValueError(f"{len(self.src_dts)} sources and scales expected")
        pointers = [_bytes(a, dt, n) for a, dt in zip(srcs, self.src_dts)]
        c_srcs = ffi.new("void *[]", [ffi.cast("void *", p) for p in pointers])
        c_scales = ffi.new("float[]", [float(s) for s in scales])
        c_dts = self._dts()
        args = (self.impl.index, len(srcs), c_dts, c_srcs, c_scales,
                DATA_TYPES[self.dst_dt][0], _out_bytes(dst, self.dst_dt, n), n,
                int(self.fault))
        run = _runner(lib.bdnn_sum, args, self.name)
        run.keep = (pointers, c_srcs, c_scales, c_dts, srcs)   # what the C arrays point to
        return run
