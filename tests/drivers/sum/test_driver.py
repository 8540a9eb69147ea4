"""The sum driver as a user sees it: per-source options, verdicts per case, repro lines
that rerun their case, layouts through the reorder route, the CI batch end to end, and
broken kernels caught."""

from conftest import ROOT, assert_ci_batch_passed, case_statuses, run_cli


def test_bad_tokens_are_one_line_and_a_mismatch_is_a_per_case_verdict():
    res = run_cli("--sum", "--sdt=f32", "8x8")
    assert res.code == 2 and "--sdt=f32: a sum takes two sources or more" in res.err
    assert len(res.err.strip().splitlines()) == 1
    res = run_cli("--sum", "--scales=0.5:x", "8x8")
    assert res.code == 2 and "--scales=0.5:x: expected numbers joined by `:`" in res.err
    res = run_cli("--sum", "--summary=no-failures", "--sdt=f32:f32:f32", "--scales=1:2",
                  "8x8", "4x4")
    assert res.summary()["invalid_arguments"] == 2 and res.code == 1
    assert "--scales=1:2: 2 items for 3 sources (--sdt)" in res.out


def test_verdicts_name_what_is_invalid_or_missing():
    res = run_cli("--sum", "--summary=no-failures", "--inplace=true", "--sdt=f32:f32",
                  "--ddt=bf16", "8x8")
    assert "SKIPPED (Invalid case)" in res.out
    res = run_cli("--sum", "--summary=no-failures", "--sdt=f64:f32", "8x8")
    assert "UNIMPLEMENTED (f64: sum has no f64 implementation)" in res.out


def test_every_repro_line_reruns_its_case():
    res = run_cli("--sum", "--summary=no-failures", "--sdt=f32:s8,bf16:f16:u8", "--ddt=f32",
                  "--stag=axb,abx:axb", "--dtag=undef,aBx8b", "--scales=0.25:2,1.5",
                  '2x17x5x7_n"s"')
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    # three sources with two tags or two scales: INVALID_ARGUMENTS, the rest runs
    assert len(lines) == 10 and res.summary()["invalid_arguments"] == 6 and res.code == 1
    for line in lines[::4]:
        repro = line.split("__REPRO: ")[1]
        again = run_cli(*repro.split(), "--summary=no-failures")
        (status, rerun), = case_statuses(again)
        assert status == "PASSED" and rerun.split("__REPRO: ")[1] == repro
    assert any("+reorder " in l for l in lines) and any("+reorder " not in l for l in lines)


def test_the_ci_batch_passes_and_broken_kernels_fail_it():
    batch = f"--batch={ROOT / 'batches' / 'sum_ci'}"
    res = run_cli("-j", "2", "--sum", batch)
    assert_ci_batch_passed(res, 500)
    # each defect caught by a quarter of the batch: its paths are spread through it
    for fault in ("sum_last_dropped", "truncate_dst", "reorder_padding_garbage"):
        broken = run_cli("-j", "2", "--sum", "--summary=no-failures", "--shard=0/4",
                         batch, env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert broken.code == 1 and broken.summary()["failed"] > 0, fault


def test_a_large_f32_output_streamed_past_the_caches_is_whole():
    """An f32 dst of 8 MiB or more is written by non-temporal stores over its aligned
    lines; the driver checks every element of a dst that starts as NaN."""
    res = run_cli("--sum", "--summary=no-failures", "--sdt=f32:f32,bf16:f32",
                  "--scales=0.5:2", "3x1001x701")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 2, res.out[-2000:]
