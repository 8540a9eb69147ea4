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


class Fault(enum.IntEnum):
    """Deliberate kernel defects, for tests that prove the checks catch them."""

    NONE = lib.BDNN_FAULT_NONE
    SKIP_LAST_IC = lib.BDNN_FAULT_SKIP_LAST_IC
    RIGHT_PAD_EDGE = lib.BDNN_FAULT_RIGHT_PAD_EDGE


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


def ref_conv_fwd(shape: ConvShape, src: np.ndarray, wei: np.ndarray,
                 bias: np.ndarray | None) -> np.ndarray:
    """The scalar reference; returns dst in float64."""
    dst = np.empty(shape.dst_shape, np.float64)
    _check(lib.bdnn_ref_conv_fwd(
        shape.cdata(), _ptr(src, "float[]", np.float32, int(math.prod(shape.src_shape))),
        _ptr(wei, "float[]", np.float32, int(math.prod(shape.wei_shape))),
        _ptr(bias, "float[]", np.float32, shape.oc),
        ffi.from_buffer("double[]", dst)), "reference convolution")
    return dst


class ConvPrimitive:
    """A created implementation for one problem. Use as a context manager, or close()."""

    def __init__(self, impl: ImplInfo, shape: ConvShape, with_bias: bool,
                 fault: Fault = Fault.NONE) -> None:
        self.impl, self.shape, self.with_bias = impl, shape, with_bias
        self._desc = shape.cdata()
        out = ffi.new("bdnn_conv_t **")
        _check(lib.bdnn_conv_create(impl.index, self._desc, int(with_bias), int(fault), out),
               f"{impl.name} on this problem")
        self._handle = ffi.gc(out[0], lib.bdnn_conv_destroy)
        self.name = ffi.string(lib.bdnn_conv_name(self._handle)).decode()
        if fault:
            self.name += f"+fault:{fault.name.lower()}"

    @property
    def weights_elems(self) -> int:
        return int(lib.bdnn_conv_weights_bytes(self._handle)) // 4

    def pack_weights(self, wei: np.ndarray) -> np.ndarray:
        packed = np.empty(self.weights_elems, np.float32)
        _check(lib.bdnn_conv_pack_weights(
            self._handle, _ptr(wei, "float[]", np.float32, int(math.prod(self.shape.wei_shape))),
            ffi.from_buffer("float[]", packed)), "weights reorder")
        return packed

    def bind(self, src: np.ndarray, wei_packed: np.ndarray, bias: np.ndarray | None,
             dst: np.ndarray):
        """Checks the buffers once and returns a no-argument callable that executes, so that
        timed runs pay only for the C call."""
        s = self.shape
        args = (self._handle, _ptr(src, "float[]", np.float32, int(math.prod(s.src_shape))),
                _ptr(wei_packed, "float[]", np.float32, self.weights_elems),
                _ptr(bias if self.with_bias else None, "float[]", np.float32, s.oc),
                _ptr(dst, "float[]", np.float32, int(math.prod(s.dst_shape))))
        if dst.flags.writeable is False:
            raise ValueError("dst must be writable")
        execute = lib.bdnn_conv_execute

        def run() -> None:
            status = execute(*args)
            if status:
                _check(status, f"{self.name} execution")
        return run

    def close(self) -> None:
        if self._handle is not None:
            ffi.release(self._handle)   # runs the gc destructor (bdnn_conv_destroy) now
            self._handle = None

    def __enter__(self) -> "ConvPrimitive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
