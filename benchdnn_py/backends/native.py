"""The native backend: this project's C kernels (through core.py, the only module that
calls C). Implementation selection, kernel routing and weight packing stay with the
drivers that define them (conv.create, the KERNEL_DIR tables, deconv's swap rule); this
module adapts them to the Executor contract of backends/__init__.py, and gives the
kernels the memory formats they lack.

Layouts. The C kernels run on their own dense layouts only (kernels/conv/README.md):
src and dst in logical order (abx) or, on the f32 gemm_conv_nhwc and dw_conv_nhwc rows,
channels last (axb: nwc, nhwc, ndhwc), or, on the f32 gemm_conv_blocked, dw_conv_blocked
and fused_dw rows, channel-blocked (aBx8b, aBx16b: nChw8c, nChw16c, padded); weights [g][oc/g][ic/g][spatial] for convolution and,
for deconvolution (the swapped convolution), transposed per group ([g][ic/g][oc/g]...:
iohw, giohw). A case whose src/dst ask for channels last or for one channel block (and
nothing else) can run on those rows directly, its `any` activations resolved to the
same layout; NATIVE_FIRST says, per direction, whether they come before the plain rows
behind the route below (where they measured faster) or after them (then they run when
the route is filtered out, --skip-impl=+reorder, or they are named, --impl). Otherwise
`any` resolves by ANY_LAYOUTS, per direction and shape: forward to channel blocks;
backward data to channel blocks at unit stride and to channels last strided; backward
weights to channels last where run_bwt pays; else plain. Any other layout
the user asks for (--stag/--wtag/--dtag/--strides) is served by the reorder route: the
primitive reorders each input from its layout into a plain scratch buffer, runs the
kernel, and reorders each output from plain scratch into its layout (padded tail zeroed),
all inside the timed callable, with the reorder kernels (kernels/reorder): formats.Route,
shared with the eltwise and pooling drivers. The implementation name then ends in
`+reorder`. A sum post-op reads the prior dst through
its layout (reordered into the scratch first). Weights given in another layout are
re-packed on every execution too (the primitive cannot know they did not change); with
the kernels' own layout they are packed once, at bind, as before.

A deliberate reorder defect ($BENCHDNN_PY_TEST_FAULT=reorder_padding_garbage,
reorder_dense_dst; core.OpFault) applies to the route's reorders: they are part of
the primitive. The data the harness places into the primitive's layouts (conv/formats.py)
never goes through a defective reorder.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from .. import core, layout
from ..drivers.base import CaseResult
from ..drivers.conv import driver as conv
from ..drivers.conv import formats
from ..drivers.deconv import driver as deconv
from ..drivers.deconv import ref as deconv_ref
from ..memory import Guarded
from ..status import Status

ROUTE_SUFFIX = formats.ROUTE_SUFFIX


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


def _bwt_pays(shape: core.ConvShape, hiding_macs: int | None = None) -> bool:
    """Backward weights by taps on channels last (conv_gemm_nhwc.c, run_bwt) outran the
    plain rows where the output is at least 14 wide (narrower: too few points per k
    block for its C) and the layer is not a 1x1 with few input channels and an src larger
    than run_bwt reads in place (core.BWT_CACHED_MAX_BYTES): there every element
    run_bwt packs comes from memory, and the plain rows' packing streams faster, unless
    each element feeds at least `hiding_macs` multiply-adds (OCG * ICG / (OCG + ICG)),
    which hide the copy behind the products. ResNet-50's 1x1 layers with 64 input
    channels at 56x56, channels last over plain, 2 threads: Zen 4, three runs, mb1
    (0.8 MB) 0.92x and 0.87x the time, mb16 (12.8 MB) 1.11x and 1.04x (OC 64 and 256,
    before run_bwt read ahead); Zen 5 at mb16, reading ahead, alternating runs: OC 64 (32
    multiply-adds per element) 1.48x, OC 256 (51) 0.80x-0.98x on AVX-512 (so 48 there),
    1.05x-1.08x on AVX2 (no such bound)."""
    cig, cog = shape.ic // shape.g, shape.oc // shape.g
    src_bytes = 4 * math.prod(shape.src_shape)   # f32: the only type these rows take
    hides = hiding_macs is not None and cog * cig >= hiding_macs * (cog + cig)
    return shape.o[2] >= 14 and cig >= 16 and (cig >= 128 or shape.k != (1, 1, 1)
                                               or src_bytes <= core.BWT_CACHED_MAX_BYTES
                                               or hides)


def _bwt_pays_avx512(shape: core.ConvShape) -> bool:
    return _bwt_pays(shape, hiding_macs=48)


@dataclasses.dataclass(frozen=True)
class AnyEntry:
    """One layout an all-`any` case tries: its rows of one instruction set (None: any
    row) where the shape rule holds."""

    act: core.ActLayout
    isa: core.Isa | None = None
    when: Callable[[core.ConvShape], bool] = _always


# `any` activations (src and dst both `any`): the layouts whose rows are tried, in order,
# by the direction the kernel computes (a deconvolution's forward runs the backward-data
# kernels), each with the instruction set of the rows that run it fast (with --impl=scalar,
# say, those entries find no row and the plain layout serves the case). One rule: `any`
# takes a layout only where its rows measured faster than the plain ones (README "Memory
# formats of conv and deconv"). ResNet-50 f32, 2 threads, each layer's layouts run back
# to back (2026-11-22, time / the plain rows' time):
#   forward: channel blocks 0.84x geomean (one thread, mb1), so nChw16c where AVX-512 runs,
#     else nChw8c on AVX2; channels last 1.47x the blocks' time. bf16 and u8 x s8 forward take
#     nChw16c on their direct rows too (gemm_conv_blocked_bf16 / _int8; 2026-11-26, mb1,
#     2 threads, perf_conv's medians: bf16 79-87% of its peak geomean, int8 74-83% of the
#     VNNI peak, against at most 64% each on the plain rows' shift route). The plain rows
#     take what the blocked ones do not (other types, scales, zero points, an s8 source,
#     groups of partial blocks, Winograd outside the wino_f43_blocked rows' domain).
#     Depthwise (MobileNet v1's 9 layers, 2026-11-23): dw_conv_blocked 0.55x-0.64x
#     dw_conv_fwd's time on nchw (geomean of three runs; per layer 0.22x-1.13x); the fused
#     1x1 + depthwise pairs on channel blocks 0.94x-0.96x the separate blocked layers, on
#     nchw 1.05x the separate plain ones.
#   backward data: channel blocks at unit stride 0.44x-1.04x (mb1 and mb16; nChw8c under
#     --isa=avx2 0.66x-1.06x), but 1.7x-4.1x strided; channels last strided 0.33x-1.08x
#     (conv1, 3 channels: 1.4x).
#   backward weights: channels last 0.59x-1.01x on the layers _bwt_pays takes (both
#     mb; 0.70x-1.03x under --isa=avx2), 0.9x-1.4x on the others; channel blocks 1.12x
#     and 1.19x geomean.
ANY_LAYOUTS: dict[core.Direction, tuple[AnyEntry, ...]] = {
    core.Direction.FWD: (AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512_BF16),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512_VNNI),
                         AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512),
                         AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2),
                         AnyEntry(core.ActLayout.PLAIN)),
    core.Direction.BWD_DATA: (AnyEntry(core.ActLayout.BLOCKED16, core.Isa.AVX512, _unit_stride),
                              AnyEntry(core.ActLayout.BLOCKED8, core.Isa.AVX2, _unit_stride),
                              AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512, _strided_wide),
                              AnyEntry(core.ActLayout.NHWC, core.Isa.AVX2, _strided_wide),
                              AnyEntry(core.ActLayout.PLAIN)),
    core.Direction.BWD_WEIGHTS: (AnyEntry(core.ActLayout.NHWC, core.Isa.AVX512,
                                          _bwt_pays_avx512),
                                 AnyEntry(core.ActLayout.NHWC, core.Isa.AVX2, _bwt_pays),
                                 AnyEntry(core.ActLayout.PLAIN)),
}


def any_layouts(kernel_dir: core.Direction, shape: core.ConvShape) -> tuple[AnyEntry, ...]:
    """The entries an all-`any` case tries (ANY_LAYOUTS), on this CPU, for this shape."""
    return tuple(e for e in ANY_LAYOUTS[kernel_dir]
                 if (e.isa is None or core.isa_supported(e.isa)) and e.when(shape))


class _IsaFilter:
    """An impl filter that also keeps only the rows of one instruction set."""

    def __init__(self, inner, isa: core.Isa) -> None:
        self.inner, self.isa = inner, isa
        self.rows = {i.name for i in core.conv_impls() if i.isa is isa}

    def allows(self, impl_name: str) -> bool:
        return impl_name in self.rows and self.inner.allows(impl_name)


# A case asking for exactly channels-last or one channel-block activations: whether that
# layout's own rows come before the plain rows' reorder route (else after it: they run
# when the route is filtered out or they are named), by the kernel's direction. Measured
# as above (geomean time of the layout's rows / time of the route): forward channels last
# 0.90x, channel blocks 0.67x; backward data channels last 0.77x (mb1) and 0.90x (mb16),
# channel blocks at unit stride 0.55x-0.9x per layer (strided 1.7x-2.9x); backward
# weights channels last 0.78x and 0.77x, channel blocks 1.02x and 0.91x (after their
# full-width tile; no clear winner, the route stays first).
NATIVE_FIRST: dict[core.Direction, dict[core.ActLayout, Callable[[core.ConvShape], bool]]] = {
    core.Direction.FWD: {core.ActLayout.NHWC: _always, core.ActLayout.BLOCKED16: _always,
                         core.ActLayout.BLOCKED8: _always},
    core.Direction.BWD_DATA: {core.ActLayout.NHWC: _always,
                              core.ActLayout.BLOCKED16: _unit_stride,
                              core.ActLayout.BLOCKED8: _unit_stride},
    core.Direction.BWD_WEIGHTS: {core.ActLayout.NHWC: _always,
                                 core.ActLayout.BLOCKED16: _never,
                                 core.ActLayout.BLOCKED8: _never},
}


def kernel_layouts(prb, act: core.ActLayout = core.ActLayout.PLAIN) -> dict[str, layout.Layout]:
    """The kernels' own layout of src, wei and dst, over the user's logical dims, for the
    rows that run on activations in act."""
    t = conv.tensors(prb.desc, prb.shape, conv.dw_shape_of(prb))
    wei_tag = "abx"
    if prb.desc.kind == "deconv":
        wei_tag = "acbx" if prb.desc.has_groups else "bax"
    return {"src": formats.plain(t["src"].logical, ACT_TAGS[act]),
            "dst": formats.plain(t["dst"].logical, ACT_TAGS[act]),
            "wei": formats.plain(t["wei"].logical, wei_tag)}


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
    if not asked:
        return any_layouts(kernel_dir, shape)
    route = AnyEntry(core.ActLayout.PLAIN)
    if not any(not lay.same_memory(plain[n]) for lay, n in asked):
        return (route,)
    for act, first in NATIVE_FIRST[kernel_dir].items():
        native = kernel_layouts(prb, act)
        if all(lay.same_memory(native[n]) for lay, n in asked):
            return (AnyEntry(act), route) if first(shape) else (route, AnyEntry(act))
    return (route,)


def routed(prb, act: core.ActLayout = core.ActLayout.PLAIN) -> bool:
    """Whether the case asks for a layout the act rows do not run on (the reorder route)."""
    kernel = kernel_layouts(prb, act)
    return any(lay is not None and not lay.same_memory(kernel[name])
               for name, lay in prb.requested_layouts.items())


def _impl_filter(prb, entry: AnyEntry):
    filt = (formats.RouteFilter(prb.impl_filter) if routed(prb, entry.act)
            else prb.impl_filter)
    return _IsaFilter(filt, entry.isa) if entry.isa is not None else filt


class _Executor:
    """One created kernel, with the route its layouts need (built here, at creation)."""

    def __init__(self, prim: core.ConvPrimitive, prb,
                 kernel_bind: Callable[..., Callable[[], None]]) -> None:
        self.prim, self.prb, self.kernel_bind = prim, prb, kernel_bind
        self.info = f"threads={core.max_threads()}"   # what the primitive planned for
        kernel = kernel_layouts(prb, prim.attr.layout)
        requested = prb.requested_layouts
        self.layouts = {n: requested[n] if requested[n] is not None else kernel[n]
                        for n in kernel}
        self.kernel = kernel
        self.shapes = {n: t.shape for n, t in conv.tensors(
            prb.desc, prb.shape, conv.dw_shape_of(prb)).items()}
        dts = conv.tensor_dts(prb)
        ins = conv.direction_chain(prb.dir, prb.shape)[0]
        outs = conv.output_names(prb.dir)
        has_sum = any(isinstance(e, conv.Sum) for e in prb.post_ops.entries)
        self.route = formats.Route(self.layouts, kernel, dts, ins, outs,
                                   ("dst",) if has_sum else (), core.active_op_fault())
        self.to_kernel, self.to_memory = self.route.to_kernel, self.route.to_memory
        self.name = self.route.name(prim.name)

    def _view(self, name: str, array: np.ndarray) -> np.ndarray:
        """A kernel-layout buffer as the kernels take it: exactly its points, src and
        dst in the C core's 5D shape (a memory in the kernels' own layout may be longer:
        outer strides of size-1 dims)."""
        lay = self.kernel[name]
        if not lay.is_plain:   # blocked: the padded points, flat (core counts them)
            return array.reshape(-1)[:lay.padded_nelems]
        flat = array.reshape(-1)[:lay.nelems]
        return flat.reshape(self.shapes[name]) if name != "wei" else flat

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        """inputs: the primitive's input memories (flat or shaped) in self.layouts; outs:
        output buffers in self.layouts. Returns (run, collect); run is the primitive:
        route reorders, weights re-packing, kernel. A dw post-op's weights and bias (plain; a
        case with one is never routed) are packed with the weights."""
        inputs = dict(inputs)
        dw = [inputs.pop(n, None) for n in ("dw_wei", "dw_bia")]
        k_in, k_out, wrap = self.route.bind(
            inputs,
            {n: o.array for n, o in outs.items()})
        k_in = {n: a if n == "bia" else self._view(n, a) for n, a in k_in.items()}
        k_out = {n: a if n == "bia" else self._view(n, a) for n, a in k_out.items()}
        packed, pre = None, ()
        if "wei" in k_in:
            if "wei" in self.to_kernel:
                packed = np.empty(self.prim.weights_bytes, np.uint8)
                pre = (self.prim.bind_pack_weights(k_in["wei"], packed, *dw),)
            else:   # the kernels' own layout: packed once, as oneDNN's `any` weights
                packed = self.prim.pack_weights(k_in["wei"], *dw)
        return wrap(self.kernel_bind(self.prim, self.prb, k_in, packed, k_out), pre), _nothing

    def close(self) -> None:
        self.prim.close()


def _nothing() -> None:
    pass


def _conv_bind(prim, prb, inputs, packed, outs):
    return conv.bind(prim, prb.dir, inputs, packed, outs)


def _executor(prim, prb, kernel_bind, res: CaseResult):
    """The executor, or None (UNIMPLEMENTED) when the route cannot reorder a layout."""
    if prim is None:
        return None
    try:
        with res.timers("create_prim"):
            return _Executor(prim, prb, kernel_bind)
    except core.Unimplemented as exc:
        prim.close()
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None


def _create(prb, res: CaseResult, kernel_dir: core.Direction, shape: core.ConvShape,
            create_one, kernel_bind):
    """The executor of the first activation layout (act_layouts) whose rows accept the
    case; create_one(act, filter) creates the kernel primitive or sets res."""
    before = (res.status, res.reason)
    for entry in act_layouts(prb, kernel_dir, shape):
        if prb.dw is not None and routed(prb, entry.act):
            continue   # the route does not carry the dw post-op's tensors (unsupported)
        res.status, res.reason = before
        prim = create_one(entry.act, _impl_filter(prb, entry))
        if prim is not None:
            return _executor(prim, prb, kernel_bind, res)
    return None


def _create_conv(prb, res: CaseResult):
    attr = conv.kernel_attr(prb, conv.quant_of(prb, prb.shape.oc))
    kernel_dir = conv.KERNEL_DIR[prb.dir]
    return _create(prb, res, kernel_dir, prb.shape, lambda act, impl_filter: conv.create(
        prb.shape, kernel_dir, prb.dir.with_bias, impl_filter, res,
        prb.post_ops, attr=dataclasses.replace(attr, layout=act),
        alg=conv.resolved_alg(prb)), _conv_bind)


def _create_deconv(prb, res: CaseResult):
    # Bias: added by the backward-data kernel in the forward pass; summed separately when
    # computing diff_bias (the swapped problem's bias would be the wrong tensor's sum).
    # The swapped problem's activations are the deconvolution's, in the same layout.
    attr = deconv.kernel_attr(prb)
    shape = deconv_ref.swapped_shape(prb.desc)
    return _create(prb, res, deconv.KERNEL_DIR[prb.dir], shape, lambda act, impl_filter: conv.create(
        shape, deconv.KERNEL_DIR[prb.dir],
        prb.dir.forward and prb.dir.with_bias, impl_filter, res, prb.post_ops,
        attr=dataclasses.replace(attr, layout=act)), deconv.bind)


# The activation layouts fused_dw runs on (kernels/conv/conv_fused_dw.c: a block of
# channels must be a contiguous run of dst, which channels last's is not).
FUSED_DW_LAYOUTS = (core.ActLayout.PLAIN, core.ActLayout.BLOCKED16, core.ActLayout.BLOCKED8)

# Problem kind (ConvDesc.kind) -> executor factory.
_CREATE = {"conv": _create_conv, "deconv": _create_deconv}


def unsupported(prb) -> tuple[Status, str] | None:
    """The kernels' post-op support: the spec's chains per type; depthwise fusion
    (fused_dw) without groups, on the layouts it runs on natively."""
    if prb.dw is not None:
        if prb.desc.g != 1:
            return (Status.UNIMPLEMENTED, f"`{prb.dw}`: depthwise fusion after a grouped "
                    "convolution is not implemented")
        if all(routed(prb, act) for act in FUSED_DW_LAYOUTS):
            return (Status.UNIMPLEMENTED, f"`{prb.dw}`: depthwise fusion runs on the plain "
                    "and channel-blocked layouts only, src and dst alike (--stag/--dtag "
                    "any, nchw, nChw16c or nChw8c; --wtag any or oihw)")
    return conv.native_post_ops_unsupported(prb.post_ops, prb.dt)


def create(prb, res: CaseResult):
    return _CREATE[prb.desc.kind](prb, res)
