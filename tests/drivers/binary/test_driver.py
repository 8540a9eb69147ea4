"""The binary driver as a user sees it: its options, verdicts per case, repro lines that
rerun their case, layouts through the reorder route, the CI batch end to end, and broken
kernels caught."""

from conftest import ROOT, assert_ci_batch_passed, case_statuses, run_cli


def test_bad_tokens_are_one_line_and_a_bad_descriptor_is_a_per_case_verdict():
    res = run_cli("--binary", "--sdt=f32", "8x8:8x8")
    assert res.code == 2 and "--sdt=f32: binary takes two sources' types (DT:DT)" in res.err
    assert len(res.err.strip().splitlines()) == 1
    res = run_cli("--binary", "--alg=pow", "8x8:8x8")
    assert res.code == 2 and "--alg=pow: unknown binary algorithm" in res.err
    res = run_cli("--binary", "--summary=no-failures", "8x3:8x4", "8x3:8x1")
    s = res.summary()
    assert s["invalid_arguments"] == 1 and s["passed"] == 1 and res.code == 1
    assert "dim 1 is 3 in src0 and 4 in src1" in res.out


def test_verdicts_name_what_is_invalid_or_missing():
    res = run_cli("--binary", "--summary=no-failures", "--inplace=true", "5x3x1x9:1x3x2x9",
                  "--attr-post-ops=sum", "5x3x1x9:1x3x2x9")
    assert [s for s, _ in case_statuses(res)] == ["SKIPPED", "SKIPPED"]
    res = run_cli("--binary", "--summary=no-failures", "--sdt=f64:f32", "8x8:8x8",
                  "--reset", "--attr-scales=dst:common:2", "8x8:8x8",
                  "--reset", "--attr-post-ops=dw:k3s1p1", "8x8x4x4:8x8x4x4")
    assert "UNIMPLEMENTED (f64: binary has no f64 implementation)" in res.out
    assert "binary takes a common scale for src (src0) and for src1" in res.out
    assert "takes sum, eltwise, binary and prelu post-ops" in res.out


def test_strides_place_each_tensor_and_exclude_its_tag():
    res = run_cli("--binary", "--summary=no-failures", "--alg=ADD,SELECT",
                  "--strides=:1x4x12x36:,::360x1x72x6@3", "4x3x3x5:4x3x3x5")
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    assert len(lines) == 4 and "--strides=::360x1x72x6@3 " in lines[2]
    res = run_cli("--binary", "--summary=no-failures", "--dtag=axb", "--strides=::1x2x3x4",
                  "4x3x3x5:4x3x3x5")
    assert "dst has both strides and a tag (--stag, --dtag); give one" in res.out


def test_every_repro_line_reruns_its_case():
    res = run_cli("--binary", "--summary=no-failures", "--sdt=f32:s8,bf16:f16", "--ddt=f32",
                  "--stag=axb:any,aBx8b:abx", "--alg=MUL,select",
                  "--attr-post-ops=,sum:0.5+add:f32:per_oc", '2x17x5x7:1x17_n"s"')
    lines = [l for s, l in case_statuses(res) if s == "PASSED"]
    assert len(lines) == 16 and res.code == 0
    for line in lines[::3]:
        repro = line.split("__REPRO: ")[1]
        again = run_cli(*repro.split(), "--summary=no-failures")
        (status, rerun), = case_statuses(again)
        assert status == "PASSED" and rerun.split("__REPRO: ")[1] == repro
    assert "2x17x5x7:1x17x1x1" in lines[0]
    assert any("+reorder " in l for l in lines) and any("+reorder " not in l for l in lines)


def test_the_ci_batch_passes_and_broken_kernels_fail_it():
    batch = f"--batch={ROOT / 'batches' / 'binary_ci'}"
    res = run_cli("-j", "2", "--binary", batch)
    assert_ci_batch_passed(res, 1000)
    # each defect caught by a quarter of the batch: its paths are spread through it
    for fault in ("binary_src1_inner_fixed", "truncate_dst", "src1_channel0",
                  "reorder_padding_garbage"):
        broken = run_cli("-j", "2", "--binary", "--summary=no-failures", "--shard=0/4",
                         batch, env={"BENCHDNN_PY_TEST_FAULT": fault})
        assert broken.code == 1 and broken.summary()["failed"] > 0, fault


def test_a_large_f32_output_streamed_past_the_caches_is_whole():
    """An f32 dst of 8 MiB or more is written by non-temporal stores over its aligned
    lines (rows of 701 elements start off them); a per-channel src1 and a post-op too.
    The driver checks every element of a dst that starts as NaN."""
    res = run_cli("--binary", "--summary=no-failures", "--alg=MUL,ADD",
                  "--attr-post-ops=,relu", "2x3x1001x701:2x3x1x701")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 4, res.out[-2000:]


def test_a_post_op_that_makes_nans_passes_where_both_sides_are_nan():
    """sqrt and log of negative results are NaN in the reference and in dst alike
    (benchdnn's rule 5); a relu chain has no such NaN to allow."""
    res = run_cli("--binary", "--summary=no-failures", "--alg=SUB",
                  "--attr-post-ops=sqrt,log,relu", "2x8x4x4:2x8x4x4")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 3, res.out[-2000:]
