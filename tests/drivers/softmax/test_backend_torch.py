"""The torch backend of the softmax driver: PyTorch's softmax operators through the same
fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_TORCH=1) without torch."""

from __future__ import annotations

import pytest
from conftest import case_statuses, run_cli


@pytest.mark.usefixtures("torch")
def test_forward_and_backward_pass_on_torch_in_every_dense_order_and_in_place():
    res = run_cli("--softmax", "--summary=no-failures", "--backend=torch",
                  "--dir=FWD_D,FWD_I,BWD_D", "--alg=SOFTMAX,LOGSOFTMAX", "--stag=abx,axb",
                  "--inplace=false,true", "--axis=1,3", "2x19x5x5")
    cases = case_statuses(res)
    assert len(cases) == 3 * 2 * 2 * 2 * 2
    assert {s for s, _ in cases} == {"PASSED"}, [l for s, l in cases if s != "PASSED"][:5]
    assert all("--impl=torch:" in line for _, line in cases) and res.code == 0


@pytest.mark.usefixtures("torch")
def test_what_torch_cannot_do_as_the_primitive_does_is_unimplemented():
    res = run_cli("--softmax", "--summary=no-failures", "--backend=torch",
                  "--sdt=f32", "--ddt=bf16", "16x16",
                  "--reset", "--backend=torch", "--attr-scales=src:common:2", "16x16",
                  "--reset", "--backend=torch", "--stag=axb", "--dtag=abx", "2x16x3x3",
                  "--reset", "--backend=torch", "--stag=aBx16b", "2x16x3x3")
    reasons = [l.split(" (", 1)[1] for _, l in case_statuses(res)]
    assert reasons[0].startswith("--sdt=f32 --ddt=bf16: torch computes a softmax in one type")
    assert reasons[1].startswith("--attr-scales=src:common:2: torch's softmax takes no scales")
    assert all(r.startswith("the torch backend runs tensors of one dense memory order")
               for r in reasons[2:])
