"""The torch backend of the binary driver: PyTorch's elementwise operators through the
same fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_TORCH=1) without torch."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("torch")
def test_algorithms_layouts_scales_and_chains_pass_on_torch():
    res = run_cli("--binary", "--summary=no-failures", "--backend=torch",
                  "--alg=ADD,DIV,MAX,GE,SELECT", "--sdt=f32:f32,bf16:bf16", "--ddt=bf16",
                  "--stag=abx:any,axb:abx", "--attr-scales=,src:common:0.5+src1:common:2",
                  "--attr-post-ops=,sum:0.5+relu", "5x3x4x9:1x3x1x9")
    cases = case_statuses(res)
    assert len(cases) == 5 * 2 * 2 * 2 * 2
    assert {s for s, _ in cases} == {"PASSED"}, [l for s, l in cases if s != "PASSED"][:5]
    assert all("--impl=torch:" in l for _, l in cases) and res.code == 0
    res = run_cli("--binary", "--summary=no-failures", "--backend=torch", "--inplace=true",
                  "--stag=axb:any", "4x16x5x5:1x16x1x1")
    assert [s for s, _ in case_statuses(res)] == ["PASSED"]


@pytest.mark.usefixtures("torch")
def test_what_torch_cannot_do_as_the_primitive_does_is_unimplemented():
    res = run_cli("--binary", "--summary=no-failures", "--backend=torch",
                  "--sdt=bf16:bf16", "--ddt=f32", "8x8:8x8",
                  "--reset", "--backend=torch", "--sdt=s8:s8", "--ddt=s8", "8x8:8x8",
                  "--reset", "--backend=torch", "--stag=aBx16b:any", "2x16x3x3:2x16x3x3",
                  "--reset", "--backend=torch", "--attr-post-ops=add:f32", "8x8:8x8")
    reasons = [l.split(" (", 1)[1] for _, l in case_statuses(res)]
    assert reasons[0].startswith("--sdt=bf16:bf16 --ddt=f32: torch computes in the sources' "
                                 "type (bf16), less precise than dst")
    assert reasons[1].startswith("s8: the torch backend runs binary on f32, bf16, f16")
    assert reasons[2].startswith("src0 in the blocked layout aBx16b")
    assert reasons[3].startswith("`add:f32`: the torch backend does not run binary or prelu "
                                 "post-ops")
