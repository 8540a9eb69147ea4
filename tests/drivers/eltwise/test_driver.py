"""The eltwise driver as a user sees it: descriptors, options, skips, repro lines, the CI
batch end to end, perf lines in GB/s, and a broken kernel caught."""

import pytest
from conftest import BEST_ISA, run_cli

from benchdnn_py.common import eltwise
from benchdnn_py.drivers.eltwise.desc import parse_dims
from benchdnn_py.errors import ProblemError


def test_dims_round_trip_and_reject_garbage():
    assert parse_dims('2x16x7x7_n"relu:1"').format() == '2x16x7x7_n"relu:1"'
    assert parse_dims("8x3").with_mb(5).dims == (5, 3)
    for bad in ("2x0x3", "2xx3", "mb2ic3", ""):
        with pytest.raises(ProblemError):
            parse_dims(bad)


@pytest.mark.parametrize("tag,dims,runs", [
    ("nhwc", (2, 20, 5, 5), False),        # dense: run on directly
    ("acdb", (2, 20, 5, 5), False),
    ("nwc", (2, 20, 5), False),
    ("ndhwc", (2, 20, 3, 4, 5), False),
    ("nChw16c", (2, 20, 5, 5), True),      # blocked, channel tail: the reorder route
    ("aBx8b", (2, 13, 5), True),
    ("nCdhw8c", (1, 9, 2, 3, 4), True),
])
def test_every_tag_of_layout_py_runs_and_prints_back(tag, dims, runs):
    desc = "x".join(map(str, dims))
    res = run_cli("--eltwise", f"--impl={BEST_ISA}", f"--tag={tag}", "--dt=f32,bf16,s8",
                  "--dir=FWD_D,BWD_D", "--alg=relu,tanh_dst", "--alpha=0.5", desc)
    assert res.code == 0, res.out[-2000:]
    lines = [l for l in res.lines if "__REPRO" in l]
    assert len(lines) == 12 and all(f"--tag={tag} " in l for l in lines)
    passed = [l for l in lines if ":PASSED" in l]
    assert len(passed) == 9 and all(("+reorder " in l) == runs for l in passed)


def test_tag_errors_are_one_line_naming_the_token():
    res = run_cli("--eltwise", "--tag=nChw3q", "2x3")
    assert res.code == 2 and "--tag=nChw3q: unknown or invalid tag" in res.err
    assert len(res.err.strip().splitlines()) == 1
    res = run_cli("--eltwise", "--tag=nCdhw8c", "2x20x5x5", "2x20x1x5x5")
    assert "--tag=nCdhw8c: tag `nCdhw8c` is for 5 dims, the problem has 4" in res.err
    assert "Traceback" not in res.err
    s = res.summary()
    assert s["invalid_arguments"] == 1 and s["passed"] == 1


def test_garbage_in_a_blocked_outputs_padded_tail_is_caught():
    """The defect writes into the padded tail of the route's output reorder: every
    blocked output with a channel tail fails on exactly that; dense layouts (no route)
    pass."""
    res = run_cli("--eltwise", "--tag=nChw16c,aBx8b,nhwc", "--dir=FWD_D,BWD_D",
                  "--alg=relu", "2x20x5x5", env={"BENCHDNN_PY_TEST_FAULT":
                                                 "reorder_padding_garbage"})
    assert res.code == 1
    cases = set(l for l in res.lines if l.split(":")[0].isdigit())   # failures repeat
    assert len(cases) == 6
    for l in cases:
        if "--tag=nhwc" in l:
            assert ":PASSED" in l, l
        else:
            assert ":FAILED (padded tail not zero" in l, l
            assert "+reorder+fault:reorder_padding_garbage " in l, l


def test_ci_batch_passes():
    res = run_cli("-j", "2", "--eltwise", "--batch=batches/eltwise_ci")
    assert res.code == 0, res.out[-2000:]
    s = res.summary()
    assert s["failed"] == 0 and s["passed"] > 2500 and s["skipped"] > 100
    for impl in ("eltwise:avx2", "eltwise:scalar", "eltwise_bf16:avx2", "eltwise_f16:scalar",
                 "eltwise_int8:scalar"):
        assert any(f"--impl={impl} " in l for l in res.lines), impl
    for dt in ("bf16", "f16"):    # every algorithm both ways (round: f32 only, SKIPPED)
        for alg in eltwise.ALGS:
            for direction in ("", "--dir=BWD_D "):
                assert any(f"{direction}--dt={dt} --alg={alg} " in l for l in res.lines)
    for dt in ("s8", "u8", "s32"):
        assert sum(f"--dt={dt} " in l and ":PASSED" in l for l in res.lines) >= 100


def test_repro_lines_invalid_cases_and_unimplemented_types():
    res = run_cli("--eltwise", "--dir=BWD_D", "--inplace=true", "--alg=relu,relu_dst",
                  "--alpha=0.5", "2x3x4", "--reset", "--dt=f4_e2m1", "--tag=nChw16c,abx",
                  "--alg=eltwise_clip", "--alpha=2", "--beta=1", "2x3x4x5")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert "SKIPPED (Invalid case)" in lines[0] and \
        "--dir=BWD_D --alg=relu --alpha=0.5 --beta=0 --inplace=true 2x3x4" in lines[0]
    assert lines[1].startswith("1:PASSED") and "--alg=relu_dst" in lines[1]
    assert "UNIMPLEMENTED (--dt=f4_e2m1 has no implementation)" in lines[2]
    assert "--dt=f4_e2m1 --tag=nChw16c --alg=clip --alpha=2 --beta=1" in lines[2]
    assert res.code == 1


def test_benchdnn_attributes_parse_and_what_does_not_run_says_so():
    res = run_cli("--eltwise", "--attr-post-ops=,mul:s8:per_oc", "--attr-fpmath=,bf16",
                  "2x3x4", "--attr-post-ops=", "--attr-fpmath=", "--dir=BWD_D",
                  "--attr-dropout=0.5:1:undef", "2x3x4")
    lines = [l.split(" __REPRO: ") for l in res.lines if "__REPRO" in l][:5]
    assert lines[0][0].startswith("0:PASSED")
    # fpmath allows a cheaper computation; the kernels compute strictly, which it allows
    assert lines[1][0].startswith("1:PASSED") and "--attr-fpmath=bf16 2x3x4" in lines[1][1]
    assert lines[2][0].startswith("2:PASSED")
    assert lines[3][1].endswith("--attr-post-ops=mul:s8:per_oc --attr-fpmath=bf16 2x3x4")
    assert ("UNIMPLEMENTED (--attr-dropout=0.5:1:undef: dropout applies to forward "
            "propagation)") in lines[4][0]
    assert res.code == 1


@pytest.mark.parametrize("extra", [
    ["--dt=f32,bf16,f16,f64,s8", "--tag=abx,axb,aBx16b", "--alg=exp,relu,tanh"],
    # dropout before the chain (oneDNN's order): a dropped element leaves linear's beta
    ["--dt=f32,bf16", "--tag=abx,axb", "--alg=logistic", "--attr-post-ops=linear:2:1"],
])
def test_dropout_keeps_what_the_reference_keeps(extra):
    """Masks are compared exactly, values as any result; every p, the mask's three kinds
    of tag, an offset and a negative seed; 16 channels, so aBx16b runs in place."""
    res = run_cli("--eltwise", *extra, "--attr-dropout=0.5:12345678,0.75:-3:undef,"
                  "0.25:843921:any:1238976:true,0:5,1:5", "2x16x5x7", "3x16x4")
    cases = [l for l in res.lines if "__REPRO" in l
             and not ("--dt=s8" in l and "SKIPPED (Case not supported)" in l)]   # s8 exp
    assert cases and all(":PASSED" in l or ":MISTRUSTED" in l for l in cases), \
        [l for l in cases if ":PASSED" not in l][:3]
    assert sum(":PASSED" in l for l in cases) >= len(cases) // 2
    assert res.code == 0


def test_dropout_mask_defect_fails_and_what_cannot_run_says_why():
    res = run_cli("--eltwise", "--alg=exp", "--attr-dropout=0.5:7", "2x16x5x7",
                  env={"BENCHDNN_PY_TEST_FAULT": "elt_dropout_word0"})
    line = next(l for l in res.lines if "__REPRO" in l)
    assert "FAILED (dropout mask differs at" in line and "+fault:elt_dropout_word0" in line
    assert any("][MASK][" in l for l in res.lines) and res.code == 1
    res = run_cli("--eltwise", "--attr-dropout=0.5:7:abx", "--tag=axb,nChw8c", "2x3x5x7")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert "the mask tag abx is not dst's layout (axb)" in lines[0]
    assert "reorder route for --tag=nChw8c" in lines[1]
    res = run_cli("--conv", "--attr-dropout=0.5", "ic16oc16ih7kh3ph1")
    assert "UNIMPLEMENTED (--attr-dropout=0.5: this primitive takes no dropout)" in \
        next(l for l in res.lines if "__REPRO" in l)


def test_repro_line_reruns_the_case():
    first = run_cli("--eltwise", "--tag=axb", "--alg=gelu_tanh", "--mb=3", "2x16x7x7")
    line = next(l for l in first.lines if "__REPRO" in l)
    args = line.split("__REPRO: ")[1].split()
    again = run_cli(*[a for a in args if not a.startswith("--impl=")])
    assert next(l for l in again.lines if "__REPRO" in l).split("(")[0] == line.split("(")[0]
    assert "3x16x7x7" in line


@pytest.mark.parametrize("args,needle", [
    (["--alg=relux", "2x3"], "--alg=relux: unknown eltwise algorithm"),
    (["--alpha=x", "2x3"], "--alpha=x: expected a number"),
    (["--dir=BWD_W", "2x3"], "--dir=BWD_W: unknown value"),
    (["--dt=f33", "2x3"], "--dt=f33: unknown data type"),
])
def test_bad_options_are_one_line_usage_errors(args, needle):
    res = run_cli("--eltwise", *args)
    assert res.code == 2 and needle in res.err and len(res.err.strip().splitlines()) == 1


def test_bad_descriptor_is_invalid_arguments_and_the_batch_goes_on():
    res = run_cli("--eltwise", "2x0x3", "2x3")
    assert "`2x0x3`: every dimension must be positive" in res.err
    assert res.summary()["invalid_arguments"] == 1 and res.summary()["passed"] == 1


def test_perf_mode_reports_bandwidth():
    res = run_cli("--eltwise", "--mode=P", "--fix-times-per-prb=3", "--dir=FWD_D,BWD_D",
                  "2x16x7x7")
    assert "perf,engine,impl,name,prb,Gops,max_ctime,min_time,min_Gbw,avg_time,avg_Gbw" in res.lines
    perf = [l for l in res.lines if l.startswith("perf,cpu,")]
    assert len(perf) == 2 and all(float(l.split(",")[-3]) > 0 for l in perf)


def test_a_kernel_that_drops_elements_is_caught():
    # one element per thread chunk: even the smallest shapes and every ISA show it
    res = run_cli("--eltwise", "--dir=FWD_D,BWD_D", "--alg=relu,tanh_dst,exp",
                  "--impl=avx512,avx2,scalar", "--batch=problems/shapes_eltwise_basic",
                  env={"BENCHDNN_PY_TEST_FAULT": "elt_tail_dropped"})
    assert res.code == 1
    failed = [l for l in res.lines if ":FAILED (errors:" in l]
    assert failed and all("+fault:elt_tail_dropped" in l for l in failed)
    assert any("--dir=BWD_D" in l for l in failed) and any("--dir=" not in l for l in failed)


def test_data_types_end_to_end():
    res = run_cli("--eltwise", "--dt=bf16,f16,s8", "--dir=FWD_D,BWD_D", "--alg=relu,tanh",
                  "--alpha=0.25", "2x16x7x7")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert len(lines) == 12 and res.code == 0

    def line(dt, direction, alg):
        want = (f"--dir={direction} " if direction != "FWD_D" else "") + f"--dt={dt} --alg={alg} "
        return next(l for l in lines if want in l)
    for dt in ("bf16", "f16"):
        for direction in ("FWD_D", "BWD_D"):
            for alg in ("relu", "tanh"):
                got = line(dt, direction, alg)
                assert ":PASSED" in got and f"--impl=eltwise_{dt}:" in got, got
    assert ":PASSED" in line("s8", "FWD_D", "relu") and "--impl=eltwise_int8:" in line(
        "s8", "FWD_D", "relu")
    # integers: forward of the piecewise-linear algorithms only
    for skipped in (line("s8", "BWD_D", "relu"), line("s8", "FWD_D", "tanh")):
        assert ":SKIPPED (Case not supported)" in skipped
    # the repro reruns the case, --dt included
    args = line("f16", "BWD_D", "tanh").split("__REPRO: ")[1].split()
    again = run_cli(*args)
    assert again.code == 0 and "--dir=BWD_D --dt=f16 --alg=tanh" in again.out


@pytest.mark.parametrize("dt", ["bf16:f16", "f32,bf17", "u9"])
def test_bad_dt_is_one_line(dt):
    res = run_cli("--eltwise", f"--dt={dt}", "2x3")
    assert res.code == 2 and "unknown data type" in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_perf_bytes_follow_the_element_size():
    res = run_cli("--eltwise", "--mode=P", "--fix-times-per-prb=2", "--dt=f32,bf16,s8",
                  "--dir=FWD_D,BWD_D", "--alg=relu", "--perf-template=%dt%,%dir%,%ibytes%,%obytes%",
                  "2x16x7x7")
    n = 2 * 16 * 7 * 7
    rows = {tuple(l.split(",")[:2]): tuple(map(int, l.split(",")[2:]))
            for l in res.lines if l.split(",")[0] in ("f32", "bf16", "s8")}
    assert rows[("f32", "FWD_D")] == (4 * n, 4 * n)
    assert rows[("bf16", "FWD_D")] == (2 * n, 2 * n)
    assert rows[("bf16", "BWD_D")] == (4 * n, 2 * n)     # x and diff_dst in, diff_src out
    assert rows[("s8", "FWD_D")] == (n, n)
    assert ("s8", "BWD_D") not in rows                   # skipped: no integer backward


def test_a_truncating_store_is_caught_for_integers():
    """With threshold 0 (integers) the compare sees truncation; for bf16/f16 benchdnn's
    threshold eps(dt) admits it, and test_kernels' bit-exact store tests catch it."""
    res = run_cli("--eltwise", "--dt=s8,u8,s32", "--alg=linear", "--alpha=0.3",
                  "--beta=0.1", "2x16x7x7", env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    failed = {l.split("__REPRO: ")[1] for l in res.lines if ":FAILED (errors:" in l}
    assert res.code == 1 and len(failed) == 3
    assert all("+fault:truncate_dst" in l for l in failed)


@pytest.mark.parametrize("driver,args", [
    ("--eltwise", ["--tag=nChw16c", "--alg=relu", "2x20x7x7"]),
    # (aBx8b runs natively for pooling: a layout no pooling row takes is routed)
    ("--pool", ["--tag=bacd", "--dir=BWD_D", "mb2ic13ih7kh3ph1"]),
])
def test_a_routed_repro_line_with_its_impl_reruns_the_case(driver, args):
    """--impl matches the name the result line prints, `+reorder` included."""
    first = run_cli(driver, "--impl=scalar", *args)
    line = next(l for l in first.lines if "__REPRO" in l)
    assert line.startswith("0:PASSED") and "scalar+reorder " in line
    again = run_cli(*line.split("__REPRO: ")[1].split())
    assert next(l for l in again.lines if "__REPRO" in l).split("(")[0] == line.split("(")[0]


@pytest.mark.parametrize("tag", ["abx", "axb", "aBx16b"])
def test_post_ops_run_on_every_type_and_layout_and_a_wrong_broadcast_fails(tag):
    """Eltwise, binary and prelu entries on the kernel's own memory when channels are
    first or last (others behind the reorder route), every type, in place too; reading
    src1 at channel 0 fails."""
    args = ("--eltwise", "--alg=relu,linear", "--alpha=0.5", "--dt=f32,bf16,s8",
            f"--tag={tag}", "--inplace=false,true", "--attr-post-ops=mul:s8:per_oc,"
            "add:f32:per_oc+tanh,prelu:per_oc+sub:u8:per_tensor", "2x17x5x3", "3x20x4")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 72, res.err[-2000:]
    routed = [line for line in res.lines if "+reorder" in line]
    assert bool(routed) is (tag == "aBx16b")
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "src1_channel0"})
    cases = [line for line in res.lines if "__REPRO" in line]
    broadcast = [line for line in cases if "add:f32:per_oc" in line or "mul:s8:" in line]
    assert len(broadcast) >= len(cases) // 2
    assert all(":FAILED " in line for line in broadcast), res.err[-2000:]


def test_max_and_min_post_ops_turn_a_nan_into_src1_as_oneDNN_does():
    """x > b ? x : b: log and sqrt of negative inputs give NaN, which max and min
    replace by src1's value in the kernels and in the reference alike."""
    res = run_cli("--eltwise", "--alg=log,sqrt",
                  "--attr-post-ops=max:f32,min:f32:per_oc,max:s8:per_tensor", "2x16x5x5")
    assert res.code == 0 and res.summary()["passed"] == 6, res.err[-2000:]


def test_8_bit_floats_run_every_direction_and_a_dropped_tail_fails():
    args = ("--eltwise", "--dt=f8_e5m2,f8_e4m3", "--dir=FWD_D,BWD_D",
            "--alg=gelu_erf,exp,square,logistic_dst", "--tag=abx,axb",
            "--attr-post-ops=,mul:s8:per_oc", "2x16x7x7")
    res = run_cli(*args)
    s = res.summary()
    # post-ops are forward only: backward with one is UNIMPLEMENTED
    assert s["passed"] + s["mistrusted"] == 2 * 4 * 2 * 3 and s["failed"] == 16, res.err
    assert all("eltwise_f8:" in l for l in res.lines if "PASSED" in l and "--impl=" in l)
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "elt_tail_dropped"})
    failed = {l.split("__REPRO: ")[1] for l in res.lines if ":FAILED (errors:" in l}
    assert res.summary()["passed"] == 0 and len(failed) == 2 * 4 * 2 * 3, res.out[-2000:]
    assert all("+fault:elt_tail_dropped" in l for l in failed)
