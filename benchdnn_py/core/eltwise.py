"""Eltwise in the C core (kernels/include/bdnn_eltwise.h): the algorithms' codes, the
implementation table and the primitive."""

from __future__ import annotations

import dataclasses
import enum
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, _typed_row,
                   ffi, lib)
from .conv import PostChain
from .faults import OpFault, _with_fault


class EltAlg(enum.IntEnum):
    """The eltwise algorithms' codes (bdnn.h BDNN_ELT_*): the eltwise driver's and the
    eltwise post-op's one vocabulary. The _dst variants share their base algorithm's code."""

    ABS = lib.BDNN_ELT_ABS
    CLIP = lib.BDNN_ELT_CLIP
    CLIP_V2 = lib.BDNN_ELT_CLIP_V2
    ELU = lib.BDNN_ELT_ELU
    EXP = lib.BDNN_ELT_EXP
    GELU_ERF = lib.BDNN_ELT_GELU_ERF
    GELU_TANH = lib.BDNN_ELT_GELU_TANH
    HARDSIGMOID = lib.BDNN_ELT_HARDSIGMOID
    HARDSWISH = lib.BDNN_ELT_HARDSWISH
    LINEAR = lib.BDNN_ELT_LINEAR
    LOG = lib.BDNN_ELT_LOG
    LOGISTIC = lib.BDNN_ELT_LOGISTIC
    MISH = lib.BDNN_ELT_MISH
    POW = lib.BDNN_ELT_POW
    RELU = lib.BDNN_ELT_RELU
    ROUND = lib.BDNN_ELT_ROUND
    SOFT_RELU = lib.BDNN_ELT_SOFT_RELU
    SQRT = lib.BDNN_ELT_SQRT
    SQUARE = lib.BDNN_ELT_SQUARE
    SWISH = lib.BDNN_ELT_SWISH
    TANH = lib.BDNN_ELT_TANH


@lru_cache(maxsize=None)
def eltwise_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_elt_impl_count, lib.bdnn_elt_impl_name, lib.bdnn_elt_impl_isa,
                  lib.bdnn_elt_impl_operands)


def eltwise_supported(alg: int, backward: bool) -> bool:
    return lib.bdnn_elt_supported(alg, int(backward)) == lib.BDNN_STATUS_OK


def _int64(v: int) -> int:
    """v wrapped into int64_t's range, as C's conversion of a 64-bit pattern."""
    return (v + 2**63) % 2**64 - 2**63


@dataclasses.dataclass(frozen=True)
class DropoutArgs:
    """The dropout attribute as the kernels take it (bdnn_eltwise.h bdnn_dropout_t): drop
    probability p, the generator's seed and offset (64-bit, wrapped as C's int64_t)."""

    p: float
    seed: int = 0
    offset: int = 0

    def cdata(self, mask: np.ndarray | None, n: int):
        """The C struct; mask (u8, n elements, dst's memory order) or None: not written."""
        struct = ffi.new("bdnn_dropout_t *", {"p": self.p, "seed": _int64(self.seed),
                                              "offset": _int64(self.offset)})
        if mask is not None:
            struct.mask = ffi.cast("uint8_t *", _out_bytes(mask, "u8", n))
        return struct


@dataclasses.dataclass(frozen=True)
class EltwisePrimitive:
    """One implementation of one algorithm and direction, on tensors of the data type dt.
    bind_* check the buffers once and return a no-argument callable, so timed runs pay
    only for the C call."""

    impl: ImplInfo
    alg: int
    alpha: float
    beta: float
    backward: bool
    fault: OpFault = OpFault.NONE
    dt: str = "f32"
    memory_bytes = 0   # the kernels allocate nothing

    def __post_init__(self) -> None:
        _typed_row(self.impl, self.dt, self.backward)
        _check(lib.bdnn_elt_supported(self.alg, int(self.backward)), self.impl.name)

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray,
                 post_chain: PostChain | None = None, dropout: DropoutArgs | None = None,
                 mask: np.ndarray | None = None) -> Callable[[], None]:
        """post_chain: its entries over the elements as its geometry lays them out;
        dropout before it, writing mask (u8, dst's size) unless None."""
        n, dt = src.size, self.dt
        chain = post_chain.cdata if post_chain is not None else ffi.NULL
        if post_chain is not None:
            post_chain.check(n)
        drop = dropout.cdata(mask, n) if dropout is not None else ffi.NULL
        args = (self.impl.index, self.alg, DATA_TYPES[dt][0], self.alpha, self.beta, drop,
                chain, _bytes(src, dt), _out_bytes(dst, dt, n), n, int(self.fault))
        run = _runner(lib.bdnn_elt_fwd, args, self.name)
        run.keep = (post_chain, drop, mask)   # what the C structs only point to
        return run

    def bind_bwd(self, x: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 from_dst: bool) -> Callable[[], None]:
        """x: src, or dst for the _dst variants (from_dst)."""
        n, dt = x.size, self.dt
        args = (self.impl.index, self.alg, int(from_dst), DATA_TYPES[dt][0], self.alpha,
                self.beta, _bytes(x, dt), _bytes(diff_dst, dt, n), _out_bytes(diff_src, dt, n),
                n, int(self.fault))
        return _runner(lib.bdnn_elt_bwd, args, self.name)
