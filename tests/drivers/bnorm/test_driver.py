"""The bnorm driver as a user sees it: descriptors and options, verdicts per case, repro
lines that rerun their case, the CI batch end to end, layouts through the reorder route,
perf lines in GB/s, and broken kernels caught."""

import pytest
from conftest import BEST_ISA, ROOT, assert_ci_batch_passed, case_statuses, run_cli

BN = f"--impl=bnorm:{BEST_ISA}"


def test_bad_tokens_are_one_line_and_a_bad_problem_does_not_stop_the_run():
    for args, says in ((("--flags=GX", "ic3"), "--flags=GX: unknown flag `X`"),
                       (("--dir=BWD_W", "ic3"), "--dir=BWD_W: unknown value"),
                       (("--dt=f31", "ic3"), "unknown data type `f31`"),
                       (("--check-alg=alg_9", "ic3"), "--check-alg=alg_9")):
        res = run_cli("--bnorm", *args)
        assert res.code == 2 and says in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    res = run_cli("--bnorm", "ic3x5", "mb2ic3ih4")
    assert "`ic3x5`: unrecognized pattern starting from `x5`" in res.out + res.err
    assert res.summary()["passed"] == 1
    res = run_cli("--bnorm", "--tag=aBcd16b", "ic16id3")
    assert "--tag=aBcd16b: tag `aBcd16b` is for 4 dims" in res.out
    assert res.summary()["invalid_arguments"] == 1


def test_verdicts_name_what_is_not_supported():
    cases = {("--dt=u8", "--dir=FWD_I", "--flags=G"): "SKIPPED (Case not supported)",
             ("--dt=s8", "--dir=FWD_I"): "SKIPPED (Case not supported)",
             ("--dt=s8", "--dir=BWD_D", "--flags=G"): "SKIPPED (Case not supported)",
             ("--dt=f64",): "UNIMPLEMENTED (--dt=f64: bnorm has no f64 implementation)",
             ("--dir=BWD_D", "--attr-post-ops=relu"):
                 "UNIMPLEMENTED (--attr-post-ops=relu: post-ops apply to forward",
             ("--dir=FWD_D", "--attr-post-ops=relu:-1"): "SKIPPED (Case not supported)",
             ("--attr-post-ops=sum",): "SKIPPED (Case not supported)"}
    for args, says in cases.items():
        res = run_cli("--bnorm", "--summary=no-failures", *args, "ic3ih4")
        assert says in res.out, (args, res.out)


def test_every_repro_line_reruns_its_case():
    res = run_cli("--bnorm", "--summary=no-failures", "--dir=FWD_D,FWD_I,BWD_DW",
                  "--flags=RHCG,A", "--dt=bf16", "--tag=axb", "--inplace=true", "--mb=3",
                  '--check-alg=alg_0', 'ic5ih3eps1e-3_n"x"')
    lines = [l for _, l in case_statuses(res)]
    assert len(lines) == 6 and res.code == 0, res.out
    assert all("--flags=GCHR" in l or "--flags=A" in l for l in lines)
    for line in lines[::2]:
        repro = line.split("__REPRO: ")[1]
        assert 'mb3ic5ih3eps0.001n"x"' in repro
        again = run_cli(*repro.split(), "--summary=no-failures")
        (status, rerun), = case_statuses(again)
        assert status == "PASSED" and rerun.split("__REPRO: ")[1] == repro


@pytest.mark.parametrize("tag,routed", [("abx", False), ("axb", False), ("acdb", False),
                                        ("bacd", False), ("aBx16b", True),
                                        ("aBx8b", True)])
def test_layouts_run_directly_when_dense_and_through_the_route_otherwise(tag, routed):
    res = run_cli("--bnorm", "--summary=no-failures", f"--tag={tag}",
                  "--dir=FWD_D,BWD_DW", "--flags=CHR", "mb2ic20ih5")
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    assert len(lines) == 2 and res.code == 0, res.out[-2000:]
    assert all(("+reorder " in l) == routed for l in lines)


def test_the_ci_batch_passes_and_broken_kernels_fail_it():
    batch = f"--batch={ROOT / 'batches' / 'bnorm_ci'}"
    res = run_cli("-j", "2", "--bnorm", batch)
    assert_ci_batch_passed(res, 3000)
    # each defect caught by a quarter of the batch: its paths are spread through it
    for fault in ("bnorm_last_channel", "bnorm_sum_short", "truncate_dst",
                  "src1_channel0", "reorder_padding_garbage"):
        broken = run_cli("-j", "2", "--bnorm", "--summary=no-failures", "--shard=0/4",
                         batch, env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert broken.code == 1 and broken.summary()["failed"] > 0, fault


def test_each_defect_fails_the_cases_it_touches():
    """A skipped last channel leaves its statistics and its gradients' sums out: every
    case that reduces fails, global stats without scale or shift reduce nothing and pass.
    A short sum fails training's statistics in either walk."""
    res = run_cli("--bnorm", "--summary=no-failures", "--dir=FWD_D,FWD_I,BWD_DW",
                  "--flags=G,CH", "mb2ic7ih5",
                  env={"BENCHDNN_PY_TEST_FAULT": "bnorm_last_channel"})
    assert [s for s, _ in case_statuses(res)] == ["PASSED", "FAILED"] * 3
    short = run_cli("--bnorm", "--summary=no-failures", "--tag=abx,axb", "mb2ic7ih5",
                    env={"BENCHDNN_PY_TEST_FAULT": "bnorm_sum_short"})
    assert [s for s, _ in case_statuses(short)] == ["FAILED", "FAILED"]
    # a truncated store is within bf16's threshold (benchdnn's, 2^16 of f32's): s8's
    # integers show it
    trunc = run_cli("--bnorm", "--summary=no-failures", "--dir=FWD_I", "--dt=f32,s8",
                    "--flags=GCH", "mb2ic7ih5",
                    env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    assert [s for s, _ in case_statuses(trunc)] == ["PASSED", "FAILED"]


def test_perf_mode_prints_bandwidth_and_the_implementation():
    res = run_cli("--bnorm", "--mode=P", "--max-ms-per-prb=20", BN, "--dir=BWD_DW",
                  "--flags=CH", "--perf-template=%impl%,%prb%,%ibytes%,%obytes%,%-Gbw%",
                  "mb2ic64ih32")
    perf = [l for l in res.lines if l.startswith(f"bnorm:{BEST_ISA},")]
    assert res.code == 0 and len(perf) == 1, res.out
    impl, prb, ibytes, obytes, gbw = perf[0].split(",")
    n = 2 * 64 * 32 * 32
    # backward with reductions reads src and diff_dst twice, writes diff_src
    # (printed with 6 significant digits)
    assert float(ibytes) == pytest.approx(4 * n * 4, rel=1e-5) and float(obytes) == n * 4
    assert float(gbw) > 0
    assert "--dir=BWD_DW --flags=CH ic64ih32" in prb


def test_a_post_op_that_makes_nans_passes_where_both_sides_are_nan():
    """Normalized values are negative about half the time: sqrt, log and a square root
    by pow give NaN in the reference and in dst alike (benchdnn's rule 5)."""
    res = run_cli("--bnorm", "--summary=no-failures", "--attr-post-ops=sqrt,log,pow:1:0.5",
                  "mb2ic8ih4")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 3, res.out[-2000:]
