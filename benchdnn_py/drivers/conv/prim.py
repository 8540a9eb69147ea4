"""The convolution primitive on the C kernels: the tensors of a case (logical dims,
data types, layouts), creating the first implementation row that accepts the problem,
and binding the buffers to it."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ... import core
from ...common import fill, layout, reorders
from ...common.attr import PostOps
from ...common.direction import Dir
from ...common.post_ops import src1_dt, src1_entries, src1_layout, src1_name
from ...engine.impl_filter import ImplFilter, first_accepting
from ...engine.memory import Guarded, aligned_array
from ...status import Reason, Status
from ..base import CaseResult
from . import dt as dtypes
from .attrs import Quant, kernel_post_ops
from .desc import ConvDesc

KERNEL_DIR = {Dir.FWD_B: core.Direction.FWD, Dir.FWD_D: core.Direction.FWD,
              Dir.FWD_I: core.Direction.FWD, Dir.BWD_D: core.Direction.BWD_DATA,
              Dir.BWD_W: core.Direction.BWD_WEIGHTS, Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


@dataclasses.dataclass(frozen=True)
class Tensor:
    """A tensor of a case: its data kind (fill seed and diagnostics tag) and logical shape
    (the shape diagnostics index failing points by)."""

    kind: fill.Kind
    tag: str
    shape: tuple[int, ...]          # the C core's 3D-form shape
    logical: tuple[int, ...]


def logical_dims(desc: ConvDesc, dw_o: tuple[int, int, int] | None = None
                 ) -> dict[str, tuple[int, ...]]:
    """The user's dims of src, wei and dst (the order tags and strides refer to):
    (mb, ic, spatial), (g, oc/g, ic/g, spatial) with groups or (oc, ic, spatial), and
    (mb, oc, spatial); dw_o: the depthwise step's output sizes, dst's with a dw post-op.
    An inner product's dst is (mb, oc) at every rank."""
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    wei = ((desc.g, desc.oc // desc.g, desc.ic // desc.g) if desc.has_groups
           else (desc.oc, desc.ic // desc.g)) + pick(desc.k)
    dst = (desc.mb, desc.oc) + (() if desc.kind == "ip" else pick(dw_o or desc.o))
    return {"src": (desc.mb, desc.ic) + pick(desc.i), "wei": wei, "dst": dst}


def tensors(desc: ConvDesc, shape: core.ConvShape,
            dw: core.ConvShape | None = None) -> dict[str, Tensor]:
    """The case's tensors; with dw (the depthwise step of a dw post-op, dw_shape_of) dst
    is the depthwise step's output, and its weights and bias join the inputs."""
    dims = logical_dims(desc, dw.o if dw is not None else None)
    out = {
        "src": Tensor(fill.Kind.SRC, "SRC", shape.src_shape, dims["src"]),
        "wei": Tensor(fill.Kind.WEI, "WEI", shape.wei_shape, dims["wei"]),
        "bia": Tensor(fill.Kind.BIA, "BIA", (shape.oc,), (shape.oc,)),
        "dst": Tensor(fill.Kind.DST, "DST", dw.dst_shape if dw is not None else shape.dst_shape,
                      dims["dst"]),
    }
    if dw is not None:
        out["dw_wei"] = Tensor(fill.Kind.DW_WEI, "DW_WEI", dw.wei_shape,
                               (dw.oc, 1, 1) + dw.k[1:])
        out["dw_bia"] = Tensor(fill.Kind.DW_BIA, "DW_BIA", (dw.oc,), (dw.oc,))
    return out


def dw_shape_of(prb) -> core.ConvShape | None:
    """The depthwise step of a case with a dw post-op, else None."""
    return prb.dw_shape if prb.dw is not None else None


def src1_dims_by_entry(prb, dst_dims: tuple[int, ...] | None = None
                       ) -> dict[int, tuple[int, ...]]:
    """The logical dims of the tensor each binary or prelu entry applies to: the written
    tensor's (dst_dims; default: the convolution's dst, after its dw step), or with a dw
    entry, the 1x1 convolution's output for the entries before it."""
    if dst_dims is None:
        dst_dims = logical_dims(prb.desc, prb.dw_o)["dst"]
    idw = next((i for i, e in enumerate(prb.post_ops.entries) if e is prb.dw), None)
    conv = logical_dims(prb.desc)["dst"]
    return {i: conv if idw is not None and i < idw else dst_dims
            for i, _ in src1_entries(prb.post_ops)}


def case_tensors(prb) -> dict[str, Tensor]:
    return tensors(prb.desc, prb.shape, dw_shape_of(prb))


def out_dt(prb) -> str:
    """The type of the tensor a direction writes: dst, diff_src or diff_weights."""
    if prb.dir.forward:
        return prb.dt[2]
    return prb.dt[0] if prb.dir is Dir.BWD_D else prb.dt[1]


def tensor_dts(prb) -> dict[str, str]:
    """Each tensor's data type, in the user's terms. With a dw post-op dst is the
    depthwise output (the convolution's own dst type, prb.dt[2], is the intermediate's)
    and dw_wei, dw_bia join (dt.DW_TYPES)."""
    dts = {"src": prb.dt[0], "wei": prb.dt[1], "dst": prb.dt[2],
           "bia": prb.bia_dt if prb.bia_dt != "undef" else "f32"}
    dw = getattr(prb, "dw", None)
    if dw is not None:
        dts["dw_wei"], dts["dw_bia"], dts["dst"] = dtypes.dw_types(prb.dt[2], dw.dst_dt)
    for i, e in src1_entries(prb.post_ops):
        dts[src1_name(i)] = src1_dt(e)
    return dts


def output_names(prb_dir: Dir) -> list[str]:
    """The tensors a direction writes and the compare checks, in order."""
    if prb_dir.forward:
        return ["dst"]
    if prb_dir is Dir.BWD_D:
        return ["src"]
    return ["wei", "bia"] if prb_dir.with_bias else ["wei"]


Layouts = dict[str, layout.Layout]


def layout_of(t: dict[str, Tensor], layouts: Layouts | None, name: str) -> layout.Layout:
    """The layout of a tensor's memory: the executor's choice, else (bias, or no layouts
    given) the user's plain one."""
    lay = (layouts or {}).get(name)
    return lay if lay is not None else layout.plain(t[name].logical)


def outputs(prb, t: dict[str, Tensor], layouts: Layouts | None = None) -> dict[str, Guarded]:
    """Output buffers of the output types, as large as their layouts (padding and gaps
    included), poisoned (an unwritten point fails) inside guard zones."""
    dts = tensor_dts(prb)
    return {name: reorders.output_buffer(layout_of(t, layouts, name), dts[name])
            for name in output_names(prb.dir)}


def primitive_inputs(prb, inputs: dict[str, np.ndarray], t: dict[str, Tensor],
                     layouts: Layouts | None) -> dict[str, np.ndarray]:
    """The primitive's input memories: each input in its own type (library_inputs),
    reordered into its layout (untimed, as the user's reorder in oneDNN); a binary or
    prelu entry's input in the layout its entry names."""
    dts = tensor_dts(prb)
    lays = {src1_name(i): src1_layout(e, t["dst"].logical)
            for i, e in src1_entries(prb.post_ops)}
    return {name: reorders.place(a, lays.get(name) or layout_of(t, layouts, name), dts[name])
            for name, a in library_inputs(prb, inputs).items()}


def bind(prim: core.ConvPrimitive, prb_dir: Dir, inputs: dict[str, np.ndarray],
         wei_packed: np.ndarray | None, outs: dict[str, np.ndarray]):
    """The native kernel's timed callable for a direction (weights already packed), on
    the kernels' own plain layouts (outs: arrays, or Guarded buffers)."""
    outs = {k: getattr(v, "array", v) for k, v in outs.items()}
    if prb_dir.forward:
        return prim.bind(inputs["src"], wei_packed, inputs.get("bia"), outs["dst"])
    if prb_dir is Dir.BWD_D:
        return prim.bind_bwd_data(inputs["dst"], wei_packed, None, outs["src"])
    return prim.bind_bwd_weights(inputs["src"], inputs["dst"], outs["wei"],
                                 outs.get("bia"))


# The C core's operand class of a direction's multiplied tensors (src and wei forward,
# diff_dst and wei backward data, src and diff_dst backward weights), by their types.
OPERANDS = {("f32", "f32"): core.Operands.F32, ("f32", "bf16"): core.Operands.F32,
            ("f32", "f16"): core.Operands.F32, ("f16", "f16"): core.Operands.F16,
            ("bf16", "bf16"): core.Operands.BF16, ("u8", "s8"): core.Operands.INT8,
            ("s8", "s8"): core.Operands.INT8, ("f64", "f64"): core.Operands.F64}


def operands_of(kernel_dir: core.Direction, attr: core.ConvAttr) -> core.Operands | None:
    x = attr.dst_dt if kernel_dir is core.Direction.BWD_DATA else attr.src_dt
    y = attr.dst_dt if kernel_dir is core.Direction.BWD_WEIGHTS else attr.wei_dt
    return OPERANDS.get((x, y))


def kernel_attr(prb, q: Quant) -> core.ConvAttr:
    dts = tensor_dts(prb)
    return core.ConvAttr(dts["src"], dts["wei"], prb.dt[2], dts["bia"], q.kind, q.src_scale,
                         q.dst_scale, tuple(float(v) for v in q.wei_scales), q.src_zp,
                         q.dst_zp, kernel_post_ops(prb.post_ops, prb.dt[2],
                                                   src1_dims_by_entry(prb)),
                         src_zps=() if q.src_zps is None else tuple(map(int, q.src_zps)),
                         dst_zps=() if q.dst_zps is None else tuple(map(int, q.dst_zps)),
                         dw_wei_scales=() if q.dw_wei_scales is None
                         else tuple(map(float, q.dw_wei_scales)),
                         dw_dst_scale=q.dw_dst_scale,
                         scratchpad_user=prb.modes.scratchpad == "user")


def create(shape: core.ConvShape, kernel_dir: core.Direction, with_bias: bool,
           impl_filter: ImplFilter, res: CaseResult, post_ops: PostOps = PostOps(),
           attr: core.ConvAttr | None = None, alg: str = "direct") -> core.ConvPrimitive | None:
    """The first implementation, in the table's order of preference, of the algorithm alg
    (resolved: direct or wino) that computes the case's operand types, the CPU runs, the
    filter allows and that accepts the problem; sets SKIPPED/UNIMPLEMENTED otherwise."""
    attr = attr if attr is not None else core.ConvAttr(post_ops=kernel_post_ops(post_ops))
    fault = core.conv_fault(attr.layout)
    operands = operands_of(kernel_dir, attr)
    with res.timers("create_pd"):
        typed = [i for i in core.conv_impls()
                 if i.operands is operands and ALG_ROWS[alg](i.name)]
        runnable = [i for i in typed if core.isa_supported(i.isa)]
    if typed and not runnable:
        res.status, res.reason = Status.SKIPPED, Reason.DATA_TYPE_NOT_SUPPORTED.value
        return None
    return first_accepting(
        runnable, impl_filter,
        lambda impl: core.ConvPrimitive(impl, shape, kernel_dir, with_bias, fault, attr=attr),
        res)


def operand_class(prb) -> str:
    """The types a direction multiplies, as a C operand class name ("f32", "int8", ...).
    In the user's tensor names this is the same for convolution and deconvolution: forward
    src and wei, backward data diff_dst and wei, backward weights src and diff_dst."""
    dts = tensor_dts(prb)
    pair = {Dir.BWD_D: ("dst", "wei"), Dir.BWD_W: ("src", "dst"),
            Dir.BWD_WB: ("src", "dst")}.get(prb.dir, ("src", "wei"))
    operands = OPERANDS.get((dts[pair[0]], dts[pair[1]]))
    return operands.name.lower() if operands is not None else "f32"
def library_inputs(prb, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The library's buffers: each input in its own type (exact: the values fit)."""
    dts = tensor_dts(prb)
    return {name: in_type(a, dts[name]) for name, a in inputs.items()}


def in_type(a: np.ndarray, dt: str) -> np.ndarray:
    """a's values as a contiguous array of dt: a itself when it is one already, else
    through the C core's vector conversion (numpy converts f16 and bf16 an element at a
    time, seconds for a large tensor)."""
    dtype = core.numpy_dtype(dt)
    if a.dtype == dtype:
        return np.ascontiguousarray(a)
    if a.dtype == np.float32 and dt not in core.PACKED_DTS | core.DOUBLE_DTS:
        return core.dt_convert(a, dt)
    out = aligned_array(a.size, dtype).reshape(a.shape)   # a memory: on a cache line
    out[...] = a
    return out


def direction_chain(prb_dir: Dir, shape: core.ConvShape) -> tuple[list[str], str, str, int]:
    """(inputs, sparse operand, the other operand, accumulation chain length) of a
    direction: the operand whose products form the long chain is the sparse one (src
    forward, diff_dst backward; reference 6.3)."""
    taps = shape.k[0] * shape.k[1] * shape.k[2]
    if prb_dir.forward:
        names = ["src", "wei"] + (["bia"] if prb_dir.with_bias else [])
        return names, "src", "wei", taps * (shape.ic // shape.g)
    if prb_dir is Dir.BWD_D:
        return ["dst", "wei"], "dst", "wei", taps * (shape.oc // shape.g)
    return ["src", "dst"], "dst", "src", shape.mb * shape.o[0] * shape.o[1] * shape.o[2]
def is_wino_row(name: str) -> bool:
    return name.startswith("wino_")


# The rows each algorithm may use (by implementation name).
ALG_ROWS: dict[str, Callable[[str], bool]] = {
    "direct": lambda name: not is_wino_row(name),
    "wino": is_wino_row,
}
