"""Convolution in the C core (kernels/include/bdnn.h, kernels/conv/): its problem and
attributes, the scalar references and the primitive."""

from __future__ import annotations

import dataclasses
import enum
import math
from functools import lru_cache
from typing import Callable

import numpy as np

from .capi import (ALIGN, DATA_TYPES, ImplInfo, Isa, Unimplemented, _bytes, _check, _count,
                   _out_bytes, _out_ptr, _points, _ptr, _runner, _set_spatial, _table,
                   aligned_empty, ffi, lib)
from .faults import Fault, _with_fault


class Direction(enum.IntEnum):
    FWD = lib.BDNN_DIR_FWD
    BWD_DATA = lib.BDNN_DIR_BWD_DATA
    BWD_WEIGHTS = lib.BDNN_DIR_BWD_WEIGHTS


class PostKind(enum.IntEnum):
    SUM = lib.BDNN_POST_SUM
    ELTWISE = lib.BDNN_POST_ELTWISE
    DW = lib.BDNN_POST_DW
    BINARY = lib.BDNN_POST_BINARY
    PRELU = lib.BDNN_POST_PRELU


# Binary post-op algorithms by benchdnn name (bdnn.h, BDNN_BIN_*).
BINARY_ALGS = {name: getattr(lib, f"BDNN_BIN_{name.upper()}") for name in (
    "add", "sub", "mul", "div", "max", "min", "ge", "gt", "le", "lt", "eq", "ne")}


@dataclasses.dataclass(frozen=True)
class PostOp:
    """One post-op as the kernels take it: sum (scale, zero_point), eltwise (alg,
    alpha, beta, scale), dw (the depthwise step's k, s, p and its tensors' types), binary
    (alg a BINARY_ALGS value) or prelu, whose extra input is src1_dt with src1_strides over
    the written tensor's (mb, c, d, h, w), 0 along a broadcast dim."""

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
    src1_dt: str = "f32"
    src1_strides: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    sum_dt: str = ""        # sum: the type the prior dst's bits are read as ("": dst's)

    @property
    def has_input(self) -> bool:
        return self.kind in (PostKind.BINARY, PostKind.PRELU)

    def dw_out(self, size: int) -> int:
        """The depthwise step's output size along an axis of the main output's size."""
        return (size + 2 * self.dw_p - self.dw_k) // self.dw_s + 1


def src1_reach(dims: tuple[int, ...], op: PostOp) -> int:
    """Elements an entry's input must hold: one past the last its strides reach over a
    written tensor of dims (mb, c, d, h, w)."""
    return 1 + sum((n - 1) * st for n, st in zip(dims, op.src1_strides))


def _post_op_slot(slot, op: PostOp) -> None:
    slot.kind, slot.alg, slot.scale, slot.alpha, slot.beta, slot.zero_point = (
        int(op.kind), op.alg, op.scale, op.alpha, op.beta, op.zero_point)
    slot.dw_k, slot.dw_s, slot.dw_p = op.dw_k, op.dw_s, op.dw_p
    slot.dw_wei_dt, slot.dw_bia_dt, slot.dw_dst_dt = (DATA_TYPES[t][0] for t in (
        op.dw_wei_dt, op.dw_bia_dt, op.dw_dst_dt))
    slot.src1_dt = DATA_TYPES[op.src1_dt][0]
    slot.sum_dt = DATA_TYPES[op.sum_dt][0] if op.sum_dt else -1
    slot.src1_strides = list(op.src1_strides)


class PostChain:
    """A post-op chain of the memory-bound primitives (bdnn_post_chain_t): eltwise, binary
    and prelu entries, the binary and prelu inputs (by entry index: dense arrays of the
    entry's src1_dt), over a written tensor of channels c and spatial sizes (d, h, w),
    stored channels first or (channels_last) last. Keeps its inputs alive."""

    def __init__(self, ops: tuple[PostOp, ...], inputs: dict[int, np.ndarray],
                 c: int, spatial: tuple[int, int, int], channels_last: bool = False) -> None:
        if len(ops) > lib.BDNN_MAX_POST_OPS:
            raise Unimplemented(f"more than {lib.BDNN_MAX_POST_OPS} post-ops")
        self.ops = ops
        self.geometry = (c, *spatial)
        self.sizes = {i: a.size for i, a in inputs.items()}
        self._keep: list = []
        ch = ffi.new("bdnn_post_chain_t *")
        ch.n, ch.c, ch.channels_last = len(ops), c, int(channels_last)
        ch.d, ch.h, ch.w = spatial
        for i, op in enumerate(ops):
            _post_op_slot(ch.ops[i], op)
            if op.has_input:
                a = inputs[i]
                buf = _bytes(a, op.src1_dt)
                self._keep += [a, buf]
                ch.src1[i] = buf
        self.cdata = ch

    def check(self, elems: int) -> None:
        """That each input holds every element its strides reach over a written tensor
        of elems elements (the C struct knows no minibatch, so it cannot)."""
        per_image = math.prod(self.geometry)
        if elems % per_image:
            raise ValueError(f"{elems} elements are no whole number of {per_image}-element "
                             "images")
        dims = (elems // per_image, *self.geometry)
        for i, op in enumerate(self.ops):
            if not op.has_input:
                continue
            reach = src1_reach(dims, op)
            if self.sizes[i] < reach:
                raise ValueError(f"post-op {i}'s input holds {self.sizes[i]} elements, its "
                                 f"strides reach {reach}")


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
# Bytes of src from which a strided 1x1 on channel blocks reads its items' points ahead.
GATHER_AHEAD_MIN_BYTES = lib.BDNN_GATHER_AHEAD_MIN_BYTES


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
    # src's own layout where it differs (None: layout's): channels last beside blocked dst,
    # forward, on the blocked direct rows only (bdnn_conv_attr_t.src_nhwc)
    src_layout: ActLayout | None = None
    src_zps: tuple[int, ...] = ()          # per channel (forward: ic), or () for src_zp
    dst_zps: tuple[int, ...] = ()          # per channel (oc), or () for dst_zp
    # ARGS with a dw post-op: its own weights' scales (() = 1, one, or per oc) and dst's
    dw_wei_scales: tuple[float, ...] = ()
    dw_dst_scale: float = 1.0
    # the caller gives the work memory at each execution (set_scratchpad), not creation
    scratchpad_user: bool = False

    def cdata(self, keep: list):
        a = ffi.new("bdnn_conv_attr_t *")
        a.src_dt, a.wei_dt, a.dst_dt, a.bia_dt = (DATA_TYPES[t][0] for t in (
            self.src_dt, self.wei_dt, self.dst_dt, self.bia_dt))
        a.scales, a.src_scale, a.dst_scale = int(self.scales), self.src_scale, self.dst_scale
        scales = ffi.new("float[]", list(self.wei_scales))
        keep.append(scales)
        a.wei_scales, a.wei_scales_per_oc = scales, int(len(self.wei_scales) > 1)
        a.src_zp, a.dst_zp = self.src_zp, self.dst_zp
        if self.dw_wei_scales:
            keep.append(ffi.new("float[]", list(self.dw_wei_scales)))
            a.dw_wei_scales = keep[-1]
            a.dw_wei_scales_per_oc = int(len(self.dw_wei_scales) > 1)
        a.dw_dst_scale = self.dw_dst_scale
        for name in ("src_zps", "dst_zps"):
            values = getattr(self, name)
            if values:
                keep.append(ffi.new("int32_t[]", list(values)))
                setattr(a, name, keep[-1])
        if len(self.post_ops) > lib.BDNN_MAX_POST_OPS:
            raise Unimplemented(f"more than {lib.BDNN_MAX_POST_OPS} post-ops")
        a.layout = int(self.layout)
        if self.src_layout not in (None, self.layout):
            if self.src_layout is not ActLayout.NHWC or not self.layout.block:
                raise Unimplemented(f"src in {self.src_layout.name} with the other "
                                    f"activations in {self.layout.name}")
            a.src_nhwc = 1
        a.scratchpad_user = int(self.scratchpad_user)
        a.n_post_ops = len(self.post_ops)
        for slot, op in zip(a.post_ops, self.post_ops):
            _post_op_slot(slot, op)
        return a

    @property
    def src_act(self) -> ActLayout:
        """src's layout (diff_src's in backward data)."""
        return self.layout if self.src_layout is None else self.src_layout

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


@lru_cache(maxsize=None)
def conv_impls() -> tuple[ImplInfo, ...]:
    """The C implementation table, in order of preference."""
    return _table(lib.bdnn_conv_impl_count, lib.bdnn_conv_impl_name, lib.bdnn_conv_impl_isa,
                  lib.bdnn_conv_impl_operands)


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


def conv_dot_shape(shape: ConvShape) -> bool:
    """Whether the int8 dot route's shape rule holds (bdnn_conv_dot_shape)."""
    return bool(lib.bdnn_conv_dot_shape(shape.cdata()))


def bwt_src_in_place(shape: ConvShape, isa: Isa) -> bool:
    """Whether backward weights on channels last reads src in place on isa's row, without
    copying it (bdnn_bwt_src_in_place)."""
    return bool(lib.bdnn_bwt_src_in_place(shape.cdata(), int(isa)))


@lru_cache(maxsize=256)
def _conv_desc(shape: ConvShape):
    d = ffi.new("bdnn_conv_desc_t *")
    d.g, d.mb, d.ic, d.oc = shape.g, shape.mb, shape.ic, shape.oc
    _set_spatial(d, shape)
    return d


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


SCRATCHPAD_ALIGN = ALIGN   # bdnn_conv_set_scratchpad's alignment


def scratchpad_buffer(nbytes: int, poison: int = 0xFF) -> np.ndarray:
    """nbytes of SCRATCHPAD_ALIGN-aligned memory for set_scratchpad, every byte poison
    (0xFF reads as NaN in f32 and -1 in s32): a kernel that reads work memory it did not
    write in the same execution computes garbage, not the zeros fresh pages would hold."""
    buf = aligned_empty(nbytes)
    buf.fill(poison)
    return buf


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
        lib.bdnn_set_test_fault(int(fault))   # read at create: the primitive carries it
        _check(lib.bdnn_conv_create(impl.index, self._desc, int(direction), int(with_bias),
                                    self.attr.cdata(self._keep), out),
               f"{impl.name} on this problem")
        self._handle = ffi.gc(out[0], lib.bdnn_conv_destroy)
        self._row = ffi.string(lib.bdnn_conv_name(self._handle)).decode()
        self._fault = fault

    @property
    def name(self) -> str:
        """The implementation's name, with `@` and the variant of its tile the last
        execution ran where its row picks one per execution (`...:shift@pairs16`)."""
        variant = ffi.string(lib.bdnn_conv_variant(self._handle)).decode()
        return _with_fault(f"{self._row}@{variant}" if variant else self._row, self._fault)

    @property
    def weights_bytes(self) -> int:
        return int(lib.bdnn_conv_weights_bytes(self._handle))

    @property
    def scratch_bytes(self) -> int:
        """What the primitive allocated for itself at creation (bdnn_conv_scratch_bytes)."""
        return int(lib.bdnn_conv_scratch_bytes(self._handle))

    @property
    def scratchpad_bytes(self) -> int:
        """The work memory of one execution (bdnn_conv_scratchpad_bytes): the primitive's
        own in library mode, the caller's (set_scratchpad) in user mode."""
        return int(lib.bdnn_conv_scratchpad_bytes(self._handle))

    def set_scratchpad(self, memory: np.ndarray) -> None:
        """User mode: the scratchpad every later execution works in, a uint8 buffer of at
        least scratchpad_bytes, 64-byte aligned (scratchpad_buffer makes one). The
        primitive keeps it."""
        if memory.dtype != np.uint8 or memory.size < self.scratchpad_bytes:
            raise ValueError(f"expected a scratchpad of {self.scratchpad_bytes} bytes")
        self._keep.append(memory)
        _check(lib.bdnn_conv_set_scratchpad(self._handle, _bytes(memory)), "scratchpad")

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
        packed = aligned_empty(self.weights_bytes)
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

    def set_post_op_inputs(self, inputs: dict[int, np.ndarray]) -> None:
        """The extra inputs of the binary and prelu entries, by entry index: dense arrays
        of the entry's src1_dt, as many elements as its strides reach. The primitive keeps
        them (it reads them at every execution)."""
        for index, op in enumerate(self.attr.post_ops):
            if not op.has_input:
                continue
            if index not in inputs:
                raise ValueError(f"post-op {index} needs its input")
            a = inputs[index]
            shape = self.dst_shape
            if self.direction is Direction.BWD_DATA:
                shape = self.shape.src_shape
            reach = src1_reach(shape, op)
            buf = _bytes(a, op.src1_dt, a.size)
            if a.size < reach:
                raise ValueError(f"post-op {index}'s input holds {a.size} elements, its "
                                 f"strides reach {reach}")
            self._keep += [a, buf]
            _check(lib.bdnn_conv_set_post_op_input(self._handle, index, buf),
                   f"post-op {index}'s input")

    def bind(self, src: np.ndarray, wei_packed: np.ndarray, bias: np.ndarray | None,
             dst: np.ndarray) -> Callable[[], None]:
        """Forward. Checks the buffers once and returns a no-argument callable that executes,
        so that timed runs pay only for the C call."""
        self._expect(Direction.FWD)
        s, a = self.shape, self.attr
        dst_dt = a.dw.dw_dst_dt if a.dw is not None else a.dst_dt
        args = (self._handle, _bytes(src, a.src_dt, a.src_act.count(s.src_shape)),
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
                _out_bytes(diff_src, a.src_dt, a.src_act.count(s.src_shape)))
        return self._runner(lib.bdnn_conv_execute_bwd_data, args)

    def bind_bwd_weights(self, src: np.ndarray, diff_dst: np.ndarray, diff_wei: np.ndarray,
                         diff_bias: np.ndarray | None) -> Callable[[], None]:
        """Backward weights: diff_wei in the user layout (and diff_bias)."""
        self._expect(Direction.BWD_WEIGHTS)
        s, a = self.shape, self.attr
        args = (self._handle, _bytes(src, a.src_dt, a.src_act.count(s.src_shape)),
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
