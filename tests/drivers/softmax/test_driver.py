"""The softmax driver as a user sees it: descriptors and options, verdicts per case,
repro lines that rerun their case, the CI batch end to end, layouts through the reorder
route, perf lines in GB/s, and broken kernels caught."""

import pytest
from conftest import BEST_ISA, ROOT, assert_ci_batch_passed, case_statuses, run_cli

SMX = f"--impl=softmax:{BEST_ISA}"


def test_bad_tokens_are_one_line_and_a_bad_problem_does_not_stop_the_run():
    res = run_cli("--softmax", "--alg=SOFTMAXX", "8x8")
    assert res.code == 2 and "--alg=SOFTMAXX" in res.err
    assert len(res.err.strip().splitlines()) == 1
    res = run_cli("--softmax", "--sdt=f31", "8x8")
    assert res.code == 2 and "unknown data type `f31`" in res.err
    # an axis the problem lacks and a tag of another rank are per-case verdicts
    res = run_cli("--softmax", "--axis=3", "8x8", "2x3x4x5")
    s = res.summary()
    assert s["invalid_arguments"] == 1 and s["passed"] == 1 and res.code == 1
    assert "--axis=3: the problem has 2 dims (axis 0 to 1)" in res.out
    res = run_cli("--softmax", "--stag=nCdhw8c", "2x20x5x5")
    assert "--stag=nCdhw8c: tag `nCdhw8c` is for 5 dims" in res.out
    assert res.summary()["invalid_arguments"] == 1


def test_verdicts_name_what_is_invalid_or_missing():
    res = run_cli("--softmax", "--summary=no-failures", "--inplace=true", "--sdt=f32",
                  "--ddt=bf16", "8x8")
    assert case_statuses(res) and case_statuses(res)[0][0] == "SKIPPED"
    assert "Invalid case" in res.out
    res = run_cli("--softmax", "--summary=no-failures", "--dir=BWD_D", "--sdt=s8",
                  "--ddt=s8", "8x8")
    assert "SKIPPED (Case not supported)" in res.out
    res = run_cli("--softmax", "--summary=no-failures", "--attr-scales=src:per_oc", "8x8")
    assert "UNIMPLEMENTED (--attr-scales=src:per_oc: `src:per_oc`: softmax takes a common " \
        "scale for src and for dst)" in res.out
    res = run_cli("--softmax", "--summary=no-failures", "--attr-post-ops=sum", "8x8")
    assert "SKIPPED (Case not supported)" in res.out
    res = run_cli("--softmax", "--summary=no-failures", "--sdt=s4", "8x8")
    assert "UNIMPLEMENTED (--sdt=s4: softmax has no s4 implementation)" in res.out


def test_every_repro_line_reruns_its_case():
    res = run_cli("--softmax", "--summary=no-failures", "--dir=FWD_I,BWD_D",
                  "--alg=SOFTMAX,LOGSOFTMAX", "--sdt=bf16", "--ddt=f32", "--stag=axb",
                  "--axis=0,2", "--mb=3", '2x5x7_n"x"')
    lines = [l for _, l in case_statuses(res)]
    assert len(lines) == 8 and res.code == 0
    for line in lines[::3]:
        repro = line.split("__REPRO: ")[1]
        again = run_cli(*repro.split(), "--summary=no-failures")
        (status, rerun), = case_statuses(again)
        assert status == "PASSED" and rerun.split("__REPRO: ")[1] == repro


@pytest.mark.parametrize("stag,dtag,routed", [
    ("abx", "any", False), ("axb", "any", False), ("acdb", "any", False),
    ("nChw16c", "any", True), ("abx", "nChw16c", True), ("abx", "axb", True),
])
def test_layouts_run_directly_when_dense_and_through_the_route_otherwise(stag, dtag, routed):
    res = run_cli("--softmax", "--summary=no-failures", f"--stag={stag}", f"--dtag={dtag}",
                  "--dir=FWD_D,BWD_D", "--axis=1,3", "2x20x5x5")
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    assert len(lines) == 4 and res.code == 0, res.out[-2000:]
    # backward's dst takes --dtag's layout unless it is any: routed with it
    fwd = [l for l in lines if "--dir=BWD_D" not in l]
    assert all(("+reorder " in l) == routed for l in fwd)


def test_the_ci_batch_passes_and_broken_kernels_fail_it():
    batch = f"--batch={ROOT / 'batches' / 'softmax_ci'}"
    res = run_cli("-j", "2", "--softmax", batch)
    assert_ci_batch_passed(res, 1500)
    # each defect caught by a quarter of the batch: its paths are spread through it
    for fault in ("smx_no_max", "smx_sum_short", "truncate_dst", "src1_channel0",
                  "reorder_padding_garbage", "elt_dropout_word0"):
        broken = run_cli("-j", "2", "--softmax", "--summary=no-failures", "--shard=0/4",
                         batch, env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert broken.code == 1 and broken.summary()["failed"] > 0, fault


def test_each_defect_fails_exactly_the_cases_it_touches():
    """The maximum left out only matters where it overflows (top values of 88 and more,
    forward); the short sum changes every line of more than one element; truncation
    changes a narrow output type only."""
    no_max = run_cli("--softmax", "--summary=no-failures", "--dir=FWD_D,BWD_D", "16x16",
                     env={"BENCHDNN_PY_TEST_FAULT": "smx_no_max"})
    assert [s for s, _ in case_statuses(no_max)] == ["FAILED", "PASSED"]
    trunc = run_cli("--softmax", "--summary=no-failures", "--ddt=f32,bf16", "255x10",
                    env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    assert [s for s, _ in case_statuses(trunc)] == ["PASSED", "FAILED"]


def test_a_streamed_output_takes_the_scales_and_post_ops_and_a_defect_fails_it():
    """An f32 dst of 8 MiB or more is streamed past the caches after the attributes are
    applied in the kept exponentials; the check covers them, and the short sum (which
    leaves the kept path) still fails."""
    args = ("--softmax", "--summary=no-failures", "--alg=SOFTMAX,LOGSOFTMAX",
            "--attr-scales=src:common:2+dst:common:0.5",
            "--attr-post-ops=add:f32:per_oc+relu", "2100x1001")
    assert [s for s, _ in case_statuses(run_cli(*args))] == ["PASSED"] * 2
    short = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "smx_sum_short"})
    assert [s for s, _ in case_statuses(short)] == ["FAILED"] * 2


def test_perf_mode_prints_bandwidth_and_the_implementation():
    res = run_cli("--softmax", "--mode=P", "--max-ms-per-prb=20", SMX, "--alg=LOGSOFTMAX",
                  "64x1000")
    perf = [l for l in res.lines if l.startswith("perf,cpu,")]
    assert res.code == 0 and len(perf) == 1
    assert f"softmax:{BEST_ISA}" in perf[0] and "--alg=LOGSOFTMAX 64x1000" in perf[0]
