"""What `auto` and `any` resolve to: the one place on the Python side that decides which
algorithm --alg=auto runs (Winograd's domain and the shapes where it pays) and which
activation layouts, and so which kernel rows, an `any` case or a channels-last or
channel-blocked case tries, in order. Every rule takes a layout or an algorithm only
where its rows ran faster than the alternative in alternating runs through the tool
(the figures live in the commits that set each rule)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from ... import core
from ...common import layout
from ...common.attr import Sum
from . import prim
from .prim import is_wino_row

# --alg=wino's domain: the wino_f43 rows' (kernels/conv/conv_wino.c), each requirement
# with its test; the first unmet one names the UNIMPLEMENTED reason.
WINO_DOMAIN: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("a convolution (deconvolution has no Winograd rows)", lambda prb: prb.desc.kind == "conv"),
    ("f32 data", lambda prb: tuple(prb.dt) == ("f32", "f32", "f32")
     and prb.bia_dt in ("f32", "undef")),
    ("a forward direction", lambda prb: prb.dir.forward),
    ("a 2D problem", lambda prb: prb.desc.ndims == 4),
    ("a 3x3 kernel", lambda prb: prb.desc.k[1:] == (3, 3)),
    ("stride 1", lambda prb: prb.desc.s[1:] == (1, 1)),
    ("no dilation", lambda prb: prb.desc.dil[1:] == (0, 0)),
    ("no scales or zero points", lambda prb: not (prb.oscale or prb.scales
                                                  or prb.zero_points)),
    ("no depthwise post-op", lambda prb: prb.dw is None),
    ("no binary or prelu post-op", lambda prb: not prb.post_ops.extra_inputs),
    # (its f32 epilogue folds a first sum into the store, then runs the eltwise entries)
    ("no sum post-op after another entry",
     lambda prb: not any(isinstance(e, Sum) for e in prb.post_ops.entries[1:])),
)


WINO_NEEDS = "f32, forward, 2D, kh3 kw3, stride 1, no dilation"


def wino_unmet(prb) -> str | None:
    """The first requirement of the Winograd rows this problem does not meet, or None."""
    return next((need for need, ok in WINO_DOMAIN if not ok(prb)), None)


# --alg=auto takes Winograd within its domain where it ran faster than direct:
# Both channel counts per group at least this: below it the transforms cost as much as
# the multiplies they save.
AUTO_WINO_MIN_CHANNELS = 32
# At least this many 4x4 output tiles over the minibatch: with fewer, the 36 transformed
# weight matrices are streamed for too few tiles.
AUTO_WINO_MIN_TILES = 16
# An output at least this wide each way: a 7x7 output fills 49 of its four tiles' 64
# points.
AUTO_WINO_MIN_OUTPUT = 8
# Smaller outputs only where the plain Winograd rows take the case (transformed weights
# past core.WINO_BLOCKED_MAX_U_BYTES, their team mode) with at least this many tiles:
# there the weights are large enough that team mode streams them once per block.
AUTO_WINO_SMALL_MIN_TILES = 32
# Fewer input channels go to the wino_f43_blocked rows (one group, src and dst `any`
# resolving to channel blocks, transformed weights within core.WINO_BLOCKED_MAX_U_BYTES)
# from this many input channels, by the block `any` takes: on AVX-512's 16-wide blocks
# the output transform outweighs the direct kernel's few multiply-adds below 16 input
# channels; on AVX2's 8-wide blocks Winograd ran faster from 1.
AUTO_WINO_FEW_MIN_IC: dict[int, int] = {16: 16, 8: 1}


def wino_blocked_takes(prb) -> bool:
    """Whether auto's few-channel rule applies: the wino_f43_blocked rows run the case
    (given the Winograd domain) with fewer than AUTO_WINO_MIN_CHANNELS input channels, and
    at least those AUTO_WINO_FEW_MIN_IC asks of the block `any` takes."""
    d = prb.desc
    if not (d.g == 1 and d.ic < AUTO_WINO_MIN_CHANNELS
            and all(prb.requested_layouts[n] is None for n in ("src", "dst"))):
        return False
    # what `any` takes for f32, the only type of Winograd
    block = any_layouts(core.Direction.FWD, prb.shape, core.Operands.F32)[0].act.block
    u_bytes = 4 * 36 * d.ic * -(-d.oc // block) * block    # as conv_wino_blk.c's u_bytes
    return (block in AUTO_WINO_FEW_MIN_IC and d.ic >= AUTO_WINO_FEW_MIN_IC[block]
            and u_bytes <= core.WINO_BLOCKED_MAX_U_BYTES)


def resolved_alg(prb) -> str:
    """The algorithm whose rows a case may use: wino or direct (auto decides by the rule
    above; within the wino domain only)."""
    if prb.alg != "auto":
        return prb.alg
    d = prb.desc
    tiles = d.mb * -(-d.o[1] // 4) * -(-d.o[2] // 4)
    plain_u_bytes = 4 * 36 * (d.ic // d.g) * (d.oc // d.g)
    if (wino_unmet(prb) is None and tiles >= AUTO_WINO_MIN_TILES
            and (min(d.o[1], d.o[2]) >= AUTO_WINO_MIN_OUTPUT
                 or plain_u_bytes > core.WINO_BLOCKED_MAX_U_BYTES
                 and tiles >= AUTO_WINO_SMALL_MIN_TILES)
            and (d.ic // d.g >= AUTO_WINO_MIN_CHANNELS and d.oc // d.g >= AUTO_WINO_MIN_CHANNELS
                 or wino_blocked_takes(prb))):
        return "wino"
    return "direct"


def ran_alg(impl_name: str) -> str:
    """The algorithm an implementation (by the name a case reports) computes."""
    return "wino" if is_wino_row(impl_name) else "direct"


# The activations' layout of each kind of kernel row (core.ActLayout: the attr a
# primitive is created with; kernels/conv/README.md): plain rows run on abx, the
# gemm_conv_nhwc and dw_conv_nhwc rows on axb (nwc, nhwc, ndhwc), the gemm_conv_blocked
# and dw_conv_blocked rows on aBx8b and aBx16b (nChw8c, nChw16c and their 1D/3D forms),
# fused_dw on abx and the blocked ones.
ACT_TAGS = {core.ActLayout.PLAIN: "abx", core.ActLayout.NHWC: "axb",
            core.ActLayout.BLOCKED8: "aBx8b", core.ActLayout.BLOCKED16: "aBx16b"}


# Shape rules of the layout tables below, on the problem the kernel computes (a
# deconvolution's: the swapped convolution).
def _always(shape: core.ConvShape) -> bool:
    return True


def _never(shape: core.ConvShape) -> bool:
    return False


def _unit_stride(shape: core.ConvShape) -> bool:
    return shape.s == (1, 1, 1)


def _strided_wide(shape: core.ConvShape) -> bool:
    """Strided, with channels enough per group to fill a vector (not ResNet's first
    layer, whose 3 input channels the plain rows' col2im serves better)."""
    return not _unit_stride(shape) and shape.ic // shape.g >= 16


def _not_dot(shape: core.ConvShape) -> bool:
    """Not a shape of the int8 dot route (a long reduction with few outputs per image),
    which runs on the plain layouts: the blocked rows pad its few output channels to a
    block, and would pack that many times its weights."""
    return not core.conv_dot_shape(shape)


def _bwt_pays(shape: core.ConvShape, isa: core.Isa, hiding_macs: int | None = None) -> bool:
    """Whether backward weights by taps on channels last (run_bwt) outruns the plain rows
    on isa's row: an output at least 14 wide (narrower: too few points per k block for
    its C), or a strided 1x1 of any width (its k blocks run across images, and it copies
    src's one phase it reads, where the plain rows gather the strided points per k
    block), at least 16 input channels per group, and not a 1x1 with few input channels
    whose src run_bwt copies (core.bwt_src_in_place) and that is larger than the caches
    keep (core.BWT_CACHED_MAX_BYTES), where every element it packs comes from memory and
    the plain rows' packing streams faster, unless each element feeds at least
    `hiding_macs` multiply-adds (OCG * ICG / (OCG + ICG)), which hide the copy behind the
    products (AVX-512 only: on AVX2 the products take long enough to hide it anyway)."""
    cig, cog = shape.ic // shape.g, shape.oc // shape.g
    src_bytes = 4 * math.prod(shape.src_shape)   # f32: the only type these rows take
    hides = hiding_macs is not None and cog * cig >= hiding_macs * (cog + cig)
    strided_1x1 = shape.k == (1, 1, 1) and not _unit_stride(shape)
    return ((shape.o[2] >= 14 or strided_1x1) and cig >= 16
            and (cig >= 128 or shape.k != (1, 1, 1) or src_bytes <= core.BWT_CACHED_MAX_BYTES
                 or hides or core.bwt_src_in_place(shape, isa)))


def _bwt_pays_avx512(shape: core.ConvShape) -> bool:
    return _bwt_pays(shape, core.Isa.AVX512, hiding_macs=48)


def _bwt_pays_avx2(shape: core.ConvShape) -> bool:
    return _bwt_pays(shape, core.Isa.AVX2)


# A strided pointwise layer takes AVX-512's pointwise row only with outputs at least this
# wide (ResNet-50's res5a_branch2a, 7 wide, ran faster on taps), and with at most as many
# output as input channels (diff_dst, dense, is then the tensor read again per item, and
# src, whose skipped points the cache lines carry along, streams past once) unless src
# and diff_dst stay in cache between runs (core.BWT_CACHED_MAX_BYTES): with more output
# channels src is the tensor read again per item, which from memory ran slower than the
# taps route's copy of its one phase, and from cache faster (res3a_branch1 and
# res4a_branch1 at mb1). AVX2's row takes none: its strided layers ran slower than on taps.
POINTWISE_STRIDED_MIN_WIDTH = 14


def _pointwise(shape: core.ConvShape, vl: int) -> bool:
    """A pointwise layer of the pointwise rows' domain: one group, a 1x1 without padding,
    at unit stride (the output is the input's size) or, on AVX-512, strided in 1D or 2D
    by the rule above, the vectors' channels (AVX-512: input, 16 wide; AVX2: output or
    input, its two kernels', 8 wide) in whole vectors, the others in whole 8s."""
    vc, xc = (shape.ic, shape.oc) if vl == 16 else (shape.oc, shape.ic)
    unit = _unit_stride(shape) and shape.i == shape.o
    cached = 4 * (math.prod(shape.src_shape) + math.prod(shape.dst_shape)) \
        <= core.BWT_CACHED_MAX_BYTES
    strided = (vl == 16 and not _unit_stride(shape) and shape.i[0] == shape.o[0] == 1
               and all((o - 1) * s < i for i, o, s in zip(shape.i, shape.o, shape.s))
               and (shape.oc <= shape.ic or cached)
               and shape.o[2] >= POINTWISE_STRIDED_MIN_WIDTH)
    return (shape.g == 1 and shape.k == (1, 1, 1) and shape.p == (0, 0, 0)
            and (unit or strided) and vc % vl == 0 and xc % 8 == 0)


def _pointwise_bwt_avx512(shape: core.ConvShape) -> bool:
    """Whether backward weights runs on the AVX-512 pointwise row
    (gemm_conv_blocked:avx512:pointwise: both tensors' 16-channel blocks read in place,
    no packing), which outran the channels-last taps route and the plain rows on
    ResNet-50's pointwise layers."""
    return _pointwise(shape, 16)


def _pointwise_bwt(shape: core.ConvShape) -> bool:
    """Whether backward weights runs on the AVX2 pointwise row (gemm_conv_blocked:avx2:
    pointwise, on 8-channel blocks), which outran channels last's taps route on AVX2.
    Not where AVX-512 runs: its own pointwise row, or its channels-last rows, keep
    those layers."""
    return _pointwise(shape, 8) and not core.isa_supported(core.Isa.AVX512)


def _window_pays(shape: core.ConvShape) -> bool:
    """Whether backward weights by windows on channels last (the window route: each output
    point's input window read in place, no packing) outruns the plain rows' packing: few
    input channels per group (fewer than 16, where the taps route's 32-wide columns
    would be half empty), output channels per group in whole 32-wide panels, no dilation
    along w (a point's window is then one run). AVX-512 only: on AVX2's 16-wide tile the
    plain rows stayed ahead on ResNet-50's first layer."""
    cig, cog = shape.ic // shape.g, shape.oc // shape.g
    return cig < 16 and cog % 32 == 0 and shape.dil[2] == 0


def _few_channels(block: int) -> Callable[[core.ConvShape], bool]:
    """One group of fewer input channels than a block: a first layer, whose src in blocks
    would be mostly padding (3 channels in 16-wide blocks: 5.3 times the bytes)."""
    return lambda shape: shape.g == 1 and shape.ic < block


@dataclasses.dataclass(frozen=True)
class AnyEntry:
    """One layout an all-`any` case tries: its rows of one instruction set (None: any
    row) where the shape rule holds; src: src's own layout where it differs from act's
    (core.ConvAttr.src_layout: channels last beside blocked dst, forward convolution)."""

    act: core.ActLayout
    isa: core.Isa | None = None
    when: Callable[[core.ConvShape], bool] = _always
    src: core.ActLayout | None = None


# `any` activations (src and dst both `any`): the layouts whose rows are tried, in order,
# by the direction the kernel computes (a deconvolution's forward runs the backward-data
# kernels), each with the instruction set of the rows that run it fast (with --impl=scalar,
# say, those entries find no row and the plain layout serves the case).
#   forward: channels last where AMX runs, for the tile rows (bf16 and int8 only: an f32
#     case finds no row there); a tile row reads 64 bytes of one point's channels, which
#     16-channel blocks do not hold. Else channel blocks, 16 wide where AVX-512 runs, else
#     8; their direct kernels keep an output block in registers across all taps
#     (channels last ran slower than them). A first layer (_few_channels) reads its src
#     channels last beside those blocks, f32 and bf16: the direct kernels broadcast each
#     input channel anyway, and a block's padding would multiply the bytes read. Not
#     int8 (its rows take no channels-last src: a 3-channel lane read exactly from a
#     3-byte point ran slower than a block's lane read whole).
#     The plain rows take what the blocked ones do not (other types, scales, zero points,
#     an s8 source, groups of partial blocks, Winograd outside the blocked rows' domain),
#     and int8 on the dot route's shapes (_not_dot; AVX2's int8 blocked row refuses those
#     itself, and first layers and strided 1x1s, so they fall through to plain).
#   backward data: channel blocks at unit stride (strided, they ran slower than plain);
#     channels last when strided with a vector's worth of channels.
#   backward weights: channel blocks for the pointwise layers (16 wide where AVX-512
#     runs, _pointwise_bwt_avx512; 8 on AVX2, _pointwise_bwt), whose pointwise rows read
#     both tensors in place; channels last where _bwt_pays says run_bwt outruns the plain
#     rows' packing, or (AVX-512) where _window_pays says the window route does (first
#     layers); other channel blocks never (they ran slower than plain).
ANY_LAYOUTS: dict[core.Direction, tuple[AnyEntry, ...]] = {
    core.Direction.FWD: (AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512_AMX),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512_BF16,
                                  _few_channels(16), core.ActLayout.NHWC),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512_BF16),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512_VNNI, _not_dot),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512, _few_channels(16),
                                  core.ActLayout.NHWC),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512),
                         AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2, _few_channels(8),
                                  core.ActLayout.NHWC),
                         AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2),
                         AnyEntry(core.ActLayout.PLAIN)),
    core.Direction.BWD_DATA: (AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512, _unit_stride),
                              AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2, _unit_stride),
                              AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512, _strided_wide),
                              AnyEntry(core.ActLayout.NHWC, core.Isa.AVX2, _strided_wide),
                              AnyEntry(core.ActLayout.PLAIN)),
    core.Direction.BWD_WEIGHTS: (AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512,
                                          _pointwise_bwt_avx512),
                                 AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512,
                                          _bwt_pays_avx512),
                                 AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512, _window_pays),
                                 AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2,
                                          _pointwise_bwt),
                                 AnyEntry(core.ActLayout.NHWC, core.Isa.AVX2, _bwt_pays_avx2),
                                 AnyEntry(core.ActLayout.PLAIN)),
}


def any_layouts(kernel_dir: core.Direction, shape: core.ConvShape,
                operands: core.Operands | None = None) -> tuple[AnyEntry, ...]:
    """The entries an all-`any` case tries (ANY_LAYOUTS), on this CPU, for this shape;
    with operands, only those with a row of that class (f32 finds none on the tile rows'
    entry)."""
    isas = None if operands is None else {i.isa for i in core.conv_impls()
                                          if i.operands is operands}
    return tuple(e for e in ANY_LAYOUTS[kernel_dir]
                 if (e.isa is None or core.isa_supported(e.isa)) and e.when(shape)
                 and (isas is None or e.isa is None or e.isa in isas))


def _pointwise_blocked16(shape: core.ConvShape) -> bool:
    """A pointwise layer on 16-channel blocks that a pointwise row takes (AVX-512's where
    it runs, or AVX2's, which reads those blocks too)."""
    return ((core.isa_supported(core.Isa.AVX512) and _pointwise_bwt_avx512(shape))
            or _pointwise_bwt(shape))


# A case asking for exactly channels-last or one channel-block activations: whether that
# layout's own rows come before the plain rows' reorder route (else after it: they run
# when the route is filtered out or they are named), by the kernel's direction: first
# wherever they ran faster than reorder, plain kernel and reorder back, which for channel
# blocks in backward data is at unit stride only, and in backward weights on the pointwise
# layers only.
NATIVE_FIRST: dict[core.Direction, dict[core.ActLayout, Callable[[core.ConvShape], bool]]] = {
    core.Direction.FWD: {core.ActLayout.NHWC: _always, core.ActLayout.BLOCKED16: _always,
                         core.ActLayout.BLOCKED8: _always},
    core.Direction.BWD_DATA: {core.ActLayout.NHWC: _always,
                              core.ActLayout.BLOCKED16: _unit_stride,
                              core.ActLayout.BLOCKED8: _unit_stride},
    core.Direction.BWD_WEIGHTS: {core.ActLayout.NHWC: _always,
                                 core.ActLayout.BLOCKED16: _pointwise_blocked16,
                                 core.ActLayout.BLOCKED8: _pointwise_bwt},
}


def kernel_layouts(prb, act: core.ActLayout = core.ActLayout.PLAIN,
                   src: core.ActLayout | None = None) -> dict[str, layout.Layout]:
    """The kernels' own layout of src, wei and dst, over the user's logical dims, for the
    rows that run on activations in act (src in src, where given)."""
    t = prim.tensors(prb.desc, prb.shape, prim.dw_shape_of(prb))
    wei_tag = "abx"
    if prb.desc.kind == "deconv":
        wei_tag = "acbx" if prb.desc.has_groups else "bax"
    return {"src": layout.plain(t["src"].logical, ACT_TAGS[src or act]),
            "dst": layout.plain(t["dst"].logical, ACT_TAGS[act]),
            "wei": layout.plain(t["wei"].logical, wei_tag)}


def act_layouts(prb, kernel_dir: core.Direction,
                shape: core.ConvShape) -> tuple[AnyEntry, ...]:
    """The activation layouts whose rows the backend tries, in order. Both src and dst
    `any`: ANY_LAYOUTS of the kernel's direction and shape. A case asking for
    channels-last or channel-blocked activations (a src or dst in axb, aBx8b or aBx16b
    that is not also the plain layout, and no other activation layout) can run on that
    layout's rows; NATIVE_FIRST says whether before the plain rows behind the reorder
    route (those that come second run when asked for: --impl=gemm_conv_nhwc... /
    gemm_conv_blocked..., or --skip-impl=+reorder). Otherwise plain rows only."""
    requested = prb.requested_layouts
    plain = kernel_layouts(prb)
    asked = [(requested[n], n) for n in ("src", "dst") if requested[n] is not None]
    # a deconvolution's kernel reads its dst: src's own layout is convolution's
    conv = prb.desc.kind == "conv"
    if not asked:
        return tuple(e for e in any_layouts(kernel_dir, shape) if conv or e.src is None)
    route = AnyEntry(core.ActLayout.PLAIN)
    if not any(not lay.same_memory(plain[n]) for lay, n in asked):
        return (route,)
    for act, first in NATIVE_FIRST[kernel_dir].items():
        native = kernel_layouts(prb, act)
        if all(lay.same_memory(native[n]) for lay, n in asked):
            return (AnyEntry(act), route) if first(shape) else (route, AnyEntry(act))
    # channels-last src beside blocked dst: the forward blocked direct rows', before the
    # route (they run without its two reorders)
    if conv and kernel_dir is core.Direction.FWD:
        for act in (core.ActLayout.BLOCKED16, core.ActLayout.BLOCKED8):
            native = kernel_layouts(prb, act, core.ActLayout.NHWC)
            if all(lay.same_memory(native[n]) for lay, n in asked):
                return (AnyEntry(act, src=core.ActLayout.NHWC), route)
    return (route,)
