"""The torch backend of the concat driver: torch.cat through the same fill and checks.
Skips (or fails under BENCHDNN_PY_REQUIRE_TORCH=1) without torch."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("torch")
def test_types_axes_and_orders_pass_on_torch():
    res = run_cli("--concat", "--summary=no-failures", "--backend=torch",
                  "--sdt=f32,s8", "--ddt=f32", "--stag=abx,axb", "--axis=1,3",
                  "6x48x3x4:6x32x3x4", "--sdt=bf16", "--ddt=bf16", "6x48x3x4:6x48x3x4")
    cases = case_statuses(res)
    statuses = [s for s, _ in cases]
    # s8 into f32 is a conversion torch.cat does not make: UNIMPLEMENTED; sources that
    # differ along dim 1 cannot join along dim 3 (INVALID_ARGUMENTS, any backend)
    assert statuses.count("PASSED") == 2 + 4 and statuses.count("UNIMPLEMENTED") == 2
    assert statuses.count("INVALID_ARGUMENTS") == 4
    assert all("--impl=torch:" in l for s, l in cases if s == "PASSED")


@pytest.mark.usefixtures("torch")
def test_scales_and_mixed_orders_are_unimplemented_on_torch():
    res = run_cli("--concat", "--summary=no-failures", "--backend=torch",
                  "--attr-scales=msrc0:common:2", "6x4:6x2", "--reset", "--backend=torch",
                  "--stag=abx:axb", "2x16x3x3:2x16x3x3")
    reasons = [l.split(" (", 1)[1] for _, l in case_statuses(res)]
    assert reasons[0].startswith("--attr-scales=msrc0:common:2: torch.cat takes no scales")
    assert reasons[1].startswith("the torch backend runs tensors of one dense memory order")
