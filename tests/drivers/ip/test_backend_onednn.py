"""The ip driver on oneDNN's inner product primitive: every direction, ranks, layouts,
types and attributes through the same checks."""

from __future__ import annotations

from conftest import assert_onednn_cases, case_statuses, run_cli


def test_directions_layouts_and_types_pass(onednn_lib):
    res = run_cli("--ip", "--backend=onednn", "--summary=no-impl", "--summary=no-failures",
                  "--dir=FWD_B,FWD_I,BWD_D,BWD_WB", "--dt=f32,bf16", "--stag=any,axb",
                  "mb3ic5ih3iw2oc7", "mb16ic64oc48")
    assert_onednn_cases(res, 4 * 2 * 2 * 2, onednn_lib, allowed=("PASSED", "MISTRUSTED"))


def test_int8_scales_and_post_ops_pass(onednn_lib):
    res = run_cli("--ip", "--backend=onednn", "--summary=no-impl", "--dt=u8:s8:s8,s8:s8:f32",
                  "--attr-scales=src:common:0.25+wei:per_oc+dst:common:0.25",
                  "--attr-post-ops=,sum:0.5,relu:0.5", "mb16ic64oc48")
    s = res.summary()
    assert res.code == 0 and s["passed"] == s["tests"] == 2 * 3, res.out[-2000:]


def test_binary_entries_are_named_unimplemented(onednn_lib):
    res = run_cli("--ip", "--backend=onednn", "--attr-post-ops=add:f32:per_oc", "ic8oc8")
    (status, line), = case_statuses(res)[:1]
    assert status == "UNIMPLEMENTED" and "the onednn backend does not run binary" in line
