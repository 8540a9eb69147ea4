"""The graph driver: oneDNN Graph JSON reading and its conversions to conv problems
(auto_pad, layouts, the dilation convention, shape checks), checked against an independent
NumPy transcription of the graph spec; then the real command line on the shipped cases
(problems/graph/, batches/graph_ci) and on the deliberately wrong files in tests/data/graph/.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, run_cli

from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers import DRIVERS
from benchdnn_py.drivers.base import CaseResult, RunContext
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.drivers.conv.ref import count_ops
from benchdnn_py.drivers.graph import desc as gdesc
from benchdnn_py.drivers.graph import driver as gdriver
from benchdnn_py.engine import harness
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.errors import ProblemError, UsageError
from benchdnn_py.status import Status

GRAPH_DIR = ROOT / "problems" / "graph"
DATA = ROOT / "tests" / "data" / "graph"
CASES = sorted(GRAPH_DIR.glob("*.json"))
RELU_CASE = "problems/graph/conv_2d_biasadd_relu.json"
BACKWARD = {"conv_bwd_data.json": "BWD_D", "conv_bwd_weights.json": "BWD_W"}
IMPL = r"--impl=[\w:,+-]+ "
MS = r"\(\d+ ms\)"


# -- a small graph written in the test ---------------------------------------------------
def tensor(tid, shape, dtype="f32"):
    return {"id": tid, "dtype": dtype, "shape": list(shape), "stride": [],
            "layout_type": "strided", "property_type": "undef"}


def attrs(**values):
    types = {str: "string", int: "s64", list: "s64[]"}
    return {k: {"type": types[type(v)], "value": v} for k, v in values.items()}


def conv_op(inputs, outputs, op_id=0, kind="Convolution", **attr_values):
    base = dict(strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1], dilations=[1, 1],
                data_format="NCX", weights_format="OIX")
    base.update(attr_values)
    base = {k: v for k, v in base.items() if v is not None}
    return {"id": op_id, "name": "conv", "kind": kind, "attrs": attrs(**base),
            "inputs": inputs, "outputs": outputs}


def graph(*ops):
    return {"version": "3.6.0", "engine_kind": "cpu", "fpmath_mode": "strict",
            "graph": list(ops)}


def simple(**attr_values):
    """mb2 ic4 8x8 -> oc8, 3x3 kernel, NCX/OIX, output shape left unknown."""
    return graph(conv_op([tensor(0, [2, 4, 8, 8]), tensor(1, [8, 4, 3, 3])],
                         [tensor(2, [])], **attr_values))


def one_conv(doc):
    case = gdesc.parse_graph(doc)
    assert len(case.convs) == 1
    return case.convs[0]


def error_of(doc) -> str:
    with pytest.raises(ProblemError) as info:
        gdesc.parse_graph(doc)
    message = str(info.value)
    assert "\n" not in message
    return message


# -- conversions -------------------------------------------------------------------------
@pytest.mark.parametrize("mode,i,k,s,expected", [
    ("same_upper", 7, 4, 2, (1, 2)),     # O = 4, total 3: the odd unit at the end
    ("same_lower", 7, 4, 2, (2, 1)),     # ... and at the beginning
    ("same_upper", 6, 2, 1, (0, 1)),
    ("same_lower", 6, 2, 1, (1, 0)),
    ("same_upper", 8, 3, 1, (1, 1)),     # even total: split evenly
    ("same_lower", 5, 1, 2, (0, 0)),     # kernel smaller than the stride: no padding
    ("valid", 9, 3, 2, (0, 0)),
    ("none", 9, 3, 2, (4, 5)),           # the attributes' own pads
])
def test_auto_pads(mode, i, k, s, expected):
    assert gdesc.auto_pads(mode, i, k, s, 1, 4, 5) == expected


@pytest.mark.parametrize("i,s,d", [(7, 2, 1), (6, 1, 1), (13, 3, 2), (5, 2, 3), (1, 4, 1)])
def test_same_keeps_ceil_of_input_over_stride(i, s, d):
    for mode in ("same_upper", "same_lower"):
        pb, pe = gdesc.auto_pads(mode, i, 3, s, d, 0, 0)
        assert gdesc.output_size(i, 3, s, d, pb, pe) == -(-i // s)


def test_output_size_is_the_spec_formula_with_its_floor():
    # OH = floor((IH - DKH + PH_L + PH_R) / SH) + 1, DKH = 1 + (KH - 1) * DH
    assert gdesc.output_size(8, 3, 2, 1, 1, 1) == 4          # (8 - 3 + 2) / 2 = 3.5
    assert gdesc.output_size(12, 3, 1, 2, 2, 2) == 12        # DK = 5
    assert gdesc.output_size(9, 3, 2, 1, 0, 0) == 4
    assert gdesc.output_size(2, 3, 1, 2, 0, 0) < 1           # a kernel that does not fit


def test_dilation_convention():
    assert [gdesc.primitive_dilation(d) for d in (1, 2, 3)] == [0, 1, 2]
    assert gdesc.dilated_kernel(3, 1) == 3 and gdesc.dilated_kernel(3, 2) == 5


def test_layout_conversions_and_their_inverses():
    assert gdesc.data_to_logical((2, 5, 6, 7, 3), "NXC") == (2, 3, (5, 6, 7))
    assert gdesc.data_to_logical((2, 3, 5, 6), "NCX") == (2, 3, (5, 6))
    assert gdesc.weights_to_logical((3, 5, 4, 16), "XIO") == (16, 4, (3, 5))
    assert gdesc.weights_to_logical((16, 4, 3, 5), "OIX") == (16, 4, (3, 5))
    for fmt in ("NCX", "NXC"):
        assert gdesc.data_from_logical(*gdesc.data_to_logical((2, 3, 4, 5), fmt), fmt) == (
            2, 3, 4, 5)
    for fmt in ("OIX", "XIO"):
        assert gdesc.weights_from_logical(*gdesc.weights_to_logical((2, 3, 4), fmt), fmt) == (
            2, 3, 4)


# -- reading a graph ----------------------------------------------------------------------
def test_nxc_xio_shapes_become_logical_sizes():
    doc = graph(conv_op([tensor(0, [2, 9, 10, 6]), tensor(1, [3, 2, 6, 12])],
                        [tensor(2, [2, 9, 10, 12])], data_format="NXC",
                        weights_format="XIO", pads_begin=[1, 1], pads_end=[1, 0]))
    conv = one_conv(doc)
    d = conv.desc
    assert (d.mb, d.ic, d.oc, d.g) == (2, 6, 12, 1)
    assert (d.i, d.k, d.o, d.p, d.s, d.dil) == ((1, 9, 10), (1, 3, 2), (1, 9, 10), (0, 1, 1),
                                                (1, 1, 1), (0, 0, 0))
    assert conv.dir is Dir.FWD_D and conv.dt == ("f32",) * 3


def test_formats_default_to_nxc_and_xio():
    doc = graph(conv_op([tensor(0, [1, 6, 6, 4]), tensor(1, [3, 3, 4, 8])],
                        [tensor(2, [1, 6, 6, 8])], data_format=None, weights_format=None))
    d = one_conv(doc).desc
    assert (d.ic, d.oc, d.i, d.o) == (4, 8, (1, 6, 6), (1, 6, 6))


def test_graph_dilation_becomes_primitive_dilation():
    d = one_conv(simple(dilations=[2, 3], pads_begin=[2, 3], pads_end=[2, 3])).desc
    assert d.dil == (0, 1, 2) and d.o == (1, 8, 8)


def test_auto_pad_overrides_pads_and_is_case_insensitive():
    upper = one_conv(simple(auto_pad="same_upper", strides=[2, 2], pads_begin=[9, 9],
                            pads_end=[9, 9])).desc
    lower = one_conv(simple(auto_pad="SAME_LOWER", strides=[2, 2])).desc
    valid = one_conv(simple(auto_pad="valid")).desc
    none = one_conv(simple(auto_pad="None")).desc            # dumps spell it "None"
    # 8 / 2 -> 4 points; total pad (4 - 1) * 2 + 3 - 8 = 1: begin 0 (upper), 1 (lower)
    assert (upper.o, upper.p) == ((1, 4, 4), (0, 0, 0))
    assert (lower.o, lower.p) == ((1, 4, 4), (0, 1, 1))
    assert (valid.o, valid.p) == ((1, 6, 6), (0, 0, 0))
    assert (none.o, none.p) == ((1, 8, 8), (0, 1, 1))


def test_asymmetric_pads_keep_begin_and_the_spec_output_size():
    d = one_conv(simple(pads_begin=[2, 0], pads_end=[0, 1], strides=[2, 1])).desc
    assert d.p == (0, 2, 0) and d.o == (1, 4, 7)
    # The right padding conv derives reads no further than pads_end allows.
    assert d.p_r[1] <= 0 and d.p_r[2] == 1


def test_bias_input_and_bias_add_both_give_fwd_b():
    with_input = graph(conv_op([tensor(0, [2, 4, 8, 8]), tensor(1, [8, 4, 3, 3]),
                                tensor(5, [8])], [tensor(2, [2, 8, 8, 8])]))
    assert one_conv(with_input).dir is Dir.FWD_B
    doc = simple()
    doc["graph"].append({"id": 1, "kind": "BiasAdd", "attrs": attrs(data_format="NCX"),
                         "inputs": [tensor(2, []), tensor(3, [8])],
                         "outputs": [tensor(4, [2, 8, 8, 8])]})
    assert one_conv(doc).dir is Dir.FWD_B


def _with_activation(kind: str, **f32_attrs):
    doc = simple()
    doc["graph"].append({"id": 1, "kind": kind,
                         "attrs": {k: {"type": "f32", "value": v} for k, v in f32_attrs.items()},
                         "inputs": [tensor(2, [])], "outputs": [tensor(3, [])]})
    return doc


@pytest.mark.parametrize("kind,attrs_,expected", [
    ("ReLU", {}, "relu"),
    ("LeakyReLU", {"alpha": 0.25}, "relu:0.25"),
    ("Clamp", {"min": -1.0, "max": 6.0}, "clip:-1:6"),
    ("Elu", {"alpha": 1.0}, "elu:1"),
    ("GELU", {}, "gelu_erf"),
    ("HardSigmoid", {"alpha": 0.2, "beta": 0.5}, "hardsigmoid:0.2:0.5"),
    ("HardSwish", {}, "hardswish:0.166667:0.5"),
    ("Sigmoid", {}, "logistic"),
    ("SoftPlus", {"beta": 2.0}, "soft_relu:2"),
    ("Tanh", {}, "tanh"),
])
def test_activation_after_conv_becomes_its_post_op(kind, attrs_, expected):
    case = gdesc.parse_graph(_with_activation(kind, **attrs_))
    assert case.unimplemented == ""
    assert str(case.convs[0].post_ops) == expected


def test_activation_attribute_errors_name_the_attribute():
    with pytest.raises(ProblemError, match="missing required attribute `alpha`"):
        gdesc.parse_graph(_with_activation("LeakyReLU"))
    with pytest.raises(ProblemError, match="unknown attribute `gamma` for ReLU"):
        gdesc.parse_graph(_with_activation("ReLU", gamma=1.0))


def test_standalone_activation_is_unimplemented():
    doc = simple()
    doc["graph"].append({"id": 1, "kind": "ReLU", "attrs": {}, "inputs": [tensor(9, [])],
                         "outputs": [tensor(10, [])]})
    assert "a standalone ReLU (op 1) is not supported" in gdesc.parse_graph(doc).unimplemented


def test_backward_data_and_weights_map_to_bwd_directions():
    bwd_d = graph(conv_op([tensor(0, [2, 8, 4, 4]), tensor(1, [8, 4, 3, 3])],
                          [tensor(2, [2, 4, 8, 8])], kind="ConvolutionBackwardData",
                          strides=[2, 2]))
    conv = one_conv(bwd_d)
    assert conv.dir is Dir.BWD_D
    assert (conv.desc.ic, conv.desc.oc, conv.desc.i, conv.desc.o) == (4, 8, (1, 8, 8), (1, 4, 4))
    bwd_w = graph(conv_op([tensor(0, [2, 4, 8, 8]), tensor(1, [2, 8, 8, 8])],
                          [tensor(2, [])], kind="ConvolutionBackwardWeights",
                          weights_shape=[8, 2, 3, 3], groups=2))
    conv = one_conv(bwd_w)
    assert conv.dir is Dir.BWD_W and (conv.desc.g, conv.desc.k) == (2, (1, 3, 3))


def test_every_conv_of_a_graph_is_a_problem_in_op_order():
    case = gdesc.load(str(GRAPH_DIR / "conv_2d_chain.json"))[1]
    assert [c.op_id for c in case.convs] == [0, 1]
    assert [c.desc.format() for c in case.convs] == ["mb1ic4ih8oc8oh8kh3ph1",
                                                     "mb1ic8ih8oc16oh4kh1sh2ph0"]


# -- what is wrong gets one line naming it -----------------------------------------------
def _edit(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


WRONG = [
    (simple(dilations=[0, 1]),
     "attribute `dilations` = [0, 1]: expected 2 positive integers (1 = no dilation)"),
    (simple(strides=[1, 0]), "attribute `strides` = [1, 0]: expected 2 positive integers"),
    (simple(pads_end=[1, -1]), "attribute `pads_end` = [1, -1]: expected 2 non-negative"),
    (simple(strides=[1, 1, 1]), "attribute `strides` = [1, 1, 1]: expected 2 positive"),
    (simple(groups=3), "groups = 3 does not divide the channels: 4 input, 8 output"),
    (simple(groups=0), "attribute `groups` = 0: expected a positive integer"),
    (simple(groups=2), "`weights` [8, 4, 3, 3] (OIX) has 4 input channels per group; `src` "
                       "[2, 4, 8, 8] (NCX) has 4 channels in 2 group(s): expected 2"),
    (simple(auto_pad="same"), "attribute `auto_pad` = \"same\": expected one of none, "
                              "same_upper, same_lower, valid"),
    (simple(data_format="NHWC"), "attribute `data_format` = \"NHWC\": expected one of NCX, NXC"),
    (simple(strides=None), "missing required attribute `strides` (s64[])"),
    (simple(stride=[1, 1]), "unknown attribute `stride`"),
    (_edit(simple(), ["graph", 0, "attrs", "groups"], {"type": "f32", "value": 1.0}),
     "attribute `groups` has type `f32`; expected `s64`"),
    (_edit(simple(), ["graph", 0, "outputs", 0, "shape"], [2, 8, 7, 7]),
     "`dst` (tensor 2) has shape [2, 8, 7, 7] (NCX), but the attributes and other shapes "
     "give [2, 8, 8, 8]"),
    (_edit(simple(), ["graph", 0, "inputs", 1, "dtype"], "bf16"),
     "data types src f32, weights bf16, dst f32: expected every tensor f32"),
    (_edit(simple(), ["graph", 0, "kind"], "MaxPool"), "op 0 (MaxPool): unsupported op kind "
                                                       "`MaxPool`"),
    (_edit(simple(), ["graph", 0, "inputs", 0, "shape"], [2, 4, 8]),
     "`weights` (OIX) has shape [8, 4, 3, 3] of rank 4; expected rank 3"),
    (_edit(simple(), ["graph", 0, "inputs", 0, "shape"], [2, 4, -1, 8]),
     "`src` (tensor 0) needs a fully known shape"),
    (_edit(simple(), ["graph", 0, "inputs"], [tensor(0, [2, 4, 8, 8])]),
     "has 1 inputs; expected 2 or 3"),
    (simple(pads_begin=[0, 0], pads_end=[0, 0], dilations=[5, 1]),
     "spatial axis 0: the kernel 3 with dilation 5 spans 11 points"),
    (graph(), "no convolution op in the graph"),
    ([1, 2], "expected a JSON object with a `graph` list of ops"),
    (graph(conv_op([tensor(0, [2, 8, 4, 4]), tensor(1, [8, 4, 3, 3])], [tensor(2, [])],
                   kind="ConvolutionBackwardData")),
     "the `diff_src` shape is unknown: give it in the output tensor 2 or in attribute "
     "`dst_shape`"),
    (graph(conv_op([tensor(0, [2, 8, 4, 4]), tensor(1, [8, 4, 3, 3])],
                   [tensor(2, [2, 4, 8, 8])], kind="ConvolutionBackwardData",
                   dst_shape=[2, 4, 9, 9])),
     "`diff_src` (tensor 2) has shape [2, 4, 8, 8], but attribute `dst_shape` says "
     "[2, 4, 9, 9]"),
]


@pytest.mark.parametrize("doc,fragment", WRONG, ids=[w[1][:40] for w in WRONG])
def test_wrong_graphs_give_one_line_naming_the_problem(doc, fragment):
    assert fragment in error_of(doc)


def test_bias_add_must_match_its_convolution():
    doc = simple()
    doc["graph"].append({"id": 1, "kind": "BiasAdd", "attrs": attrs(data_format="NCX"),
                         "inputs": [tensor(2, [2, 8, 9, 9]), tensor(3, [8])],
                         "outputs": [tensor(4, [])]})
    assert ("op 1 (BiasAdd): `src` (tensor 2) has shape [2, 8, 9, 9], but Convolution op 0 "
            "gives [2, 8, 8, 8]") in error_of(doc)
    doc["graph"][1]["inputs"][0] = tensor(2, [])
    doc["graph"][1]["inputs"][1] = tensor(3, [4])
    assert "`bias` (tensor 3) has shape [4]; expected [8]" in error_of(doc)
    doc["graph"][1]["inputs"][1] = tensor(3, [8])
    doc["graph"][1]["attrs"] = attrs(data_format="NXC")
    assert "data_format NXC differs from the NCX of Convolution op 0" in error_of(doc)


def test_a_tensor_id_names_one_tensor():
    doc = _edit(simple(), ["graph", 0, "outputs", 0, "shape"], [2, 8, 8, 8])
    doc["graph"].append({"id": 1, "kind": "BiasAdd", "attrs": attrs(data_format="NCX"),
                         "inputs": [tensor(2, [2, 8, 9, 9]), tensor(3, [8])],
                         "outputs": [tensor(4, [])]})
    assert "tensor 2 is f32 [2, 8, 9, 9] here but f32 [2, 8, 8, 8] in op 0" in error_of(doc)
    doc["graph"][1]["inputs"][0] = tensor(2, [])
    doc["graph"][1]["outputs"][0] = tensor(2, [])
    assert "output tensor 2 is also the output of op 0" in error_of(doc)


def test_file_errors(tmp_path):
    with pytest.raises(ProblemError, match=r"cannot open graph file `nope.json` \(looked in"):
        gdesc.load("nope.json")
    with pytest.raises(ProblemError, match=r"is not valid JSON at line \d+, column \d+"):
        gdesc.load(str(DATA / "malformed.json"))
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ProblemError, match="is not a text file"):
        gdesc.load(str(binary))


def test_relative_paths_are_also_searched_in_problems_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, case = gdesc.load("conv_1d.json")
    assert path.resolve() == (GRAPH_DIR / "conv_1d.json").resolve()
    assert gdesc.display_path(path) == str((GRAPH_DIR / "conv_1d.json").resolve())


# -- the shipped cases against an independent reading of the spec ------------------------
def _spec_conv(src, wei, bias, strides, pads_begin, pads_end, dilations, groups):
    """The graph spec's formula in NCX/OIX: explicit zero padding on both sides, then the
    floor-sized output. Written from the spec, sharing nothing with desc.py."""
    padded = np.pad(src, [(0, 0), (0, 0)] + list(zip(pads_begin, pads_end)))
    k = wei.shape[2:]
    out_sp = [(padded.shape[2 + a] - ((k[a] - 1) * dilations[a] + 1)) // strides[a] + 1
              for a in range(len(k))]
    n, c = src.shape[:2]
    oc = wei.shape[0]
    icg, ocg = c // groups, oc // groups
    dst = np.zeros((n, oc, *out_sp))
    for tap in np.ndindex(*k):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                       for t, d, o, s in zip(tap, dilations, out_sp, strides))
        x = padded[(slice(None), slice(None)) + window]
        for g in range(groups):
            w = wei[(slice(g * ocg, (g + 1) * ocg), slice(None)) + tap]
            dst[:, g * ocg:(g + 1) * ocg] += np.einsum("nc...,oc->no...",
                                                       x[:, g * icg:(g + 1) * icg], w)
    if bias is not None:
        dst += bias.reshape((1, -1) + (1,) * len(k))
    return dst


def _primitive_conv(d, src, wei, bias):
    """The primitive's formula on the converted problem (3D form): left padding p,
    dilation d + 1, out-of-range taps skipped."""
    src = src.reshape(d.mb, d.ic, *d.i)
    wei = wei.reshape(d.oc, d.ic // d.g, *d.k)
    dst = np.zeros((d.mb, d.oc, *d.o))
    icg, ocg = d.ic // d.g, d.oc // d.g
    for tap in np.ndindex(*d.k):
        idx = [np.arange(o) * s - p + t * (dil + 1)
               for o, s, p, t, dil in zip(d.o, d.s, d.p, tap, d.dil)]
        ok = [(ix >= 0) & (ix < i) for ix, i in zip(idx, d.i)]
        x = src[np.ix_(range(d.mb), range(d.ic), *[np.clip(ix, 0, i - 1)
                                                   for ix, i in zip(idx, d.i)])]
        x = x * np.einsum("i,j,k->ijk", *[m.astype(float) for m in ok])
        for g in range(d.g):
            w = wei[(slice(g * ocg, (g + 1) * ocg), slice(None)) + tap]
            dst[:, g * ocg:(g + 1) * ocg] += np.einsum("ncijk,oc->noijk",
                                                       x[:, g * icg:(g + 1) * icg], w)
    if bias is not None:
        dst += bias.reshape(1, -1, 1, 1, 1)
    return dst


def _forward_op(doc):
    op = next(o for o in doc["graph"] if o["kind"] == "Convolution")
    a = {k: v["value"] for k, v in op["attrs"].items()}
    bias = next((o["inputs"][1]["shape"] for o in doc["graph"] if o["kind"] == "BiasAdd"),
                op["inputs"][2]["shape"] if len(op["inputs"]) == 3 else None)
    return op, a, bias


FORWARD = [p for p in CASES if p.name not in BACKWARD and p.name != "conv_2d_chain.json"]


@pytest.mark.parametrize("path", FORWARD, ids=lambda p: p.name)
def test_converted_problem_computes_what_the_graph_spec_says(path):
    doc = json.loads(path.read_text())
    op, a, bias_shape = _forward_op(doc)
    conv = gdesc.parse_graph(doc).convs[0]
    rng = np.random.default_rng(7)
    src = rng.integers(-4, 5, op["inputs"][0]["shape"]).astype(float)
    wei = rng.integers(-4, 5, op["inputs"][1]["shape"]).astype(float)
    bias = rng.integers(-4, 5, bias_shape).astype(float) if bias_shape else None
    # NumPy moves the channel axes: NXC -> NCX, XIO -> OIX.
    rank = src.ndim
    if a.get("data_format", "NXC") == "NXC":
        src = np.moveaxis(src, -1, 1)
    if a.get("weights_format", "XIO") == "XIO":
        wei = np.moveaxis(np.moveaxis(wei, -1, 0), -1, 1)
    sp = rank - 2
    pb, pe = a["pads_begin"], a["pads_end"]
    mode = a.get("auto_pad", "none").lower()
    if mode == "valid":
        pb = pe = [0] * sp
    elif mode.startswith("same"):
        pb, pe = [], []
        for ax in range(sp):
            i, k, s, dl = src.shape[2 + ax], wei.shape[2 + ax], a["strides"][ax], a["dilations"][ax]
            total = max((-(-i // s) - 1) * s + (k - 1) * dl + 1 - i, 0)
            extra_first = mode == "same_lower"
            pb.append((total + extra_first) // 2)
            pe.append(total - pb[-1])
    want = _spec_conv(src, wei, bias, a["strides"], pb, pe, a["dilations"], a.get("groups", 1))
    got = _primitive_conv(conv.desc, src, wei, bias)
    assert want.shape == (conv.desc.mb, conv.desc.oc) + tuple(conv.desc.o[3 - sp:])
    np.testing.assert_array_equal(got.reshape(want.shape), want)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_shipped_cases_read_and_their_conv_descriptors_round_trip(path):
    case = gdesc.load(str(path))[1]
    assert case.convs
    for conv in case.convs:
        # The [CONV_REPRO] line must rerun exactly this problem.
        assert parse_desc(conv.desc.format()) == conv.desc
        # The canonical form always prints g, which reads back as `has_groups`.
        assert parse_desc(conv.desc.format(canonical=True)) == dataclasses.replace(
            conv.desc, has_groups=True)


def test_batch_runs_every_shipped_case():
    batch = (ROOT / "batches" / "graph_ci").read_text().split("\n")
    named = {line.strip() for line in batch if line.strip().endswith(".json")}
    assert named == {f"problems/graph/{p.name}" for p in CASES}
    assert next(t for t in batch if t.strip() and not t.startswith("#")) == "--reset"


# -- the argument stream -----------------------------------------------------------------
def test_case_option_and_bare_token_are_descriptors():
    plan = harness.plan(["--graph", "--mb=1", "--case=a.json", "b.json", "--reset",
                         "--case=c.json"])
    assert [(c.desc_text, c.values["mb"]) for c in plan.cases] == [
        ("a.json", 1), ("b.json", 1), ("c.json", 0)]
    assert plan.warnings == []          # a trailing --case= is a problem, not an option


@pytest.mark.parametrize("args,fragment", [
    (["--graph", "--case="], "`--case=`: expected `--case=VALUE`"),
    (["--graph", "--case"], "`--case`: expected `--case=VALUE`"),
    (["--graph", "--cas=x.json"], "did you mean --case"),
    (["--graph", "--dir=BWD_D", "x.json"], "unknown option `--dir=BWD_D` for the graph driver"),
    (["--conv", "--case=x.json"], "unknown option `--case=x.json` for the conv driver"),
])
def test_usage_errors(args, fragment):
    with pytest.raises(UsageError) as info:
        harness.plan(args)
    assert fragment in str(info.value)


# -- the real command line ----------------------------------------------------------------
@pytest.fixture(scope="module")
def batch_run():
    return run_cli("--graph", "--batch=batches/graph_ci")


def _case_blocks(lines):
    """(conv repro lines, result line) per case, in order."""
    blocks, pending = [], []
    for line in lines:
        if line.startswith("="):        # the end-of-run block repeats failed lines
            break
        if line.startswith("[CONV_REPRO] "):
            pending.append(line)
        elif re.match(r"^\d+:[A-Z_]+ ", line):
            blocks.append((pending, line))
            pending = []
    return blocks


def test_batch_forward_cases_pass_with_their_conv_repro(batch_run):
    blocks = _case_blocks(batch_run.lines)
    assert len(blocks) == len(CASES)
    by_file = {re.search(r"--case=(\S+)$", line).group(1): (repros, line)
               for repros, line in blocks}
    for path in CASES:
        rel = f"problems/graph/{path.name}"
        repros, line = by_file[rel]
        if path.name in BACKWARD:
            continue
        assert re.match(rf"^\d+:PASSED {MS} __REPRO: --graph {IMPL}--case={re.escape(rel)}$",
                        line), line
        expected = [f"[CONV_REPRO] --conv {'' if c.dir is Dir.FWD_B else '--dir=FWD_D '}"
                    f"{f'--attr-post-ops={c.post_ops} ' if c.post_ops else ''}"
                    f"{c.desc.format()}" for c in gdesc.load(str(path))[1].convs]
        assert repros == expected


def test_batch_backward_cases_map_to_bwd_directions(batch_run):
    for repros, line in _case_blocks(batch_run.lines):
        name = Path(line.rsplit("--case=", 1)[1]).name
        if name not in BACKWARD:
            continue
        conv = gdesc.load(str(GRAPH_DIR / name))[1].convs[0]
        assert repros == [f"[CONV_REPRO] --conv --dir={BACKWARD[name]} {conv.desc.format()}"]
        assert re.match(rf"^\d+:PASSED {MS} __REPRO: --graph {IMPL}"
                        rf"--case=problems/graph/{name}$", line), line


def test_batch_relu_case_runs_fused_and_the_whole_batch_passes(batch_run):
    blocks = _case_blocks(batch_run.lines)
    relu = [(repros, line) for repros, line in blocks if line.endswith(RELU_CASE)]
    assert len(relu) == 1
    repros, line = relu[0]
    assert repros == ["[CONV_REPRO] --conv --attr-post-ops=relu ic8ih8oc8oh8kh3ph1"]
    assert re.match(rf"^\d+:PASSED {MS} __REPRO: --graph {IMPL}--case={RELU_CASE}$", line)
    s = batch_run.summary()
    assert s["tests"] == s["passed"] == len(CASES)
    assert batch_run.code == 0


BAD = [
    ("bad_dilation_zero.json", "op 0 (Convolution): attribute `dilations` = [0, 1]: expected 2 "
                               "positive integers (1 = no dilation), one per spatial axis"),
    ("bad_stride_zero.json", "op 0 (Convolution): attribute `strides` = [0, 1]: expected 2 "
                             "positive integers, one per spatial axis"),
    ("bad_groups.json", "op 0 (Convolution): groups = 3 does not divide the channels: 8 input, "
                        "8 output (weights [8, 2, 3, 3] OIX, src [2, 8, 8, 8] NCX)"),
    ("bad_output_shape.json", "op 0 (Convolution): `dst` (tensor 3) has shape [2, 8, 7, 7] "
                              "(NCX), but the attributes and other shapes give [2, 8, 8, 8]"),
    ("bad_unknown_op.json", "op 1 (FancyBiasAdd): unsupported op kind `FancyBiasAdd`; expected "
                            "Convolution, ConvolutionBackwardData, ConvolutionBackwardWeights, "
                            "BiasAdd or an element-wise activation (ReLU, GELU, ...)"),
    ("malformed.json", "graph file `tests/data/graph/malformed.json` is not valid JSON at line "
                       "17, column 9 (Unterminated string starting at)"),
]


def test_each_wrong_file_gives_one_line_and_the_run_goes_on():
    args = [f"--case=tests/data/graph/{name}" for name, _ in BAD]
    res = run_cli("--graph", *args, "--case=missing.json", "conv_1d.json")
    assert res.code == 1
    assert res.err == ""
    for idx, (name, reason) in enumerate(BAD):
        # The case time is wall time (a loaded machine can take a millisecond to read a file).
        assert re.fullmatch(rf"{idx}:INVALID_ARGUMENTS \({re.escape(reason)}\) {MS} __REPRO: "
                            rf"--graph --case=tests/data/graph/{re.escape(name)}",
                            res.lines[idx]), res.lines[idx]
    missing = len(BAD)
    assert re.match(rf"^{missing}:INVALID_ARGUMENTS \(cannot open graph file `missing.json` "
                    rf"\(looked in: missing.json, .*\)\) {MS} __REPRO: --graph "
                    rf"--case=missing.json$", res.lines[missing])
    # The good case after them still runs, with its conv repro.
    assert res.lines[missing + 1] == "[CONV_REPRO] --conv --dir=FWD_D ic4iw32oc8ow16kw5sw2pw2"
    assert re.match(rf"^{missing + 1}:PASSED {MS} __REPRO: --graph {IMPL}"
                    rf"--case=problems/graph/conv_1d.json$", res.lines[missing + 2])
    s = res.summary()
    assert (s["tests"], s["passed"], s["invalid_arguments"]) == (len(BAD) + 2, 1, len(BAD) + 1)


def test_bf16_maps_to_conv_dt_and_is_reported_by_conv():
    res = run_cli("--graph", "--case=tests/data/graph/conv_2d_bf16.json")
    assert res.lines[0] == "[CONV_REPRO] --conv --dir=FWD_D --dt=bf16:bf16:bf16 ic4ih6oc8oh6kh3ph1"
    # Tighten to PASSED when bf16 lands.
    assert re.match(rf"^0:(UNIMPLEMENTED \(--dt=bf16:bf16:bf16 has no implementation yet\)|"
                    rf"PASSED) {MS} __REPRO: --graph ({IMPL})?"
                    rf"--case=tests/data/graph/conv_2d_bf16.json$", res.lines[1])


@pytest.mark.parametrize("name", ["conv_2d_asymmetric_pads.json", "conv_2d_nxc_xio_bias.json",
                                  "conv_2d_auto_pad_same_lower.json"])
def test_conv_repro_line_reruns_the_same_problem(name):
    graph_run = run_cli("--graph", "--mb=1", name)
    repro = graph_run.lines[0]
    assert repro.startswith("[CONV_REPRO] --conv ") and "mb1" in repro
    conv_run = run_cli(*repro.split()[1:])
    assert conv_run.code == 0, conv_run.out
    assert re.match(rf"^0:PASSED {MS} __REPRO: --conv {IMPL}"
                    rf"{re.escape(repro.split(' --conv ')[1])}$", conv_run.lines[0])
    assert re.match(rf"^0:PASSED {MS} __REPRO: --graph {IMPL}--mb=1 "
                    rf"--case=problems/graph/{name}$", graph_run.lines[1])


def test_list_mode_and_bare_tokens():
    res = run_cli("--mode=L", "--graph", "conv_2d_chain.json", RELU_CASE)
    assert res.code == 0
    # The (N ms) field is wall time, nonzero on a loaded machine even for listing.
    lines = [re.sub(r"\(\d+ ms\)", "(N ms)", line) for line in res.lines]
    assert lines[:4] == [
        "[CONV_REPRO] --mode=L --conv --dir=FWD_D mb1ic4ih8oc8oh8kh3ph1",
        "[CONV_REPRO] --mode=L --conv --dir=FWD_D mb1ic8ih8oc16oh4kh1sh2ph0",
        "0:LISTED (N ms) __REPRO: --mode=L --graph --case=problems/graph/conv_2d_chain.json",
        "[CONV_REPRO] --mode=L --conv --attr-post-ops=relu ic8ih8oc8oh8kh3ph1",
    ]
    assert lines[4] == f"1:LISTED (N ms) __REPRO: --mode=L --graph --case={RELU_CASE}"


def test_perf_line_names_the_graph_case():
    res = run_cli("--graph", "--mode=P", "--fix-times-per-prb=2", "conv_2d_chain.json")
    assert res.code == 0
    perf = [line for line in res.lines if line.startswith("perf,cpu,")]
    assert len(perf) == 1
    fields = perf[0].split(",")
    assert fields[3:5] == ["conv_2d_chain.json", "--mode=P --fix-times-per-prb=2 --graph "
                                                  "--case=problems/graph/conv_2d_chain.json"]
    # The graph's work is both convolutions' work.
    ops = sum(count_ops(c.desc) for c in gdesc.load("conv_2d_chain.json")[1].convs)
    assert float(fields[5]) == pytest.approx(ops / 1e9, rel=1e-5)


def test_a_graph_verdict_is_the_worst_of_its_convolutions():
    prb = gdriver.make_problem({"impl_filter": ImplFilter(), "mb": 0}, "conv_2d_chain.json",
                               GlobalSettings(), conv=DRIVERS["conv"])
    ctx = RunContext(GlobalSettings(), 0, lambda line: None)
    results = [CaseResult(Status.PASSED, impl="a", total=10),
               CaseResult(Status.FAILED, "why", errors=3, total=5, impl="b"),
               CaseResult(Status.MISTRUSTED, impl="a", total=1)]
    res = gdriver._combine(prb, ctx, results)
    assert (res.status, res.reason, res.errors, res.total, res.impl) == (
        Status.FAILED, "why", 3, 16, "a,b")
    assert res.perf is None
