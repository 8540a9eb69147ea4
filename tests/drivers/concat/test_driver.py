"""The concat driver as a user sees it: descriptors, per-source tags and scales, verdicts
per case, repro lines that rerun their case, the CI batch end to end, and broken kernels
caught."""

from conftest import ROOT, assert_ci_batch_passed, case_statuses, run_cli


def test_bad_descriptors_and_axes_are_per_case_verdicts_naming_the_token():
    res = run_cli("--concat", "--summary=no-failures", "--axis=1", "2x16x3x4",
                  "2x16x3x4:2x8x3", "2x16x3x4:2x8x5x4", "2x16x3x4:2x8x3x4")
    statuses = [s for s, _ in case_statuses(res)]
    assert statuses == ["INVALID_ARGUMENTS"] * 3 + ["PASSED"] and res.code == 1
    assert "`2x16x3x4`: expected two tensors' dims or more, joined by `:`" in res.out
    assert "`2x16x3x4:2x8x3`: the sources differ in rank" in res.out
    assert "the sources differ along dim 2, not only along --axis=1" in res.out
    res = run_cli("--concat", "--stag=abx:axb", "2x16x3x4:2x8x3x4:2x1x3x4")
    assert "--stag=abx:axb: 2 tags for 3 sources" in res.out
    res = run_cli("--concat", "--sdt=f3", "2x3:2x3")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1


def test_scales_name_their_sources_and_others_are_unimplemented():
    res = run_cli("--concat", "--summary=no-failures",
                  "--attr-scales=msrc1:common:2.5,msrc2:common:2,src:common:2",
                  "2x16x3x4:2x8x3x4")
    statuses = [s for s, _ in case_statuses(res)]
    assert statuses == ["PASSED", "UNIMPLEMENTED", "UNIMPLEMENTED"]
    assert "concat takes a common scale for each of its sources (msrc0 to msrc1)" in res.out


def test_every_repro_line_reruns_its_case():
    res = run_cli("--concat", "--summary=no-failures", "--sdt=bf16", "--ddt=f32,s8",
                  "--stag=axb,abx:aBx16b", "--dtag=undef,abx", "--axis=1", "--mb=3",
                  '2x16x3x4:2x8x3x4_n"c"')
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    assert len(lines) == 8 and res.code == 0
    for line in lines[::3]:
        repro = line.split("__REPRO: ")[1]
        again = run_cli(*repro.split(), "--summary=no-failures")
        (status, rerun), = case_statuses(again)
        assert status == "PASSED" and rerun.split("__REPRO: ")[1] == repro
    assert any("+reorder " in l for l in lines) and any("+reorder " not in l for l in lines)


def test_the_ci_batch_passes_and_broken_kernels_fail_it():
    batch = f"--batch={ROOT / 'batches' / 'concat_ci'}"
    res = run_cli("-j", "2", "--concat", batch)
    assert_ci_batch_passed(res, 200)
    # each defect caught by a quarter of the batch: its paths are spread through it
    for fault in ("concat_last_shifted", "truncate_dst", "reorder_padding_garbage"):
        broken = run_cli("-j", "2", "--concat", "--summary=no-failures", "--shard=0/4",
                         batch, env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert broken.code == 1 and broken.summary()["failed"] > 0, fault


def test_a_large_f32_output_streamed_past_the_caches_is_whole():
    """An f32 dst of 8 MiB or more is written by non-temporal stores over its aligned
    lines (runs of 350 and 351 elements start off them); the driver checks every element
    of a dst that starts as NaN."""
    res = run_cli("--concat", "--summary=no-failures", "--axis=3", "--sdt=f32,bf16",
                  "2x3x1001x350:2x3x1001x351")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 2, res.out[-2000:]
