"""The torch backend of the sum driver: torch.mul and add_ through the same fill and
checks. Skips (or fails under BENCHDNN_PY_REQUIRE_TORCH=1) without torch."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("torch")
def test_types_layouts_scales_and_in_place_pass_on_torch():
    res = run_cli("--sum", "--summary=no-failures", "--backend=torch",
                  "--sdt=f32:f32,bf16:f16:f32", "--ddt=f32,bf16", "--stag=abx,axb:abx",
                  "--scales=1,0.25:2", "2x17x5x7")
    cases = case_statuses(res)
    # (a single scale pair for three sources is INVALID_ARGUMENTS on every backend)
    passed = [l for s, l in cases if s == "PASSED"]
    assert len(passed) == 10 and all("--impl=torch:" in l for l in passed)
    assert {s for s, _ in cases} == {"PASSED", "INVALID_ARGUMENTS"}
    res = run_cli("--sum", "--summary=no-failures", "--backend=torch", "--inplace=true",
                  "--stag=axb", "2x17x5x7")
    assert [s for s, _ in case_statuses(res)] == ["PASSED"]


@pytest.mark.usefixtures("torch")
def test_integer_types_and_blocked_layouts_are_unimplemented_on_torch():
    res = run_cli("--sum", "--summary=no-failures", "--backend=torch", "--sdt=s8:s8",
                  "--ddt=s8", "8x8", "--reset", "--backend=torch", "--stag=aBx16b",
                  "2x16x3x3")
    reasons = [l.split(" (", 1)[1] for _, l in case_statuses(res)]
    assert reasons[0].startswith("s8: the torch backend runs sum on f32, bf16, f16")
    assert reasons[1].startswith("the blocked layout aBx16b: torch tensors are strided")
