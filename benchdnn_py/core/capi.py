"""The one module that loads the C kernel core (benchdnn_py._core), and the marshalling
every family module shares: numpy arrays to C pointers (zero copy, after checking dtype,
contiguity and size), C status codes to exceptions, the implementation tables' rows, the
data types and the instruction sets. cffi's API mode releases the GIL for every call, so
kernels run without holding it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib.util
import math
import os
import sys
from pathlib import Path
from functools import lru_cache
from typing import Callable, Iterator

import ml_dtypes
import numpy as np

from ..errors import BenchError
from ..status import EXIT_USAGE


def _sanitizer_runtime_missing() -> str | None:
    """Why a sanitized core (built with BDNN_SANITIZE, which leaves ``_core.sanitizers``
    beside it) cannot load in this process: AddressSanitizer's runtime must be loaded
    before any other library, and a core loaded without it aborts the process."""
    spec = importlib.util.find_spec(f"{__package__.rpartition('.')[0]}._core")
    if spec is None or not spec.origin:
        return None
    marker = Path(spec.origin).with_name("_core.sanitizers")
    if not marker.is_file():
        return None
    sanitizers = marker.read_text().strip()
    if "address" in sanitizers.split(",") and "libasan" not in os.environ.get("LD_PRELOAD", ""):
        return (f"benchdnn_py's C core was built with -fsanitize={sanitizers}: run with "
                f"LD_PRELOAD=$(gcc -print-file-name=libasan.so) "
                f"ASAN_OPTIONS=detect_leaks=0 (docs/building.md)")
    return None


# Loading such a core would abort the process with the sanitizer's own message; this says
# what to do instead, in one line, and exits with the usage status (no traceback: the
# import happens before the CLI can catch anything).
_missing = _sanitizer_runtime_missing()
if _missing:
    sys.stderr.write(f"benchdnn-py: error: {_missing}\n")
    raise SystemExit(EXIT_USAGE)

try:
    from .._core import ffi, lib
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "benchdnn_py's C core is not built; install the package with "
        "`python -m pip install -e .` from the source tree") from exc


class Isa(enum.IntEnum):
    SCALAR = lib.BDNN_ISA_SCALAR
    AVX2 = lib.BDNN_ISA_AVX2
    AVX512 = lib.BDNN_ISA_AVX512
    AVX512_VNNI = lib.BDNN_ISA_AVX512_VNNI
    AVX512_BF16 = lib.BDNN_ISA_AVX512_BF16
    AVX512_AMX = lib.BDNN_ISA_AVX512_AMX


# Data types the kernels take: benchdnn's name -> (C code, numpy dtype of its buffers).
DATA_TYPES: dict[str, tuple[int, np.dtype]] = {
    "f32": (lib.BDNN_DT_F32, np.dtype(np.float32)),
    "bf16": (lib.BDNN_DT_BF16, np.dtype(ml_dtypes.bfloat16)),
    "f16": (lib.BDNN_DT_F16, np.dtype(np.float16)),
    "s32": (lib.BDNN_DT_S32, np.dtype(np.int32)),
    "s8": (lib.BDNN_DT_S8, np.dtype(np.int8)),
    "u8": (lib.BDNN_DT_U8, np.dtype(np.uint8)),
    # Only the reorder's generic route takes these (bdnn.h). The 4-bit types are packed
    # two to a byte, element 2k in the low nibble of byte k: their buffers are uint8
    # arrays of packed pairs (common/packed.py places values in them).
    "f8_e5m2": (lib.BDNN_DT_F8_E5M2, np.dtype(ml_dtypes.float8_e5m2)),
    "f8_e4m3": (lib.BDNN_DT_F8_E4M3, np.dtype(ml_dtypes.float8_e4m3fn)),
    "s4": (lib.BDNN_DT_S4, np.dtype(np.uint8)),
    "u4": (lib.BDNN_DT_U4, np.dtype(np.uint8)),
    "f4_e2m1": (lib.BDNN_DT_F4_E2M1, np.dtype(np.uint8)),
    # eltwise and convolution (computed in double); no conversion or reorder takes it
    "f64": (lib.BDNN_DT_F64, np.dtype(np.float64)),
}
PACKED_DTS = frozenset({"s4", "u4", "f4_e2m1"})
# Types bdnn_dt_convert and the reorders do not take: they compute in f32.
DOUBLE_DTS = frozenset({"f64"})


def numpy_dtype(dt: str) -> np.dtype:
    """The numpy type of a buffer of dt (for a 4-bit type, a byte of two elements)."""
    return DATA_TYPES[dt][1]


def elements(array: np.ndarray, dt: str) -> int:
    """How many elements of dt a buffer holds."""
    return array.size * 2 if dt in PACKED_DTS else array.size


def dt_convert(x: np.ndarray, to_dt: str, *, from_dt: str = "f32", portable: bool = False
               ) -> np.ndarray:
    """The kernels' own conversion (f32 <-> any type), for tests that hold it to numpy's
    and ml_dtypes' bits. portable: the scalar code instead of the best instructions. The
    4-bit types (packed) go through a reorder instead."""
    if from_dt in PACKED_DTS or to_dt in PACKED_DTS:
        raise ValueError(f"{from_dt} -> {to_dt}: 4-bit types convert through a reorder")
    x = np.ascontiguousarray(x, numpy_dtype(from_dt))
    out = aligned_array(x.size, numpy_dtype(to_dt)).reshape(x.shape)
    _check(lib.bdnn_dt_convert(DATA_TYPES[from_dt][0], DATA_TYPES[to_dt][0], _bytes(x),
                               _bytes(out), x.size, int(Isa.SCALAR if portable else Isa.AVX512)),
           f"conversion {from_dt} -> {to_dt}")
    return out


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


ALIGN = 64   # bytes: the kernels' buffers start on a cache line, as oneDNN's do
# A buffer of a page or more starts on a page: its offset in its pages then does not
# depend on the heap's history (glibc serves large blocks from the heap, at any offset,
# once a freed mapping has raised its mmap threshold), and the kernels' speed did.
PAGE = 4096


def aligned_empty(nbytes: int) -> np.ndarray:
    """nbytes of uint8 starting on an ALIGN boundary, and on a PAGE boundary from a page
    on. numpy's large arrays come from mmap plus a header (16-byte aligned only), where
    every vector load or store of a kernel splits two cache lines (packed weights are read
    a vector at a time), and whole-line streaming stores need the alignment."""
    align = PAGE if nbytes >= PAGE else ALIGN
    raw = np.empty(nbytes + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes]


def aligned_array(n: int, dtype) -> np.ndarray:
    """n uninitialized elements of dtype on an ALIGN boundary."""
    dtype = np.dtype(dtype)
    return aligned_empty(n * dtype.itemsize).view(dtype)


def is_aligned(a: np.ndarray) -> bool:
    return a.ctypes.data % ALIGN == 0


def _ptr(array: np.ndarray | None, ctype: str, dtype: type, count: int | None = None):
    if array is None:
        return ffi.NULL
    if array.dtype != dtype or not array.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous {np.dtype(dtype)} array, got "
                        f"{array.dtype} (contiguous={array.flags.c_contiguous})")
    if count is not None and array.size != count:
        raise ValueError(f"expected {count} elements, got {array.size}")
    return ffi.from_buffer(ctype, array, require_writable=False)


def _bytes(array: np.ndarray, dt: str | None = None, count: int | None = None):
    """A C-contiguous array of the data type dt (any, when None) as a void* argument."""
    if array is None:
        return ffi.NULL
    if dt is not None and array.dtype != numpy_dtype(dt):
        raise TypeError(f"expected a {dt} ({numpy_dtype(dt)}) array, got {array.dtype}")
    if not array.flags.c_contiguous:
        raise TypeError("expected a C-contiguous array")
    if count is not None and array.size != count:
        raise ValueError(f"expected {count} elements, got {array.size}")
    # A byte view: the buffer protocol does not know custom dtypes such as bfloat16.
    return ffi.from_buffer("char[]", array.reshape(-1).view(np.uint8), require_writable=False)


@lru_cache(maxsize=None)
def isa_supported(isa: Isa) -> bool:
    """The CPU runs this level and --isa allows it."""
    return bool(lib.bdnn_isa_supported(int(isa)))


_isa_cap = max(Isa)
_isa_level = ""   # the --isa text in force, "" for none


def cap_isa(level: str) -> None:
    """--isa: no instruction set above level ("": none above what the CPU has). Every row
    table, `any`'s layout choice and the measured peaks go through isa_supported."""
    global _isa_cap, _isa_level
    cap = Isa[level.upper()] if level else max(Isa)
    _isa_level = level.lower()
    if cap != _isa_cap:
        lib.bdnn_set_max_isa(int(cap))
        _isa_cap = cap
        isa_supported.cache_clear()


def isa_cap() -> str:
    """The --isa level in force ("": none). Even the highest level is a cap for a library
    whose instruction sets go beyond ours (oneDNN's AMX-FP16 over avx512_amx)."""
    return _isa_level


def max_threads() -> int:
    return int(lib.bdnn_max_threads())


def set_threads(n: int) -> None:
    """Parallel regions and primitives created from now on run on n OpenMP threads (this
    OS thread's count; threads() is the scoped form)."""
    lib.bdnn_set_threads(n)


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Parallel regions and primitives created inside run on n OpenMP threads (0: the
    count as it is), restored on leaving. The measured limits are per thread count."""
    before = max_threads()
    if n:
        lib.bdnn_set_threads(n)
    try:
        yield
    finally:
        if n:
            lib.bdnn_set_threads(before)


def build_info() -> str:
    return ffi.string(lib.bdnn_build_info()).decode()


@lru_cache(maxsize=None)
def splits_512() -> bool:
    """Whether the core runs 512-bit vector operations as two 256-bit halves (AMD's family
    19h, by cpuid): the row tables order some routes by it (CONV_ROW_SPLIT_512)."""
    return bool(lib.bdnn_cpu_splits_512())


class Operands(enum.IntEnum):
    """The operand class an implementation computes (BDNN_OPERANDS_*)."""

    F32 = lib.BDNN_OPERANDS_F32
    F16 = lib.BDNN_OPERANDS_F16
    BF16 = lib.BDNN_OPERANDS_BF16
    INT8 = lib.BDNN_OPERANDS_INT8
    F8 = lib.BDNN_OPERANDS_F8
    F64 = lib.BDNN_OPERANDS_F64


@dataclasses.dataclass(frozen=True)
class ImplInfo:
    index: int
    name: str
    isa: Isa
    operands: Operands = Operands.F32


def _table(count, name, isa, operands) -> tuple[ImplInfo, ...]:
    """An operation's C implementation table (its count/name/isa/operands functions)."""
    return tuple(ImplInfo(i, ffi.string(name(i)).decode(), Isa(isa(i)), Operands(operands(i)))
                 for i in range(count()))


@lru_cache(maxsize=None)
def conv_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_conv_impl_count, lib.bdnn_conv_impl_name, lib.bdnn_conv_impl_isa,
                  lib.bdnn_conv_impl_operands)


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _points(points: np.ndarray) -> tuple:
    """(pointer, count) of a list of linear offsets, as the *_at references take them."""
    points = np.ascontiguousarray(points, np.int64)
    return ffi.from_buffer("int64_t[]", points), points.size


def _runner(fn, args, name: str) -> Callable[[], None]:
    """A no-argument callable that executes fn(*args) and raises on a failing status."""
    def run() -> None:
        status = fn(*args)
        if status:
            _check(status, f"{name} execution")
    return run


def _out_ptr(array: np.ndarray, count: int):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _ptr(array, "float[]", np.float32, count)


def parallel_fill(array: np.ndarray, value: float) -> None:
    """array (C-contiguous) := value, on every thread (the value as array's type)."""
    one = np.array([value]).astype(array.dtype).view(np.uint8)
    lib.bdnn_parallel_fill(_bytes(array.view(np.uint8)), ffi.from_buffer("char[]", one),
                           one.size, array.size)


def _out_bytes(array: np.ndarray, dt: str, count: int):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _bytes(array, dt, count)


def _typed_row(impl: ImplInfo, dt: str, backward: bool) -> None:
    """Raises Unimplemented unless the eltwise/pooling row runs here and takes dt in that
    direction (the C core's rule: its ISA, its operand class, no integer backward)."""
    _check(lib.bdnn_typed_row_status(int(impl.isa), int(impl.operands), DATA_TYPES[dt][0],
                                     int(backward)),
           f"{impl.name} with {dt}{' backward' if backward else ''}")


def _writable(array: np.ndarray, dt: str):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _bytes(array, dt)


def _set_spatial(d, shape) -> None:
    """The 3D sizes of a ConvShape or PoolShape into its C descriptor (same field names)."""
    for axes, values in (("id ih iw", shape.i), ("od oh ow", shape.o), ("kd kh kw", shape.k),
                         ("sd sh sw", shape.s), ("pd ph pw", shape.p), ("dd dh dw", shape.dil)):
        for axis, value in zip(axes.split(), values):
            setattr(d, axis, value)
