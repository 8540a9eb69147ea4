"""oneDNN Graph JSON -> convolution problems (benchdnn reference 9.4; the graph API's
Convolution op, spec 001).

A graph file is read and checked whole: each Convolution, ConvolutionBackwardData and
ConvolutionBackwardWeights op becomes one conv problem with every size explicit, and a
BiasAdd that consumes a Convolution's output becomes that convolution's bias. The graph
conventions converted here:

* shapes: data_format NCX | NXC and weights_format OIX | XIO (the spec's defaults are NXC
  and XIO) become the logical (N, C, spatial) and (O, I/groups, spatial);
* dilations: the graph's 1 = none becomes the primitive's 0 = none;
* padding: the output size comes from the spec's formula
  ``O = floor((I - DK + P_begin + P_end) / S) + 1`` with the pads of the attributes, or of
  auto_pad (``valid``: none; ``same_*``: the total that makes ``O = ceil(I / S)``, the odd
  unit at the end for same_upper and at the beginning for same_lower). The conv problem
  keeps P_begin and its explicit O; its derived right padding may come out below P_end,
  which only drops padding no output point reads.

Anything wrong raises ProblemError with one line naming the op, the attribute or tensor,
and what was expected. Element-wise ops after a convolution (after its BiasAdd, if any)
become that convolution's eltwise post-ops, in order. What is valid but needs machinery
benchdnn-py lacks (a standalone activation or BiasAdd, a second bias) is reported through
GraphCase.unimplemented.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

from ...common.attr import Eltwise, PostOps
from ...common.direction import Dir
from ...common.window import ConvDesc
from ...engine import shipped
from ...errors import ProblemError
from .ops import Op, Tensor, agree, check_rank, known, shape_attr_or_output, shape_text, show


# Op kind -> the conv direction it runs as (a Convolution with a bias becomes FWD_B).
CONV_KINDS = {
    "Convolution": Dir.FWD_D,
    "ConvolutionBackwardData": Dir.BWD_D,
    "ConvolutionBackwardWeights": Dir.BWD_W,
}
BIAS_ADD = "BiasAdd"


def _gelu(op: "Op") -> Eltwise:
    mode = op.choice("mode", ("gelu_erf", "gelu_tanh"), "gelu_erf")
    return Eltwise(mode)


# The graph API's element-wise ops and the eltwise post-op each fuses into after a
# convolution (graph attribute names -> alpha, beta).
ACTIVATIONS: dict[str, Callable[["Op"], Eltwise]] = {
    "Abs": lambda op: Eltwise("abs"),
    "Clamp": lambda op: Eltwise("clip", op.attr("min", "f32", required=True),
                                op.attr("max", "f32", required=True)),
    "Elu": lambda op: Eltwise("elu", op.attr("alpha", "f32", required=True)),
    "Exp": lambda op: Eltwise("exp"),
    "GELU": _gelu,
    "HardSigmoid": lambda op: Eltwise("hardsigmoid", op.attr("alpha", "f32", required=True),
                                      op.attr("beta", "f32", required=True)),
    # x * min(max(x + 3, 0), 6) / 6, i.e. alpha 1/6, beta 1/2
    "HardSwish": lambda op: Eltwise("hardswish", 1.0 / 6.0, 0.5),
    "LeakyReLU": lambda op: Eltwise("relu", op.attr("alpha", "f32", required=True)),
    "Log": lambda op: Eltwise("log"),
    "Mish": lambda op: Eltwise("mish"),
    "ReLU": lambda op: Eltwise("relu"),
    "Round": lambda op: Eltwise("round"),
    "Sigmoid": lambda op: Eltwise("logistic"),
    # 1/beta * ln(1 + e^(beta x)) is soft_relu with alpha = beta
    "SoftPlus": lambda op: Eltwise("soft_relu", op.attr("beta", "f32", 1.0)),
    "Sqrt": lambda op: Eltwise("sqrt"),
    "Square": lambda op: Eltwise("square"),
    "Tanh": lambda op: Eltwise("tanh"),
}
ACTIVATION_ATTRS = {"Clamp": {"min", "max"}, "Elu": {"alpha"}, "GELU": {"mode"},
                    "HardSigmoid": {"alpha", "beta"}, "LeakyReLU": {"alpha"},
                    "SoftPlus": {"beta"}}
ACTIVATION_KINDS = frozenset(ACTIVATIONS)

DATA_TYPES = ("f32", "bf16", "f16")   # the spec's combinations: every tensor of one type
DATA_FORMATS = ("NCX", "NXC")
WEIGHTS_FORMATS = ("OIX", "XIO")
AUTO_PADS = ("none", "same_upper", "same_lower", "valid")
# Attributes each conv kind accepts. An unknown attribute is an error rather than ignored:
# it may change the math. filter_format is weights_format's name in older graph dumps.
_CONV_ATTRS = {"strides", "pads_begin", "pads_end", "dilations", "auto_pad", "groups",
               "data_format", "weights_format", "filter_format"}
ATTRS = {
    "Convolution": _CONV_ATTRS,
    "ConvolutionBackwardData": _CONV_ATTRS | {"output_padding", "dst_shape"},
    "ConvolutionBackwardWeights": _CONV_ATTRS | {"weights_shape"},
}


@dataclasses.dataclass(frozen=True)
class GraphConv:
    op_id: int
    kind: str
    dir: Dir
    desc: ConvDesc
    dt: tuple[str, str, str]
    post_ops: PostOps = PostOps()   # fused element-wise ops that follow it


@dataclasses.dataclass(frozen=True)
class GraphCase:
    convs: tuple[GraphConv, ...]
    unimplemented: str = ""     # why the graph cannot run here although it is valid


# -- conversions -----------------------------------------------------------------------
def data_to_logical(shape: tuple[int, ...], fmt: str) -> tuple[int, int, tuple[int, ...]]:
    """(N, C, spatial) of a src/dst shape written in data_format ``fmt``."""
    if fmt == "NCX":
        return shape[0], shape[1], tuple(shape[2:])
    return shape[0], shape[-1], tuple(shape[1:-1])


def data_from_logical(n: int, c: int, spatial: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    return (n, c, *spatial) if fmt == "NCX" else (n, *spatial, c)


def weights_to_logical(shape: tuple[int, ...], fmt: str) -> tuple[int, int, tuple[int, ...]]:
    """(O, I/groups, spatial) of a weights shape written in weights_format ``fmt``."""
    if fmt == "OIX":
        return shape[0], shape[1], tuple(shape[2:])
    return shape[-1], shape[-2], tuple(shape[:-2])


def weights_from_logical(o: int, i: int, spatial: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    return (o, i, *spatial) if fmt == "OIX" else (*spatial, i, o)


def primitive_dilation(graph_dilation: int) -> int:
    """The graph counts the distance between taps (1 = dense); the primitive counts the
    holes between them (0 = dense)."""
    return graph_dilation - 1


def dilated_kernel(k: int, graph_dilation: int) -> int:
    return (k - 1) * graph_dilation + 1


def auto_pads(auto_pad: str, i: int, k: int, s: int, graph_dilation: int,
              pad_begin: int, pad_end: int) -> tuple[int, int]:
    """(begin, end) padding of one spatial axis under ``auto_pad``."""
    if auto_pad == "none":
        return pad_begin, pad_end
    if auto_pad == "valid":
        return 0, 0
    o = -(-i // s)                      # same_*: the output keeps ceil(I / S) points
    total = max((o - 1) * s + dilated_kernel(k, graph_dilation) - i, 0)
    small, big = total // 2, total - total // 2
    return (small, big) if auto_pad == "same_upper" else (big, small)


def output_size(i: int, k: int, s: int, graph_dilation: int, pad_begin: int,
                pad_end: int) -> int:
    """The spec's formula, with its floor (Python's // floors, as the spec's brackets do)."""
    return (i - dilated_kernel(k, graph_dilation) + pad_begin + pad_end) // s + 1


def _triple(values: tuple[int, ...], neutral: int) -> tuple[int, int, int]:
    """(d, h, w) with the axes the problem does not have set to ``neutral``."""
    return (neutral,) * (3 - len(values)) + tuple(values)  # type: ignore[return-value]


# -- finding and reading a file -------------------------------------------------------
def find(text: str) -> Path:
    """The file ``text`` names: as given (relative to the working directory), then among
    the shipped files (`problems/graph/NAME.json` or `NAME.json`)."""
    given = Path(text)
    candidates = [given]
    top = shipped.root()
    if not given.is_absolute() and top is not None:
        candidates += [top / "problems" / "graph" / given, top / given]
    for path in candidates:
        if path.is_file():
            return path
    raise ProblemError(f"cannot open graph file `{text}` (looked in: "
                       f"{', '.join(str(p) for p in dict.fromkeys(candidates))})")


def display_path(path: Path) -> str:
    """The path as a repro prints it: relative to the working directory when beneath it,
    so the line reruns from there; absolute otherwise."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)


def load(text: str) -> tuple[Path, GraphCase]:
    """Reads and checks one graph file; raises ProblemError."""
    path = find(text)
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ProblemError(f"cannot read graph file `{text}` ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ProblemError(f"graph file `{text}` is not a text file") from None
    except json.JSONDecodeError as exc:
        raise ProblemError(f"graph file `{text}` is not valid JSON at line {exc.lineno}, "
                           f"column {exc.colno} ({exc.msg})") from None
    return path, parse_graph(doc)


def _conv(op: Op) -> tuple[GraphConv, tuple[int, ...], str]:
    """The conv problem of one op, its dst shape and its data_format (the last two are
    what a BiasAdd after it must match)."""
    unknown = sorted(set(op.attrs) - ATTRS[op.kind])
    if unknown:
        raise op.error(f"unknown attribute `{unknown[0]}`; expected "
                       f"{', '.join(sorted(ATTRS[op.kind] - {'filter_format'}))}")
    df = op.choice("data_format", DATA_FORMATS, "NXC")
    wf_name = "filter_format" if "filter_format" in op.attrs else "weights_format"
    wf = op.choice(wf_name, WEIGHTS_FORMATS, "XIO")
    auto_pad = op.choice("auto_pad", AUTO_PADS, "none")
    g = op.attr("groups", "s64", 1)
    if g < 1:
        raise op.error(f"attribute `groups` = {g}: expected a positive integer")

    # Every kind takes 2 or 3 inputs. The backward kinds' third one would carry a shape as
    # data, which a JSON file does not hold: their shapes come from the output tensor or
    # the attribute.
    op.check_arity((2, 3), 1)
    bias = None
    if op.kind == "Convolution":
        src_t, wei_t, dst_t = op.inputs[0], op.inputs[1], op.outputs[0]
        bias = op.inputs[2] if len(op.inputs) == 3 else None
        src = known(op, src_t, "src")
        wei = known(op, wei_t, "weights")
        dst = dst_t.shape
        dst_role, dst_id = "dst", dst_t.id
        tensors = {"src": src_t, "weights": wei_t, "dst": dst_t}
    elif op.kind == "ConvolutionBackwardData":
        ddst_t, wei_t, dsrc_t = op.inputs[0], op.inputs[1], op.outputs[0]
        dst = known(op, ddst_t, "diff_dst")
        wei = known(op, wei_t, "weights")
        src = shape_attr_or_output(op, "dst_shape", dsrc_t, "diff_src")
        dst_role, dst_id = "diff_dst", ddst_t.id
        tensors = {"diff_src": dsrc_t, "weights": wei_t, "diff_dst": ddst_t}
    else:
        src_t, ddst_t, dwei_t = op.inputs[0], op.inputs[1], op.outputs[0]
        src = known(op, src_t, "src")
        dst = known(op, ddst_t, "diff_dst")
        wei = shape_attr_or_output(op, "weights_shape", dwei_t, "diff_weights")
        dst_role, dst_id = "diff_dst", ddst_t.id
        tensors = {"src": src_t, "diff_weights": dwei_t, "diff_dst": ddst_t}

    src_role = "diff_src" if op.kind == "ConvolutionBackwardData" else "src"
    wei_role = "diff_weights" if op.kind == "ConvolutionBackwardWeights" else "weights"
    rank = len(src)
    if not 3 <= rank <= 5:
        raise op.error(f"`{src_role}` has shape {shape_text(src)} of rank {rank}; expected "
                       f"rank 3, 4 or 5 (1D, 2D or 3D convolution)")
    check_rank(op, wei, rank, wei_role, wf)
    if dst is not None:
        check_rank(op, dst, rank, dst_role, f"tensor {dst_id}")
    sp = rank - 2

    dtypes = {role: t.dtype for role, t in tensors.items()}
    if bias is not None:
        dtypes["bias"] = bias.dtype
    kinds = set(dtypes.values())
    if len(kinds) != 1 or not kinds <= set(DATA_TYPES):
        listed = ", ".join(f"{role} {dt}" for role, dt in dtypes.items())
        raise op.error(f"data types {listed}: expected every tensor f32, every tensor bf16 "
                       f"or every tensor f16")
    dt = kinds.pop()

    n, ic, i_sp = data_to_logical(src, df)
    oc, ic_per_g, k_sp = weights_to_logical(wei, wf)
    if ic % g or oc % g:
        raise op.error(f"groups = {g} does not divide the channels: {ic} input, {oc} output "
                       f"({wei_role} {shape_text(wei)} {wf}, {src_role} {shape_text(src)} "
                       f"{df})")
    if ic_per_g * g != ic:
        raise op.error(f"`{wei_role}` {shape_text(wei)} ({wf}) has {ic_per_g} input channels "
                       f"per group; `{src_role}` {shape_text(src)} ({df}) has {ic} channels in "
                       f"{g} group(s): expected {ic // g}")

    strides = op.spatial("strides", sp, 1, "positive integers")
    dilations = op.spatial("dilations", sp, 1, "positive integers (1 = no dilation)")
    pads_begin = op.spatial("pads_begin", sp, 0, "non-negative integers")
    pads_end = op.spatial("pads_end", sp, 0, "non-negative integers")
    pads = [auto_pads(auto_pad, *axis) for axis in
            zip(i_sp, k_sp, strides, dilations, pads_begin, pads_end)]
    o_sp = tuple(output_size(i, k, s, d, pb, pe) for i, k, s, d, (pb, pe) in
                 zip(i_sp, k_sp, strides, dilations, pads))
    for a, o in enumerate(o_sp):
        if o < 1:
            raise op.error(
                f"spatial axis {a}: the kernel {k_sp[a]} with dilation {dilations[a]} "
                f"spans {dilated_kernel(k_sp[a], dilations[a])} points, more than the "
                f"{src_role} size {i_sp[a]} plus pads {pads[a][0]}+{pads[a][1]}")

    expected_dst = data_from_logical(n, oc, o_sp, df)
    if not agree(dst, expected_dst):
        raise op.error(f"`{dst_role}` (tensor {dst_id}) has shape {shape_text(dst or ())} "
                       f"({df}), but the attributes and other shapes give "
                       f"{shape_text(expected_dst)}")
    if op.kind == "ConvolutionBackwardData":
        # diff_src's size is always given, so output_padding (which only picks among the
        # sizes the floor maps to one diff_dst size) is checked when it says something.
        out_pad = op.spatial("output_padding", sp, 0, "non-negative integers",
                             required=False, default=[0] * sp)
        for a in range(sp if any(out_pad) else 0):
            size = ((o_sp[a] - 1) * strides[a] + dilated_kernel(k_sp[a], dilations[a])
                    - sum(pads[a]) + out_pad[a])
            if size != i_sp[a]:
                raise op.error(f"attribute `output_padding` = {show(list(out_pad))}: on "
                               f"spatial axis {a} it gives a diff_src size of {size}, but "
                               f"diff_src has {i_sp[a]}")

    direction = CONV_KINDS[op.kind]
    if bias is not None:
        if bias.shape is None or tuple(bias.shape) != (oc,):
            raise op.error(f"`bias` (tensor {bias.id}) has shape "
                           f"{shape_text(bias.shape or ())}; expected [{oc}] (one value per "
                           f"output channel)")
        direction = Dir.FWD_B
    desc = ConvDesc(
        g=g, has_groups=g > 1, mb=n, ic=ic, oc=oc, i=_triple(i_sp, 1), o=_triple(o_sp, 1),
        k=_triple(k_sp, 1), s=_triple(strides, 1), p=_triple(tuple(p[0] for p in pads), 0),
        dil=_triple(tuple(map(primitive_dilation, dilations)), 0), ndims=rank)
    return GraphConv(op.id, op.kind, direction, desc, (dt, dt, dt)), expected_dst, df


# -- the graph --------------------------------------------------------------------------
def _bias_add(op: Op, conv: GraphConv, conv_dst: tuple[int, ...], df: str) -> None:
    """Checks a BiasAdd that consumes a Convolution's result (input 0)."""
    op.check_arity((2,), 1)
    unknown = sorted(set(op.attrs) - {"data_format"})
    if unknown:
        raise op.error(f"unknown attribute `{unknown[0]}`; expected data_format")
    bias_df = op.choice("data_format", DATA_FORMATS, "NXC")
    if bias_df != df:
        raise op.error(f"data_format {bias_df} differs from the {df} of Convolution op "
                       f"{conv.op_id}: the bias would land on another axis")
    bias, out = op.inputs[1], op.outputs[0]
    if bias.shape != (conv.desc.oc,):
        raise op.error(f"`bias` (tensor {bias.id}) has shape {shape_text(bias.shape or ())}; "
                       f"expected [{conv.desc.oc}] (one value per output channel)")
    for role, t in (("bias", bias), ("dst", out)):
        if t.dtype != conv.dt[0]:
            raise op.error(f"`{role}` (tensor {t.id}) is {t.dtype}; expected {conv.dt[0]} "
                           f"like Convolution op {conv.op_id}")
    for role, t in (("src", op.inputs[0]), ("dst", out)):
        if not agree(t.shape, conv_dst):
            raise op.error(f"`{role}` (tensor {t.id}) has shape {shape_text(t.shape or ())}, "
                           f"but Convolution op {conv.op_id} gives {shape_text(conv_dst)}")


def _check_tensor_ids(ops: list[Op]) -> None:
    """A tensor id names one tensor: one producer, and one shape and type wherever it is
    written."""
    seen: dict[int, tuple[Tensor, str]] = {}
    producer: dict[int, int] = {}
    for op in ops:
        for t in op.outputs:
            if t.id in producer:
                raise op.error(f"output tensor {t.id} is also the output of op {producer[t.id]}")
            producer[t.id] = op.id
        for t in op.inputs + op.outputs:
            if t.id not in seen:
                seen[t.id] = (t, op.where)
                continue
            first, where = seen[t.id]
            same_shape = (first.shape is None or t.shape is None
                          or agree(first.shape, t.shape) or agree(t.shape, first.shape))
            if first.dtype != t.dtype or not same_shape:
                raise op.error(f"tensor {t.id} is {t.dtype} {shape_text(t.shape or ())} here "
                               f"but {first.dtype} {shape_text(first.shape or ())} in {where}")


def parse_graph(doc: Any) -> GraphCase:
    """The conv problems of a parsed oneDNN Graph JSON document; raises ProblemError."""
    if not isinstance(doc, dict) or not isinstance(doc.get("graph"), list):
        raise ProblemError("expected a JSON object with a `graph` list of ops (oneDNN Graph "
                           "JSON: version, engine_kind, fpmath_mode, graph)")
    ops = [Op(obj, n) for n, obj in enumerate(doc["graph"])]
    ids = [op.id for op in ops]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise ProblemError(f"op id {duplicate} is used by more than one op")
    supported = set(CONV_KINDS) | {BIAS_ADD} | ACTIVATION_KINDS
    for op in ops:
        if op.kind not in supported:
            raise op.error(f"unsupported op kind `{op.kind}`; expected "
                           f"{', '.join(CONV_KINDS)}, {BIAS_ADD} or an element-wise "
                           f"activation (ReLU, GELU, ...)")
    _check_tensor_ids(ops)

    convs: dict[int, GraphConv] = {}
    # Forward dst tensor id -> (conv op id, dst shape, data_format, has a bias).
    results: dict[int, tuple[int, tuple[int, ...], str, bool]] = {}
    for op in ops:
        if op.kind in CONV_KINDS:
            conv, dst, df = _conv(op)
            convs[op.id] = conv
            if op.kind == "Convolution":
                results[op.outputs[0].id] = (op.id, dst, df, conv.dir is Dir.FWD_B)
    if not convs:
        raise ProblemError(f"no convolution op in the graph: expected at least one of "
                           f"{', '.join(CONV_KINDS)}")

    unimplemented = ""
    owner = {dst_id: r[0] for dst_id, r in results.items()}   # fused tensor -> its conv
    for op in ops:
        if op.kind == BIAS_ADD:
            src_id = op.inputs[0].id if op.inputs else None
            if src_id not in results:
                unimplemented = unimplemented or (
                    f"BiasAdd op {op.id} does not follow a Convolution: a standalone "
                    f"BiasAdd is not supported")
                continue
            conv_id, dst, df, has_bias = results[src_id]
            _bias_add(op, convs[conv_id], dst, df)
            if has_bias:
                unimplemented = unimplemented or (
                    f"BiasAdd op {op.id} adds a second bias to Convolution op {conv_id}: "
                    f"a binary post-op, which is not implemented")
                continue
            convs[conv_id] = dataclasses.replace(convs[conv_id], dir=Dir.FWD_B)
            results[src_id] = (conv_id, dst, df, True)
            owner[op.outputs[0].id] = conv_id
    for op in ops:
        if op.kind in ACTIVATION_KINDS:
            unknown = sorted(set(op.attrs) - ACTIVATION_ATTRS.get(op.kind, set()))
            if unknown:
                raise op.error(f"unknown attribute `{unknown[0]}` for {op.kind}")
            op.check_arity((1,), 1)
            src_id = op.inputs[0].id
            if src_id not in owner:
                unimplemented = unimplemented or (
                    f"a standalone {op.kind} (op {op.id}) is not supported: this driver runs "
                    f"convolutions, with element-wise ops fused after them")
                continue
            conv_id = owner[src_id]
            conv = convs[conv_id]
            chain = PostOps(conv.post_ops.entries + (ACTIVATIONS[op.kind](op),))
            convs[conv_id] = dataclasses.replace(conv, post_ops=chain)
            owner[op.outputs[0].id] = conv_id
    ordered = tuple(convs[op.id] for op in ops if op.id in convs)
    return GraphCase(ordered, unimplemented)
