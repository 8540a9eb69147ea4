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


@dataclasses.dataclass(frozen=True)
class PostOp:
    """One post-op as the kernels take it: sum (scale, zero_point) or eltwise (alg,
    alpha, beta, scale)."""

    kind: PostKind
    alg: int = 0
    scale: float = 1.0
    alpha: float = 0.0
    beta: float = 0.0
    zero_point: int = 0


class Scales(enum.IntEnum):
    """How the accumulator is scaled (bdnn.h, BDNN_SCALES_*)."""

    NONE = lib.BDNN_SCALES_NONE
    OSCALE = lib.BDNN_SCALES_OSCALE     # DNNL 1.x: oscale[oc] * (acc + bias)
    ARGS = lib.BDNN_SCALES_ARGS         # oneDNN 3.x: acc * src * wei[oc] + bias, / dst


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
        a.n_post_ops = len(self.post_ops)
        for slot, op in zip(a.post_ops, self.post_ops):
            slot.kind, slot.alg, slot.scale, slot.alpha, slot.beta, slot.zero_point = (
                int(op.kind), op.alg, op.scale, op.alpha, op.beta, op.zero_point)
        return a


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


FAULT_ENV = "BENCHDNN_PY_TEST_FAULT"


def active_fault() -> Fault:
    """The defect named by $BENCHDNN_PY_TEST_FAULT (lower-case Fault name), if any. A
    defect of the other kernels (core_ops.OpFault: a convolution may run reorders) leaves
    the convolution kernels correct, so it reads as none here."""
    name = os.environ.get(FAULT_ENV, "").strip()
    if not name:
        return Fault.NONE
    try:
        return Fault[name.upper()]
    except KeyError:
        from .core_ops import active_fault as op_fault   # core_ops imports this module
        op_fault()    # raises, listing every fault, when neither knows the name
        return Fault.NONE


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
    return bool(lib.bdnn_isa_supported(int(isa)))


def max_threads() -> int:
    return int(lib.bdnn_max_threads())


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
    on this machine and thread count, measured once per process; None if no vector route.
    """
    for kind, isa in PEAK_ROUTES["f32" if operands == "f16" else operands]:
        if isa_supported(isa):
            return _peak(kind, isa)
    return None


@lru_cache(maxsize=None)
def _peak(kind: PeakKind, isa: Isa) -> Peak:
    return Peak(kind, isa, float(lib.bdnn_peak_ops(int(kind), int(isa), PEAK_SECONDS,
                                                   PEAK_REPEATS)))


# Far beyond any last-level cache, so the copy streams from memory.
BANDWIDTH_BYTES = 256 << 20


@lru_cache(maxsize=None)
def measured_copy_bandwidth() -> float:
    """Bytes read plus written per second by a multi-threaded copy, measured once."""
    return float(lib.bdnn_peak_copy_bandwidth(BANDWIDTH_BYTES, PEAK_REPEATS))


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


@lru_cache(maxsize=None)
def conv_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return tuple(ImplInfo(i, ffi.string(lib.bdnn_conv_impl_name(i)).decode(),
                          Isa(lib.bdnn_conv_impl_isa(i)),
                          Operands(lib.bdnn_conv_impl_operands(i)))
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
        self.name = ffi.string(lib.bdnn_conv_name(self._handle)).decode()
        if fault:
            self.name += f"+fault:{fault.name.lower()}"

    @property
    def weights_bytes(self) -> int:
        return int(lib.bdnn_conv_weights_bytes(self._handle))

    def pack_weights(self, wei: np.ndarray) -> np.ndarray:
        """The weights reorder into the implementation's layout (forward, backward data):
        opaque bytes for bind."""
        packed = np.empty(self.weights_bytes, np.uint8)
        _check(lib.bdnn_conv_pack_weights(
            self._handle, _bytes(wei, self.attr.wei_dt, _count(self.shape.wei_shape)),
            _bytes(packed)), "weights reorder")
        return packed

    def bind_pack_weights(self, wei: np.ndarray, packed: np.ndarray) -> Callable[[], None]:
        """pack_weights into packed (a buffer pack_weights' size) as a callable: a
        primitive given its weights in another layout packs them on every execution."""
        args = (self._handle, _bytes(wei, self.attr.wei_dt, _count(self.shape.wei_shape)),
                self._packed(packed))
        return self._runner(lib.bdnn_conv_pack_weights, args)

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
        args = (self._handle, _bytes(src, a.src_dt, _count(s.src_shape)),
                self._packed(wei_packed), self._bias_ptr(bias, s.oc),
                _out_bytes(dst, a.dst_dt, _count(s.dst_shape)))
        return self._runner(lib.bdnn_conv_execute, args)

    def bind_bwd_data(self, diff_dst: np.ndarray, wei_packed: np.ndarray,
                      bias: np.ndarray | None, diff_src: np.ndarray) -> Callable[[], None]:
        """Backward data (bias: added to diff_src, for deconvolution's forward pass)."""
        self._expect(Direction.BWD_DATA)
        s, a = self.shape, self.attr
        args = (self._handle, _bytes(diff_dst, a.dst_dt, _count(s.dst_shape)),
                self._packed(wei_packed), self._bias_ptr(bias, s.ic),
                _out_bytes(diff_src, a.src_dt, _count(s.src_shape)))
        return self._runner(lib.bdnn_conv_execute_bwd_data, args)

    def bind_bwd_weights(self, src: np.ndarray, diff_dst: np.ndarray, diff_wei: np.ndarray,
                         diff_bias: np.ndarray | None) -> Callable[[], None]:
        """Backward weights: diff_wei in the user layout (and diff_bias)."""
        self._expect(Direction.BWD_WEIGHTS)
        s, a = self.shape, self.attr
        args = (self._handle, _bytes(src, a.src_dt, _count(s.src_shape)),
                _bytes(diff_dst, a.dst_dt, _count(s.dst_shape)),
                _out_bytes(diff_wei, a.wei_dt, _count(s.wei_shape)),
                _out_bytes(diff_bias, a.bia_dt, s.oc) if self.with_bias else ffi.NULL)
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


def _out_bytes(array: np.ndarray, dt: str, count: int):
    if not array.flags.writeable:
        raise ValueError("output buffers must be writable")
    return _bytes(array, dt, count)
