"""The reorder driver as a user sees it: the CI batch end to end, repro lines that rerun,
bad inputs as one line each, perf lines in GB/s, and broken kernels caught."""

import numpy as np
import pytest
from conftest import assert_ci_batch_passed, run_cli

from benchdnn_py.drivers.reorder import cfg, ref
from benchdnn_py.drivers.reorder.desc import parse_dims, parse_strides_option
from benchdnn_py.errors import ProblemError, UsageError


def test_fill_table_rounds_and_saturates_per_type():
    assert cfg.table("s8").tolist() == [127, -128, 0, 0, 0, 1, 2, 2, 16, 64]
    assert cfg.table("u8").tolist() == [255, 0, 0, 0, 0, 1, 2, 2, 16, 64]
    assert cfg.table("f16")[:2].tolist() == [2048, -2048]
    assert cfg.fill_src(12, "f32")[10:].tolist() == cfg.table("f32")[:2].tolist()
    # the prior dst runs out of step with src: entry (i*11/10) mod 10
    assert cfg.fill_dst(12, "f32")[[0, 9, 10, 11]].tolist() == \
        cfg.table("f32")[[0, 9, 1, 2]].tolist()


def test_reference_is_the_formula_in_f32_steps():
    src = np.array([1.5, 3.0, 2.0**24], np.float32)
    prior = np.array([1.0, -2.0, 1.0], np.float32)
    out = ref.reorder(src, 0.5, 2.0, 0.25, prior)
    assert out.dtype == np.float32
    # 2^23 + 0.25 is not an f32: the sum step rounds it away before the division
    assert out.tolist() == [(0.75 + 0.25) / 2, (1.5 - 0.5) / 2, 2.0**22]


def test_descriptor_and_strides_grammar():
    assert parse_dims('2x64x3x3_n"r1"').format() == '2x64x3x3_n"r1"'
    with pytest.raises(ProblemError, match="at most 6"):
        parse_dims("1x2x3x4x5x6x7")
    assert parse_strides_option("96x1@5:") == (((96, 1), 5), None)
    for bad in ("3x1", "1:2:3"):
        with pytest.raises(UsageError, match="expected SRC:DST"):
            parse_strides_option(bad)


def test_ci_batch_passes_in_two_workers():
    res = run_cli("-j", "2", "--reorder", "--batch=batches/reorder_ci")
    assert_ci_batch_passed(res, 500)
    for impl in ("reorder:avx2", "reorder:scalar"):
        assert any(f"--impl={impl} " in l for l in res.lines), impl


def test_repro_line_reruns_the_case():
    first = run_cli("--reorder", "--sdt=s8", "--ddt=bf16", "--stag=nhwc", "--dtag=nChw16c",
                    "--attr-scales=src:common:0.5", "--attr-post-ops=sum:2", "2x19x3x3")
    line = next(l for l in first.lines if "__REPRO" in l)
    assert ("--sdt=s8 --ddt=bf16 --stag=nhwc --dtag=nChw16c --attr-scales=src:common:0.5 "
            "--attr-post-ops=sum:2 2x19x3x3") in line and line.startswith("0:PASSED")
    args = line.split("__REPRO: ")[1].split()
    again = run_cli(*[a for a in args if not a.startswith("--impl=")])
    assert next(l for l in again.lines if "__REPRO" in l).split("(")[0] == line.split("(")[0]
    strided = run_cli("--reorder", "--strides=40x1@3:1x20", "7x19")
    assert "--stag=abx --dtag=abx --strides=40x1@3:1x20 7x19" in strided.out
    assert strided.code == 0


@pytest.mark.parametrize("args,needle", [
    (["--stag=nhwcc", "2x3"], "--stag=nhwcc: unknown or invalid tag `nhwcc`"),
    (["--dtag=aBcd", "2x3"], "--dtag=aBcd: unknown or invalid tag `aBcd`"),
    (["--sdt=f65", "2x3"], "--sdt=f65: unknown data type"),
    (["--oflag=s8s8_comp", "2x3"], "`s8s8_comp` needs a mask"),
    (["--cross-engine=cpu2cpu", "2x3"], "--cross-engine=cpu2cpu"),
    (["--strides=3x1", "2x3"], "--strides=3x1: expected SRC:DST"),
    (["--strides=3x0:", "2x3"], "--strides=3x0:: `3x0`: strides must be positive"),
    (["--attr-post-ops=sum:x", "2x3"], "`x` in `sum:x` is not a number"),
])
def test_bad_options_are_one_line_usage_errors(args, needle):
    res = run_cli("--reorder", *args)
    assert res.code == 2 and needle in res.err and len(res.err.strip().splitlines()) == 1


@pytest.mark.parametrize("args,needle", [
    (["--stag=nhwc", "--strides=24x1x8x1:", "2x3x4x1"],
     "--stag=nhwc and --strides give src both a tag and strides"),
    (["--strides=:1x1", "2x3"], "--strides, dst: strides `1x1` are invalid for dims 2x3"),
    (["--strides=4x1x1:", "2x3"], "3 strides for 2 dims"),
    (["--dtag=nchw", "2x3"], "--dtag=nchw: tag `nchw` is for 4 dims, the problem has 2"),
    (["--attr-scales=wei:common:2", "2x3"], "a reorder has src and dst scales"),
    (["--attr-scales=dst:common:0", "2x3"], "a dst scale of 0"),
    (["2x0x3"], "every dimension must be positive"),
])
def test_bad_problems_are_one_line_and_the_batch_goes_on(args, needle):
    res = run_cli("--reorder", *args, "--reset", "2x3")
    errors = [l for l in res.err.splitlines() if l.strip()]
    assert len(errors) == 1 and needle in errors[0], res.err
    s = res.summary()
    assert s["invalid_arguments"] == 1 and s["passed"] == 1 and res.code == 1


def test_what_is_not_implemented_says_so():
    res = run_cli("--reorder", "--attr-scales=src:per_dim_1:e8m0", "2x3", "--attr-scales=",
                  "--attr-zero-points=dst:per_dim_1", "2x3", "--attr-zero-points=",
                  "--runtime-dim-mask=3", "--stag=aBx16b", "--dtag=aBx24b", "2x48",
                  "--runtime-dim-mask=0", "--reset", "--attr-post-ops=relu", "2x3")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert ("UNIMPLEMENTED (--attr-scales=src:per_dim_1:e8m0: scales are f32, bf16, f16 "
            "here)") in lines[0]
    assert "UNIMPLEMENTED (--attr-zero-points=dst:per_dim_1: one dst zero point" in lines[1]
    assert "UNIMPLEMENTED (blocks of dim 1 do not nest" in lines[2]
    assert "UNIMPLEMENTED (--attr-post-ops=relu: only sum[:SCALE])" in lines[3]


def test_a_mask_past_the_tensor_is_an_invalid_problem():
    res = run_cli("--reorder", "--attr-scales=src:per_dim_3", "2x3", "--reset", "2x3")
    assert "mask 8 names a dimension past the tensor's 2" in res.err
    assert res.summary()["invalid_arguments"] == 1 and res.summary()["passed"] == 1


def test_benchdnn_options_the_kernels_lack_are_per_case_verdicts():
    res = run_cli("--reorder", "--sdt=f8_e5m2,f32", "--attr-zero-points=,src:common:-1",
                  "2x3", "--attr-zero-points=", "--sdt=f32", "--oflag=s8s8_comp:1",
                  "--runtime-dim-mask=0,3", "2x3", "--oflag=", "--runtime-dim-mask=3", "2x3")
    lines = [l.split(" __REPRO: ") for l in res.lines if "__REPRO" in l]
    lines = lines[:7]   # (the failures summary repeats them)
    verdicts = [status for status, _ in lines]
    # compensation into an f32 dst: benchdnn's conditions (s8 dst) unmet, SKIPPED
    assert [v.split(" ")[0] for v in verdicts] == [
        "0:PASSED", "1:PASSED", "2:PASSED", "3:PASSED", "4:SKIPPED", "5:SKIPPED",
        "6:PASSED"]
    assert lines[1][1].endswith("--sdt=f8_e5m2 --ddt=f32 --stag=abx --dtag=abx "
                                "--attr-zero-points=src:common:-1 2x3")
    assert verdicts[4].startswith("4:SKIPPED (Case not supported)")
    assert lines[5][1].endswith("--oflag=s8s8_comp:1 --runtime-dim-mask=3 2x3")
    assert res.summary()["skipped"] == 2 and res.code == 0


def test_grouped_and_typed_scales_and_zero_points_run_and_their_limits_are_named():
    """Weights decompression: src scales and zero points of their own types, in groups
    over the last two dimensions (tests/drivers/reorder/test_cfg.py holds the grouping to
    benchdnn's index); a group that does not divide its dimension is an invalid problem,
    groups on dst and zero points outside their type are per-case verdicts."""
    res = run_cli("--reorder", "--sdt=s4,u8", "--ddt=f32,bf16",
                  "--attr-scales=src:per_tensor:f16:1x16,src:common:0.3:bf16",
                  "--attr-zero-points=src:per_tensor:u4:8x1", "8x32", "--reset",
                  "--attr-zero-points=src:per_tensor:s4:3x1", "8x32",
                  "--attr-zero-points=", "--attr-scales=dst:per_tensor:f32:2x2", "8x32",
                  "--attr-scales=", "--attr-zero-points=src:common:-1:u8", "8x32")
    lines = [l.split(" __REPRO: ")[0] for l in res.lines if "__REPRO" in l][:11]
    assert [l.split(" ")[0].split(":")[1] for l in lines] == ["PASSED"] * 8 + [
        "INVALID_ARGUMENTS", "UNIMPLEMENTED", "UNIMPLEMENTED"], lines
    assert "groups of 3 do not divide dimension 0 (8)" in lines[8]
    assert "groups on src only" in lines[9]
    assert "-1 is outside u8's range [0, 255]" in lines[10]
    assert res.summary()["invalid_arguments"] == 1


@pytest.mark.parametrize("args", [
    ["--sdt=f32", "--ddt=s8", "--attr-zero-points=src:per_dim_1+dst:common:3",
     "--attr-scales=src:per_dim_01+dst:per_dim_1", "--attr-post-ops=sum:0.5",
     "--dtag=aBx16b"],
    ["--sdt=f32", "--ddt=f8_e4m3,f8_e5m2,s4,u4,f4_e2m1", "--dtag=acdb,aBx16b"],
    ["--sdt=f8_e4m3,f8_e5m2,s4,u4,f4_e2m1", "--ddt=f32", "--stag=acdb,aBx8b"],
    ["--sdt=f32", "--ddt=u8", "--runtime-dim-mask=15", "--dtag=acdb,aBx16b",
     "--attr-zero-points=src:common:-1+dst:common:2", "--attr-scales=dst:per_dim_1"],
])
def test_the_generic_route_runs_zero_points_narrow_types_and_runtime_dims(args):
    res = run_cli("--reorder", "-v1", *args, "2x19x3x5")
    s = res.summary()
    assert res.code == 0 and s["passed"] == s["tests"] > 0, res.out
    impls = [l for l in res.lines if l.startswith("impl: ") or "reorder_generic:scalar" in l]
    assert impls and all("reorder_generic:scalar" in l for l in impls), impls


@pytest.mark.parametrize("fault,args,needle", [
    ("reorder_padding_garbage", ["--ddt=u4", "--dtag=aBx16b"], "padded tail not zero"),
    ("reorder_dense_dst", ["--ddt=f8_e5m2", "--attr-zero-points=dst:common:1",
                           "--strides=:600x30x10x2"], "outside the tensor"),
])
def test_the_generic_route_is_held_to_the_memory_checks(fault, args, needle):
    res = run_cli("--reorder", *args, "2x19x3x5", env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1 and res.summary()["failed"] == 1
    assert needle in res.out, res.out


def test_any_is_the_plain_layout_and_list_mode_lists():
    res = run_cli("--reorder", "--dtag=any", "-v5", "2x3x4")
    assert res.code == 0 and "src abx=abc (2, 3, 4) dst any=abc (2, 3, 4)" in res.out
    listed = run_cli("--reorder", "--mode=L", "--dtag=nChw16c,OIhw16i16o", "2x3x4x4")
    assert listed.summary()["listed"] == 2


def test_perf_mode_reports_bandwidth():
    res = run_cli("--reorder", "--mode=P", "--fix-times-per-prb=3", "--dtag=abx,aBx16b",
                  "--attr-post-ops=,sum", "2x16x7x7")
    assert "perf,engine,impl,name,prb,Gops,max_ctime,min_time,min_Gbw,avg_time,avg_Gbw" \
        in res.lines
    perf = [l for l in res.lines if l.startswith("perf,cpu,reorder:")]
    assert len(perf) == 4 and all(float(l.split(",")[-3]) > 0 for l in perf)
    csv = run_cli("--reorder", "--mode=P", "--fix-times-per-prb=2", "--perf-template=csv",
                  "--sdt=u8", "--dtag=axb", "2x16x7x7")
    assert any(",u8,f32,abx,axb," in l for l in csv.lines)


def test_compensation_follows_the_dst_data_and_is_checked():
    """--oflag: the s32 sums an int8 convolution subtracts, over the dims outside the
    mask, after the s8 data (s8s8 first); a kernel off by one on one value FAILS."""
    args = ("--reorder", "--sdt=f32,s8,bf16", "--ddt=s8", "--stag=abx", "--dtag=xba,ABx4b16a4b",
            "--oflag=zp_comp:1,s8s8_comp:1,s8s8_comp:3+zp_comp:3",
            "--attr-scales=,src:common:2", "2x16x3x4", "1x17x5x3")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 3 * 2 * 3 * 2 * 2, res.out[-2000:]
    skipped = run_cli("--reorder", "--ddt=s8", "--oflag=zp_comp:1",
                      "--attr-scales=src:per_dim_1", "2x16", "--attr-scales=", "--ddt=u8",
                      "2x16")
    assert skipped.summary()["skipped"] == 2
    bad = run_cli("--reorder", "--ddt=s8", "--oflag=zp_comp:1+s8s8_comp:2", "2x16",
                  "--oflag=zp_comp:4", "2x16")
    assert bad.summary()["invalid_arguments"] == 2
    assert "both compensations take one mask" in bad.err and "mask 4 names" in bad.err


def test_compensation_reference_sums_outside_the_mask():
    dst = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    assert cfg.comp_sums(dst, 0b001).tolist() == [dst[0].sum(), dst[1].sum()]
    assert cfg.comp_sums(dst, 0b011).tolist() == dst.sum(axis=2).ravel().tolist()
    assert cfg.comp_count((2, 3, 4), 0b101) == 8
