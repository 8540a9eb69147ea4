"""Binary in the C core (kernels/include/bdnn_binary.h): the algorithms' codes, the
implementation table and the primitive."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, ffi, lib
from .conv import BINARY_ALGS, PostChain
from .faults import OpFault, _with_fault

# The binary primitive's algorithms by benchdnn name: the post-op's and select.
BINARY_PRIMITIVE_ALGS = {**BINARY_ALGS, "select": lib.BDNN_BINARY_SELECT}
MAX_NDIMS = lib.BDNN_BINARY_MAX_NDIMS


@lru_cache(maxsize=None)
def binary_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_binary_impl_count, lib.bdnn_binary_impl_name,
                  lib.bdnn_binary_impl_isa, lib.bdnn_binary_impl_operands)


def reach(dims: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements a tensor read through strides over dims must hold (0 when empty)."""
    if 0 in dims:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(dims, strides))


@dataclasses.dataclass(frozen=True)
class BinaryPrimitive:
    """One implementation of alg (a BINARY_PRIMITIVE_ALGS name) over dst's dims in its memory order
    (outermost first), each source read through its strides over those dims (0 along a
    broadcast dim), select's condition (s8) through src0's. bind checks the buffers once
    and returns a no-argument callable, so timed runs pay only for the C call."""

    impl: ImplInfo
    alg: str
    src_dts: tuple[str, str]
    dst_dt: str
    dims: tuple[int, ...]
    strides: tuple[tuple[int, ...], tuple[int, ...]]
    scales: tuple[float, float] = (1.0, 1.0)
    fault: OpFault = OpFault.NONE
    memory_bytes = 0   # the kernels allocate nothing

    def __post_init__(self) -> None:
        if len(self.dims) > MAX_NDIMS:
            raise ValueError(f"at most {MAX_NDIMS} dims")
        _check(lib.bdnn_binary_status(self.impl.index, self._desc(), ffi.NULL),
               f"{self.impl.name} with {':'.join(self.src_dts)} -> {self.dst_dt}")

    def _desc(self):
        d = ffi.new("bdnn_binary_desc_t *")
        d.alg = BINARY_PRIMITIVE_ALGS[self.alg]
        d.src0_dt, d.src1_dt, d.dst_dt = (DATA_TYPES[dt][0] for dt in (*self.src_dts,
                                                                        self.dst_dt))
        d.scale0, d.scale1 = self.scales
        d.ndims = len(self.dims)
        for j, n in enumerate(self.dims):
            d.dims[j] = n
            d.src0_strides[j] = self.strides[0][j]
            d.src1_strides[j] = self.strides[1][j]
        return d

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind(self, src0: np.ndarray, src1: np.ndarray, src2: np.ndarray | None,
             dst: np.ndarray, chain: PostChain | None = None) -> Callable[[], None]:
        """Sources holding every element their strides reach (src2: select's condition,
        else None), dst dense (possibly src0's memory); chain: its entries over dst as its
        geometry lays it out."""
        n = int(np.prod(self.dims))
        for name, a, st in (("src0", src0, self.strides[0]), ("src1", src1, self.strides[1]),
                            ("src2", src2, self.strides[0])):
            if a is not None and a.size < reach(self.dims, st):
                raise ValueError(f"{name} holds {a.size} elements, its strides reach "
                                 f"{reach(self.dims, st)}")
        if (self.alg == "select") != (src2 is not None):
            raise ValueError("select takes a condition (src2), the others none")
        if chain is not None:
            chain.check(n)
        args = (self.impl.index, self._desc(), chain.cdata if chain is not None else ffi.NULL,
                _bytes(src0, self.src_dts[0]), _bytes(src1, self.src_dts[1]),
                _bytes(src2, "s8") if src2 is not None else ffi.NULL,
                _out_bytes(dst, self.dst_dt, n), int(self.fault))
        run = _runner(lib.bdnn_binary, args, self.name)
        run.keep = (args, chain, src0, src1, src2)   # what the C structs point to
        return run
