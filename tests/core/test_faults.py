"""The correctness batches must catch broken kernels. The C core carries deliberate
defects, switched on only through $BENCHDNN_PY_TEST_FAULT; the real CLI is run with each.
(The clean conv_ci and deconv_ci runs are part of .ci/run.)"""

import re

import pytest
from conftest import run_cli

ALL_DIRS = "--dir=FWD_B,FWD_D,FWD_I,BWD_D,BWD_W,BWD_WB"


def failed_lines(res):
    return [l for l in res.lines if ":FAILED (errors:" in l and "Failed cases" not in l]


def test_conv_ci_catches_a_broken_kernel_in_every_path():
    """A quarter of conv_ci (.ci/run runs it whole, clean) must catch the defect in every
    path: the batch's paths are spread through it, not gathered in one part a sample could
    miss. (Shard 0: the cases of .ci/run's threads pass and the sanitizer's samples, which
    take shard 0 of finer splits, are among them.)"""
    res = run_cli("--conv", "--shard=0/4", "--batch=batches/conv_ci",
                  env={"BENCHDNN_PY_TEST_FAULT": "skip_last_ic"})
    assert res.code == 1
    failed = failed_lines(res)
    assert failed and all("+fault:skip_last_ic" in l for l in failed)
    # Every implementation family, ISA variant and direction conv_ci exercises is caught.
    # (gemm_conv's rows are its routes, gemm_conv:<isa>:<route>.)
    for impl in ("gemm_conv:avx2", "gemm_conv:scalar", "dw_conv_fwd:scalar"):
        assert any(re.search(rf"--impl={impl}(:\w+)?\+fault", l) for l in failed), impl
    for direction in ("--dir=FWD_I", "--dir=BWD_D", "--dir=BWD_W", "--dir=BWD_WB"):
        assert any(direction in l for l in failed), direction


@pytest.mark.parametrize("driver,shapes", [("conv", "problems/shapes_basic"),
                                           ("deconv", "problems/shapes_deconv_basic")])
@pytest.mark.parametrize("fault,caught_in", [
    ("right_pad_edge", ("", "--dir=BWD_D", "--dir=BWD_WB")),
    ("skip_last_tap", ("", "--dir=BWD_D", "--dir=BWD_WB")),
    ("stride_trunc", ("--dir=BWD_D",)),      # a backward-data defect only
])
def test_shape_grid_catches_each_defect_in_each_direction(driver, shapes, fault, caught_in):
    res = run_cli(f"--{driver}", ALL_DIRS, f"--batch={shapes}",
                  env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1
    failed = failed_lines(res)
    for direction in caught_in:
        if driver == "deconv" and fault == "stride_trunc":
            # deconv backward data runs the forward kernel; its forward runs backward data.
            direction = ""
        hits = [l for l in failed if (direction in l if direction else "--dir=" not in l)]
        assert hits, f"{fault} not caught in {driver} {direction or 'FWD_B'}"


def test_unknown_fault_name_is_one_line_per_case():
    res = run_cli("--conv", "ic3ih5oc3kh3", env={"BENCHDNN_PY_TEST_FAULT": "melt"})
    assert res.code == 1
    assert "unknown fault; expected one of skip_last_ic, right_pad_edge" in res.err


@pytest.mark.parametrize("fault,dts,attr", [
    # A store that truncates instead of rounding to nearest even. Output scales make int8
    # sums fractional; for bf16 and f16, a sum post-op with an inexact scale does.
    ("truncate_dst", ("u8:s8:u8", "s8:s8:s8", "u8:s8:s32"), "--attr-oscale=common:0.3"),
    ("truncate_dst", ("bf16:bf16:bf16", "f16:f16:f16"), "--attr-post-ops=sum:0.3"),
    # f64 results at f32's precision: the f64 fill's sums pass 2**24 within a few terms.
    ("truncate_dst", ("f64",), "--dir=FWD_B,BWD_D,BWD_WB"),
    # An integer store that wraps instead of saturating: 1000x pushes sums past 8 bits.
    ("wrap_dst", ("u8:s8:u8", "s8:s8:s8", "s8:s8:u8"), "--attr-oscale=common:1000"),
])
def test_data_type_stores_that_do_not_round_or_saturate_are_caught(fault, dts, attr):
    res = run_cli("--conv", f"--dt={','.join(dts)}", attr, "--batch=problems/shapes_basic",
                  env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1
    failed = failed_lines(res)
    for dt in dts:
        spelled = dt if ":" in dt else ":".join([dt] * 3)
        assert any(f"--dt={spelled} " in l for l in failed), f"{fault} not caught with {dt}"


def test_reorder_ci_catches_garbage_in_the_padded_tail():
    res = run_cli("--reorder", "--batch=batches/reorder_ci",
                  env={"BENCHDNN_PY_TEST_FAULT": "reorder_padding_garbage"})
    assert res.code == 1
    failed = [l for l in res.lines if ":FAILED (padded tail not zero" in l]
    assert failed and all("+fault:reorder_padding_garbage" in l for l in failed)
    # every blocked destination with a padded tail, on every ISA variant, and none else
    for needle in ("--dtag=aBx16b", "--dtag=OIhw16i16o", "--dtag=gOIhw16i16o",
                   "--dtag=Goihw16g", "--dtag=nCdhw8c", "--impl=reorder:scalar"):
        assert any(needle in l for l in failed), needle
    assert not [l for l in res.lines if ":FAILED" in l and l not in failed
                and "Failed cases" not in l and l.split(":")[0].isdigit()
                and "padded tail" not in l]


def test_reorder_ci_catches_a_kernel_that_ignores_non_dense_strides():
    res = run_cli("--reorder", "--batch=batches/reorder_ci",
                  env={"BENCHDNN_PY_TEST_FAULT": "reorder_dense_dst"})
    assert res.code == 1
    failed = [l for l in res.lines if l.split(":")[0].isdigit() and ":FAILED" in l]
    # every non-dense destination is caught: padded rows, column major with gaps, and a
    # sub-tensor at an offset
    for strides in (":50x1@13 ", ":1x6x200 ", ":2200x1x64@5 ", ":2100x70x2 ",
                    ":1000x1x200x20@3 ", ":1x20 "):
        assert any(strides in l for l in failed), strides
    # a dense destination is unaffected by the defect
    assert not any("--strides=" not in l and "--dtag=abx" in l and "aBx" not in l
                   and "--stag=abx" in l for l in failed)


def test_one_fault_name_reaches_exactly_the_kernels_that_have_it(monkeypatch):
    """Each kernel family reads the same variable: another family's defect leaves it
    correct (no error), truncate_dst reaches conv and the eltwise/pool stores alike."""
    from benchdnn_py import core
    from benchdnn_py.errors import BenchError
    for name, conv, op in (("pool_ws_ignored", core.Fault.NONE, core.OpFault.POOL_WS_IGNORED),
                           ("skip_last_ic", core.Fault.SKIP_LAST_IC, core.OpFault.NONE),
                           ("truncate_dst", core.Fault.TRUNCATE_DST, core.OpFault.TRUNCATE_DST),
                           ("", core.Fault.NONE, core.OpFault.NONE)):
        monkeypatch.setenv(core.FAULT_ENV, name)
        assert core.active_fault() is conv and core.active_op_fault() is op
    monkeypatch.setenv(core.FAULT_ENV, "nope")
    for read in (core.active_fault, core.active_op_fault):
        with pytest.raises(BenchError, match="unknown fault; expected one of .*elt_tail_dropped"):
            read()


# The repro options of a result line, and the tag or strides of the tensor a direction
# writes (dst forward, diff_src backward data, diff_weights backward weights).
_OUTPUT = {"FWD_B": ("dtag", 2), "FWD_D": ("dtag", 2), "FWD_I": ("dtag", 2),
           "BWD_D": ("stag", 0), "BWD_W": ("wtag", 1), "BWD_WB": ("wtag", 1)}


def _cases(res):
    """(status, reason, {option: value}) of each case line, but for the cases forced onto
    an instruction set the CPU lacks (SKIPPED, nothing run: AVX-512 rows on AVX2)."""
    out = []
    for line in res.lines:
        head, _, repro = line.partition(" __REPRO: ")
        if not repro or not head.split(":")[0].isdigit() or "(Skip-impl option hit)" in head:
            continue
        opts = dict(a[2:].split("=", 1) for a in repro.split() if a.startswith("--")
                    and "=" in a)
        opts["desc"] = repro.split()[-1]
        out.append((head.split(":")[1].split(" ")[0], head, opts))
    return out


def _output_format(opts):
    tag, k = _OUTPUT[opts.get("dir", "FWD_B")]
    strides = opts.get("strides", "::").split(":")[k]
    return opts.get(tag, "any"), strides


def _tail(opts) -> bool:
    """Whether a blocked row's activation output (dst; diff_src backward data) has a
    padded tail: its channels are not a multiple of the block its tags ask for."""
    block = 16 if "16" in opts.get("stag", "") + opts.get("dtag", "") else 8
    which = "ic" if opts.get("dir") == "BWD_D" else "oc"
    return int(re.search(which + r"(\d+)", opts["desc"]).group(1)) % block != 0


@pytest.mark.parametrize("driver", ["conv", "deconv"])
def test_formats_grid_catches_garbage_in_a_blocked_outputs_padded_tail(driver):
    """The defect writes 1 into the padded tail of every reorder's blocked dst; in a
    convolution that is the route's output reorder, or the blocked rows' own output
    (core.conv_fault). Every case whose output is blocked (all have channel tails) must
    fail on exactly that, in every direction; every other case (blocked inputs included:
    the route and the rows read their points only) passes."""
    res = run_cli("-j", "2", f"--{driver}", f"--batch=batches/{driver}_formats",
                  env={"BENCHDNN_PY_TEST_FAULT": "reorder_padding_garbage"})
    assert res.code == 1
    cases = _cases(res)
    seen, seen_native = set(), set()
    for status, head, opts in cases:
        blocked = any(c.isupper() for c in _output_format(opts)[0])
        # the blocked rows write their activations' padded tails themselves (an `any`
        # output resolved to the block too); the defect reaches them as padding_garbage
        native = (opts["impl"].startswith(("gemm_conv_blocked:", "dw_conv_blocked:"))
                  and _OUTPUT[opts.get("dir", "FWD_B")][0] != "wtag")
        if native and _tail(opts):
            assert status == "FAILED" and "padded tail not zero" in head, head
            assert "+fault:padding_garbage" in opts["impl"], head
            seen_native.add(opts.get("dir", "FWD_B"))
        elif native:   # whole blocks: no tail to write
            assert status == "PASSED", head
        elif blocked:
            assert status == "FAILED" and "padded tail not zero" in head, head
            assert "+reorder+fault:reorder_padding_garbage" in opts["impl"], head
            seen.add(opts.get("dir", "FWD_B"))
        else:
            assert status == "PASSED", head
    assert seen == set(_OUTPUT)
    if driver == "conv":   # conv_formats forces the blocked rows in each direction
        assert seen_native == {"FWD_B", "FWD_D", "FWD_I", "BWD_D"}


@pytest.mark.parametrize("driver", ["conv", "deconv"])
def test_formats_grid_catches_a_route_that_ignores_an_outputs_strides(driver):
    """The defect writes every reorder's dst as if dense: a non-dense output (gaps, an
    offset) gets its points misplaced, and must fail. (It also breaks reorders cut into
    several jobs, blocked ones: each job is taken as a whole dense tensor.) A case in
    the kernels' own layouts takes no reorder and must pass."""
    res = run_cli("-j", "2", f"--{driver}", f"--batch=batches/{driver}_formats",
                  env={"BENCHDNN_PY_TEST_FAULT": "reorder_dense_dst"})
    assert res.code == 1
    strided = [c for c in _cases(res) if _output_format(c[2])[1]]
    assert strided and all(status == "FAILED" for status, _, _ in strided)
    untouched = [c for c in _cases(res) if "+reorder" not in c[2]["impl"]]
    assert untouched and all(status == "PASSED" for status, _, _ in untouched)
