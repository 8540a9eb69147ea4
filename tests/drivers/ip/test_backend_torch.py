"""The ip driver on torch's linear layer (F.linear forward, autograd's matrix products
backward): every direction, ranks, types and sum/eltwise post-ops through the same
checks; what torch cannot express is a named verdict."""

from __future__ import annotations

from conftest import case_statuses, run_cli


def test_directions_types_and_post_ops_pass(torch):
    res = run_cli("--ip", "--backend=torch", "--summary=no-impl",
                  "--dir=FWD_B,FWD_I,BWD_D,BWD_W,BWD_WB", "--dt=f32,bf16",
                  "mb16ic8ih3oc24", "ic64oc48",
                  "--dir=FWD_B", "--attr-post-ops=sum:0.5+relu,linear:2:1+tanh", "ic64oc48")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 5 * 2 * 2 + 2 * 2, res.out[-2000:]
    assert all("--impl=torch:" in line for _, line in case_statuses(res))


def test_what_torch_cannot_express_is_named(torch):
    res = run_cli("--ip", "--backend=torch", "--dt=u8:s8:s8", "ic8oc8",
                  "--dt=f32", "--attr-post-ops=add:f32:per_oc", "ic8oc8",
                  "--attr-post-ops=", "--stag=acdb", "mb2ic8ih2oc8")
    lines = [line for _, line in case_statuses(res)]
    assert "UNIMPLEMENTED (--dt=u8:s8:s8: torch runs a convolution in one data type" in lines[0]
    assert "UNIMPLEMENTED (`add:f32:per_oc`:" in lines[1]
    assert "UNIMPLEMENTED (the torch backend runs plain layouts only" in lines[2]
