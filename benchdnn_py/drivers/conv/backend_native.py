"""The native backend of the conv and deconv drivers (and, through executor(), the ip
driver's): this project's C kernels (through the core package, the only one that calls
C). Implementation selection and weight
packing are prim.py's, the layouts `any` takes policy.py's; this module turns a created
kernel primitive into the Executor of backends/__init__.py and gives the kernels the
memory formats they lack.

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
all inside the timed callable, with the reorder kernels (kernels/reorder): reorders.Route,
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
import functools
import math
from typing import Callable

import numpy as np

from ... import core
from ...common import post_ops, reorders
from ...common.attr import Sum
from ...engine.memory import Guarded
from ...status import Status
from ..base import CaseResult
from . import attrs, policy
from . import prim as conv_prim
from .policy import AnyEntry, act_layouts, kernel_layouts

ROUTE_SUFFIX = reorders.ROUTE_SUFFIX


@functools.lru_cache(maxsize=None)
def _isa_rows(isa: core.Isa) -> frozenset[str]:
    """The rows of one instruction set, and a row the table orders ahead of its family's
    row of that set though its own set is lower: the table's choice on this CPU
    (CONV_ROW_SPLIT_512's trade, kernels/conv/README.md). The order is fixed per process."""
    rows: set[str] = set()
    ahead: dict[tuple[str, ...], list[str]] = {}   # family and route -> lower rows seen
    for i in core.conv_impls():
        family, _, *route = i.name.split(":")
        key = (family, *route)
        if i.isa is isa:
            rows.add(i.name)
            rows.update(ahead.get(key, ()))
        elif i.isa < isa:
            ahead.setdefault(key, []).append(i.name)
    return frozenset(rows)


class _IsaFilter:
    """An impl filter that also keeps only the rows of one instruction set (_isa_rows)."""

    def __init__(self, inner, isa: core.Isa) -> None:
        self.inner, self.isa = inner, isa
        self.rows = _isa_rows(isa)

    def allows(self, impl_name: str) -> bool:
        return impl_name in self.rows and self.inner.allows(impl_name)


def routed(prb, act: core.ActLayout = core.ActLayout.PLAIN,
           src: core.ActLayout | None = None) -> bool:
    """Whether the case asks for a layout the act rows (src in src, where given) do not
    run on (the reorder route)."""
    kernel = kernel_layouts(prb, act, src)
    return any(lay is not None and not lay.same_memory(kernel[name])
               for name, lay in prb.requested_layouts.items())


def route_filter(prb, act: core.ActLayout = core.ActLayout.PLAIN,
                 src: core.ActLayout | None = None):
    """The case's impl filter, matching names through the reorder route when the case
    needs it on act's layouts (src in src, where given)."""
    return (reorders.RouteFilter(prb.impl_filter) if routed(prb, act, src)
            else prb.impl_filter)


def _impl_filter(prb, entry: AnyEntry):
    filt = route_filter(prb, entry.act, entry.src)
    return _IsaFilter(filt, entry.isa) if entry.isa is not None else filt


class _Executor:
    """One created kernel, with the route its layouts need (built here, at creation); act:
    the activation layout the kernel's buffers are in, the primitive's unless given (the
    inner product's GEMM runs a channels-last primitive on plain buffers)."""

    def __init__(self, prim: core.ConvPrimitive, prb,
                 kernel_bind: Callable[..., Callable[[], None]],
                 act: core.ActLayout | None = None) -> None:
        self.prim, self.prb, self.kernel_bind = prim, prb, kernel_bind
        # what the primitive planned for, and its work memory's size and owner
        self.scratchpad_bytes = prim.scratchpad_bytes
        self.user_scratchpad = prim.attr.scratchpad_user
        self.info = (f"threads={core.max_threads()}, scratchpad {self.scratchpad_bytes} bytes "
                     f"({'user' if self.user_scratchpad else 'library'})")
        kernel = (kernel_layouts(prb, prim.attr.layout, prim.attr.src_layout) if act is None
                  else kernel_layouts(prb, act))
        requested = prb.requested_layouts
        self.layouts = {n: requested[n] if requested[n] is not None else kernel[n]
                        for n in kernel}
        self.kernel = kernel
        self.shapes = {n: t.shape for n, t in conv_prim.tensors(
            prb.desc, prb.shape, conv_prim.dw_shape_of(prb)).items()}
        dts = conv_prim.tensor_dts(prb)
        ins = conv_prim.direction_chain(prb.dir, prb.shape)[0]
        outs = conv_prim.output_names(prb.dir)
        has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
        self.route = reorders.Route(self.layouts, kernel, dts, ins, outs,
                                   ("dst",) if has_sum else (), core.active_op_fault())
        self.to_kernel, self.to_memory = self.route.to_kernel, self.route.to_memory
        # The primitive's scratch (and in user mode the scratchpad the driver gives it),
        # the packed weights, the f32 copies packing makes, and the route's buffers.
        self.memory_bytes = (prim.scratch_bytes + prim.weights_bytes
                             + 8 * math.prod(prb.shape.wei_shape)
                             + (self.scratchpad_bytes if self.user_scratchpad else 0)
                             + self.route.scratch_bytes)

    @property
    def name(self) -> str:
        """As results show it: the primitive's name (the variant its last execution ran)
        behind the route."""
        return self.route.name(self.prim.name)

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
        route reorders, weights re-packing, kernel. A dw post-op's weights and bias (always
        plain: the route reorders src, dst and the main weights only) are packed with the
        weights."""
        inputs = dict(inputs)
        dw = [inputs.pop(n, None) for n in ("dw_wei", "dw_bia")]
        # binary and prelu inputs: read by the kernels where they are (never routed)
        src1 = {i: inputs.pop(post_ops.src1_name(i)).reshape(-1)
                for i, _ in post_ops.src1_entries(self.prb.post_ops)}
        if src1:
            self.prim.set_post_op_inputs(src1)
        if self.user_scratchpad and self.scratchpad_bytes:
            self.prim.set_scratchpad(core.scratchpad_buffer(self.scratchpad_bytes))
        k_in, k_out, wrap = self.route.bind(
            inputs,
            {n: o.array for n, o in outs.items()})
        k_in = {n: a if n == "bia" else self._view(n, a) for n, a in k_in.items()}
        k_out = {n: a if n == "bia" else self._view(n, a) for n, a in k_out.items()}
        packed, pre = None, ()
        if "wei" in k_in:
            if "wei" in self.to_kernel:
                packed = core.aligned_empty(self.prim.weights_bytes)
                pre = (self.prim.bind_pack_weights(k_in["wei"], packed, *dw),)
            else:   # the kernels' own layout: packed once, as oneDNN's `any` weights
                packed = self.prim.pack_weights(k_in["wei"], *dw)
        return wrap(self.kernel_bind(self.prim, self.prb, k_in, packed, k_out), pre), _nothing

    def close(self) -> None:
        self.prim.close()


def _nothing() -> None:
    pass


def conv_bind(prim, prb, inputs, packed, outs):
    return conv_prim.bind(prim, prb.dir, inputs, packed, outs)


def executor(prim, prb, kernel_bind, res: CaseResult, act: core.ActLayout | None = None):
    """The executor (_Executor's act), or None (UNIMPLEMENTED) when the route cannot
    reorder a layout."""
    if prim is None:
        return None
    try:
        with res.timers("create_prim"):
            return _Executor(prim, prb, kernel_bind, act)
    except core.Unimplemented as exc:
        prim.close()
        res.status, res.reason = Status.UNIMPLEMENTED, f"reorder route: {exc}"
        return None


def create_on(prb, res: CaseResult, kernel_dir: core.Direction, shape: core.ConvShape,
            create_one, kernel_bind):
    """The executor of the first activation layout (act_layouts) whose rows accept the
    case; create_one(entry, filter) creates the kernel primitive or sets res. The
    deconvolution's native backend creates through this too, on its swapped problem."""
    before = (res.status, res.reason)
    for entry in act_layouts(prb, kernel_dir, shape):
        res.status, res.reason = before
        prim = create_one(entry, _impl_filter(prb, entry))
        if prim is not None:
            return executor(prim, prb, kernel_bind, res)
    return None


def _create_conv(prb, res: CaseResult):
    attr = conv_prim.kernel_attr(prb, attrs.quant_of(prb, prb.shape.oc))
    kernel_dir = conv_prim.KERNEL_DIR[prb.dir]
    return create_on(prb, res, kernel_dir, prb.shape, lambda entry, impl_filter: conv_prim.create(
        prb.shape, kernel_dir, prb.dir.with_bias, impl_filter, res,
        prb.post_ops, attr=dataclasses.replace(attr, layout=entry.act, src_layout=entry.src),
        alg=policy.resolved_alg(prb)), conv_bind)


def unsupported(prb) -> tuple[Status, str] | None:
    """The kernels' post-op support: the spec's chains per type; depthwise fusion
    (fused_dw) without groups. fused_dw runs on the plain and channel-blocked layouts
    (kernels/conv/conv_fused_dw.c: a block of channels must be a contiguous run of dst,
    which channels last's is not), with binary or prelu entries on the plain one; other
    layouts take the reorder route to one of them."""
    if prb.dw is not None:
        if prb.desc.g != 1:
            return (Status.UNIMPLEMENTED, f"`{prb.dw}`: depthwise fusion after a grouped "
                    "convolution is not implemented")

    return None


def create(prb, res: CaseResult):
    return _create_conv(prb, res)
