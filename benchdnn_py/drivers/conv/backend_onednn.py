"""The oneDNN backend of the conv, deconv and ip drivers: the same problems, fill, reference
check and timing loop, executed by oneDNN's own convolution, deconvolution and inner
product primitives (backends/onednn.py owns the library; this module builds the
primitives).

Creation, as benchdnn does it: each tensor's descriptor is the layout the user asked for
(--stag/--wtag/--dtag, --strides) or `any`, which lets oneDNN choose; the direction's
primitive descriptor is created with the case's attributes (src/wei/dst scales, src/dst
zero points, eltwise and sum post-ops), backward ones with a forward-training hint; the
primitive is created once. A problem the loaded oneDNN cannot create is UNIMPLEMENTED with
oneDNN's status (`unimplemented`: no implementation accepts it).

Layouts. A tensor the user gave a layout runs in it. A tensor left `any` takes oneDNN's
choice, which the executor reports as its layout (the perf line's %stag% %wtag% %dtag%)
when this project's layouts can describe it; when they cannot (int8 weights carry a
compensation buffer after the blocks), the harness's data is plain and oneDNN's reorder
moves it into the primitive's memory at bind, untimed, as benchdnn's reorder of user
data does. Outputs in such a memory are reordered back by collect, also untimed. The
timed callable is dnnl_primitive_execute and the stream's wait, nothing else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import core
from ...backends import onednn
from ...common import layout
from ...common.attr import Depthwise, Eltwise, Sum
from ...common.direction import Dir
from ...engine.memory import Guarded, aligned_zeros
from ...status import Status
from ..base import CaseResult
from .attrs import quant_of
from .prim import dw_shape_of, logical_dims, output_names, tensor_dts, tensors


# Each tensor's execution argument, per direction (the input/output roles of Dir).
def _args(c, d: Dir) -> dict[str, int]:
    if d.forward:   # (dw_*: the depthwise post-op's weights and bias)
        dw = c.DNNL_ARG_ATTR_POST_OP_DW
        return {"src": c.DNNL_ARG_SRC, "wei": c.DNNL_ARG_WEIGHTS, "bia": c.DNNL_ARG_BIAS,
                "dst": c.DNNL_ARG_DST, "dw_wei": dw | c.DNNL_ARG_WEIGHTS,
                "dw_bia": dw | c.DNNL_ARG_BIAS}
    if d is Dir.BWD_D:
        return {"src": c.DNNL_ARG_DIFF_SRC, "wei": c.DNNL_ARG_WEIGHTS,
                "dst": c.DNNL_ARG_DIFF_DST}
    return {"src": c.DNNL_ARG_SRC, "wei": c.DNNL_ARG_DIFF_WEIGHTS,
            "bia": c.DNNL_ARG_DIFF_BIAS, "dst": c.DNNL_ARG_DIFF_DST}


def unsupported(prb) -> tuple[Status, str] | None:
    """oneDNN missing, or what its 3.x API cannot express."""
    why = onednn.cannot_run(tensor_dts(prb).values())
    if why:
        return Status.UNIMPLEMENTED, why
    lib, _ = onednn.load()
    if prb.dw is not None and prb.scales and any(
            e.arg.startswith("attr_post_op_dw") for e in prb.scales.entries):
        return (Status.UNIMPLEMENTED, f"--attr-scales={prb.scales}: the oneDNN backend does "
                "not pass the depthwise post-op's own scales")
    if prb.oscale:
        return (Status.UNIMPLEMENTED, f"--attr-oscale={prb.oscale}: oneDNN 3.x has no output "
                "scales (--attr-scales replaces them)")
    per_channel = next((e for e in (prb.zero_points.entries if prb.zero_points else ())
                        if not e.is_common), None)
    if per_channel is not None:
        return (Status.UNIMPLEMENTED, f"--attr-zero-points={per_channel}: the oneDNN backend "
                "passes common zero points only")
    for e in prb.post_ops.entries:
        if isinstance(e, Eltwise):
            if e.scale != 1.0:
                return (Status.UNIMPLEMENTED, f"`{e}`: oneDNN 3.x eltwise post-ops take no "
                        "scale")
            if lib.eltwise_alg(e.name) is None:
                return Status.UNIMPLEMENTED, f"`{e}`: oneDNN {lib.version} has no such eltwise"
    return None


class _Created:
    """A primitive descriptor and what was built for it (all freed with it)."""

    def __init__(self, lib: onednn.Library) -> None:
        self.lib = lib
        self.keep: list[Any] = []

    def attr(self, prb, has_groups: bool) -> Any:
        lib, c = self.lib, self.lib.c
        attr = lib.attr()
        for name, arg in (("src", c.DNNL_ARG_SRC), ("wei", c.DNNL_ARG_WEIGHTS),
                          ("dst", c.DNNL_ARG_DST)):
            entry = prb.scales.get(name) if prb.scales else None
            if entry is not None:   # per_oc: dims 0 and 1 of grouped weights
                lib.set_scales_mask(attr, arg, 0 if entry.is_common else
                                    (3 if has_groups else 1))
            if prb.zero_points and prb.zero_points.get(name) is not None:
                lib.set_zero_points_mask(attr, arg, 0)
        if prb.post_ops:
            self.keep.append(lib.set_post_ops(attr, [_post_op(lib, prb, e)
                                                     for e in prb.post_ops.entries]))
        self.keep.append(attr)
        return attr


def _post_op(lib: onednn.Library, prb, e) -> tuple:
    """A chain entry in set_post_ops' terms."""
    c = lib.c
    if isinstance(e, Sum):
        return ("sum", e.scale, e.zero_point,
                lib.data_type(e.dt) if e.dt else c.dnnl_data_type_undef)
    if isinstance(e, Depthwise):
        dts = tensor_dts(prb)   # (a bias where the direction has one)
        bias = lib.data_type(dts["dw_bia"]) if prb.dir.with_bias else c.dnnl_data_type_undef
        return ("dw", lib.data_type(dts["dw_wei"]), bias, lib.data_type(dts["dst"]),
                e.k, e.s, e.p)
    return ("eltwise", lib.eltwise_alg(e.name), e.alpha, e.beta)


def _alg(c, prb) -> int:
    kind = prb.desc.kind
    alg = {"direct": "direct", "wino": "winograd", "auto": "auto"}[prb.alg]
    if kind == "deconv" and alg == "auto":
        alg = "direct"
    return getattr(c, f"dnnl_{kind}olution_{alg}")


def _create_pd(lib: onednn.Library, prb, mds: dict[str, Any], attr: Any, created: _Created):
    """The direction's primitive descriptor, or raises onednn.Failed with the status. An
    inner product's (desc.kind ip) functions take neither an algorithm nor the geometry."""
    c, ffi, L = lib.c, lib.ffi, lib.lib
    desc, d = prb.desc, prb.dir
    axes = desc.spatial_axes
    if desc.kind == "ip":
        fn, geo, alg = "dnnl_inner_product", [], ()
    else:
        geo = [lib._dims(tuple(v[a] for a in axes))
               for v in (desc.s, desc.dil, desc.p, desc.p_r)]
        fn, alg = f"dnnl_{desc.kind}olution", (_alg(c, prb),)
    created.keep += geo
    null = ffi.NULL
    bias = mds.get("bia", null)

    def made(call: str, status: int, out) -> Any:
        lib.check(status, call)
        return ffi.gc(out[0], L.dnnl_primitive_desc_destroy)

    def forward(prop: int, attr_: Any) -> Any:
        out = ffi.new("dnnl_primitive_desc_t *")
        status = getattr(L, f"{fn}_forward_primitive_desc_create")(
            out, lib.engine, prop, *alg, mds["src"], mds["wei"], bias if d.forward else null,
            mds["dst"], *geo, attr_)
        return made(f"{fn}_forward", status, out)

    if d.forward:
        prop = c.dnnl_forward_inference if d is Dir.FWD_I else c.dnnl_forward_training
        return forward(prop, attr)
    hint = forward(c.dnnl_forward_training, null)
    created.keep.append(hint)
    out = ffi.new("dnnl_primitive_desc_t *")
    if d is Dir.BWD_D:
        status = getattr(L, f"{fn}_backward_data_primitive_desc_create")(
            out, lib.engine, *alg, mds["src"], mds["wei"], mds["dst"], *geo, hint, attr)
        return made(f"{fn}_backward_data", status, out)
    status = getattr(L, f"{fn}_backward_weights_primitive_desc_create")(
        out, lib.engine, *alg, mds["src"], mds["wei"], bias if d.with_bias else null,
        mds["dst"], *geo, hint, attr)
    return made(f"{fn}_backward_weights", status, out)


class _Executor:
    def __init__(self, lib: onednn.Library, prb, pd: Any, prim: Any,
                 created: _Created, name: str) -> None:
        self.lib, self.prb, self.pd, self.prim, self.created = lib, prb, pd, prim, created
        self.args = _args(lib.c, prb.dir)
        self.dts = tensor_dts(prb)
        self.name = name
        self.info = f"threads={core.max_threads()} isa={lib.isa}"
        dims = _user_dims(prb)
        # the primitive's memory of each tensor, and the layout the harness places it in
        self.prim_mds = {n: lib.arg_md(pd, self.args[n]) for n in ("src", "wei", "dst")}
        # The harness's memory of each tensor: the requested layout; else oneDNN's choice
        # where a Layout describes it (then the primitive's own descriptor); else plain.
        requested = prb.requested_layouts
        self.layouts: dict[str, layout.Layout] = {}
        self.user_mds: dict[str, Any] = {}
        for n in ("src", "wei", "dst"):
            got = lib.dims_of(self.prim_mds[n])
            if got != dims[n]:   # oneDNN's dw post-op sizes its output ceil(input / stride)
                why = " (its depthwise post-op's output is ceil(input / stride))" \
                    if prb.dw is not None else ""
                raise onednn.Failed(f"the primitive's {n} is {'x'.join(map(str, got))}, the "
                                    f"problem's {'x'.join(map(str, dims[n]))}{why}")
            if requested.get(n) is not None:
                self.layouts[n] = requested[n]
                self.user_mds[n] = lib.md_of(requested[n], self.dts[n])
                continue
            chosen = lib.layout_of(self.prim_mds[n])
            if chosen is None:
                self.layouts[n] = layout.plain(dims[n])
                self.user_mds[n] = lib.md_of(self.layouts[n], self.dts[n])
                continue
            tag = onednn.tag_of(chosen)
            self.layouts[n] = (layout.parse_tag(tag).layout(dims[n]) if tag else chosen)
            self.user_mds[n] = self.prim_mds[n]
        # oneDNN's own memory: its scratchpad, and each tensor again in its layout (bound
        # through a reorder when the harness's memory differs)
        self.memory_bytes = lib.scratchpad_bytes(pd) + sum(
            lib.md_size(md) for md in self.prim_mds.values())
        for n, dims_n in (("bia", (prb.desc.oc,)), ("dw_wei", dims.get("dw_wei")),
                          ("dw_bia", (prb.desc.oc,))):
            if n in self.dts:   # plain, reordered into the primitive's memory if it differs
                self.user_mds[n] = lib.md_of(layout.plain(dims_n), self.dts[n])

    def _memory(self, name: str, array: np.ndarray, keep: list) -> tuple[Any, Any, Any]:
        """(the user memory over array, the primitive's memory, and None when they are
        one memory, else the (user, primitive) descriptors a reorder moves between)."""
        lib = self.lib
        lay = self.layouts.get(name)
        md = self.user_mds[name]
        user = lib.memory(md, array, lay.offset0 * array.dtype.itemsize if lay else 0)
        prim_md = self.prim_mds.get(name) or lib.arg_md(self.pd, self.args[name])
        keep += [array, md, user]   # the buffers live as long as the memories
        if lib.lib.dnnl_memory_desc_equal(md, prim_md):
            return user, user, None
        buf = aligned_zeros(lib.md_size(prim_md), np.uint8)   # on a cache line
        mem = lib.memory(prim_md, buf)
        keep += [buf, mem]
        return user, mem, (md, prim_md)

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        lib, prb = self.lib, self.prb
        keep: list[Any] = []
        args: dict[int, Any] = {}
        for name, array in inputs.items():
            user, mem, differ = self._memory(name, array, keep)
            if differ:   # into the primitive's own layout, once, untimed
                lib.reorder(differ[0], user, differ[1], mem)()
            args[self.args[name]] = mem
        collect_steps = []
        has_sum = any(isinstance(e, Sum) for e in prb.post_ops.entries)
        for name in output_names(prb.dir):
            user, mem, differ = self._memory(name, outs[name].array, keep)
            if differ:
                if name == "dst" and has_sum:   # the sum reads the prior dst
                    lib.reorder(differ[0], user, differ[1], mem)()
                collect_steps.append(lib.reorder(differ[1], mem, differ[0], user))
            args[self.args[name]] = mem
        args.update(self._quant_args(keep))

        def collect() -> None:
            for step in collect_steps:
                step()
        collect.keep = keep   # the memories live as long as the callables
        return lib.timed(self.prim, args, keep), collect

    def _quant_args(self, keep: list) -> dict[int, Any]:
        """Scales (f32) and zero points (s32) as the memories oneDNN 3.x reads them from."""
        lib, c, prb = self.lib, self.lib.c, self.prb
        q = quant_of(prb, prb.desc.oc)
        out: dict[int, Any] = {}

        def vector(values, dt: str, arg: int) -> None:
            arr = np.ascontiguousarray(values, dtype=np.float32 if dt == "f32" else np.int32)
            md = lib.md_of_vector(arr.size, dt)
            mem = lib.memory(md, arr)
            keep.extend([arr, md, mem])
            out[arg] = mem

        scales = {"src": [q.src_scale], "wei": q.wei_scales, "dst": [q.dst_scale]}
        zps = {"src": q.src_zp, "dst": q.dst_zp}
        arg = {"src": c.DNNL_ARG_SRC, "wei": c.DNNL_ARG_WEIGHTS, "dst": c.DNNL_ARG_DST}
        for name in ("src", "wei", "dst"):
            if prb.scales and prb.scales.get(name) is not None:
                vector(scales[name], "f32", c.DNNL_ARG_ATTR_SCALES | arg[name])
            if name in zps and prb.zero_points and prb.zero_points.get(name) is not None:
                vector([zps[name]], "s32", c.DNNL_ARG_ATTR_ZERO_POINTS | arg[name])
        return out

    def close(self) -> None:
        self.prim = self.pd = self.created = None


def _user_dims(prb) -> dict[str, tuple[int, ...]]:
    """The logical dims of the case's tensors (with a dw post-op: dst is the depthwise
    step's output, and its weights [oc][1][1][k][k] join)."""
    dw = dw_shape_of(prb)
    dims = logical_dims(prb.desc, dw.o if dw is not None else None)
    if dw is not None:
        dims["dw_wei"] = tensors(prb.desc, prb.shape, dw)["dw_wei"].logical
    return dims


def create(prb, res: CaseResult) -> _Executor | None:
    dims = logical_dims(prb.desc)   # the convolution's own (before a dw post-op)
    dts = tensor_dts(prb)

    created: _Created | None = None   # what the pd was built with, kept with it

    def make_pd(lib: onednn.Library) -> Any:
        nonlocal created
        created = _Created(lib)
        mds = {}
        for n in ("src", "wei", "dst"):
            lay = prb.requested_layouts.get(n)
            if n == "dst" and prb.dw is not None:
                # the 1x1 step's output, in its own type: oneDNN chooses its memory and
                # the fused primitive's dst is the depthwise step's
                mds[n] = lib.md_any(dims[n], prb.dt[2])
            elif lay is not None:
                mds[n] = lib.md_of(lay, dts[n])
            else:
                mds[n] = lib.md_any(dims[n], dts[n])
        if prb.dir.with_bias:
            mds["bia"] = lib.md_of_vector(prb.desc.oc, dts["bia"])
        return _create_pd(lib, prb, mds, created.attr(prb, prb.desc.has_groups), created)

    return onednn.create_in_case(
        res, prb.impl_filter, make_pd,
        lambda lib, pd, name: _Executor(lib, prb, pd, lib.primitive(pd), created, name))
