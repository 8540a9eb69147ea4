"""The only module that talks to the C kernel core (benchdnn_py._core).

It turns numpy arrays into C pointers (zero copy, after checking dtype, contiguity and
size), C status codes into exceptions, and exposes the implementation table. cffi's API
mode releases the GIL for every call, so kernels run without holding it.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
from functools import lru_cache
from typing import Callable

import numpy as np

from .errors import BenchError

try:
    from ._core import ffi, lib
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "benchdnn_py's C core is not built; install the package with "
        "`python -m pip install -e .` from the source tree") from exc


class Isa(enum.IntEnum):
    SCALAR = lib.BDNN_ISA_SCALAR
    AVX2 = lib.BDNN_ISA_AVX2
    AVX512 = lib.BDNN_ISA_AVX512


class Direction(enum.IntEnum):
    FWD = lib.BDNN_DIR_FWD
    BWD_DATA = lib.BDNN_DIR_BWD_DATA
    BWD_WEIGHTS = lib.BDNN_DIR_BWD_WEIGHTS


class PostKind(enum.IntEnum):
    SUM = lib.BDNN_POST_SUM
    ELTWISE = lib.BDNN_POST_ELTWISE


@dataclasses.dataclass(frozen=True)
class PostOp:
    """One post-op as the kernels take it: sum (scale) or eltwise (alg, alpha, beta,
    scale)."""

    kind: PostKind
    alg: int = 0
    scale: float = 1.0
    alpha: float = 0.0
    beta: float = 0.0


def eltwise_fwd(op: PostOp, x: np.ndarray) -> None:
    """The kernels' f32 eltwise, in place (for tests of the formulas)."""
    cop = ffi.new("bdnn_post_op_t *")
    cop.kind, cop.alg, cop.scale, cop.alpha, cop.beta = (int(op.kind), op.alg, op.scale,
                                                          op.alpha, op.beta)
    lib.bdnn_eltwise_fwd(cop, _out_ptr(x, x.size), x.size)


class Fault(enum.IntEnum):
    """Deliberate kernel defects, for tests that prove the checks catch them."""

    NONE = lib.BDNN_FAULT_NONE
    SKIP_LAST_IC = lib.BDNN_FAULT_SKIP_LAST_IC
    RIGHT_PAD_EDGE = lib.BDNN_FAULT_RIGHT_PAD_EDGE
    SKIP_LAST_TAP = lib.BDNN_FAULT_SKIP_LAST_TAP
    STRIDE_TRUNC = lib.BDNN_FAULT_STRIDE_TRUNC
    SLOW_GEMM = lib.BDNN_FAULT_SLOW_GEMM
    POST_OPS_SWAPPED = lib.BDNN_FAULT_POST_OPS_SWAPPED
    SUM_SCALE_DROPPED = lib.BDNN_FAULT_SUM_SCALE_DROPPED
    CRASH = lib.BDNN_FAULT_CRASH


FAULT_ENV = "BENCHDNN_PY_TEST_FAULT"


def active_fault() -> Fault:
    """The defect named by $BENCHDNN_PY_TEST_FAULT (lower-case Fault name), if any."""
    name = os.environ.get(FAULT_ENV, "").strip()
    if not name:
        return Fault.NONE
    try:
        return Fault[name.upper()]
    except KeyError:
        raise BenchError(f"{FAULT_ENV}={name}: unknown fault; expected one of "
                         f"{', '.join(f.name.lower() for f in Fault if f)}") from None


class Unimplemented(BenchError):
    """The implementation does not handle this problem."""


class InvalidProblem(BenchError):
    """The C core rejected the problem as inconsistent."""


def _check(status: int, what: str) -> None:
    if status == lib.BDNN_STATUS_OK:
        return
    if status == lib.BDNN_STATUS_UNIMPLEMENTED:
        raise Unimplemented(what)
    if status == lib.BDNN_STATUS_INVALID:
        raise InvalidProblem(what)
    if status == lib.BDNN_STATUS_OUT_OF_MEMORY:
        raise MemoryError(what)
    raise BenchError(f"{what}: unexpected status {status}")


def _ptr(array: np.ndarray | None, ctype: str, dtype: type, count: int | None = None):
    if array is None:
        return ffi.NULL
    if array.dtype != dtype or not array.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous {np.dtype(dtype)} array, got "
                        f"{array.dtype} (contiguous={array.flags.c_contiguous})")
    if count is not None and array.size != count:
        raise ValueError(f"expected {count} elements, got {array.size}")
    return ffi.from_buffer(ctype, array, require_writable=False)


@lru_cache(maxsize=None)
def isa_supported(isa: Isa) -> bool:
    return bool(lib.bdnn_isa_supported(int(isa)))


def max_threads() -> int:
    return int(lib.bdnn_max_threads())


def build_info() -> str:
    return ffi.string(lib.bdnn_build_info()).decode()


@dataclasses.dataclass(frozen=True)
class ImplInfo:
    index: int
    name: str
    isa: Isa


@lru_cache(maxsize=None)
def conv_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return tuple(ImplInfo(i, ffi.string(lib.bdnn_conv_impl_name(i)).decode(),
                          Isa(lib.bdnn_conv_impl_isa(i)))
                 for i in range(lib.bdnn_conv_impl_count()))


@dataclasses.dataclass(frozen=True)
class ConvShape:
    """A convolution in the C core's terms: 3D sizes (1D/2D padded with neutral axes)."""

    g: int
    mb: int
    ic: int
    oc: int
    i: tuple[int, int, int]
    o: tuple[int, int, int]
    k: tuple[int, int, int]
    s: tuple[int, int, int]
    p: tuple[int, int, int]
    dil: tuple[int, int, int]

    @property
    def src_shape(self) -> tuple[int, ...]:
        return (self.mb, self.ic, *self.i)

    @property
    def wei_shape(self) -> tuple[int, ...]:
        return (self.g, self.oc // self.g, self.ic // self.g, *self.k)

    @property
    def dst_shape(self) -> tuple[int, ...]:
        return (self.mb, self.oc, *self.o)

    def cdata(self):
        d = ffi.new("bdnn_conv_desc_t *")
        d.g, d.mb, d.ic, d.oc = self.g, self.mb, self.ic, self.oc
        d.id, d.ih, d.iw = self.i
        d.od, d.oh, d.ow = self.o
        d.kd, d.kh, d.kw = self.k
        d.sd, d.sh, d.sw = self.s
        d.pd, d.ph, d.pw = self.p
        d.dd, d.dh, d.dw = self.dil
        return d


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def ref_conv_fwd(shape: ConvShape, src: np.ndarray, wei: np.ndarray,
                 bias: np.ndarray | None) -> np.ndarray:
    """The scalar reference, forward; returns dst in float64."""
    dst = np.empty(shape.dst_shape, np.float64)
    _check(lib.bdnn_ref_conv_fwd(
        shape.cdata(), _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
        _ptr(wei, "float[]", np.float32, _count(shape.wei_shape)),
        _ptr(bias, "float[]", np.float32, shape.oc),
        ffi.from_buffer("double[]", dst)), "reference convolution")
    return dst


def ref_conv_bwd_data(shape: ConvShape, diff_dst: np.ndarray, wei: np.ndarray) -> np.ndarray:
    """The scalar reference, backward data; returns diff_src in float64."""
    diff_src = np.empty(shape.src_shape, np.float64)
    _check(lib.bdnn_ref_conv_bwd_data(
        shape.cdata(), _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
        _ptr(wei, "float[]", np.float32, _count(shape.wei_shape)),
        ffi.from_buffer("double[]", diff_src)), "reference convolution backward data")
    return diff_src


def ref_conv_bwd_weights(shape: ConvShape, src: np.ndarray, diff_dst: np.ndarray,
                         with_bias: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The scalar reference, backward weights; returns (diff_wei, diff_bias or None) in
    float64."""
    diff_wei = np.empty(shape.wei_shape, np.float64)
    diff_bias = np.empty(shape.oc, np.float64) if with_bias else None
    _check(lib.bdnn_ref_conv_bwd_weights(
        shape.cdata(), _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
        _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
        ffi.from_buffer("double[]", diff_wei),
        ffi.from_buffer("double[]", diff_bias) if with_bias else ffi.NULL),
        "reference convolution backward weights")
    return diff_wei, diff_bias


def bias_grad(x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
    """A callable that writes the per-channel sums of x [mb][channels][...] into out."""
    mb, channels = x.shape[0], x.shape[1]
    spatial = _count(x.shape[2:])
    args = (_ptr(np.ascontiguousarray(x), "float[]", np.float32), mb, channels, spatial,
            _ptr(out, "float[]", np.float32, channels))
    fn = lib.bdnn_bias_grad
    return lambda: _check(fn(*args), "bias gradient")


class ConvPrimitive:
    """A created implementation of one direction for one problem. Use as a context
    manager, or close()."""

    def __init__(self, impl: ImplInfo, shape: ConvShape, direction: Direction,
                 with_bias: bool, fault: Fault = Fault.NONE, *,
                 post_ops: tuple[PostOp, ...] = ()) -> None:
        self.impl, self.shape, self.direction, self.with_bias = impl, shape, direction, with_bias
        self._desc = shape.cdata()
        ops = ffi.new("bdnn_post_op_t[]", max(len(post_ops), 1))
        for slot, op in zip(ops, post_ops):
            slot.kind, slot.alg, slot.scale, slot.alpha, slot.beta = (
                int(op.kind), op.alg, op.scale, op.alpha, op.beta)
        out = ffi.new("bdnn_conv_t **")
        _check(lib.bdnn_conv_create(impl.index, self._desc, int(direction), int(with_bias),
                                    ops, len(post_ops), int(fault), out),
               f"{impl.name} on this problem")
        self._handle = ffi.gc(out[0], lib.bdnn_conv_destroy)
        self.name = ffi.string(lib.bdnn_conv_name(self._handle)).decode()
        if fault:
            self.name += f"+fault:{fault.name.lower()}"

    @property
    def weights_elems(self) -> int:
        return int(lib.bdnn_conv_weights_bytes(self._handle)) // 4

    def pack_weights(self, wei: np.ndarray) -> np.ndarray:
        """The weights reorder into the implementation's layout (forward, backward data)."""
        packed = np.empty(self.weights_elems, np.float32)
        _check(lib.bdnn_conv_pack_weights(
            self._handle, _ptr(wei, "float[]", np.float32, _count(self.shape.wei_shape)),
            ffi.from_buffer("float[]", packed)), "weights reorder")
        return packed

    def _bias_ptr(self, bias: np.ndarray | None, count: int):
        return _ptr(bias if self.with_bias else None, "float[]", np.float32, count)

    def bind(self, src: np.ndarray, wei_packed: np.ndarray, bias: np.ndarray | None,
             dst: np.ndarray) -> Callable[[], None]:
        """Forward. Checks the buffers once and returns a no-argument callable that executes,
        so that timed runs pay only for the C call."""
        self._expect(Direction.FWD)
        s = self.shape
        args = (self._handle, _ptr(src, "float[]", np.float32, _count(s.src_shape)),
                _ptr(wei_packed, "float[]", np.float32, self.weights_elems),
                self._bias_ptr(bias, s.oc), _out_ptr(dst, _count(s.dst_shape)))
        return self._runner(lib.bdnn_conv_execute, args)

    def bind_bwd_data(self, diff_dst: np.ndarray, wei_packed: np.ndarray,
                      bias: np.ndarray | None, diff_src: np.ndarray) -> Callable[[], None]:
        """Backward data (bias: added to diff_src, for deconvolution's forward pass)."""
        self._expect(Direction.BWD_DATA)
        s = self.shape
        args = (self._handle, _ptr(diff_dst, "float[]", np.float32, _count(s.dst_shape)),
                _ptr(wei_packed, "float[]", np.float32, self.weights_elems),
                self._bias_ptr(bias, s.ic), _out_ptr(diff_src, _count(s.src_shape)))
        return self._runner(lib.bdnn_conv_execute_bwd_data, args)

    def bind_bwd_weights(self, src: np.ndarray, diff_dst: np.ndarray, diff_wei: np.ndarray,
                         diff_bias: np.ndarray | None) -> Callable[[], None]:
        """Backward weights: diff_wei in the user layout (and diff_bias)."""
        self._expect(Direction.BWD_WEIGHTS)
        s = self.shape
        args = (self._handle, _ptr(src, "float[]", np.float32, _count(s.src_shape)),
                _ptr(diff_dst, "float[]", np.float32, _count(s.dst_shape)),
                _out_ptr(diff_wei, _count(s.wei_shape)),
                _out_ptr(diff_bias, s.oc) if self.with_bias else ffi.NULL)
        return self._runner(lib.bdnn_conv_execute_bwd_weights, args)

    def _expect(self, direction: Direction) -> None:
        if self.direction is not direction:
            raise ValueError(f"{self.name} was created for {self.direction.name}, "
                             f"not {direction.name}")

    def _runner(self, fn, args) -> Callable[[], None]:
        name = self.name

        def run() -> None:
            status = fn(*args)
            if status:
                _check(status, f"{name} execution")
        return run

    def close(self) -> None:
        if self._handle is not None:
            ffi.release(self._handle)   # runs the gc destructor (bdnn_conv_destroy) now
            self._handle = None

    def __enter__(self) -> "ConvPrimitive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _out_ptr(array: np.ndarray, count: int):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _ptr(array, "float[]", np.float32, count)
