"""The only module that talks to the C kernel core (benchdnn_py._core).

It turns numpy arrays into C pointers (zero copy, after checking dtype, contiguity and
size), C status codes into exceptions, and exposes the implementation table. cffi's API
mode releases the GIL for every call, so kernels run without holding it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
import os
from functools import lru_cache
from typing import Callable, Iterator

import ml_dtypes
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
    AVX512_VNNI = lib.BDNN_ISA_AVX512_VNNI
    AVX512_BF16 = lib.BDNN_ISA_AVX512_BF16


# Data types the kernels take: benchdnn's name -> (C code, numpy dtype of its buffers).
DATA_TYPES: dict[str, tuple[int, np.dtype]] = {
    "f32": (lib.BDNN_DT_F32, np.dtype(np.float32)),
    "bf16": (lib.BDNN_DT_BF16, np.dtype(ml_dtypes.bfloat16)),
    "f16": (lib.BDNN_DT_F16, np.dtype(np.float16)),
    "s32": (lib.BDNN_DT_S32, np.dtype(np.int32)),
    "s8": (lib.BDNN_DT_S8, np.dtype(np.int8)),
    "u8": (lib.BDNN_DT_U8, np.dtype(np.uint8)),
}


def numpy_dtype(dt: str) -> np.dtype:
    return DATA_TYPES[dt][1]


def dt_convert(x: np.ndarray, to_dt: str, *, from_dt: str = "f32", portable: bool = False
               ) -> np.ndarray:
    """The kernels' own conversion (f32 <-> any type), for tests that hold it to numpy's
    and ml_dtypes' bits. portable: the scalar code instead of the best instructions."""
    x = np.ascontiguousarray(x, numpy_dtype(from_dt))
    out = np.empty(x.shape, numpy_dtype(to_dt))
    _check(lib.bdnn_dt_convert(DATA_TYPES[from_dt][0], DATA_TYPES[to_dt][0], _bytes(x),
                               _bytes(out), x.size, int(Isa.SCALAR if portable else Isa.AVX512)),
           f"conversion {from_dt} -> {to_dt}")
    return out


class Direction(enum.IntEnum):
    FWD = lib.BDNN_DIR_FWD
    BWD_DATA = lib.BDNN_DIR_BWD_DATA
    BWD_WEIGHTS = lib.BDNN_DIR_BWD_WEIGHTS


class PostKind(enum.IntEnum):
    SUM = lib.BDNN_POST_SUM
    ELTWISE = lib.BDNN_POST_ELTWISE
    DW = lib.BDNN_POST_DW


@dataclasses.dataclass(frozen=True)
class PostOp:
    """One post-op as the kernels take it: sum (scale, zero_point), eltwise (alg,
    alpha, beta, scale) or dw (the depthwise step's k, s, p and its tensors' types)."""

    kind: PostKind
    alg: int = 0
    scale: float = 1.0
    alpha: float = 0.0
    beta: float = 0.0
    zero_point: int = 0
    dw_k: int = 0
    dw_s: int = 0
    dw_p: int = 0
    dw_wei_dt: str = "f32"
    dw_bia_dt: str = "f32"
    dw_dst_dt: str = "f32"

    def dw_out(self, size: int) -> int:
        """The depthwise step's output size along an axis of the main output's size."""
        return (size + 2 * self.dw_p - self.dw_k) // self.dw_s + 1


class Scales(enum.IntEnum):
    """How the accumulator is scaled (bdnn.h, BDNN_SCALES_*)."""

    NONE = lib.BDNN_SCALES_NONE
    OSCALE = lib.BDNN_SCALES_OSCALE     # DNNL 1.x: oscale[oc] * (acc + bias)
    ARGS = lib.BDNN_SCALES_ARGS         # oneDNN 3.x: acc * src * wei[oc] + bias, / dst


class ActLayout(enum.IntEnum):
    """The activations' memory layout a convolution primitive runs on (BDNN_LAYOUT_*):
    plain [mb][c][spatial] (abx), channels-last [mb][spatial][c] (axb), or channel-blocked
    [mb][c/B][spatial][B] (aBx8b, aBx16b), channels padded up to the block."""

    PLAIN = lib.BDNN_LAYOUT_PLAIN
    NHWC = lib.BDNN_LAYOUT_NHWC
    BLOCKED8 = lib.BDNN_LAYOUT_BLOCKED8
    BLOCKED16 = lib.BDNN_LAYOUT_BLOCKED16

    @property
    def block(self) -> int:
        """The channel block (1: none)."""
        return {ActLayout.BLOCKED8: 8, ActLayout.BLOCKED16: 16}.get(self, 1)

    def count(self, shape: tuple[int, ...]) -> int:
        """Elements of an activation [mb][c][spatial] in this layout, padding included."""
        b = self.block
        return _count((shape[0], -(-shape[1] // b) * b, *shape[2:]))


# Bytes of backward weights' operands that stay in cache between runs (bdnn.h): up to this
# much src, backward weights on channels last reads a 1x1's src in place.
BWT_CACHED_MAX_BYTES = lib.BDNN_BWT_CACHED_MAX_BYTES
# Bytes of transformed weights up to which the wino_f43_blocked rows take a case.
WINO_BLOCKED_MAX_U_BYTES = lib.BDNN_WINO_BLOCKED_MAX_U_BYTES
# Bytes of output from which the kernels that can store it past the caches do (bdnn.h).
STREAM_MIN_BYTES = lib.BDNN_STREAM_MIN_BYTES


@dataclasses.dataclass(frozen=True)
class ConvAttr:
    """Everything about a primitive beyond shape and direction (bdnn_conv_attr_t). Data
    types name the user's tensors: backward data's src is diff_src and dst diff_dst;
    backward weights' wei is diff_weights and bia diff_bias."""

    src_dt: str = "f32"
    wei_dt: str = "f32"
    dst_dt: str = "f32"
    bia_dt: str = "f32"
    scales: Scales = Scales.NONE
    src_scale: float = 1.0
    dst_scale: float = 1.0
    wei_scales: tuple[float, ...] = (1.0,)   # one value, or one per output channel
    src_zp: int = 0
    dst_zp: int = 0
    post_ops: tuple[PostOp, ...] = ()
    layout: ActLayout = ActLayout.PLAIN   # src and dst; the rows accept one each

    def cdata(self, keep: list):
        a = ffi.new("bdnn_conv_attr_t *")
        a.src_dt, a.wei_dt, a.dst_dt, a.bia_dt = (DATA_TYPES[t][0] for t in (
            self.src_dt, self.wei_dt, self.dst_dt, self.bia_dt))
        a.scales, a.src_scale, a.dst_scale = int(self.scales), self.src_scale, self.dst_scale
        scales = ffi.new("float[]", list(self.wei_scales))
        keep.append(scales)
        a.wei_scales, a.wei_scales_per_oc = scales, int(len(self.wei_scales) > 1)
        a.src_zp, a.dst_zp = self.src_zp, self.dst_zp
        if len(self.post_ops) > lib.BDNN_MAX_POST_OPS:
            raise Unimplemented(f"more than {lib.BDNN_MAX_POST_OPS} post-ops")
        a.layout = int(self.layout)
        a.n_post_ops = len(self.post_ops)
        for slot, op in zip(a.post_ops, self.post_ops):
            slot.kind, slot.alg, slot.scale, slot.alpha, slot.beta, slot.zero_point = (
                int(op.kind), op.alg, op.scale, op.alpha, op.beta, op.zero_point)
            slot.dw_k, slot.dw_s, slot.dw_p = op.dw_k, op.dw_s, op.dw_p
            slot.dw_wei_dt, slot.dw_bia_dt, slot.dw_dst_dt = (DATA_TYPES[t][0] for t in (
                op.dw_wei_dt, op.dw_bia_dt, op.dw_dst_dt))
        return a

    @property
    def dw(self) -> PostOp | None:
        """The dw post-op entry, if any."""
        return next((op for op in self.post_ops if op.kind is PostKind.DW), None)


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
    TRUNCATE_DST = lib.BDNN_FAULT_TRUNCATE_DST
    WRAP_DST = lib.BDNN_FAULT_WRAP_DST
    CRASH = lib.BDNN_FAULT_CRASH
    DW_PRE_POST_SWAPPED = lib.BDNN_FAULT_DW_PRE_POST_SWAPPED
    WINO_COEF = lib.BDNN_FAULT_WINO_COEF
    PADDING_GARBAGE = lib.BDNN_FAULT_PADDING_GARBAGE   # only as conv_fault() gives it


FAULT_ENV = "BENCHDNN_PY_TEST_FAULT"


class OpFault(enum.IntEnum):
    """Deliberate defects of the eltwise, pooling and reorder kernels (tests only), selected by the
    same $BENCHDNN_PY_TEST_FAULT as Fault; the values live in these kernels' headers."""

    NONE = 0
    ELT_TAIL_DROPPED = lib.BDNN_ELT_FAULT_TAIL_DROPPED
    POOL_WS_IGNORED = lib.BDNN_POOL_FAULT_WS_IGNORED
    POOL_WS_UNWRITTEN = lib.BDNN_POOL_FAULT_WS_UNWRITTEN
    TRUNCATE_DST = lib.BDNN_FAULT_TRUNCATE_DST   # shared with the convolutions: the same
                                                 # defect of a low-precision store
    REORDER_PADDING_GARBAGE = lib.BDNN_REORDER_FAULT_PADDING_GARBAGE
    REORDER_DENSE_DST = lib.BDNN_REORDER_FAULT_DENSE_DST


def _fault(own: type[enum.IntEnum]):
    """The member of ``own`` that $BENCHDNN_PY_TEST_FAULT names (lower-case), if any. A
    defect of other kernels (a name of the other enum) leaves these correct: none."""
    name = os.environ.get(FAULT_ENV, "").strip()
    if name.upper() in own.__members__:
        return own[name.upper()]
    if not name or any(name.upper() in e.__members__ for e in (Fault, OpFault)):
        return own(0)
    known = dict.fromkeys(f.name.lower() for e in (Fault, OpFault) for f in e if f)
    raise BenchError(f"{FAULT_ENV}={name}: unknown fault; expected one of "
                     f"{', '.join(known)}")


def active_fault() -> Fault:
    """The convolution defect $BENCHDNN_PY_TEST_FAULT names, if any."""
    return _fault(Fault)


def active_op_fault() -> OpFault:
    """The eltwise/pooling defect $BENCHDNN_PY_TEST_FAULT names, if any."""
    return _fault(OpFault)


def conv_fault(layout: "ActLayout") -> Fault:
    """The defect of a convolution primitive on activations in layout: the named one, or,
    for the rows that write a blocked output themselves, the reorders' padded-tail defect
    (reorder_padding_garbage is one defect of every writer of a blocked layout)."""
    fault = active_fault()
    if not fault and layout.block > 1 and active_op_fault() is OpFault.REORDER_PADDING_GARBAGE:
        return Fault.PADDING_GARBAGE
    return fault


def _with_fault(name: str, fault: enum.IntEnum) -> str:
    return name + (f"+fault:{fault.name.lower()}" if fault else "")


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


def cap_isa(level: str) -> None:
    """--isa: no instruction set above level ("": none above what the CPU has). Every row
    table, `any`'s layout choice and the measured peaks go through isa_supported."""
    global _isa_cap
    cap = Isa[level.upper()] if level else max(Isa)
    if cap != _isa_cap:
        lib.bdnn_set_max_isa(int(cap))
        _isa_cap = cap
        isa_supported.cache_clear()


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


class PeakKind(enum.IntEnum):
    """The instruction a compute peak is measured with (BDNN_PEAK_*)."""

    F32 = lib.BDNN_PEAK_F32
    BF16 = lib.BDNN_PEAK_BF16
    INT8 = lib.BDNN_PEAK_INT8


@dataclasses.dataclass(frozen=True)
class Peak:
    kind: PeakKind
    isa: Isa
    ops_per_s: float


# The routes an operand class can take to its multiply-adds, fastest first. A class whose
# own instruction the CPU lacks is computed by widening to f32, so its limit is then the
# f32 FMA peak (bf16 without AVX512_BF16; f16 always, through F16C).
PEAK_ROUTES: dict[str, tuple[tuple[PeakKind, Isa], ...]] = {
    "f32": ((PeakKind.F32, Isa.AVX512), (PeakKind.F32, Isa.AVX2)),
    "bf16": ((PeakKind.BF16, Isa.AVX512_BF16), (PeakKind.F32, Isa.AVX512),
             (PeakKind.F32, Isa.AVX2)),
    "int8": ((PeakKind.INT8, Isa.AVX512_VNNI), (PeakKind.INT8, Isa.AVX2)),
}
PEAK_SECONDS, PEAK_REPEATS = 0.05, 5


def measured_peak(operands: str) -> Peak | None:
    """The compute limit of an operand class ("f32", "bf16", "int8"; f16 computes as f32)
    on this machine and thread count, measured once per process (again after
    remeasure_limits); None if no vector route."""
    for kind, isa in PEAK_ROUTES["f32" if operands == "f16" else operands]:
        if isa_supported(isa):
            return _peak(kind, isa, max_threads())
    return None


# Each limit per thread count: (kind, isa, threads) -> Peak, and the copy bandwidth per
# thread count. A key in _STALE is measured again at its next use, keeping the higher.
_PEAKS: dict[tuple[PeakKind, Isa, int], Peak] = {}
_COPY: dict[int, float] = {}
_STALE: set[tuple[PeakKind, Isa, int] | int] = set()


def _peak(kind: PeakKind, isa: Isa, nthreads: int) -> Peak:   # (measured on nthreads)
    key = (kind, isa, nthreads)
    old = _PEAKS.get(key)
    if old is None or key in _STALE:
        rate = float(lib.bdnn_peak_ops(int(kind), int(isa), PEAK_SECONDS, PEAK_REPEATS))
        _PEAKS[key] = Peak(kind, isa, max(rate, old.ops_per_s if old else 0.0))
        _STALE.discard(key)
    return _PEAKS[key]


def remeasure_limits() -> None:
    """The current thread count's limits read low (a guard probe, a shorter run of the
    f32 peak's own loop, read well above it: the process measured them in a slow
    spell). Each is measured again at its next use, keeping the higher reading."""
    n = max_threads()
    _STALE.update(key for key in _PEAKS if key[2] == n)
    _STALE.update(count for count in _COPY if count == n)


# The perf guard's probe (timing.MachineGuard): the f32 route's loop, short, best of two.
PROBE_SECONDS, PROBE_REPEATS = 0.002, 2


def probe_peak() -> float:
    """The f32 FMA rate this machine gives right now on the current threads (ops/s;
    0 without a vector route), against measured_peak("f32"): whether the cores a case
    was timed on were all there."""
    peak = measured_peak("f32")
    if peak is None:
        return 0.0
    return float(lib.bdnn_peak_ops(int(peak.kind), int(peak.isa), PROBE_SECONDS, PROBE_REPEATS))


# The perf guard's cache probe (kernels/common/peak.c): per thread, a buffer within the L2
# of every core these kernels target (Zen 3, 4 and 5: 512 KiB and 1 MiB), read 20 times
# (10 MiB per thread: about 0.1 ms at Zen 4's L2 rate, 40 us at Zen 5's; 0.3-0.5 ms with
# the buffers' setup), best of CACHE_PROBE_REPEATS readings, as the compute probe is best
# of two: a single reading that short dips whenever one thread is interrupted. On Zen 5,
# single readings flagged 8-17 of the README's 20 ResNet-50 cases and, in one of two
# processes of 80 res4a_branch2b cases, 75 of 80 (median 0.471 ms, the fastest of the four
# processes); the best of three flagged none of them, with the same times. A cache spell
# (0.3-0.6 s) outlasts the three readings (about 1.5 ms).
CACHE_PROBE_BYTES, CACHE_PROBE_PASSES, CACHE_PROBE_REPEATS = 512 << 10, 20, 3


def probe_cache() -> float:
    """The read rate (bytes/s) the slowest of the current threads gets from its own L2
    right now (the best of CACHE_PROBE_REPEATS readings): whether a neighbour is taking
    one of our cores' caches."""
    return max(float(lib.bdnn_probe_cache(CACHE_PROBE_BYTES, CACHE_PROBE_PASSES))
               for _ in range(CACHE_PROBE_REPEATS))


def fill_int(kind: int, n: int, lo: int, hi: int, density: float) -> np.ndarray:
    """n f32 integers of the fill contract in fill.py (C: bdnn_fill_int)."""
    out = np.empty(n, np.float32)
    lib.bdnn_fill_int(kind, n, lo, hi, density, ffi.from_buffer("float[]", out))
    return out


def fill_real(kind: int, n: int, lo: float, hi: float) -> np.ndarray:
    out = np.empty(n, np.float32)
    lib.bdnn_fill_real(kind, n, lo, hi, ffi.from_buffer("float[]", out))
    return out


def fill_choice(kind: int, n: int, values: np.ndarray) -> np.ndarray:
    values = np.ascontiguousarray(values, np.float32)
    out = np.empty(n, np.float32)
    lib.bdnn_fill_choice(kind, n, ffi.from_buffer("float[]", values), values.size,
                         ffi.from_buffer("float[]", out))
    return out


# Far beyond any last-level cache, so the copy streams from memory.
BANDWIDTH_BYTES = 256 << 20


def measured_copy_bandwidth() -> float:
    """Bytes read plus written per second by a multi-threaded copy, measured once per
    thread count (again after remeasure_limits)."""
    n = max_threads()
    if n not in _COPY or n in _STALE:
        rate = float(lib.bdnn_peak_copy_bandwidth(BANDWIDTH_BYTES, PEAK_REPEATS))
        _COPY[n] = max(rate, _COPY.get(n, 0.0))
        _STALE.discard(n)
    return _COPY[n]


class Operands(enum.IntEnum):
    """The operand class an implementation computes (BDNN_OPERANDS_*)."""

    F32 = lib.BDNN_OPERANDS_F32
    F16 = lib.BDNN_OPERANDS_F16
    BF16 = lib.BDNN_OPERANDS_BF16
    INT8 = lib.BDNN_OPERANDS_INT8


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


def _set_spatial(d, shape) -> None:
    """The 3D sizes of a ConvShape or PoolShape into its C descriptor (same field names)."""
    for axes, values in (("id ih iw", shape.i), ("od oh ow", shape.o), ("kd kh kw", shape.k),
                         ("sd sh sw", shape.s), ("pd ph pw", shape.p), ("dd dh dw", shape.dil)):
        for axis, value in zip(axes.split(), values):
            setattr(d, axis, value)


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
        """The C descriptor, shared and read-only: every C entry point takes it const and
        bdnn_conv_create copies it, so one per shape serves all (implementation selection
        builds several primitives per case)."""
        return _conv_desc(self)


@lru_cache(maxsize=256)
def _conv_desc(shape: ConvShape):
    d = ffi.new("bdnn_conv_desc_t *")
    d.g, d.mb, d.ic, d.oc = shape.g, shape.mb, shape.ic, shape.oc
    _set_spatial(d, shape)
    return d


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _points(points: np.ndarray) -> tuple:
    """(pointer, count) of a list of linear offsets, as the *_at references take them."""
    points = np.ascontiguousarray(points, np.int64)
    return ffi.from_buffer("int64_t[]", points), points.size


def ref_conv_fwd(shape: ConvShape, src: np.ndarray, wei: np.ndarray,
                 bias: np.ndarray | None, points: np.ndarray | None = None) -> np.ndarray:
    """The scalar reference, forward: dst in float64, or with points (linear offsets into
    dst) the values at those points only, in their order."""
    args = (shape.cdata(), _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
            _ptr(wei, "float[]", np.float32, _count(shape.wei_shape)),
            _ptr(bias, "float[]", np.float32, shape.oc))
    if points is None:
        dst = np.empty(shape.dst_shape, np.float64)
        _check(lib.bdnn_ref_conv_fwd(*args, ffi.from_buffer("double[]", dst)),
               "reference convolution")
        return dst
    out = np.empty(len(points), np.float64)
    _check(lib.bdnn_ref_conv_fwd_at(*args, *_points(points), ffi.from_buffer("double[]", out)),
           "reference convolution at points")
    return out


def wino_f43_matrices() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B^T 6x6, G 6x3, A^T 4x6) of the wino_f43 rows, as the C core derives them."""
    bt, g, at = np.empty((6, 6)), np.empty((6, 3)), np.empty((4, 6))
    _check(lib.bdnn_wino_f43_matrices(*(ffi.from_buffer("double[]", m) for m in (bt, g, at))),
           "Winograd matrices")
    return bt, g, at


def ref_conv_bwd_data(shape: ConvShape, diff_dst: np.ndarray, wei: np.ndarray,
                      points: np.ndarray | None = None) -> np.ndarray:
    """The scalar reference, backward data: diff_src in float64 (with points: at those
    linear offsets of diff_src only)."""
    args = (shape.cdata(), _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
            _ptr(wei, "float[]", np.float32, _count(shape.wei_shape)))
    if points is None:
        diff_src = np.empty(shape.src_shape, np.float64)
        _check(lib.bdnn_ref_conv_bwd_data(*args, ffi.from_buffer("double[]", diff_src)),
               "reference convolution backward data")
        return diff_src
    out = np.empty(len(points), np.float64)
    _check(lib.bdnn_ref_conv_bwd_data_at(*args, *_points(points),
                                         ffi.from_buffer("double[]", out)),
           "reference convolution backward data at points")
    return out


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


def ref_conv_bwd_weights_at(shape: ConvShape, src: np.ndarray, diff_dst: np.ndarray,
                            points: np.ndarray) -> np.ndarray:
    """Backward weights at linear offsets of diff_wei [g][oc/g][ic/g][k...], in float64."""
    out = np.empty(len(points), np.float64)
    _check(lib.bdnn_ref_conv_bwd_weights_at(
        shape.cdata(), _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
        _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)), *_points(points),
        ffi.from_buffer("double[]", out)), "reference convolution backward weights at points")
    return out


def ref_conv_bwd_bias_at(shape: ConvShape, diff_dst: np.ndarray,
                         channels: np.ndarray) -> np.ndarray:
    """diff_bias at the given channels, in float64."""
    out = np.empty(len(channels), np.float64)
    _check(lib.bdnn_ref_conv_bwd_bias_at(
        shape.cdata(), _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
        *_points(channels), ffi.from_buffer("double[]", out)),
        "reference convolution backward bias at points")
    return out


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
                 post_ops: tuple[PostOp, ...] = (), attr: ConvAttr | None = None) -> None:
        self.impl, self.shape, self.direction, self.with_bias = impl, shape, direction, with_bias
        self.attr = attr if attr is not None else ConvAttr(post_ops=post_ops)
        self._desc = shape.cdata()
        self._keep: list = []
        out = ffi.new("bdnn_conv_t **")
        _check(lib.bdnn_conv_create(impl.index, self._desc, int(direction), int(with_bias),
                                    self.attr.cdata(self._keep), int(fault), out),
               f"{impl.name} on this problem")
        self._handle = ffi.gc(out[0], lib.bdnn_conv_destroy)
        self.name = _with_fault(ffi.string(lib.bdnn_conv_name(self._handle)).decode(), fault)

    @property
    def weights_bytes(self) -> int:
        return int(lib.bdnn_conv_weights_bytes(self._handle))

    @property
    def dst_shape(self) -> tuple[int, ...]:
        """The written forward dst: the depthwise step's output with a dw post-op."""
        s, dw = self.shape, self.attr.dw
        if dw is None:
            return s.dst_shape
        return (s.mb, s.oc, 1, dw.dw_out(s.o[1]), dw.dw_out(s.o[2]))

    def _pack_args(self, wei: np.ndarray, dw_wei: np.ndarray | None,
                   dw_bia: np.ndarray | None) -> tuple:
        w = _bytes(wei, self.attr.wei_dt, _count(self.shape.wei_shape))
        dw = self.attr.dw
        if dw is None:
            return lib.bdnn_conv_pack_weights, (self._handle, w)
        oc = self.shape.oc
        return lib.bdnn_conv_pack_weights_dw, (
            self._handle, w, _bytes(dw_wei, dw.dw_wei_dt, oc * dw.dw_k * dw.dw_k),
            _bytes(dw_bia if self.with_bias else None, dw.dw_bia_dt, oc))

    def pack_weights(self, wei: np.ndarray, dw_wei: np.ndarray | None = None,
                     dw_bia: np.ndarray | None = None) -> np.ndarray:
        """The weights reorder into the implementation's layout (forward, backward data):
        opaque bytes for bind. With a dw post-op, its weights [oc][1][1][k][k] and (with
        bias) its bias [oc] are packed into the same bytes."""
        packed = np.empty(self.weights_bytes, np.uint8)
        fn, args = self._pack_args(wei, dw_wei, dw_bia)
        _check(fn(*args, _bytes(packed)), "weights reorder")
        return packed

    def bind_pack_weights(self, wei: np.ndarray, packed: np.ndarray,
                          dw_wei: np.ndarray | None = None,
                          dw_bia: np.ndarray | None = None) -> Callable[[], None]:
        """pack_weights into packed (a buffer pack_weights' size) as a callable: a
        primitive given its weights in another layout packs them on every execution."""
        fn, args = self._pack_args(wei, dw_wei, dw_bia)
        return self._runner(fn, (*args, self._packed(packed)))

    def _packed(self, wei_packed: np.ndarray):
        if wei_packed.dtype != np.uint8 or wei_packed.size != self.weights_bytes:
            raise ValueError("expected the weights as pack_weights returned them")
        return _bytes(wei_packed)

    def _bias_ptr(self, bias: np.ndarray | None, count: int):
        return _bytes(bias if self.with_bias else None, self.attr.bia_dt, count)

    def bind(self, src: np.ndarray, wei_packed: np.ndarray, bias: np.ndarray | None,
             dst: np.ndarray) -> Callable[[], None]:
        """Forward. Checks the buffers once and returns a no-argument callable that executes,
        so that timed runs pay only for the C call."""
        self._expect(Direction.FWD)
        s, a = self.shape, self.attr
        dst_dt = a.dw.dw_dst_dt if a.dw is not None else a.dst_dt
        args = (self._handle, _bytes(src, a.src_dt, a.layout.count(s.src_shape)),
                self._packed(wei_packed), self._bias_ptr(bias, s.oc),
                _out_bytes(dst, dst_dt, a.layout.count(self.dst_shape)))
        return self._runner(lib.bdnn_conv_execute, args)

    def bind_bwd_data(self, diff_dst: np.ndarray, wei_packed: np.ndarray,
                      bias: np.ndarray | None, diff_src: np.ndarray) -> Callable[[], None]:
        """Backward data (bias: added to diff_src, for deconvolution's forward pass)."""
        self._expect(Direction.BWD_DATA)
        s, a = self.shape, self.attr
        args = (self._handle, _bytes(diff_dst, a.dst_dt, a.layout.count(s.dst_shape)),
                self._packed(wei_packed), self._bias_ptr(bias, s.ic),
                _out_bytes(diff_src, a.src_dt, a.layout.count(s.src_shape)))
        return self._runner(lib.bdnn_conv_execute_bwd_data, args)

    def bind_bwd_weights(self, src: np.ndarray, diff_dst: np.ndarray, diff_wei: np.ndarray,
                         diff_bias: np.ndarray | None) -> Callable[[], None]:
        """Backward weights: diff_wei in the user layout (and diff_bias)."""
        self._expect(Direction.BWD_WEIGHTS)
        s, a = self.shape, self.attr
        args = (self._handle, _bytes(src, a.src_dt, a.layout.count(s.src_shape)),
                _bytes(diff_dst, a.dst_dt, a.layout.count(s.dst_shape)),
                _out_bytes(diff_wei, a.wei_dt, _count(s.wei_shape)),
                _out_bytes(diff_bias, a.bia_dt, s.oc) if self.with_bias else ffi.NULL)
        return self._runner(lib.bdnn_conv_execute_bwd_weights, args)

    def _expect(self, direction: Direction) -> None:
        if self.direction is not direction:
            raise ValueError(f"{self.name} was created for {self.direction.name}, "
                             f"not {direction.name}")

    def _runner(self, fn, args) -> Callable[[], None]:
        return _runner(fn, args, self.name)

    def close(self) -> None:
        if self._handle is not None:
            ffi.release(self._handle)   # runs the gc destructor (bdnn_conv_destroy) now
            self._handle = None

    def __enter__(self) -> "ConvPrimitive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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


def _out_bytes(array: np.ndarray, dt: str, count: int):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _bytes(array, dt, count)


# == eltwise and pooling (kernels/include/bdnn_eltwise.h, bdnn_pool.h) ==================


def _typed_row(impl: ImplInfo, dt: str, backward: bool) -> None:
    """Raises Unimplemented unless the eltwise/pooling row runs here and takes dt in that
    direction (the C core's rule: its ISA, its operand class, no integer backward)."""
    _check(lib.bdnn_typed_row_status(int(impl.isa), int(impl.operands), DATA_TYPES[dt][0],
                                     int(backward)),
           f"{impl.name} with {dt}{' backward' if backward else ''}")


# -- eltwise ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def eltwise_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_elt_impl_count, lib.bdnn_elt_impl_name, lib.bdnn_elt_impl_isa,
                  lib.bdnn_elt_impl_operands)


def eltwise_supported(alg: int, backward: bool) -> bool:
    return lib.bdnn_elt_supported(alg, int(backward)) == lib.BDNN_STATUS_OK


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

    def __post_init__(self) -> None:
        _typed_row(self.impl, self.dt, self.backward)
        _check(lib.bdnn_elt_supported(self.alg, int(self.backward)), self.impl.name)

    @property
    def name(self) -> str:
        return _with_fault(self.impl.name, self.fault)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        n, dt = src.size, self.dt
        args = (self.impl.index, self.alg, DATA_TYPES[dt][0], self.alpha, self.beta,
                _bytes(src, dt), _out_bytes(dst, dt, n), n, int(self.fault))
        return _runner(lib.bdnn_elt_fwd, args, self.name)

    def bind_bwd(self, x: np.ndarray, diff_dst: np.ndarray, diff_src: np.ndarray,
                 from_dst: bool) -> Callable[[], None]:
        """x: src, or dst for the _dst variants (from_dst)."""
        n, dt = x.size, self.dt
        args = (self.impl.index, self.alg, int(from_dst), DATA_TYPES[dt][0], self.alpha,
                self.beta, _bytes(x, dt), _bytes(diff_dst, dt, n), _out_bytes(diff_src, dt, n),
                n, int(self.fault))
        return _runner(lib.bdnn_elt_bwd, args, self.name)



# -- pooling ---------------------------------------------------------------------------

class PoolAlg(enum.IntEnum):
    MAX = lib.BDNN_POOL_MAX
    AVG_P = lib.BDNN_POOL_AVG_P
    AVG_NP = lib.BDNN_POOL_AVG_NP


class Prop(enum.IntEnum):
    FWD_TRAINING = lib.BDNN_PROP_FWD_TRAINING
    FWD_INFERENCE = lib.BDNN_PROP_FWD_INFERENCE
    BWD_DATA = lib.BDNN_PROP_BWD_DATA


class PoolLayout(enum.IntEnum):
    """The memory layouts of src and dst the pooling rows run on (bdnn_pool.h): plain,
    channels last (axb), channel-blocked by 8 or 16 (aBx8b, aBx16b); all dense."""

    NCX = lib.BDNN_POOL_LAYOUT_NCX
    NXC = lib.BDNN_POOL_LAYOUT_NXC
    NCX8C = lib.BDNN_POOL_LAYOUT_NCX8C
    NCX16C = lib.BDNN_POOL_LAYOUT_NCX16C

    @property
    def channel_block(self) -> int:
        """Channels are padded up to a multiple of this (1: no padding)."""
        return {PoolLayout.NCX8C: 8, PoolLayout.NCX16C: 16}.get(self, 1)


@lru_cache(maxsize=None)
def pool_impls() -> tuple[ImplInfo, ...]:
    return _table(lib.bdnn_pool_impl_count, lib.bdnn_pool_impl_name, lib.bdnn_pool_impl_isa,
                  lib.bdnn_pool_impl_operands)


def pool_impl_layouts(impl: ImplInfo) -> frozenset[PoolLayout]:
    """The layouts a pooling row runs on (it refuses the others: Unimplemented)."""
    mask = lib.bdnn_pool_impl_layouts(impl.index)
    return frozenset(l for l in PoolLayout if mask >> int(l) & 1)


@dataclasses.dataclass(frozen=True)
class PoolShape:
    """A pooling in the C core's terms: 3D sizes (1D/2D padded with neutral axes)."""

    mb: int
    c: int
    i: tuple[int, int, int]
    o: tuple[int, int, int]
    k: tuple[int, int, int]
    s: tuple[int, int, int]
    p: tuple[int, int, int]
    dil: tuple[int, int, int]
    layout: PoolLayout = PoolLayout.NCX     # of src and dst (the reference takes NCX only)

    @property
    def src_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.i)

    @property
    def dst_shape(self) -> tuple[int, ...]:
        return (self.mb, self.c, *self.o)

    def elems(self, shape: tuple[int, ...]) -> int:
        """Elements a src- or dst-shaped buffer holds in this layout (padded tail included)."""
        b = self.layout.channel_block
        return shape[0] * -(-shape[1] // b) * b * _count(shape[2:])

    def cdata(self):
        d = ffi.new("bdnn_pool_desc_t *")
        d.mb, d.c = self.mb, self.c
        _set_spatial(d, self)
        d.layout = int(self.layout)
        return d


@dataclasses.dataclass(frozen=True)
class Workspace:
    """What the C core says a configuration's workspace is: total bytes (0: none) and the
    size of one element."""

    nbytes: int
    elem_bytes: int

    def allocate(self, poison: int) -> np.ndarray:
        """A buffer of the queried size, every element set to ``poison`` (truncated to the
        element size), so that entries a forward pass leaves unwritten stay recognizable."""
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[self.elem_bytes] \
            if self.elem_bytes else np.uint8
        buf = np.empty(self.nbytes // max(self.elem_bytes, 1), dtype)
        buf.fill(poison & ((1 << (8 * dtype().itemsize)) - 1))
        return buf


def pool_workspace(impl: ImplInfo, shape: PoolShape, alg: PoolAlg, prop: Prop) -> Workspace:
    """What row impl needs for this problem (in shape's layout): size, element size; the
    point order is the row's own."""
    ws = ffi.new("bdnn_pool_ws_t *")
    _check(lib.bdnn_pool_workspace(impl.index, shape.cdata(), int(alg), int(prop), ws),
           "pool workspace")
    return Workspace(int(ws.bytes), int(ws.elem_bytes))


class PoolPrimitive:
    """One implementation of one pooling algorithm and propagation kind, on src and dst (or
    their diffs) of the data type dt."""

    def __init__(self, impl: ImplInfo, shape: PoolShape, alg: PoolAlg, prop: Prop,
                 fault: OpFault = OpFault.NONE, dt: str = "f32") -> None:
        _typed_row(impl, dt, prop is Prop.BWD_DATA)
        self.impl, self.shape, self.alg, self.prop, self.fault = impl, shape, alg, prop, fault
        self.dt = dt
        self._desc = shape.cdata()
        if shape.layout not in pool_impl_layouts(impl):
            raise Unimplemented(f"{impl.name} on the {shape.layout.name.lower()} layout")
        self.workspace = pool_workspace(impl, shape, alg, prop)
        self.name = _with_fault(impl.name, fault)

    def _ws_ptr(self, ws: np.ndarray | None):
        if not self.workspace.nbytes:
            return ffi.NULL
        if ws is None or ws.nbytes != self.workspace.nbytes or not ws.flags.c_contiguous:
            raise ValueError(f"{self.name}: expected a workspace of {self.workspace.nbytes} "
                             f"bytes")
        return ffi.from_buffer("char[]", ws)

    def bind_fwd(self, src: np.ndarray, dst: np.ndarray,
                 ws: np.ndarray | None) -> Callable[[], None]:
        s = self.shape
        args = (self.impl.index, self._desc, int(self.alg), int(self.prop),
                DATA_TYPES[self.dt][0], _bytes(src, self.dt, s.elems(s.src_shape)),
                _out_bytes(dst, self.dt, s.elems(s.dst_shape)), self._ws_ptr(ws),
                int(self.fault))
        return _runner(lib.bdnn_pool_fwd, args, self.name)

    def bind_bwd(self, diff_dst: np.ndarray, ws: np.ndarray | None,
                 diff_src: np.ndarray) -> Callable[[], None]:
        s = self.shape
        args = (self.impl.index, self._desc, int(self.alg), DATA_TYPES[self.dt][0],
                _bytes(diff_dst, self.dt, s.elems(s.dst_shape)), self._ws_ptr(ws),
                _out_bytes(diff_src, self.dt, s.elems(s.src_shape)), int(self.fault))
        return _runner(lib.bdnn_pool_bwd, args, self.name)


def ref_pool_fwd(shape: PoolShape, alg: PoolAlg, src: np.ndarray) -> np.ndarray:
    """The scalar reference, forward; dst in float64."""
    dst = np.empty(shape.dst_shape, np.float64)
    _check(lib.bdnn_ref_pool_fwd(shape.cdata(), int(alg),
                                 _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
                                 ffi.from_buffer("double[]", dst)), "reference pooling")
    return dst


def ref_pool_bwd(shape: PoolShape, alg: PoolAlg, src: np.ndarray,
                 diff_dst: np.ndarray) -> np.ndarray:
    """The scalar reference, backward data (max finds its tap in src); diff_src in float64."""
    diff_src = np.empty(shape.src_shape, np.float64)
    _check(lib.bdnn_ref_pool_bwd(shape.cdata(), int(alg),
                                 _ptr(src, "float[]", np.float32, _count(shape.src_shape)),
                                 _ptr(diff_dst, "float[]", np.float32, _count(shape.dst_shape)),
                                 ffi.from_buffer("double[]", diff_src)),
           "reference pooling backward")
    return diff_src


# -- reorder ---------------------------------------------------------------------------

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


def _writable(array: np.ndarray, dt: str):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _bytes(array, dt)


def parallel_memcpy(dst: np.ndarray, src: np.ndarray) -> Callable[[], None]:
    """A callable copying src's bytes into dst on all threads (the bandwidth yardstick)."""
    if dst.nbytes != src.nbytes:
        raise ValueError("memcpy needs buffers of one size")
    args = (_writable(dst, None), _bytes(src), src.nbytes)
    return lambda: lib.bdnn_parallel_memcpy(*args)
