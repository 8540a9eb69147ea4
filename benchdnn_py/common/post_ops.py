"""Post-op entries with an extra input, binary and prelu, as every driver that takes them
runs them (conv, deconv, pool, eltwise): the input's name, type, dims and layout, what the
native kernels take, its fill, the kernels' entry, and the reference's f32 formula.

Entry i of a chain that reads a tensor of its own (binary src1, prelu weights) gives the
case an input named src1_{i}: the written tensor's dims (dst; deconvolution's dst), kept
along the dims its mask names and broadcast (size 1) along the others, in the layout its
tag or strides give (plain `any` by default). In a convolution's chain with a depthwise
entry, the entries before it apply to the 1x1 convolution's output, whose dims differ:
the functions below then take the dims per entry index (DimsArg).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .. import core
from ..errors import ProblemError, UsageError
from ..status import Status
from . import eltwise, fill, layout, reorders
from .attr import POLICY_MASKS, Binary, Eltwise, Modes, PostOps, Prelu, Sum

Dims = tuple[int, ...]
# the dims of the tensor the chain applies to, or of the one each entry index applies to
DimsArg = Dims | Mapping[int, Dims]

SRC1_PREFIX = "src1_"
# Types the kernels convert src1 from (bdnn.h, BDNN_POST_BINARY).
SRC1_DTS = ("f32", "bf16", "f16", "s32", "s8", "u8")


def entry_dims(dst_dims: DimsArg, index: int) -> Dims:
    """The dims of the tensor entry `index` applies to."""
    return dst_dims[index] if isinstance(dst_dims, Mapping) else dst_dims


def src1_name(index: int) -> str:
    return f"{SRC1_PREFIX}{index}"


def src1_entries(post_ops: PostOps) -> list[tuple[int, Binary | Prelu]]:
    """(index in the chain, entry) of each entry with an extra input."""
    return [(i, e) for i, e in enumerate(post_ops.entries) if isinstance(e, (Binary, Prelu))]


def src1_dt(entry: Binary | Prelu) -> str:
    return entry.dt if isinstance(entry, Binary) else "f32"   # prelu weights are f32


def src1_dims(entry: Binary | Prelu, dst_dims: tuple[int, ...]) -> tuple[int, ...]:
    """The extra input's dims: dst's along the mask's dims (bits past the rank ignored,
    as benchdnn), 1 along the others."""
    text = entry.src1.mask if isinstance(entry, Binary) else entry.mask
    mask = int(text) if text.isdigit() else POLICY_MASKS[text or "common"]
    return tuple(n if mask >> d & 1 else 1 for d, n in enumerate(dst_dims))


def src1_layout(entry: Binary | Prelu, dst_dims: tuple[int, ...]) -> layout.Layout:
    """The extra input's memory: its tag's layout (`any`: plain) or its strides; a
    ProblemError naming the token when they do not fit its dims."""
    dims = src1_dims(entry, dst_dims)
    b = entry.src1 if isinstance(entry, Binary) else None
    if b is not None and b.strides:
        return layout.strided_layout(dims, b.strides)
    if b is not None and b.tag and b.tag != "any":
        return layout.tensor_layout(layout.parse_tag(b.tag), dims)
    return layout.plain(dims)


def src1_kernel_strides(lay: layout.Layout) -> tuple[int, int, int, int, int]:
    """The kernels' strides of an extra input over the written tensor's (mb, c, d, h, w):
    the layout's, 0 along a broadcast (size-1) dim and along the dims the rank lacks (the
    channels of a 1D tensor, the leading spatial dims)."""
    st = [0 if n == 1 else s for n, s in zip(lay.dims, lay.strides)] + [0] * (2 - lay.ndims)
    return tuple(st[:2] + [0] * (3 - len(st[2:])) + st[2:])


def src1_values_5d(values: np.ndarray, ndims: int) -> np.ndarray:
    """Logical src1 values shaped to broadcast against the C core's 5D [mb][c][d][h][w]."""
    shape = values.shape[:2] + (1,) * (2 - ndims) + (1,) * (5 - max(ndims, 2)) \
        + values.shape[2:]
    return values.reshape(shape)


def src1_at(values5: np.ndarray, dst_shape5: tuple[int, ...], points: np.ndarray
            ) -> np.ndarray:
    """A 5D extra input's values at linear offsets into dst [mb][c][d][h][w]."""
    idx = np.unravel_index(points, dst_shape5)
    return values5[tuple(i if n > 1 else 0 for i, n in zip(idx, values5.shape))]




# The binary post-op's formulas in f32, as oneDNN defines them (comparisons give 1 or 0).
BINARY_F32 = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    # x > b ? x : b, as oneDNN's (a NaN x gives b; np.maximum would propagate it)
    "max": lambda x, b: np.where(x > b, x, b), "min": lambda x, b: np.where(x < b, x, b),
    "ge": np.greater_equal, "gt": np.greater,
    "le": np.less_equal, "lt": np.less, "eq": np.equal, "ne": np.not_equal,
}


def apply_src1(e: Binary | Prelu, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """dst = dst OP src1 (binary), or dst > 0 ? dst : dst * weight (prelu), in f32."""
    f32 = np.float32
    if isinstance(e, Prelu):
        return np.where(x > 0, x, x * b).astype(f32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return BINARY_F32[e.alg](x, b).astype(f32)


# The values an entry's input is drawn from, by algorithm: small integers (exact in every
# src1 type) or powers of two, so that the f32 math of the kernels and of the reference
# agree to the bit; never 0 for a divisor or a factor (a zero product would hide the
# output it multiplies).
SRC1_RANGE = (-4, 4)                    # add, sub, max, min, comparisons: integers
SRC1_RANGE_U8 = (0, 8)
SRC1_CHOICES = {"div": (1.0, 2.0, 4.0, -2.0), "mul": (1.0, 2.0, -1.0, 3.0)}
PRELU_WEIGHTS = (-0.5, 0.25, 0.5, 2.0)  # powers of two: x * w is exact
COMPARISONS = ("ge", "gt", "le", "lt", "eq", "ne")


def fill_src1(post_ops: PostOps, dst_dims: DimsArg) -> dict[str, np.ndarray]:
    """Each binary and prelu entry's input, logical (dst's dims, 1 where broadcast), as
    exact f32 values; seeded by its index in the chain (fill.Kind.POST_SRC1 + i). The
    same values in performance mode (they are few and ordinary)."""
    out = {}
    for i, e in src1_entries(post_ops):
        dims, dt = src1_dims(e, entry_dims(dst_dims, i)), src1_dt(e)
        n, kind = math.prod(dims), fill.Kind.POST_SRC1 + i
        unsigned = dt == "u8"
        if isinstance(e, Prelu):
            data = fill.choice_fill(n, kind, PRELU_WEIGHTS)
        elif e.alg in SRC1_CHOICES:
            choices = SRC1_CHOICES[e.alg]
            data = fill.choice_fill(n, kind, tuple(v for v in choices if v > 0 or not unsigned))
        else:
            data = fill.int_fill(n, kind, *(SRC1_RANGE_U8 if unsigned else SRC1_RANGE))
        out[src1_name(i)] = data.reshape(dims)
    return out


def src1_bytes(post_ops: PostOps, dst_dims: DimsArg) -> int:
    """Bytes of the inputs in their types (the perf line's input bytes)."""
    return sum(math.prod(src1_dims(e, entry_dims(dst_dims, i)))
               * core.numpy_dtype(src1_dt(e)).itemsize for i, e in src1_entries(post_ops))


DEFAULT_ZERO_TRUST_PERCENT = 30.0


def zero_trust_percent(post_ops: PostOps, dt: str) -> float:
    """benchdnn's default zero trust of the memory-bound drivers, 30 %, which grows to
    (100 + 30) / 2 where negatives become 0 (a u8 dst, a relu-like entry:
    eltwise.zeroes_negatives), as half the outputs may be negative before."""
    clamps = dt == "u8" or any(isinstance(e, Eltwise) and eltwise.zeroes_negatives(e.name,
                                                                                  e.alpha)
                               for e in post_ops.entries)
    return (100.0 + DEFAULT_ZERO_TRUST_PERCENT) / 2 if clamps else DEFAULT_ZERO_TRUST_PERCENT


def nans_possible(post_ops: PostOps) -> bool:
    """Whether an eltwise entry's formula can give NaN or Inf on its inputs (sqrt, log and
    pow of negatives): a NaN expected and got then passes (benchdnn's rule 5)."""
    return any(eltwise.ALGS[e.name].nan_inf_possible for e in post_ops.eltwise)


def has_comparison(post_ops: PostOps) -> bool:
    """A comparison writes 0 for every false: zeros are its right answer (zero trust)."""
    return any(isinstance(e, Binary) and e.alg in COMPARISONS for e in post_ops.entries)


def kernel_entry(e: Eltwise | Binary | Prelu | Sum, dst_dims: tuple[int, ...]) -> core.PostOp:
    """An eltwise, binary, prelu or sum entry in the C core's terms (dst_dims: the written
    tensor's logical dims)."""
    if isinstance(e, Eltwise):
        return core.PostOp(core.PostKind.ELTWISE, eltwise.ALGS[e.name].code, e.scale,
                           e.alpha, e.beta)
    if isinstance(e, Sum):
        return core.PostOp(core.PostKind.SUM, scale=e.scale, zero_point=e.zero_point,
                           sum_dt=e.dt)
    kind = core.PostKind.BINARY if isinstance(e, Binary) else core.PostKind.PRELU
    alg = core.BINARY_ALGS[e.alg] if isinstance(e, Binary) else 0
    return core.PostOp(kind, alg, src1_dt=src1_dt(e),
                       src1_strides=src1_kernel_strides(src1_layout(e, dst_dims)))


def src1_unsupported(post_ops: PostOps, dst_dims: DimsArg, backend: str,
                     chains: frozenset[str] = frozenset({"native"})
                     ) -> tuple[Status, str] | None:
    """Binary and prelu entries the problem or the native kernels cannot run; chains:
    the backends that run them (the native kernels, and a backend that applies the chain
    as operators of its own)."""
    for i, e in src1_entries(post_ops):
        if isinstance(e, Binary) and not e.dt:
            return (Status.INVALID_ARGUMENTS, f"`{e}`: a binary post-op names src1's data "
                    f"type ({e}:DT)")
        if isinstance(e, Binary) and e.alg == "select":
            return (Status.UNIMPLEMENTED, f"`{e}`: binary select (a third, condition input) "
                    "is not implemented")
        if isinstance(e, Binary) and e.dt not in SRC1_DTS:
            return (Status.UNIMPLEMENTED, f"`{e}`: src1 of type {e.dt}; the kernels take "
                    f"{', '.join(SRC1_DTS)}")
        if isinstance(e, Binary) and e.src1.tag == "grouped":
            return (Status.UNIMPLEMENTED, f"`{e}`: a grouped src1 is not implemented")
        try:
            lay = src1_layout(e, entry_dims(dst_dims, i))
        except (ProblemError, UsageError) as exc:
            return Status.INVALID_ARGUMENTS, f"`{e}`: {exc}"
        if not lay.is_plain:
            return (Status.UNIMPLEMENTED, f"`{e}`: src1 in the blocked layout {lay.name}; "
                    "the kernels read it through strides (plain layouts) only")
        if backend not in chains:
            return (Status.UNIMPLEMENTED, f"`{e}`: the {backend} backend does not run "
                    "binary or prelu post-ops")
    return None


def memory_bound_verdict(post_ops: PostOps, modes: Modes, backend: str, primitive: str,
                         dst_dims: tuple[int, ...], native: frozenset[str] = frozenset(),
                         chains: frozenset[str] = frozenset({"native"})
                         ) -> tuple[Status, str] | None:
    """The verdict of the eltwise and pooling drivers, whose kernels fuse eltwise, binary
    and prelu entries (oneDNN's post-ops for them): a sum or dw entry is UNIMPLEMENTED, as
    is a chain on a backend other than chains' and what src1_unsupported and Modes.verdict
    name."""
    for e in post_ops.entries:
        if not isinstance(e, (Eltwise, Binary, Prelu)):
            return (Status.UNIMPLEMENTED, f"--attr-post-ops={post_ops}: `{e}`: {primitive} "
                    "primitive takes eltwise, binary and prelu post-ops")
    if post_ops and backend not in chains:
        return (Status.UNIMPLEMENTED, f"--attr-post-ops={post_ops}: the {backend} backend "
                f"runs {primitive} primitive without post-ops")
    return (src1_unsupported(post_ops, dst_dims, backend, chains)
            or modes.verdict(backend, native))


def chain_reference(x: np.ndarray, post_ops: PostOps, inputs: dict[str, np.ndarray],
                    prior: np.ndarray | None = None) -> np.ndarray:
    """x (double, the primitive's exact result, dst's logical shape) through a chain of
    eltwise, binary, prelu and sum entries as the kernels define it: each entry in f32,
    eltwise entries through the double formulas rounded to f32 (as the convolutions'
    reference), binary and prelu on their inputs (inputs' src1_{i}, logical, broadcast
    against x), sum as x + scale * (prior - zero_point) on dst's prior values (logical)."""
    out = None
    for out in _chain_steps(x, post_ops, inputs, prior):
        pass
    return out


def chain_with_magnitude(x: np.ndarray, post_ops: PostOps, inputs: dict[str, np.ndarray]
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(the chain's result in double, the largest magnitude each point reaches on the way,
    x's included): a binary add can cancel most of a value whose f32 rounding stays in the
    result, so that magnitude bounds the result's error."""
    mag = np.abs(x)
    for out in _chain_steps(x, post_ops, inputs):
        mag = np.maximum(mag, np.abs(out))
    return out.astype(np.float64), mag


def _chain_steps(x: np.ndarray, post_ops: PostOps, inputs: dict[str, np.ndarray],
                 prior: np.ndarray | None = None):
    """chain_reference's value after each entry (x in f32 alone, without entries)."""
    f32 = np.float32
    with np.errstate(over="ignore"):    # past f32's range is inf, as the kernels hold it
        out = x.astype(f32)
    if not post_ops.entries:
        yield out
    for i, e in enumerate(post_ops.entries):
        if isinstance(e, Eltwise):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = (e.scale * eltwise.apply(e.name, out.astype(np.float64), e.alpha,
                                               e.beta)).astype(f32)
        elif isinstance(e, Sum):
            out = out + f32(e.scale) * (prior.astype(f32).reshape(out.shape)
                                        - f32(e.zero_point))
        else:
            out = apply_src1(e, out, inputs[src1_name(i)].astype(f32))
        yield out


def kernel_chain(post_ops: PostOps, src1: dict[str, np.ndarray], dims: tuple[int, ...],
                 channels_last: bool = False) -> core.PostChain | None:
    """A chain for the memory-bound kernels (None without entries; sum entries only for a
    primitive that reads the prior dst, binary) over a written tensor of logical dims (mb,
    channels, up to 3 spatial) stored channels first or last; each input (src1's logical
    f32 values) in its type and the layout its entry names."""
    if not post_ops:
        return None
    inputs = {}
    for i, e in src1_entries(post_ops):
        dt = src1_dt(e)
        inputs[i] = reorders.place(src1[src1_name(i)].astype(core.numpy_dtype(dt)),
                                   src1_layout(e, dims), dt).reshape(-1)
    ops = tuple(kernel_entry(e, dims) for e in post_ops.entries)
    spatial = (1,) * (5 - max(len(dims), 2)) + tuple(dims[2:])
    return core.PostChain(ops, inputs, dims[1] if len(dims) > 1 else 1, spatial,
                          channels_last)
