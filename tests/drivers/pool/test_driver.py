"""The pooling driver as a user sees it: descriptors, repro lines, skips, the CI batch end
to end, GB/s perf lines, and the workspace defects caught."""

import re

import pytest
from conftest import BEST_ISA, VECTOR_ISAS, run_cli

from benchdnn_py.drivers.pool.desc import parse_pool
from benchdnn_py.errors import ProblemError
from benchdnn_py.reports.results import read


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
    # benchdnn's pooling: a dilation alone does not make its axis present; w then takes
    # all of h's values, its dilation too (inputs/pool/shapes_2d)
    d = parse_pool("mb4ic17_ih6oh7_kh2ph1_dh4dw4")
    assert d.format(canonical=True) == "mb4ic17ih6iw6oh7ow7kh2kw2sh1sw1ph1pw1dh4dw4"


def test_ci_batch_passes_every_alg_direction_and_isa():
    res = run_cli("-j", "2", "--pool", "--batch=batches/pool_ci")
    assert res.code == 0, res.out[-2000:]
    s = res.summary()
    assert s["failed"] == 0 and s["passed"] >= 250
    for needle in ("--impl=pool:avx2 ", "--impl=pool:scalar ", "--dir=FWD_I", "--dir=BWD_D",
                   "--alg=avg_np", "--alg=avg_p", "id6", "iw17", "--impl=pool_bf16:avx2 ",
                   "--impl=pool_f16:scalar ", "--impl=pool_int8:avx2 ",
                   "--dir=BWD_D --dt=bf16 --alg=avg_np", "--dir=BWD_D --dt=f16 ",
                   "--dir=FWD_I --dt=s32 ", "--dt=u8:u8 --alg=avg_p",
                   # the native rows, each forced on every ISA the CPU runs (the batch
                   # forces AVX-512 too: SKIPPED where the CPU lacks it), and the route on
                   # request
                   *(f"--impl={row}:{isa} " for isa in (*VECTOR_ISAS, "scalar")
                     for row in ("pool_nhwc", "pool_blocked", "pool_nhwc_bf16",
                                 "pool_blocked_f16", "pool_nhwc_int8", "pool_blocked_int8")),
                   f"--impl=pool:{BEST_ISA}+reorder --tag=nChw16c", "--tag=nCdhw16c",
                   "--tag=nCw8c", "--tag=nwc", "--tag=ndhwc"):
        assert any(needle in l for l in res.lines), needle


def test_skips_and_unimplemented():
    res = run_cli("--pool", "--alg=avg_np,max", "ic4ih4oh9kh2ph3", "--dt=f64",
                  "ic4ih5kh3", "--dt=f32", "--tag=nhwc", "ic4ih5kh3")
    lines = [l for l in res.lines if "__REPRO" in l]
    assert lines[0].startswith("0:SKIPPED (Invalid case)") and "--alg=avg_np" in lines[0]
    assert lines[1].startswith("1:PASSED")
    assert "UNIMPLEMENTED (--dt=f64: f64 has no implementation)" in lines[2]
    assert lines[4].startswith("4:PASSED") and "--tag=nhwc --alg=avg_np" in lines[4]
    assert res.code == 1


def test_benchdnn_attributes_parse_and_what_does_not_run_says_so():
    res = run_cli("--pool", "--attr-post-ops=,add:f32:per_oc,linear:0.5:-1,sum",
                  "--attr-scratchpad=library", "ic4ih5kh3", "--attr-post-ops=",
                  "--attr-scratchpad=user", "ic4ih5kh3")
    lines = [l.split(" __REPRO: ") for l in res.lines if "__REPRO" in l][:5]
    assert [l[0][:9] for l in lines[:3]] == ["0:PASSED ", "1:PASSED ", "2:PASSED "]
    assert lines[2][1].endswith("--attr-post-ops=linear:0.5:-1 ic4ih5oh3kh3ph0")
    assert lines[3][0].startswith("3:UNIMPLEMENTED (--attr-post-ops=sum: `sum`: a pooling "
                                  "primitive takes eltwise, binary and prelu post-ops)")
    assert lines[4][0].startswith("4:PASSED ") and "--attr-scratchpad=user" in lines[4][1]
    assert res.code == 1


def test_user_scratchpad_size_is_reported(tmp_path):
    """-v5 and the results file give the work memory the kernels take from the driver."""
    out = tmp_path / "r.jsonl"
    res = run_cli("--pool", "-v5", f"--results={out}", "--attr-scratchpad=user",
                  "--dir=FWD_D,BWD_D", "--dt=f32,bf16", "--alg=avg_p", "mb2ic20ih10kh3ph1")
    assert res.code == 0 and res.summary()["passed"] == 4, res.out
    sizes = [int(m.group(1))
             for m in re.finditer(r"scratchpad (\d+) bytes \(user\)", res.out + res.err)]
    assert len(sizes) == 4 and all(n > 0 for n in sizes)
    assert [r["memory"]["scratchpad_bytes"] for r in read(str(out)).cases] == sizes


@pytest.mark.parametrize("tag", ["abx", "axb", "aBx16b"])
def test_post_ops_run_on_every_type_and_layout_and_a_wrong_broadcast_fails(tag):
    """Eltwise, binary and prelu entries on the plain rows (other layouts behind the
    reorder route), every type; reading src1 at channel 0 fails."""
    args = ("--pool", "--dir=FWD_D,FWD_I", "--alg=max,avg_np", "--dt=f32,bf16,s8,u8",
            f"--tag={tag}", "--attr-post-ops=add:f32:per_oc+linear:0.5:-1,"
            "prelu:per_oc,mul:s8:14+lt:u8:per_tensor", "mb2ic20ih7kh3ph1",
            "mb2ic13iw9kw3sw2pw1")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 96, res.err[-2000:]
    routed = [line for line in res.lines if "+reorder" in line]
    assert bool(routed) is (tag != "abx")
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "src1_channel0"})
    cases = [line for line in res.lines if "__REPRO" in line]
    broadcast = [line for line in cases if "add:f32:per_oc" in line or "mul:s8:" in line]
    assert len(broadcast) >= len(cases) // 2
    assert all(":FAILED " in line for line in broadcast), res.err[-2000:]


@pytest.mark.parametrize("tag,desc,row", [
    ("nhwc", "mb2ic20ih7kh3ph1", "pool_nhwc"), ("nChw16c", "mb2ic20ih7kh3ph1", "pool_blocked"),
    ("aBx8b", "mb2ic13iw9kw3sw2pw1", "pool_blocked"), ("nwc", "mb2ic13iw9kw3sw2pw1", "pool_nhwc"),
    ("nCdhw8c", "mb1ic13id5kd3sd2pd1", "pool_blocked"), ("ndhwc", "mb1ic13id5kd3sd2pd1", "pool_nhwc"),
])
def test_channels_last_and_blocked_tags_run_natively(tag, desc, row):
    """Channels last and blocked by 8/16 (channel tails included) run on their own rows,
    without the reorder route, both ways, with the max workspace consumed by backward;
    data types too. -v5 names the row that ran."""
    res = run_cli("--pool", "-v5", f"--tag={tag}", "--dt=f32,bf16,s8", "--dir=FWD_D,BWD_D",
                  "--alg=max,avg_p", desc)
    assert res.code == 0, res.out[-2000:]
    lines = [l for l in res.lines if "__REPRO" in l]
    passed = [l for l in lines if ":PASSED" in l]
    assert len(lines) == 12 and len(passed) == 10       # s8: forward only
    assert all(f"--tag={tag} " in l and f"--impl={row}" in l and "+reorder" not in l
               for l in passed), passed
    assert any(f"--impl={row}_bf16:" in l for l in passed)


@pytest.mark.parametrize("tag,desc", [("nhwc", "mb2ic20ih7kh3ph1"),
                                      ("nCdhw16c", "mb1ic13id5kd3sd2pd1"),
                                      ("bac", "mb2ic13iw9kw3sw2pw1")])
def test_the_reorder_route_stays_for_other_layouts_and_on_request(tag, desc):
    """A layout no row takes (`bac`), or a native one with --impl=+reorder, runs a plain
    row behind the reorder route, and passes."""
    args = ["--impl=+reorder"] if tag != "bac" else []
    res = run_cli("--pool", *args, f"--tag={tag}", "--dt=f32,bf16", "--dir=FWD_D,BWD_D",
                  "--alg=max,avg_np", desc)
    assert res.code == 0, res.out[-2000:]
    passed = [l for l in res.lines if ":PASSED" in l]
    assert len(passed) == 8 and all("+reorder " in l for l in passed), passed


def test_tag_rank_mismatch_is_one_line_and_the_batch_goes_on():
    res = run_cli("--pool", "--tag=nChw16c", "ic4iw5kw3", "ic4ih5kh3")
    assert "--tag=nChw16c: tag `nChw16c` is for 4 dims, the problem has 3" in res.err
    assert "Traceback" not in res.err
    assert res.summary()["invalid_arguments"] == 1 and res.summary()["passed"] == 1


def test_garbage_in_a_blocked_outputs_padded_tail_is_caught():
    """The defect writes into the padded tail of the route's output reorder (dst forward,
    diff_src backward; the route forced, as native rows have no reorder): blocked outputs
    with a channel tail fail on exactly that."""
    res = run_cli("--pool", "--impl=+reorder", "--tag=nChw16c,aBx8b,nhwc", "--dir=FWD_D,BWD_D",
                  "mb2ic20ih7kh3ph1", env={"BENCHDNN_PY_TEST_FAULT":
                                           "reorder_padding_garbage"})
    assert res.code == 1
    cases = set(l for l in res.lines if l.split(":")[0].isdigit())   # failures repeat
    assert len(cases) == 6
    for l in cases:
        assert "+reorder+fault:reorder_padding_garbage " in l, l
        if "--tag=nhwc" in l:
            assert ":PASSED" in l, l
        else:
            assert ":FAILED (padded tail not zero" in l, l


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


@pytest.mark.parametrize("tag,row", [("abx", "pool"), ("axb", "pool_nhwc"),
                                     ("aBx16b", "pool_blocked"), ("aBx8b", "pool_blocked")])
@pytest.mark.parametrize("dt", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("fault,forward_caught", [("pool_ws_ignored", False),
                                                  ("pool_ws_unwritten", True)])
def test_workspace_defects_are_caught(fault, forward_caught, dt, tag, row):
    """On the plain rows and on the native channels-last and blocked ones."""
    res = run_cli("--pool", f"--dt={dt}", "--dir=FWD_D,BWD_D", f"--tag={tag}",
                  "--batch=problems/shapes_pool_basic", env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1
    failed = failed_lines(res)
    prefix = row if dt == "f32" else f"{row}_{dt}"
    assert all(f"+fault:{fault}" in l and f"--impl={prefix}:" in l for l in failed)
    # backward max uses the workspace: wrong taps or none at all give wrong gradients
    assert sum("--dir=BWD_D" in l for l in failed) >= 8
    # an unwritten workspace is also seen right after the forward pass (the poison stays)
    fwd = [l for l in failed if "--dir=" not in l]
    assert bool(fwd) == forward_caught
    if forward_caught:
        assert all("(workspace left unwritten)" in l for l in fwd)


def test_data_types_end_to_end():
    res = run_cli("--pool", "--dt=bf16,f16,u8,s8:s8,bf16:f32", "--dir=FWD_D,BWD_D",
                  "--alg=max,avg_p", "mb2ic4ih10kh3ph1")
    lines = [l.split(":", 1)[1] for l in res.lines if "__REPRO" in l]
    assert len(lines) == 20 and res.code == 0

    def status(dt, direction, alg):
        want = (f"--dir={direction} " if direction != "FWD_D" else "") + f"--dt={dt} "
        want += "" if alg == "max" else f"--alg={alg} "
        return next(l for l in lines if want in l and ("--alg=" in l) == (alg != "max"))
    for dt in ("bf16", "f16"):
        for direction in ("FWD_D", "BWD_D"):
            for alg in ("max", "avg_p"):
                line = status(dt, direction, alg)
                assert line.startswith("PASSED") and f"--impl=pool_{dt}:" in line, line
    # the types print back as given: one name, or SRC:DST
    assert status("s8:s8", "FWD_D", "avg_p").startswith("PASSED")
    assert "--impl=pool_int8:" in status("u8", "FWD_D", "max")
    assert status("u8", "BWD_D", "max").startswith("SKIPPED (Case not supported)")
    # forward may store another type than it reads (test_forward_stores_a_dst_type_...)
    assert status("bf16:f32", "FWD_D", "max").startswith("PASSED")


@pytest.mark.parametrize("dt,needle", [("bf16:f16:f32", "expected SRC or SRC:DST"),
                                       ("bf17", "unknown data type `bf17`"),
                                       ("f32:", "unknown data type ``")])
def test_bad_dt_is_one_line(dt, needle):
    res = run_cli("--pool", f"--dt={dt}", "ic4ih5kh3")
    assert res.code == 2 and needle in res.err and len(res.err.strip().splitlines()) == 1


def test_perf_bytes_follow_the_element_size():
    res = run_cli("--pool", "--mode=P", "--fix-times-per-prb=2", "--dt=f32,f16,u8",
                  "--alg=avg_p", "--perf-template=%sdt%,%ibytes%,%obytes%", "mb2ic4ih10kh2sh2")
    rows = {l.split(",")[0]: tuple(map(int, l.split(",")[1:]))
            for l in res.lines if l.split(",")[0] in ("f32", "f16", "u8")}
    src, dst = 2 * 4 * 10 * 10, 2 * 4 * 5 * 5
    assert rows == {"f32": (4 * src, 4 * dst), "f16": (2 * src, 2 * dst), "u8": (src, dst)}


def test_a_truncating_store_is_caught_for_integer_averages():
    res = run_cli("--pool", "--dt=u8,s8,s32", "--alg=avg_p,avg_np",
                  "--batch=problems/shapes_pool_basic",
                  env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    failed = failed_lines(res)
    assert res.code == 1 and len({l.split("__REPRO: ")[1] for l in failed}) >= 40
    assert all("+fault:truncate_dst" in l for l in failed)


def test_skip_reasons_are_logged_at_verbose_1():
    res = run_cli("--pool", "-v1", "--dt=bf16:f32,u8", "--dir=BWD_D", "ic4ih5kh3")
    text = res.out + res.err
    assert "skipped: src and dst must have the same data type" in text
    assert "skipped: u8 has no backward (gradients are not integers)" in text
    assert res.summary()["skipped"] == 2 and res.code == 0


def test_forward_stores_a_dst_type_of_its_own():
    """benchdnn's s8:u8, f32:s8, u8:f16 ...: the plain rows read one type and store
    another (other tags behind the route), filled with values both types hold; a
    truncating store into an integer dst fails."""
    args = ("--pool", "--dir=FWD_I", "--alg=max,avg_np", "--tag=abx,axb",
            "--dt=s8:u8,u8:s8,f32:s8,f32:u8,f16:s8,s8:f32,u8:f16,bf16:f32",
            "mb2ic20ih10kh3ph1")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 32, res.err[-2000:]
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    failed = {l.split("__REPRO: ")[1] for l in failed_lines(res)}
    integer_avg = {f"--dt={dt}" for dt in ("s8:u8", "u8:s8", "f32:s8", "f32:u8", "f16:s8")}
    assert {next(w for w in l.split() if w.startswith("--dt=")) for l in failed} == integer_avg
    assert all("--alg=avg_np" in l for l in failed) and len(failed) == 10
