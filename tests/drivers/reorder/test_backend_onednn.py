"""The oneDNN backend of the reorder driver: oneDNN's reorder primitive through the same
fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1) without the onednn
extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import pytest
from conftest import assert_all_passed, case_statuses, run_cli


@pytest.mark.usefixtures("onednn_lib")
def test_reorders_pass_on_onednn_with_scales_sum_and_every_layout_kind():
    res = run_cli("--reorder", "--backend=onednn", "--sdt=f32", "--ddt=f32,s8,bf16",
                  "--stag=abcd,acdb,aBcd16b", "--dtag=aBcd8b,cdba", "2x20x5x7")
    assert_all_passed(res, 3 * 3 * 2, "onednn:")
    res = run_cli("--reorder", "--backend=onednn", "--ddt=s8,u8",
                  "--attr-scales=src:common:0.25+dst:common:2",
                  "--attr-post-ops=,sum:0.5", "--strides=96x1@7:,:50x1@13", "5x33")
    assert_all_passed(res, 2 * 2 * 2, "onednn:")
    res = run_cli("--reorder", "--backend=torch", "2x3")
    assert case_statuses(res)[0][1].startswith(
        "0:UNIMPLEMENTED (--backend=torch: runs no reorder (its drivers: conv, deconv, softmax, sum, concat, binary, ip, bnorm))")


@pytest.mark.usefixtures("onednn_lib")
def test_what_the_onednn_backend_does_not_pass_is_unimplemented_not_run_without_it():
    """Zero points, per-point scales, runtime dimensions and packed 4-bit buffers run on
    the native route; the oneDNN backend must not run such a case without them."""
    res = run_cli("--reorder", "--backend=onednn", "--ddt=s8",
                  "--attr-zero-points=src:common:1", "2x19x3", "--attr-zero-points=",
                  "--attr-scales=src:per_dim_1", "2x19x3", "--attr-scales=",
                  "--runtime-dim-mask=1", "2x19x3")
    verdicts = [l.split(" __REPRO")[0] for l in res.lines if "__REPRO" in l][:3]
    assert all("UNIMPLEMENTED" in v and "the oneDNN backend" in v for v in verdicts), verdicts
