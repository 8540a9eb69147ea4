"""The oneDNN backend of the binary driver: oneDNN's binary primitive through the same
fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1) without the onednn
extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import pytest
from conftest import assert_onednn_cases, case_statuses, run_cli


def test_algorithms_layouts_scales_and_chains_pass_on_onednn(onednn_lib):
    res = run_cli("--binary", "--summary=no-failures", "--backend=onednn",
                  "--alg=ADD,MUL,DIV,GE", "--stag=abx:any,axb:any,aBx16b:abx",
                  "--attr-scales=,src:common:0.5+src1:common:2",
                  "--attr-post-ops=,sum:0.5+relu", "5x3x4x9:1x3x1x9")
    cases = case_statuses(res)
    assert len(cases) == 4 * 3 * 2 * 2
    assert {s for s, _ in cases} == {"PASSED"}, [l for s, l in cases if s != "PASSED"][:5]
    assert all("--impl=onednn:" in l for _, l in cases) and res.code == 0
    res = run_cli("--binary", "--summary=no-failures", "--backend=onednn", "--inplace=true",
                  "--sdt=bf16:f32", "--ddt=bf16", "--attr-post-ops=,sum:2+abs",
                  "4x16x5x5:4x16x5x5")
    # (the second case, in place with a sum post-op, is an invalid case, as benchdnn's)
    assert [s for s, _ in case_statuses(res)][1:] == ["SKIPPED"]
    assert_onednn_cases(res, 2, onednn_lib, allowed=("PASSED", "SKIPPED"))


@pytest.mark.usefixtures("onednn_lib")
def test_what_the_backend_lacks_is_unimplemented_with_the_reason(onednn_lib):
    res = run_cli("--binary", "--summary=no-failures", "--backend=onednn", "--alg=select",
                  "8x8:8x8", "--alg=add", "--attr-post-ops=add:f32:per_oc", "8x8:8x8")
    lines = [l for _, l in case_statuses(res)]
    assert "UNIMPLEMENTED (--alg=select: the oneDNN backend declares" in lines[0]
    assert "UNIMPLEMENTED (`add:f32:per_oc`: the onednn backend does not run binary or " \
        "prelu post-ops)" in lines[1]
