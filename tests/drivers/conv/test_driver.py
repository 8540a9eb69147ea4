"""The conv driver's case pieces: direction routing, fills, the spec's statement that
forward training and forward inference compute the same thing, and --check=sampled
through the case flow (shared with deconv)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import cli_threads, run_cli

from benchdnn_py import core
from benchdnn_py.common.attr import PostOps
from benchdnn_py.common.direction import Dir
from benchdnn_py.drivers.base import RunContext
from benchdnn_py.drivers.conv import cfg, driver
from benchdnn_py.drivers.conv import prim as conv_prim
from benchdnn_py.drivers.conv import problem as conv_problem
from benchdnn_py.drivers.deconv import driver as deconv_driver
from benchdnn_py.engine import case, harness
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.reports.results import read
from benchdnn_py.status import Status


def _outputs_of(text: str, direction: Dir) -> dict[str, np.ndarray]:
    prb = conv_problem.make_problem({"dir": direction, "dt": ("f32",) * 3, "mb": 0,
                               "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings())
    shape = prb.shape
    t = driver.tensors(prb.desc, shape)
    res = driver.CaseResult(driver.Status.UNTESTED)
    prim = conv_prim.create(shape, conv_prim.KERNEL_DIR[direction], direction.with_bias,
                         ImplFilter(), res)
    assert prim is not None
    with prim:
        inputs = driver.fill_inputs(prb, t, perf=False)
        outs = driver.outputs(prb, t)
        packed = prim.pack_weights(inputs["wei"]) if "wei" in inputs else None
        conv_prim.bind(prim, direction, inputs, packed, outs)()
    return {**{k: v.array.copy() for k, v in outs.items()}, **{"in_" + k: v for k, v in inputs.items()}}


@pytest.mark.parametrize("text", ["mb2ic8ih9oc12kh3ph1", "g4ic8id5oc8kd3sd2pd1",
                                  "ic16iw30oc16kw3pw3dw2", "ic32ih12oc32kh3ph1_dw"])
def test_forward_inference_equals_forward_training(text):
    training = _outputs_of(text, Dir.FWD_D)
    inference = _outputs_of(text, Dir.FWD_I)
    assert np.array_equal(training["dst"], inference["dst"])
    with_bias = _outputs_of(text, Dir.FWD_B)
    bias = with_bias["in_bia"].reshape(1, -1, 1, 1, 1)
    shape = conv_problem.make_problem({"dir": Dir.FWD_B, "dt": ("f32",) * 3, "mb": 0,
                                 "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings()).shape
    assert np.array_equal(with_bias["dst"].reshape(shape.dst_shape) - bias,
                          training["dst"].reshape(shape.dst_shape))


def _inputs(text: str, direction: Dir) -> dict[str, np.ndarray]:
    prb = conv_problem.make_problem({"dir": direction, "dt": ("f32",) * 3, "mb": 0,
                               "impl_filter": ImplFilter(), "attr-post-ops": PostOps(), "backend": "native"}, text, GlobalSettings())
    return driver.fill_inputs(prb, driver.tensors(prb.desc, prb.shape), perf=False)


def _zero_share(a: np.ndarray) -> float:
    return float(np.mean(a == 0))


def test_the_long_chain_operand_is_sparse_per_direction():
    # forward: 4096 * 9 = 36864 src x wei products per output > 16384 -> src ~44% dense
    fwd = _inputs("mb1ic4096ih3oc2kh3ph1", Dir.FWD_B)
    assert set(fwd) == {"src", "wei", "bia"}
    assert _zero_share(fwd["src"]) > 0.5 > _zero_share(fwd["wei"])
    # backward data: 8192 * 9 = 73728 diff_dst x wei products per point
    #   > 2**24 / (8 * 32) = 65536 -> diff_dst sparse
    bwd_d = _inputs("mb1ic2ih3oc8192kh3ph1", Dir.BWD_D)
    assert set(bwd_d) == {"dst", "wei"}
    assert _zero_share(bwd_d["dst"]) > 0.1 > _zero_share(bwd_d["wei"])
    # backward weights: mb * oh * ow = 2 * 200 * 200 = 80000 diff_dst x src products per
    # weight > 65536 -> diff_dst sparse
    bwd_w = _inputs("mb2ic1ih200oc1kh1", Dir.BWD_WB)
    assert set(bwd_w) == {"src", "dst"}
    assert _zero_share(bwd_w["dst"]) > 0.1 > _zero_share(bwd_w["src"])
    for data in (fwd, bwd_d, bwd_w):
        for a in data.values():
            assert np.array_equal(a, np.round(a)) and a.ravel()[0] > 0


def test_density_keeps_partial_sums_exact():
    def density(dt, n_acc, out=None, pair=("src", "wei")):
        dts = tuple(dt.split(":"))
        return cfg.fill_ranges(dts, "f32", out or dts[2], n_acc, pair).density
    assert density("f32:f32:f32", 100) == 1.0
    assert density("f32:f32:f32", 32768) == pytest.approx(16384 / 32768)
    # diff_dst [-8, 8] x weights [-32, 32]: 2**24 / 256 = 65536 terms are safe.
    assert density("f32:f32:f32", 131072, pair=("dst", "wei")) == pytest.approx(0.5)


# Reference 6.3's worked values: the safe chain length per SRC:WEI:DST (before / n_acc).
@pytest.mark.parametrize("dt,safe", [
    ("bf16:bf16:bf16", 16), ("f16:f16:f16", 256), ("bf16:bf16:f32", 1048576),
    ("u8:s8:u8", 3 * 8), ("u8:s8:s8", 3 * 4), ("s8:s8:s8", 3 * 16), ("u8:s8:f32", 3 * 26214),
    ("u8:s8:s32", 3355443), ("s8:s8:f32", 3 * 2097152)])
def test_density_per_data_type_matches_reference(dt, safe):
    n_acc = 10**8
    r = cfg.fill_ranges(tuple(dt.split(":")), "f32", dt.split(":")[2], n_acc, ("src", "wei"))
    assert r.density == pytest.approx(safe / n_acc)


def test_int8_fill_adjustments():
    r = cfg.fill_ranges(("u8", "s8", "s32"), "s32", "s32", 10, ("src", "wei"))
    assert r.src == (0, 160) and r.wei == (-4, 4) and r.wei_mult == 1
    r = cfg.fill_ranges(("s8", "s8", "s8"), "f32", "s8", 10, ("src", "wei"))
    assert r.wei == (-2, 2) and r.wei_mult == 2


def test_zero_trust_numbers():
    assert cfg.dst_zero_trust_percent(False) == pytest.approx(70)
    assert cfg.dst_zero_trust_percent(True) == pytest.approx(85)
    assert cfg.src_zero_trust_percent((1, 2, 2)) == pytest.approx(92.5)
    assert cfg.wei_zero_trust_percent((1, 3, 3), 4, 100) == pytest.approx(100 - 30 * 4 / 9)
    assert cfg.BIA_ZERO_TRUST_PERCENT == 20


def test_directions_route_to_kernels():
    assert {d: conv_prim.KERNEL_DIR[d] for d in (Dir.FWD_I, Dir.BWD_D, Dir.BWD_WB)} == {
        Dir.FWD_I: core.Direction.FWD, Dir.BWD_D: core.Direction.BWD_DATA,
        Dir.BWD_WB: core.Direction.BWD_WEIGHTS}


# ---- --check=sampled through the case flow (engine.case.run, conv's and deconv's steps) -------

DRIVER_MODULES = {"conv": driver, "deconv": deconv_driver}

# (driver, options, descriptor): every direction, groups, dilation, int8 with zero points
# and scales, sum post-ops (reading the prior dst), bias, deconvolution.
SAMPLED_CASES = [
    ("conv", "--dir=FWD_B", "mb2ic8ih9oc12kh3ph1"),
    ("conv", "--dir=FWD_D", "g4ic16ih8oc8kh3ph1dh1sh2"),
    ("conv", "--dir=BWD_D", "g2mb2ic8ih9oc12kh3ph1sh2"),
    ("conv", "--dir=BWD_WB", "g2mb2ic8ih9oc12kh3ph1dh1"),
    ("conv", "--dir=BWD_W", "mb2ic6id5oc4kd3pd1"),
    ("conv", "--dt=u8:s8:u8 --attr-scales=src:common:0.5+wei:per_oc "
             "--attr-zero-points=src:common:3+dst:common:-2", "g2mb2ic8ih7oc16kh3ph1"),
    ("conv", "--dt=s8:s8:s32 --attr-oscale=per_oc --attr-post-ops=relu+sum:1:3",
     "mb2ic8ih7oc16kh3ph1"),
    ("conv", "--attr-post-ops=sum:0.5+tanh", "g2mb2ic8ih7oc16kh3ph1"),
    ("conv", "--dt=bf16 --attr-post-ops=sum:0.25", "mb2ic8ih7oc16kh3ph1"),
    ("deconv", "--dir=FWD_B --attr-post-ops=sum:0.5+relu", "g2mb2ic8ih4oc12kh3sh2"),
    ("deconv", "--dir=BWD_D", "g2mb2ic8ih4oc12kh3sh2ph1"),
    ("deconv", "--dir=BWD_WB", "g2mb2ic8ih4oc12kh3sh2dh1"),
]
SAMPLED_IDS = [" ".join(c) for c in SAMPLED_CASES]


def _planned(drv: str, options: str, desc: str, check: str):
    (case,) = harness.plan([f"--{drv}", f"--check={check}", *options.split(), desc]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def _reference_inputs(prb, drv: str):
    steps = DRIVER_MODULES[drv].STEPS
    t = driver.tensors(prb.desc, prb.shape)
    q = driver.quant_of(prb, prb.desc.oc)
    inputs = steps.fill(prb, t, False, q)
    has_sum = any(isinstance(e, driver.Sum) for e in prb.post_ops.entries)
    prior = driver.fill_prior_dst(prb, t, perf=False) if has_sum else None
    return steps, t, q, inputs, prior


@pytest.mark.parametrize("drv,options,desc", SAMPLED_CASES, ids=SAMPLED_IDS)
def test_sampled_reference_is_the_full_reference_at_the_drawn_points(drv, options, desc):
    prb = _planned(drv, options, desc, "sampled:40")
    assert driver.STEPS.unsupported(prb) is None
    steps, t, q, inputs, prior = _reference_inputs(prb, drv)
    points = driver.sample_points(prb, drv, t)
    full = steps.compute(prb, inputs, q, prior, None)
    sampled = steps.compute(prb, inputs, q, prior, points)
    assert set(points) == set(full) == set(sampled) == set(driver.output_names(prb.dir))
    assert any(points[n].size < full[n].size for n in full)   # some tensor really sampled
    for name, whole in full.items():
        assert points[name].size == min(40, whole.size)
        assert sampled[name].shape == points[name].shape
        assert np.array_equal(sampled[name], whole.ravel()[points[name]], equal_nan=True), name


def _run(prb, drv: str):
    return case.run(prb, RunContext(GlobalSettings(), 0, lambda _: None),
                    DRIVER_MODULES[drv].STEPS)


class _Spy:
    """Records what each compare call saw, then compares."""

    def __init__(self, real):
        self.real, self.seen = real, []

    def __call__(self, ref, got, setup, points=None, size=None):
        self.seen.append((setup.kind, np.asarray(ref).ravel().copy(),
                          np.asarray(got).ravel().copy()))
        return self.real(ref, got, setup, points, size)


@pytest.mark.parametrize("fault", ["", "skip_last_tap"])
@pytest.mark.parametrize("drv,options,desc", SAMPLED_CASES, ids=SAMPLED_IDS)
def test_sampling_every_point_is_the_full_check(monkeypatch, drv, options, desc, fault):
    """N >= the size of every output: the same verdict, counts, failing points and
    compared values as --check=full (a passing and, with a kernel defect, a failing case)."""
    if fault:
        monkeypatch.setenv(driver.core.FAULT_ENV, fault)
    runs, real_compare = {}, driver.compare
    for check in ("full", "sampled:100000"):
        spy = _Spy(real_compare)
        monkeypatch.setattr(driver, "compare", spy)
        res = _run(_planned(drv, options, desc, check), drv)
        runs[check] = res, spy.seen
    (full, full_seen), (sampled, sampled_seen) = runs.values()
    assert (sampled.status, sampled.errors, sampled.total, sampled.outputs) == (
        full.status, full.errors, full.total, full.outputs)
    assert full.total == full.outputs
    assert (full.status is Status.FAILED) == bool(fault)
    assert [ln for ln in sampled.diagnostics
            if "[COMPARE_SAMPLED]" not in ln] == full.diagnostics
    assert len(full_seen) == len(sampled_seen) > 0
    for (kind_f, ref_f, got_f), (kind_s, ref_s, got_s) in zip(full_seen, sampled_seen):
        assert kind_f == kind_s
        assert np.array_equal(ref_f, ref_s, equal_nan=True)
        assert np.array_equal(got_f, got_s, equal_nan=True)




def _real_create(prb, res):
    steps = driver.STEPS if prb.desc.kind == "conv" else deconv_driver.STEPS
    return steps.backends[prb.backend].create(prb, res)


def _corrupting_backend(monkeypatch, name: str, offset: int):
    """The real executor, whose collected output `name` is then wrong at one offset."""
    real_create = _real_create

    def create(prb, res):
        executor = real_create(prb, res)

        class Corrupted:
            def __init__(self):
                self.name, self.info = executor.name, executor.info
                self.layouts, self.memory_bytes = executor.layouts, executor.memory_bytes

            def bind(self, inputs, outs):
                run, collect = executor.bind(inputs, outs)

                def collect_then_corrupt():
                    collect()
                    outs[name].array[offset] += 3
                return run, collect_then_corrupt

            def close(self):
                executor.close()
        return Corrupted()
    for steps in (driver.STEPS, deconv_driver.STEPS):
        monkeypatch.setattr(steps, "create", create)


@pytest.mark.parametrize("drv,options,desc,name", [
    # a plain dst: the corruption adds at a logical offset (`any` forward is blocked)
    ("conv", "--dir=FWD_B --attr-post-ops=sum:0.5 --dtag=nchw", "mb2ic8ih9oc12kh3ph1", "dst"),
    ("conv", "--dir=BWD_D", "g2mb2ic8ih9oc12kh3ph1sh2", "src"),
    ("conv", "--dir=BWD_WB", "g2mb2ic8ih9oc12kh3ph1", "wei"),
    ("conv", "--dir=BWD_WB", "mb2ic8ih9oc64kh3ph1", "bia"),
    ("deconv", "--dir=FWD_B", "g2mb2ic8ih4oc12kh3sh2", "dst"),
])
def test_a_wrong_value_is_caught_exactly_when_its_point_is_drawn(monkeypatch, drv, options,
                                                                 desc, name):
    prb = _planned(drv, options, desc, "sampled:30")
    t = driver.tensors(prb.desc, prb.shape)
    drawn = driver.sample_points(prb, drv, t)[name]
    size = int(np.prod(t[name].shape))
    assert drawn.size == 30 < size
    hit = int(drawn[len(drawn) // 2])
    _corrupting_backend(monkeypatch, name, hit)
    res = _run(prb, drv)
    assert (res.status, res.errors) == (Status.FAILED, 1)
    coords = ":".join(str(int(c)) for c in np.unravel_index(hit, t[name].logical))
    assert res.diagnostics[0].startswith(f"[{hit:4d}][{t[name].tag}][{coords}] ")
    assert f"[COMPARE_SAMPLED][{t[name].tag}]: checked 30 of {size} points" in "\n".join(
        res.diagnostics)
    missed = int(np.setdiff1d(np.arange(size), drawn)[0])
    _corrupting_backend(monkeypatch, name, missed)
    assert _run(prb, drv).status is Status.PASSED   # what a sampled pass does not prove


def test_sampled_points_follow_the_repro_not_the_process():
    prb = _planned("conv", "--dir=BWD_WB", "g2mb2ic8ih9oc12kh3ph1", "sampled:25")
    t = driver.tensors(prb.desc, prb.shape)
    first = driver.sample_points(prb, "conv", t)
    again = driver.sample_points(_planned("conv", "--dir=BWD_WB", "g2mb2ic8ih9oc12kh3ph1",
                                          "sampled:25"), "conv", t)
    assert all(np.array_equal(first[n], again[n]) for n in first)
    other = driver.sample_points(_planned("conv", "--dir=BWD_WB", "g2mb2ic8ih9oc12kh3ph2",
                                          "sampled:25"), "conv", t)
    assert not np.array_equal(first["wei"], other["wei"])
    assert driver.sample_points(_planned("conv", "", "ic4ih5oc4kh3", "full"), "conv", t) is None


def _repro_line(args: list[str]) -> str:
    (case,) = harness.plan(args).cases
    prb = conv_problem.make_problem(case.values, case.desc_text, case.settings)
    return f"{case.settings.repro_prefix()}--conv {prb.repro()}"


def test_check_is_in_the_repro_only_when_sampled():
    assert "--check" not in _repro_line(["--conv", "--check=full", "ic4ih5oc4kh3"])
    sampled = _repro_line(["--conv", "--check=sampled", "--dir=BWD_D", "ic4ih5oc4kh3"])
    assert sampled.startswith(f"--check=sampled:{driver.check.DEFAULT_SAMPLED_POINTS} --conv ")
    assert _repro_line(sampled.split()) == sampled


def test_threads_runs_each_count_and_names_it_in_the_repro(tmp_path):
    """--threads=N: the case's primitive, fill and measured limits on N OpenMP threads
    (the limits per count: a one-thread case's %eff% reads against the one-thread peak);
    more than the process has is SKIPPED, naming both counts."""
    out = tmp_path / "run.jsonl"
    have = cli_threads()
    res = run_cli("--conv", "--mode=CP", "--fix-times-per-prb=2", f"--results={out}", "-v5",
                  f"--threads=1,{have},{have + 1}", "mb1ic8ih6oc8kh3ph1")
    assert res.code == 0, res.err
    planned = [l.split("(threads=")[1].split(",")[0] for l in res.lines
               if l.startswith("implementation: ")]
    assert planned == ["1", str(have)]
    one, full, over = read(str(out)).cases
    assert one["key"] == "--conv --threads=1 mb1ic8ih6oc8oh6kh3ph1"
    assert one["repro"].endswith(one["key"]) and one["status"] == "PASSED"
    assert full["status"] == "PASSED"
    assert over["status"] == "SKIPPED" and over["reason"] == (
        f"--threads={have + 1}: this process runs {have} OpenMP "
        f"thread{'s' if have > 1 else ''} (OMP_NUM_THREADS, -j)")
    if have > 1:   # the per-count limits: one thread's f32 FMA peak, measured apart
        assert one["limit_g_per_s"] != full["limit_g_per_s"]
    for text, message in (("-1", "expected an integer >= 0"), ("two", "expected an integer")):
        res = run_cli("--conv", f"--threads={text}", "mb1ic8ih6oc8kh3ph1")
        assert res.code == 2 and f"--threads={text}: {message}" in res.err


def test_f32_activations_with_bf16_or_f16_weights_run_on_every_route():
    """The weights widen at packing; the f32 rows of every layout compute, and the check
    still sees a dropped input channel."""
    args = ("--conv", "--dir=FWD_B,BWD_D", "--dt=f32:bf16:f32,f32:f16:f32", "--stag=any,axb",
            "--attr-post-ops=", "mb2ic16ih7oc24kh3ph1", "g8ic8ih7oc8kh3ph1")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 16, res.err[-2000:]
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "skip_last_ic"})
    assert res.summary()["failed"] == 16, res.err[-2000:]


@pytest.mark.parametrize("dst", ["bf16", "f16"])   # f16: where oneDNN's CPU skips
def test_int8_into_a_16_bit_float_dst_rounds_to_nearest_even(dst):
    args = ("--conv", "--dir=FWD_I", f"--dt=u8:s8:{dst},s8:s8:{dst}",
            "--attr-scales=src:common:0.25+wei:per_oc+dst:common:3", "mb2ic16ih7oc24kh3ph1")
    res = run_cli(*args)
    assert res.code == 0 and res.summary()["passed"] == 2, res.err[-2000:]
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "truncate_dst"})
    assert res.summary()["failed"] == 2, res.err[-2000:]


@pytest.mark.parametrize("driver_name", ["conv", "deconv"])
def test_f16_backward_runs_on_the_f16_rows(driver_name):
    args = (f"--{driver_name}", "--dir=BWD_D,BWD_W,BWD_WB", "--dt=f16,f32:f16:f16,f16:f32:f16",
            "--stag=any,axb", "mb2ic16ih7oc24kh3ph1", "g8ic8ih7oc8kh3ph1")
    res = run_cli(*args)
    assert res.code == 1 and res.summary()["passed"] == 24, res.err[-2000:]
    assert res.summary()["unimplemented"] == 12   # each direction's other two triples
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "skip_last_ic"})
    failed = {line for line in res.lines if ":FAILED (errors:" in line}
    assert len(failed) == 24, res.err[-2000:]


@pytest.mark.parametrize("driver_name", ["conv", "deconv"])
def test_per_channel_zero_points_pad_and_shift_each_channel(driver_name):
    """src:per_dim_1 gives each input channel its own zero point: the padding of that
    channel's taps, and the compensation, use it (a kernel padding every channel with
    one value fails: right_pad_edge pads with an input value instead); dst:per_dim_1
    adds each output channel's."""
    args = (f"--{driver_name}", "--dir=FWD_B,FWD_I", "--dt=u8:s8:u8,s8:s8:s32,u8:s8:f32",
            "--attr-zero-points=src:per_dim_1+dst:per_dim_1,src:per_dim_1+dst:common:2,"
            "src:common:1+dst:per_dim_1", "--attr-post-ops=,sum:0.5+add:f32:per_oc",
            "--stag=any,axb", "mb2ic16ih7oc24kh3ph1", "g4ic8ih7oc8kh3sh2ph1")
    res = run_cli(*args)
    total = 2 * 3 * 3 * 2 * 2 * 2
    assert res.code == 0 and res.summary()["passed"] == total, res.err[-2000:]
    per_channel_src = [l for l in res.lines if "__REPRO" in l and "src:per_dim_1" in l]
    assert per_channel_src and all(":gather" in l for l in per_channel_src)
    res = run_cli(*args, env={"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"})
    assert res.summary()["failed"] > 0, res.err[-2000:]


def test_host_scalar_scales_run_as_common_on_every_argument():
    """benchdnn's test_conv_all passes the weights' scale as a host scalar too: one value,
    run as `common` (912 of its cases were UNIMPLEMENTED)."""
    host = "src:host_scalar:0.5+dst:host_scalar:4+wei:host_scalar:2"
    args = ("--dt=u8:s8:u8,s8:s8:f32", "--attr-zero-points=,src:common:1", "-v2",
            "mb2ic16ih7oc24kh3ph1", "g4ic8ih7oc8kh3sh2ph1")
    res = run_cli("--conv", f"--attr-scales={host}", *args)
    assert res.code == 0 and res.summary()["passed"] == 8, res.out
    common = run_cli("--conv", f"--attr-scales={host.replace('host_scalar', 'common')}",
                     *args)
    assert common.code == 0 and common.summary()["passed"] == 8, common.out


def test_per_channel_zero_points_are_for_forward_and_channels_only():
    res = run_cli("--conv", "--dt=u8:s8:u8", "--attr-zero-points=src:per_dim_0",
                  "mb2ic16ih7oc24kh3ph1", "--attr-zero-points=src:per_dim_1",
                  "--dir=BWD_D", "--dt=f32", "mb2ic16ih7oc24kh3ph1")
    verdicts = [l.split(" __REPRO")[0] for l in res.lines if "__REPRO" in l][:2]
    assert verdicts[0].endswith("or per channel (per_dim_1) in forward, here) (0 ms)") or \
        "per channel (per_dim_1) in forward" in verdicts[0], verdicts
    assert "UNIMPLEMENTED" in verdicts[1], verdicts


# ---- --attr-scratchpad=user ------------------------------------------------------------

def test_user_scratchpad_runs_every_row_family_and_reports_its_size(tmp_path):
    """The driver gives each primitive the scratchpad it reports, poisoned: the GEMM,
    low-precision, blocked, channels-last, Winograd and fused depthwise rows all pass in
    it, and -v5 and the results file say its size and owner."""
    out = tmp_path / "r.jsonl"
    res = run_cli("--conv", "-v5", f"--results={out}", "--attr-scratchpad=user",
                  "--dir=FWD_B,BWD_D,BWD_WB", "mb2ic16ih10oc16kh3ph1", "mb2ic32ih9oc16kh1sh2",
                  "--stag=axb", "--dtag=axb", "mb2ic16ih10oc16kh3ph1",
                  "--reset", "--attr-scratchpad=user", "--dt=bf16,u8:s8:u8", "--dir=FWD_B",
                  "mb2ic16ih10oc16kh3ph1", "--dt=f32", "--alg=wino", "mb2ic16ih10oc16kh3ph1",
                  "--alg=direct", "--attr-post-ops=dw:k3s2p1", "mb2ic16ih10oc32kh1ph0")
    assert res.code == 0, res.out + res.err
    assert res.summary()["passed"] == 13, res.out
    sizes = [int(m.group(1)) for m in re.finditer(r"scratchpad (\d+) bytes \(user\)", res.out + res.err)]
    assert len(sizes) == 13 and all(n > 0 for n in sizes)
    records = read(str(out)).cases
    assert [r["memory"]["scratchpad_bytes"] for r in records] == sizes


def test_scratchpad_user_is_unimplemented_where_work_memory_is_the_primitives():
    # oneDNN's primitives allocate their own: the backend does not pass the mode on yet
    res = run_cli("--conv", "--backend=onednn", "--attr-scratchpad=user", "mb1ic3ih4oc3kh2")
    assert res.summary()["unimplemented"] == 1, res.out
    assert "--attr-scratchpad=user: this primitive allocates its work memory" in res.out
