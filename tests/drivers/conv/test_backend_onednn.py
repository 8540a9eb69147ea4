"""The oneDNN backend of conv and deconv: oneDNN's primitives through the same fill,
reference and checker. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1) without the
onednn extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import json
import re

import pytest
from conftest import assert_all_passed, assert_onednn_cases, case_statuses, run_cli

from benchdnn_py import core
from benchdnn_py.backends import onednn

ALL_DIRS = "--dir=FWD_B,FWD_D,FWD_I,BWD_D,BWD_W,BWD_WB"


def test_every_direction_and_float_type_passes_on_onednn(onednn_lib):
    res = run_cli("--conv", "--backend=onednn", "--summary=no-failures", ALL_DIRS,
                  "--dt=f32,bf16", "mb2ic16ih10oc32kh3ph1", "g2mb2ic16ih10oc32kh3sh2ph1",
                  "g32mb2ic32ih9oc32kh3ph1", "mb1ic3id5ih6iw7oc8kd3kh3kw3pd1ph1pw1")
    assert_onednn_cases(res, 6 * 2 * 4, onednn_lib)


@pytest.mark.usefixtures("onednn_lib")
def test_int8_scales_zero_points_and_post_ops_pass_on_onednn():
    res = run_cli("--conv", "--backend=onednn", "--dt=u8:s8:u8,s8:s8:f32",
                  "--attr-scales=src:common:0.5+wei:per_oc+dst:common:2",
                  "--attr-zero-points=,src:common:2+dst:common:-1",
                  "--attr-post-ops=,relu,sum:0.5,relu+sum:2",
                  "mb2ic16ih10oc32kh3ph1", "g2mb2ic16ih10oc32kh3sh2ph1")
    assert_all_passed(res, 2 * 2 * 4 * 2, "onednn:")


@pytest.mark.usefixtures("onednn_lib")
def test_requested_layouts_run_in_them_and_any_reports_onednns_choice():
    res = run_cli("--conv", "--backend=onednn", "--dir=FWD_B,BWD_D,BWD_WB",
                  "--stag=nhwc,nChw16c", "--wtag=any,OIhw16i16o", "--dtag=nChw8c",
                  "mb2ic20ih6oc18kh3ph1")
    assert_all_passed(res, 3 * 2 * 2, "onednn:")
    res = run_cli("--conv", "--backend=onednn", "--strides=887x1x147x24@3:1x20x400x1300:"
                  "1x4x80x500@7", ALL_DIRS, "mb2ic20ih6oc18kh3ph1")
    assert_all_passed(res, 6, "onednn:")
    res = run_cli("--conv", "--backend=onednn", "-v5", "mb1ic16ih6oc16kh3ph1")
    line = next(l for l in res.lines if l.startswith("implementation: "))
    # blocked layouts on an AVX-512 or AVX2 CPU: what oneDNN picked, in our tag terms
    assert re.search(r"src any=\w+ wei any=\w+ dst any=\w+", line), line


def test_deconvolution_passes_on_onednn(onednn_lib):
    res = run_cli("--deconv", "--backend=onednn", "--summary=no-failures", ALL_DIRS,
                  "--dt=f32,bf16", "mb2ic16ih5oc32oh10kh4sh2ph1", "g2mb2ic16ih6oc16kh3ph1")
    assert_onednn_cases(res, 6 * 2 * 2, onednn_lib)


def test_what_onednn_3_cannot_express_is_unimplemented_with_the_reason(onednn_lib):
    res = run_cli("--conv", "--backend=onednn", "--dt=u8:s8:u8", "--attr-oscale=per_oc",
                  "mb1ic16ih6oc16kh1")
    assert case_statuses(res)[0][1].startswith(
        "0:UNIMPLEMENTED (--attr-oscale=per_oc: oneDNN 3.x has no output scales")
    # oneDNN sizes a depthwise post-op's output ceil(input / stride): 6x6 here, where
    # the problem's unpadded 3x3 kernel gives 4x4
    res = run_cli("--conv", "--backend=onednn", "--attr-post-ops=dw:k3s1p0",
                  "mb1ic16ih6oc16kh1")
    assert case_statuses(res)[0][1].startswith(
        f"0:UNIMPLEMENTED (oneDNN {onednn_lib.version}: the primitive's dst is 1x16x6x6, the "
        "problem's 1x16x4x4 (its depthwise post-op's output is ceil(input / stride)))")


@pytest.mark.usefixtures("onednn_lib")
def test_depthwise_fusion_passes_on_onednn():
    res = run_cli("--conv", "--backend=onednn", "--dir=FWD_B,FWD_I",
                  "--attr-post-ops=dw_k3s1p1,relu+dw:k3s2p1+relu",
                  "mb2ic16ih10oc32kh1", "mb1ic13ih9iw11oc27kh1kw1")
    assert_all_passed(res, 2 * 2 * 2, "onednn:")


def test_a_problem_onednn_has_no_implementation_for_names_its_status(onednn_lib):
    """f16 convolutions need AVX512-FP16 or AMX in oneDNN 3.2: elsewhere oneDNN itself
    answers `unimplemented`, which the case reports."""
    res = run_cli("--conv", "--backend=onednn", "--dt=f16", "mb1ic16ih6oc16kh1")
    status, line = case_statuses(res)[0]
    if status == "PASSED":
        pytest.skip("this CPU runs oneDNN's f16 convolutions")
    assert line.startswith(f"0:UNIMPLEMENTED (oneDNN {onednn_lib.version}: "
                           "dnnl_convolution_forward: unimplemented)"), line
    assert res.code == 1


def test_the_checker_catches_onednn_3_2s_deconvolution_bias_defect(onednn_lib):
    """A real finding: oneDNN 3.2's brgconv_strided deconvolution adds the bias once per
    input-channel chunk (every element off by one or two bias values) when the input
    channels span several chunks; without bias, or on plain layouts (another
    implementation), it is right. The chunk size follows the CPU's caches: 512 input
    channels show it where L2 holds 1 MiB per core, 1024 where it holds 2 MiB."""
    if onednn_lib.version != "3.2.0" or "avx512_core" not in onednn_lib.isa:
        pytest.skip("the defect was found in oneDNN 3.2.0 on AVX-512")
    found = []
    for ic in (512, 1024):
        res = run_cli("--deconv", "--backend=onednn", "--dir=FWD_B,FWD_D",
                      "--summary=no-failures", f"mb1ic{ic}ih4oc64oh8kh4sh2ph1")
        if "brgconv_strided" not in res.out:
            pytest.skip("oneDNN chose another implementation here")
        statuses = [s for s, _ in case_statuses(res)]
        assert statuses[1] == "PASSED", res.out      # no bias: right
        found.append(statuses[0])
    if "FAILED" not in found:
        pytest.skip("the bias chunks do not split at these sizes on this CPU")
    assert set(found) <= {"FAILED", "PASSED"}


@pytest.mark.usefixtures("onednn_lib")
def test_perf_mode_times_both_backends_in_turns_and_perf_table_gives_the_ratio(tmp_path):
    results = tmp_path / "r.jsonl"
    res = run_cli("--conv", "--mode=P", "--backend=native,onednn", "--perf-interleave=true",
                  "--fix-times-per-prb=6", f"--results={results}", "mb1ic16ih14oc32kh3ph1",
                  "mb1ic32ih7oc32kh1")
    assert res.code == 0, res.err
    records = [json.loads(l) for l in results.read_text().splitlines()]
    cases = [r for r in records if r.get("type") == "case"]
    assert sorted(r["backend"] for r in cases) == ["native", "native", "onednn", "onednn"]
    assert all(r["impl"].startswith("onednn:") for r in cases if r["backend"] == "onednn")
    header = next(r for r in records if r.get("type") == "header")
    assert header["backend"] == "native,onednn"
    assert header["environment"]["backends"]["onednn"] == onednn.describe()
    table = run_cli("perf-table", str(results))
    assert "native / onednn" in table.out
    summary = next(l for l in table.lines if l.startswith("2 cases"))
    assert re.search(r"native / onednn: \d+\.\d\dx \(geomean of 2 cases", summary), summary
    cmp = run_cli("compare", str(results), str(results), "--base-backend=onednn",
                  "--new-backend=native", "--fail-on=none")
    assert cmp.code == 0, cmp.err
    assert "over 2 cases" in cmp.err
    bad = run_cli("compare", str(results), str(results), "--base-backend=torch")
    assert bad.code == 2
    assert "no case ran on backend `torch` (its cases ran on native, onednn)" in bad.err


def test_isa_caps_onednn_as_it_caps_the_native_kernels(onednn_lib):
    res = run_cli("--conv", "--backend=native,onednn", "--isa=avx2", "-v5",
                  "mb1ic16ih10oc32kh3ph1")
    assert res.code == 0, res.out
    impls = [l for l in res.lines if l.startswith("implementation: ")]
    assert len(impls) == 2 and all(":avx2" in l for l in impls), impls
    assert "isa=avx2)" in impls[1]
    res = run_cli("--conv", "--backend=onednn", "--isa=scalar", "mb1ic16ih10oc32kh3ph1")
    assert case_statuses(res)[0][1].startswith(
        "0:UNIMPLEMENTED (--isa=scalar: oneDNN has no such cap (its lowest is sse41))")


def test_isa_caps_onednn_with_a_results_file_and_at_the_highest_level(onednn_lib, tmp_path):
    """The results header loads oneDNN before the first case runs: the cap must be in
    force by then. And --isa=avx512_bf16, our highest level, still caps oneDNN (at
    avx512_core_bf16: no AMX), so that both sides run the same instructions."""
    for isa, dt, want in (("avx2", "f32", ":avx2"), ("avx512_bf16", "bf16", ":avx512_core_bf16")):
        if not core.isa_supported(core.Isa[isa.upper()]):
            continue
        results = tmp_path / f"{isa}.jsonl"
        res = run_cli("--conv", "--backend=onednn", f"--isa={isa}", f"--dt={dt}", "-v5",
                      f"--results={results}", "mb1ic16ih10oc32kh3ph1")
        assert res.code == 0, res.out
        (impl,) = [l for l in res.lines if l.startswith("implementation: ")]
        assert want in impl and "amx" not in impl, impl



def test_a_dst_scale_with_a_depthwise_post_op_means_what_it_means_to_onednn(onednn_lib):
    """oneDNN's fused convolution against the reference: the depthwise step rescales by
    the 1x1 step's dst scale; the post-op's own scales are not passed (UNIMPLEMENTED).
    (Below AVX-512, oneDNN 3.2 fuses an s8 1x1 output wrongly: the test below.)"""
    dts = ("u8:s8:s8", "u8:s8:u8") if onednn_lib.isa.startswith("avx512_core") else ("u8:s8:u8",)
    res = run_cli("--conv", "--backend=onednn", f"--dt={','.join(dts)}",
                  "--attr-scales=src:common:0.25+wei:per_oc+dst:common:0.5",
                  "--attr-post-ops=relu+dw:k3s2p1:s8,dw:k3s1p1:u8+relu",
                  "mb2ic16ih14oc32oh14kh1ph0", "--attr-scales=src:common:0.25+wei:per_oc"
                  "+dst:common:0.5+attr_post_op_dw_wei:per_oc", "mb2ic16ih14oc32oh14kh1ph0")
    s = res.summary()
    assert s["passed"] == s["unimplemented"] == 2 * len(dts) == s["tests"] / 2, \
        res.out[-2000:]


def test_the_checker_catches_onednn_3_2s_fused_s8_depthwise_defect_on_avx2(onednn_lib):
    """A real finding: oneDNN 3.2's fused 1x1 + depthwise int8 convolution on AVX2
    (jit_uni_int8_1x1:avx2, then jit_uni_int8:avx2) is wrong when the 1x1 step writes s8:
    most elements are off, with or without scales. With u8 there it is right, and so is
    each step alone: the 1x1 writing s8, a depthwise convolution reading s8. Our fused
    kernel passes the same case against the same reference."""
    if onednn_lib.version != "3.2.0" or not core.isa_supported(core.Isa.AVX2):
        pytest.skip("the defect was found in oneDNN 3.2.0 on AVX2")
    res = run_cli("--conv", "--backend=onednn", "--isa=avx2", "--summary=no-failures",
                  "--dt=u8:s8:s8,u8:s8:u8", "--attr-post-ops=dw:k3s1p1:u8",
                  "mb1ic16ih14oc32kh1", "--attr-post-ops=", "mb1ic16ih14oc32kh1",
                  "--dt=s8:s8:s8", "g32mb1ic32ih14oc32kh3ph1")
    statuses = [s for s, _ in case_statuses(res)]
    if statuses[0] == "PASSED" and core.isa_supported(core.Isa.AVX512):
        pytest.skip("oneDNN capped at AVX2 fuses it right on this AVX-512 CPU")
    assert statuses == ["FAILED", "PASSED", "PASSED", "PASSED", "PASSED"], res.out[-2000:]
    native = run_cli("--conv", "--isa=avx2", "--dt=u8:s8:s8", "--attr-post-ops=dw:k3s1p1:u8",
                     "mb1ic16ih14oc32kh1")
    assert [s for s, _ in case_statuses(native)] == ["PASSED"] and native.code == 0
