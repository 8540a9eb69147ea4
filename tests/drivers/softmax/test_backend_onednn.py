"""The oneDNN backend of the softmax driver: oneDNN's softmax primitives through the same
fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1) without the onednn
extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("onednn_lib")
def test_forward_and_backward_pass_on_onednn_in_every_layout_and_in_place():
    res = run_cli("--softmax", "--summary=no-failures", "--backend=onednn",
                  "--dir=FWD_D,FWD_I,BWD_D", "--alg=SOFTMAX,LOGSOFTMAX",
                  "--stag=abx,axb,aBx16b", "--inplace=false,true", "--axis=1,3", "2x19x5x5")
    cases = case_statuses(res)
    assert len(cases) == 3 * 2 * 3 * 2 * 2
    assert {s for s, _ in cases} == {"PASSED"}, [l for s, l in cases if s != "PASSED"][:5]
    assert all("--impl=onednn:" in line for _, line in cases) and res.code == 0


@pytest.mark.usefixtures("onednn_lib")
def test_scales_reach_onednn_and_what_it_lacks_is_unimplemented_with_its_status(onednn_lib):
    res = run_cli("--softmax", "--summary=no-failures", "--backend=onednn", "--dir=FWD_I",
                  "--sdt=f32", "--ddt=u8,s8", "--attr-scales=src:common:64+dst:common:0.5",
                  "16x16", "255x10")
    assert [s for s, _ in case_statuses(res)] == ["PASSED"] * 4
    res = run_cli("--softmax", "--summary=no-failures", "--backend=onednn", "--sdt=f64",
                  "--ddt=f64", "16x16")
    line = case_statuses(res)[0][1]
    assert line.startswith(f"0:UNIMPLEMENTED (oneDNN {onednn_lib.version}: "
                           "dnnl_softmax_forward: "), line
    res = run_cli("--softmax", "--summary=no-failures", "--backend=onednn",
                  "--attr-post-ops=relu", "16x16")
    assert "UNIMPLEMENTED (--attr-post-ops=relu: the onednn backend runs a softmax " \
        "primitive without post-ops)" in res.out
