"""The ip driver end to end through the real CLI: every direction, type family, rank and
layout; post-op chains; the defects its checks must catch; per-case verdicts and
one-line errors."""

from __future__ import annotations

from conftest import BEST_ISA, case_statuses, run_cli


def test_every_direction_rank_and_layout_passes():
    res = run_cli("--ip", "--summary=no-impl", "--dir=FWD_B,FWD_I,BWD_D,BWD_W,BWD_WB",
                  "--stag=any,axb", "--dtag=any,ba",
                  "mb3ic5oc7", "mb4ic3iw5oc2", "mb2ic3ih4iw2oc6", "mb1ic2id2ih3iw2oc3")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 5 * 2 * 2 * 4, res.out[-2000:]


def test_types_and_weights_layouts():
    res = run_cli("--ip", "--summary=no-impl", "--dir=FWD_B,BWD_D,BWD_WB",
                  "--dt=f32,bf16,f16", "--wtag=any,abcd,acdb,bacd", "mb16ic8ih3oc24",
                  "--dir=FWD_B", "--dt=bf16:bf16:f32,f16:f16:f32", "mb16ic8ih3oc24")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] + s["mistrusted"] == 3 * 3 * 4 + 2 * 4, \
        res.out[-2000:]


def test_int8_with_scales_and_post_ops():
    """benchdnn's test_ip_ci int8 configurations: scales of every argument, sum, eltwise,
    binary per_oc and per_tensor and prelu entries."""
    res = run_cli("--ip", "--summary=no-impl", "--dir=FWD_B,FWD_I",
                  "--dt=u8:s8:f32,s8:s8:s32,u8:s8:u8,s8:s8:bf16",
                  "--attr-scales=,src:common:0.25+wei:per_oc+dst:common:0.25",
                  "--attr-post-ops=,sum:0.5,mul:s8:per_oc+sum:0.25+relu:0.5+add:f32:per_tensor",
                  "ic64oc48", "mb16ic16ih2oc20")
    s = res.summary()
    assert res.code == 0 and s["failed"] == 0 and s["passed"] >= 0.9 * s["tests"], \
        res.out[-2000:]
    assert s["tests"] == 2 * 4 * 2 * 3 * 2


def test_prelu_and_binary_entries_on_every_dst_layout():
    res = run_cli("--ip", "--summary=no-impl", "--dtag=any,ba",
                  "--attr-post-ops=prelu:per_oc,add:f32:per_tensor,max:bf16:per_oc,"
                  "sub:f32:common+linear:2:1", "ic13oc17", "mb16ic3ih2oc5")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 2 * 4 * 2, res.out[-2000:]


def test_weights_written_in_one_pass_past_the_caches_are_all_there():
    """Backward weights of 4 MiB or more from few images are stored past the caches:
    every weight is checked, with whole tiles (2048 x 1000) and with a partial row panel
    (1013 output channels on 12-row tiles)."""
    res = run_cli("--ip", "--dir=BWD_W,BWD_WB", "mb16ic2048oc1000", "mb12ic1040oc1013")
    s = res.summary()
    assert res.code == 0 and s["tests"] == s["passed"] == 4, res.out[-2000:]
    assert f"gemm_conv_nhwc:{BEST_ISA}:taps : 4 " in res.out, res.out[-2000:]


def test_the_gemm_route_defect_fails():
    """A sum post-op that drops its scale, on the one-GEMM route (channels-last rows): every
    case FAILED."""
    res = run_cli("--ip", "--summary=no-impl+no-failures", "--attr-post-ops=sum:0.5",
                  "ic64oc48", "mb16ic64ih3oc48",
                  env={"BENCHDNN_PY_TEST_FAULT": "sum_scale_dropped"})
    cases = case_statuses(res)
    assert len(cases) == 2 and all(st == "FAILED" for st, _ in cases), res.out
    assert all("--impl=gemm_conv_nhwc:" in line for _, line in cases)


def test_the_per_image_route_defects_fail():
    """The plain rows (bf16 here) with a defect that skips the last of K's channels, and
    one that reads every output channel's binary input at channel 0."""
    for fault, post_ops in (("skip_last_ic", ""), ("src1_channel0", "mul:f32:per_oc")):
        res = run_cli("--ip", "--summary=no-impl+no-failures", "--dir=FWD_B,BWD_D",
                      "--dt=f32,bf16", f"--attr-post-ops={post_ops}", "ic64oc48",
                      env={"BENCHDNN_PY_TEST_FAULT": fault})
        cases = case_statuses(res)
        failed = [line for st, line in cases if st == "FAILED"]
        # (post-ops are forward only: backward cases with them are UNIMPLEMENTED)
        assert len(failed) == (4 if not post_ops else 2), res.out


def test_verdicts_and_errors():
    res = run_cli("--ip", "--attr-post-ops=dw:k3s1p1", "ic8oc8", "--attr-post-ops=",
                  "--dt=f16:f16:s8", "ic8oc8", "--dt=f32", "--wtag=ba", "mb2ic4ih2oc4")
    lines = [line for _, line in case_statuses(res)]
    assert "UNIMPLEMENTED (`dw:k3s1p1`: depthwise fusion follows a convolution" in lines[0]
    assert lines[1].startswith("1:SKIPPED")
    assert "INVALID_ARGUMENTS (--wtag=ba: tag `ba` is for 2 dims" in lines[2]
    res = run_cli("--ip", "ic8oc8kh3", "ic8oc8")   # a bad descriptor is its case's verdict
    assert res.code == 1 and res.summary()["passed"] == 1
    assert "0:INVALID_ARGUMENTS (unrecognized pattern in `ic8oc8kh3` starting from `kh3`" \
        in res.out
    res = run_cli("--ip", "--alg=direct", "ic8oc8")
    assert res.code == 2 and "--alg" in res.err


def test_repro_line_reruns_the_case():
    res = run_cli("--ip", "--dir=BWD_WB", "--dt=bf16", "--stag=axb", "mb16ic8ih3oc24n\"fc:1\"")
    line = case_statuses(res)[0][1]
    repro = line.split("__REPRO: ")[1].split()
    assert repro[-1] == 'mb16ic8ih3oc24n"fc:1"' and "--dir=BWD_WB" in repro
    again = run_cli(*repro)
    assert again.code == 0 and again.summary()["passed"] == 1
