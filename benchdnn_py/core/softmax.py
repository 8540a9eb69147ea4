"""Softmax in the C core (kernels/include/bdnn_softmax.h): the algorithms' codes, the
implementation table and the primitive."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, ffi, lib
from .conv import PostChain
from .eltwise import DropoutArgs
from .faults import OpFault, _with_fault

SOFTMAX_ALGS = {"softmax": lib.BDNN_SOFTMAX_ACCURATE, "logsoftmax": lib.BDNN_SOFTMAX_LOG}


@lru_cache(maxsize=None)
def softmax_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_smx_impl_count, lib.bdnn_smx_impl_name, lib.bdnn_smx_impl_isa,
                  lib.bdnn_smx_impl_operands)


@dataclasses.dataclass(frozen=True)
class Lines:
    """A dense tensor as the kernels walk it: outer blocks of `axis` steps of `inner`
    contiguous elements (element (o, a, i) at (o * axis + a) * inner + i)."""

    outer: int
    axis: int
    inner: int

    @property
    def size(self) -> int:
        return self.outer * self.axis * self.inner


@dataclasses.dataclass(frozen=True)
class SoftmaxPrimitive:
    """One implementation of one algorithm and direction, from src_dt to dst_dt (backward:
    dst and diff_dst of dst_dt, diff_src of src_dt). bind_* check the buffers once and
    return a no-argument callable, so timed runs pay only for the C call."""

    impl: ImplInfo
    alg: str
    src_dt: str
    dst_dt: str
    backward: bool
    fault: OpFault = OpFault.NONE
    memory_bytes = 0   # the kernels allocate nothing

    def __post_init__(self) -> None:
        _check(lib.bdnn_smx_status(self.impl.index, DATA_TYPES[self.src_dt][0],
                                   DATA_TYPES[self.dst_dt][0], int(self.backward)),
               f"{self.impl.name} with {self.src_dt}:{self.dst_dt}"
               f"{' backward' if self.backward else ''}")

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def _types(self) -> tuple[int, int, int]:
        return SOFTMAX_ALGS[self.alg], DATA_TYPES[self.src_dt][0], DATA_TYPES[self.dst_dt][0]

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, lines: Lines,
                 src_scale: float = 1.0, dst_scale: float = 1.0,
                 post_chain: PostChain | None = None, dropout: DropoutArgs | None = None,
                 mask: np.ndarray | None = None) -> Callable[[], None]:
        """post_chain: its entries over the elements as its geometry lays them out;
        dropout before it, writing mask (u8, dst's size) unless None."""
        n = lines.size
        chain = post_chain.cdata if post_chain is not None else ffi.NULL
        if post_chain is not None:
            post_chain.check(n)
        drop = dropout.cdata(mask, n) if dropout is not None else ffi.NULL
        args = (self.impl.index, *self._types(), src_scale, dst_scale, drop, chain,
                _bytes(src, self.src_dt, n), _out_bytes(dst, self.dst_dt, n),
                lines.outer, lines.axis, lines.inner, int(self.fault))
        run = _runner(lib.bdnn_smx_fwd, args, self.name)
        run.keep = (post_chain, drop, mask)   # what the C structs only point to
        return run

    def bind_bwd(self, dst: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 lines: Lines) -> Callable[[], None]:
        n = lines.size
        args = (self.impl.index, *self._types(), _bytes(dst, self.dst_dt, n),
                _bytes(diff_dst, self.dst_dt, n), _out_bytes(diff_src, self.src_dt, n),
                lines.outer, lines.axis, lines.inner, int(self.fault))
        return _runner(lib.bdnn_smx_bwd, args, self.name)
