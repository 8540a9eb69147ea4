"""Batch normalization in the C core (kernels/include/bdnn_bnorm.h): the flags' codes, the
implementation table and the primitive."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (DATA_TYPES, ImplInfo, _bytes, _check, _out_bytes, _runner, _table, ffi,
                   lib)
from .conv import PostChain
from .faults import OpFault, _with_fault
from .softmax import Lines

# benchdnn's flag letters -> the C flags
BNORM_FLAGS = {"G": lib.BDNN_BNORM_GLOBAL_STATS, "C": lib.BDNN_BNORM_SCALE,
               "H": lib.BDNN_BNORM_SHIFT, "R": lib.BDNN_BNORM_RELU,
               "A": lib.BDNN_BNORM_ADD_RELU}


@lru_cache(maxsize=None)
def bnorm_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_bnorm_impl_count, lib.bdnn_bnorm_impl_name,
                  lib.bdnn_bnorm_impl_isa, lib.bdnn_bnorm_impl_operands)


def _f32(array: np.ndarray | None, n: int, writable: bool = False):
    if array is None:
        return ffi.NULL
    if array.dtype != np.float32 or not array.flags.c_contiguous or array.size != n:
        raise TypeError(f"expected {n} contiguous f32 values")
    if writable and not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return ffi.from_buffer("float[]", array, require_writable=writable)


@dataclasses.dataclass(frozen=True)
class BnormPrimitive:
    """One implementation for data of type dt, flags (benchdnn's letters, any order),
    forward (training or inference) or backward. Tensors are dense in one memory order,
    walked as Lines(outer, channels, inner); per-channel arrays are f32. bind_* check the
    buffers once and return a no-argument callable: timed runs pay only for the C call."""

    impl: ImplInfo
    dt: str
    flags: str
    backward: bool
    training: bool = True
    eps: float = 1.0 / 16
    fault: OpFault = OpFault.NONE
    memory_bytes = 0   # per-channel scratch only (a few arrays of channels)

    def __post_init__(self) -> None:
        _check(lib.bdnn_bnorm_status(self.impl.index, DATA_TYPES[self.dt][0],
                                     int(self.backward)),
               f"{self.impl.name} with {self.dt}{' backward' if self.backward else ''}")

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def _desc(self, lines: Lines):
        d = ffi.new("bdnn_bnorm_desc_t *")
        d.dt = DATA_TYPES[self.dt][0]
        d.flags = sum(BNORM_FLAGS[f] for f in set(self.flags))
        d.training = int(self.training)
        d.eps = self.eps
        d.outer, d.channels, d.inner = lines.outer, lines.axis, lines.inner
        return d

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray, lines: Lines,
                 mean: np.ndarray, var: np.ndarray, scale: np.ndarray | None = None,
                 shift: np.ndarray | None = None, src1: np.ndarray | None = None,
                 ws: np.ndarray | None = None,
                 post_chain: PostChain | None = None) -> Callable[[], None]:
        """mean and var: outputs without G (written), inputs with it; ws: u8 per element
        (training with R or A), else None."""
        n, c = lines.size, lines.axis
        if post_chain is not None:
            post_chain.check(n)
        if ws is not None and (ws.dtype != np.uint8 or ws.size != n):
            raise TypeError(f"the workspace is {n} u8 values")
        args = (self.impl.index, self._desc(lines),
                post_chain.cdata if post_chain is not None else ffi.NULL,
                _bytes(src, self.dt, n), _bytes(src1, self.dt, n) if src1 is not None
                else ffi.NULL, _out_bytes(dst, self.dt, n),
                _f32(mean, c, "G" not in self.flags), _f32(var, c, "G" not in self.flags),
                _f32(scale, c), _f32(shift, c),
                ffi.from_buffer("uint8_t[]", ws) if ws is not None else ffi.NULL,
                int(self.fault))
        run = _runner(lib.bdnn_bnorm_fwd, args, self.name)
        run.keep = (args, post_chain, src, src1, dst, mean, var, scale, shift, ws)
        return run

    def bind_bwd(self, src: np.ndarray, mean: np.ndarray, var: np.ndarray,
                 diff_dst: np.ndarray, diff_src: np.ndarray, lines: Lines,
                 scale: np.ndarray | None = None, ws: np.ndarray | None = None,
                 diff_src1: np.ndarray | None = None, diff_scale: np.ndarray | None = None,
                 diff_shift: np.ndarray | None = None) -> Callable[[], None]:
        n, c = lines.size, lines.axis
        if ws is not None and (ws.dtype != np.uint8 or ws.size != n):
            raise TypeError(f"the workspace is {n} u8 values")
        args = (self.impl.index, self._desc(lines), _bytes(src, self.dt, n),
                _f32(mean, c), _f32(var, c), _bytes(diff_dst, self.dt, n), _f32(scale, c),
                ffi.from_buffer("uint8_t[]", ws) if ws is not None else ffi.NULL,
                _out_bytes(diff_src, self.dt, n),
                _out_bytes(diff_src1, self.dt, n) if diff_src1 is not None else ffi.NULL,
                _f32(diff_scale, c, True), _f32(diff_shift, c, True), int(self.fault))
        run = _runner(lib.bdnn_bnorm_bwd, args, self.name)
        run.keep = (args, src, mean, var, diff_dst, diff_src, scale, ws, diff_src1,
                    diff_scale, diff_shift)
        return run
