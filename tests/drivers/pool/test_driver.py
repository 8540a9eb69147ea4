"""The pooling driver as a user sees it: descriptors, repro lines, skips, the CI batch end
to end, GB/s perf lines, and the workspace defects caught."""

import pytest

from conftest import run_cli

from benchdnn_py.drivers.pool.desc import parse_pool
from benchdnn_py.errors import ProblemError


def failed_lines(res):
    return [l for l in res.lines if ":FAILED" in l and "Failed cases" not in l]


def test_descriptor_is_the_conv_grammar_without_g_and_oc():
    d = parse_pool("mb1ic64ih112oh56kh3sh2ph1")
    assert d.format() == "mb1ic64ih112oh56kh3sh2ph1" and d.o == (1, 56, 56)
    assert parse_pool("ic8iw17kw3sw2pw1").format(canonical=True) == \
        "mb2ic8iw17ow9kw3sw2pw1dw0"
    with pytest.raises(ProblemError, match="`oc8` in `ic8oc8ih5kh3`: pooling descriptors"):
        parse_pool("ic8oc8ih5kh3")
    with pytest.raises(ProblemError, match="in `ic8ih5kh3g2`"):
        parse_pool("ic8ih5kh3g2")
    with pytest.raises(ProblemError, match="`ic8ih2kh5`"):
        parse_pool("ic8ih2kh5")


def test_ci_batch_passes_every_alg_direction_and_isa():
    res = run_cli("--pool", "--batch=batches/pool_ci")
    assert res.code == 0, res.out[-2000:]
    s = res.summary()
    assert s["failed"] == 0 and s["passed"] >= 250
    for needle in ("--impl=pool:avx2 ", "--impl=pool:scalar ", "--dir=FWD_I", "--dir=BWD_D",
                   "--alg=avg_np", "--alg=avg_p", "id6", "iw17"):
        assert any(needle in l for l in res.lines), needle


def test_skips_and_unimplemented():
    res = run_cli("--pool", "--alg=avg_np,max", "ic4ih4oh9kh2ph3", "--dt=f64",
                  "ic4ih5kh3", "--dt=f32", "--tag=nhwc", "ic4ih5kh3")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert lines[0].startswith("0:SKIPPED (Invalid case)") and "--alg=avg_np" in lines[0]
    assert lines[1].startswith("1:PASSED")
    assert "UNIMPLEMENTED (--dt=f64: f64 has no implementation)" in lines[2]
    assert "UNIMPLEMENTED (--tag=nhwc" in lines[4]
    assert res.code == 1


def test_long_alg_names_and_usage_errors():
    res = run_cli("--pool", "--alg=pooling_avg_include_padding", "ic4ih5kh3")
    assert "--alg=avg_p ic4ih5oh3kh3ph0" in res.out and res.code == 0
    bad = run_cli("--pool", "--alg=min", "ic4ih5kh3")
    assert bad.code == 2 and "--alg=min: unknown value" in bad.err


def test_perf_mode_reports_bandwidth():
    res = run_cli("--pool", "--mode=P", "--fix-times-per-prb=3", "--dir=FWD_D,BWD_D",
                  "mb2ic16ih28kh3sh2")
    assert "perf,engine,impl,name,prb,Gops,max_ctime,min_time,min_Gbw,avg_time,avg_Gbw" in res.lines
    perf = [l for l in res.lines if l.startswith("perf,cpu,")]
    assert len(perf) == 2 and all(float(l.split(",")[-3]) > 0 for l in perf)


@pytest.mark.parametrize("fault,forward_caught", [("pool_ws_ignored", False),
                                                  ("pool_ws_unwritten", True)])
def test_workspace_defects_are_caught(fault, forward_caught):
    res = run_cli("--pool", "--dir=FWD_D,BWD_D", "--batch=problems/shapes_pool_basic",
                  env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1
    failed = failed_lines(res)
    assert all(f"+fault:{fault}" in l for l in failed)
    # backward max uses the workspace: wrong taps or none at all give wrong gradients
    assert sum("--dir=BWD_D" in l for l in failed) >= 8
    # an unwritten workspace is also seen right after the forward pass (the poison stays)
    fwd = [l for l in failed if "--dir=" not in l]
    assert bool(fwd) == forward_caught
    if forward_caught:
        assert all("(workspace left unwritten)" in l for l in fwd)
