"""The oneDNN backend of the eltwise driver: oneDNN's eltwise primitives through the same
fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1) without the onednn
extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("onednn_lib")
def test_forward_and_backward_pass_on_onednn_in_every_layout_and_in_place():
    res = run_cli("--eltwise", "--backend=onednn", "--dir=FWD_D,FWD_I,BWD_D",
                  "--alg=relu,tanh,tanh_dst,logistic_dst,linear", "--alpha=0.5",
                  "--tag=abx,axb,aBx16b", "--inplace=false,true", "2x19x5x5")
    cases = case_statuses(res)
    # backward in place is an invalid case for the algorithms that read src (SKIPPED)
    assert len(cases) == 3 * 5 * 3 * 2
    assert {s for s, _ in cases} == {"PASSED", "SKIPPED"}, \
        [line for s, line in cases if s not in ("PASSED", "SKIPPED")][:5]
    assert all("--impl=onednn:" in line for s, line in cases if s == "PASSED")
    assert res.code == 0


def test_what_onednn_has_no_implementation_for_is_unimplemented_with_its_status(onednn_lib):
    res = run_cli("--eltwise", "--backend=onednn", "--dt=s8", "--alg=clip", "--alpha=-2",
                  "--beta=3", "2x19x5x5")
    line = case_statuses(res)[0][1]
    assert line.startswith(
        f"0:UNIMPLEMENTED (oneDNN {onednn_lib.version}: dnnl_eltwise_forward: "), line
    res = run_cli("--eltwise", "--backend=torch", "2x3")
    assert case_statuses(res)[0][1].startswith(
        "0:UNIMPLEMENTED (--backend=torch: runs no eltwise (its drivers: conv, deconv, softmax, sum, concat, binary, ip, bnorm))")
