"""perf-table: pairing native and torch records, the target groups and their verdicts."""

import json

import pytest
from conftest import ROOT, run_cli

from benchdnn_py.reports import perf_table, perf_targets

LIMIT = 400.0   # G/s, the f32 limit these records say they were measured against
# the project's targets file, which the tests below judge by
TARGETS = perf_targets.load(ROOT / "batches" / "perf_targets.json")
BAR = TARGETS.reorder.max_over_copy


def record(desc, *, backend="native", direction="FWD_I", dt=("f32", "f32", "f32"),
           median_ms=1.0, gops=0.2, isa=""):
    option = "" if backend == "native" else f"--backend={backend} "
    dir_option = "" if direction == "FWD_B" else f"--dir={direction} "
    dt_option = "" if dt == ("f32", "f32", "f32") else f"--dt={':'.join(dt)} "
    return {"type": "case", "driver": "conv", "backend": backend,
            "key": f"--conv {option}{dir_option}{dt_option}{desc}", "impl": f"{backend}:x",
            "settings": {"driver": {"dir": direction, "dt": list(dt)},
                         "global": {"isa": isa}},
            "median_ms": median_ms, "ops": gops * 1e9, "limit": "f32",
            "limit_g_per_s": LIMIT}


def _carrying(path, targets, records):
    """A results file of RECORDS whose header carries TARGETS (a batch's --perf-targets)."""
    header = {"type": "header", "schema": "benchdnn-py-results", "version": 1,
              "run": {"perf_targets": perf_targets.to_json(targets)}}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *records]))
    return str(path)


def resnet(layer, mb=1):
    return f'mb{mb}ic64ih56oc64oh56kh3ph1n"resnet_50:{layer}"'


def test_pairs_backends_and_computes_medians_ratios_and_efficiency():
    cases = perf_table.cases_of([
        record(resnet("a"), median_ms=1.0),                    # 200 GFLOPS = 50% of 400
        record(resnet("a"), backend="torch", median_ms=2.0),   # twice as slow
    ])
    (case,) = cases
    assert case.network == "resnet_50" and case.operands == "f32" and case.desc.mb == 1
    assert perf_table.Case.gflops(case.ours) == pytest.approx(200.0)
    assert case.eff_pct == pytest.approx(50.0)
    assert case.vs_torch == pytest.approx(2.0)


def test_cases_are_judged_against_the_highest_limit_any_run_read():
    """A run that measured its limit in a slow spell (300 against 400) would put its cases
    over their real share; each class and thread count takes the highest reading."""
    dw = 'mb1g32ic32ih112oc32oh112kh3ph1n"mobilenet_v1:conv2_1_dw"'
    low = {**record(resnet("a"), median_ms=1.0), "limit_g_per_s": 300.0,   # 200 GFLOPS
           "bytes": 4e6}
    one = {**record(resnet("b"), median_ms=1.0), "limit_g_per_s": 150.0}
    one["settings"] = {"driver": {**one["settings"]["driver"], "threads": 1}}
    cases = {c.layer: c for c in perf_table.cases_of([
        low, record(resnet("c"), median_ms=2.0), one,
        {**record(dw), "bytes": 4e6, "copy_g_per_s": 20.0},
        {**record(dw.replace("2_1", "3_1")), "bytes": 4e6, "copy_g_per_s": 40.0}])}
    assert cases["a"].eff_pct == pytest.approx(50.0)        # 200 of 400, not of 300
    assert cases["c"].eff_pct == pytest.approx(25.0)
    assert cases["b"].eff_pct == pytest.approx(200 / 1.5)   # one thread: its own limit
    assert cases["conv2_1_dw"].copy_pct == pytest.approx(10.0)   # 4 GB/s of 40
    assert cases["a"].copy_pct is None                            # not memory-bound
    line = perf_table.limits_line(list(cases.values()))
    assert line == ("measured limits: f32 400 G/s "
                    "(each the highest any run read; a run read f32 at 300)")
    assert perf_table.limits_line([cases["c"]]) == "measured limits: f32 400 G/s"


def test_groups_use_geomeans_and_each_bar_can_fail():
    records = [record(resnet("a"), median_ms=0.5),            # 400 GFLOPS, 100%
               record(resnet("a"), backend="torch", median_ms=1.0),
               record(resnet("b"), median_ms=2.0),            # 100 GFLOPS, 25%
               record(resnet("b"), backend="torch", median_ms=2.0)]
    rows = {r.target.label: r for r in perf_table.rows_of(perf_table.cases_of(records), TARGETS)}
    row = rows["ResNet-50 f32 forward, mb1"]
    assert len(row.cases) == 2
    assert row.eff == pytest.approx(50.0)           # sqrt(100 * 25)
    assert row.eff_min == pytest.approx(25.0)
    assert row.vs_torch == pytest.approx(2 ** 0.5)  # sqrt(2 * 1)
    assert dict(row.verdicts()) == {"geomean >= 80% of peak": False,
                                    "every case >= 60%": False, ">= 1.3x PyTorch": True}
    assert rows["ResNet-50 f32 backward data, mb1"].cases == []


def test_directions_types_minibatches_and_depthwise_select_their_rows():
    records = [record(resnet("a", mb=16), direction="BWD_D"),
               record(resnet("a"), direction="BWD_WB"),
               record(resnet("a"), dt=("bf16", "bf16", "bf16")),
               record(resnet("a"), dt=("u8", "s8", "u8")),
               record('mb1g32ic32ih112oc32oh112kh3ph1n"mobilenet_v1:conv2_1_dw"')]
    rows = {r.target.label: len(r.cases) for r in perf_table.rows_of(perf_table.cases_of(records), TARGETS)}
    assert rows["ResNet-50 f32 backward data, mb16"] == 1
    assert rows["ResNet-50 f32 backward weights, mb1"] == 1
    assert rows["ResNet-50 bf16 forward, mb1"] == 1
    assert rows["ResNet-50 int8 (u8:s8) forward, mb1"] == 1
    assert rows["MobileNet v1 f32 forward, mb1"] == 1
    assert rows["MobileNet v1 depthwise layers, f32 forward, mb1"] == 1
    assert rows["ResNet-50 f32 forward, mb1"] == 0


def test_depthwise_layers_are_read_in_gb_per_s_against_the_copy_bandwidth(tmp_path):
    dw = 'mb1g32ic32ih112oc32oh112kh3ph1n"mobilenet_v1:conv2_1_dw"'
    dw2 = 'mb1g64ic64ih56oc64oh56kh3ph1n"mobilenet_v1:conv3_1_dw"'
    records = [{**record(dw, median_ms=0.1), "bytes": 4e6, "copy_g_per_s": 20.0},   # 40 GB/s
               {**record(dw, backend="torch", median_ms=0.4), "bytes": 4e6},        # 10 GB/s
               {**record(dw2, median_ms=0.4), "bytes": 4e6, "copy_g_per_s": 20.0},  # 10 GB/s
               {**record(dw2, backend="torch", median_ms=0.4), "bytes": 4e6}]
    cases = perf_table.cases_of(records)
    assert [perf_table.Case.gbps(c.ours) for c in cases] == pytest.approx([40.0, 10.0])
    assert [c.copy_pct for c in cases] == pytest.approx([200.0, 50.0])
    (row,) = [r for r in perf_table.rows_of(cases, TARGETS) if r.target.memory_bound]
    assert row.ours_gbps == pytest.approx(20.0) and row.torch_gbps == pytest.approx(10.0)
    assert row.copy_pct == pytest.approx(100.0) and row.copy_pct_min == pytest.approx(50.0)
    assert perf_table.bandwidth_lines([row])[2] == (
        "| MobileNet v1 depthwise layers, f32 forward, mb1 | 2 | 20.0 | 100, 50 | 10.0 | 20.0 |")
    # files from before bytes were recorded: the row says so rather than guess
    old = perf_table.cases_of([record(dw), record(dw, backend="torch")])
    (row,) = [r for r in perf_table.rows_of(old, TARGETS) if r.target.memory_bound]
    assert perf_table.bandwidth_lines([row])[2].endswith("| 1 | - | -, - | - | - |")
    # the CLI prints the table under the targets, and the per-layer line names the GB/s
    res = run_cli("perf-table", "--layers", _carrying(tmp_path / "perf.jsonl", TARGETS, records))
    assert res.code == 0, res.err
    assert "| MobileNet v1 depthwise layers, f32 forward, mb1 | 2 | 20.0 | 100, 50 |" in res.out
    assert "| mobilenet_v1 | conv2_1_dw (40.0 GB/s, 200% of copy) | FWD_I |" in res.out


def test_cli_prints_the_table_and_rejects_a_file_without_timings(tmp_path):
    """The targets come from the run's header (a batch's --perf-targets); without them
    the same records get a row per case."""
    path = tmp_path / "perf.jsonl"
    header = {"type": "header", "schema": "benchdnn-py-results", "version": 1}
    cases = [record(resnet("a")), record(resnet("a"), backend="torch", median_ms=3)]
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *cases]))
    res = run_cli("perf-table", "--layers", str(path))
    assert res.code == 0 and "ResNet-50 f32 forward" not in res.out, res.err
    assert f"| --conv --dir=FWD_I {resnet('a')} | 1 | 3 |" in res.out
    carried = {**header, "run": {"perf_targets": perf_targets.to_json(TARGETS)}}
    path.write_text("".join(json.dumps(x) + "\n" for x in [carried, *cases]))
    res = run_cli("perf-table", "--layers", str(path))
    assert res.code == 0, res.err
    assert res.lines[0] == "targets: perf_targets.json"
    assert "| ResNet-50 f32 forward, mb1 | 1 | 200 | 50, 50 | 67 | 3.00x |" in res.out
    assert "| resnet_50 | a | FWD_I | f32 | 1 | 200 | 50 | 67 | 3.00 | native:x |" in res.out
    assert "perf guard: none (runs without --perf-guard, or older files)" in res.lines
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps(header) + "\n")
    res = run_cli("perf-table", str(empty))
    assert res.code == 2 and "no timed case (run with --mode=P" in res.err


def test_any_run_gets_a_row_per_case_with_the_ratio_between_backends(tmp_path):
    # shapes no target knows, on two backends, and a pooling case (a bandwidth limit)
    a, b = "mb1ic8ih5oc8kh3ph1", "mb1ic16ih5oc8kh1"
    pool = {"type": "case", "driver": "pool", "backend": "native", "key": "--pool ic8ih8kh2",
            "impl": "pool:avx2", "median_ms": 0.5, "ops": 1e6, "bytes": 2e6, "limit": "bw",
            "limit_g_per_s": 10.0, "copy_g_per_s": 10.0, "settings": {"driver": {}}}
    fwd = {"direction": "FWD_B"}
    records = [record(a, backend="torch", median_ms=4.0, **fwd), record(a, median_ms=2.0, **fwd),
               record(b, median_ms=1.0, **fwd), record(b, backend="torch", median_ms=1.0, **fwd),
               pool]
    res = run_cli("perf-table", _results_file(tmp_path / "r.jsonl", 2, records))
    assert res.code == 0, res.err
    rows = [l for l in res.lines if l.startswith("| ")]
    assert rows[0] == ("| case | native ms | torch ms | native speed | torch speed | "
                       "native % of limit | native / torch | native impl |")
    assert rows[1] == (f"| --conv {a} | 2 | 4 | 100.0 GFLOPS | 50.0 GFLOPS | 25 | 2.00x | "
                       f"native:x |")
    assert rows[2] == (f"| --conv {b} | 1 | 1 | 200.0 GFLOPS | 200.0 GFLOPS | 50 | 1.00x | "
                       f"native:x |")
    assert rows[3] == "| --pool ic8ih8kh2 | 0.5 | - | 4.0 GB/s | - | 40 | - | pool:avx2 |"
    assert res.lines[-1] == ("3 cases; native at 37% of the measured limit (geomean of 3; "
                             "lowest 25%); native / torch: 1.41x (geomean of 2 cases; range "
                             "1.00x to 2.00x)")


ONEDNN = perf_targets.load(ROOT / "batches" / "perf_targets_onednn.json")


def test_onednn_rows_judge_the_geomean_and_every_layer_and_name_the_weakest(tmp_path):
    dw = 'mb1g32ic32ih112oc32oh112kh3ph1n"mobilenet_v1:conv2_1_dw"'
    pw = 'mb1ic32ih112oc64oh112kh1ph0n"mobilenet_v1:conv2_1_pw"'
    records = [record(resnet("a"), median_ms=1.0),
               record(resnet("a"), backend="onednn", median_ms=1.6),   # ours 1.6x
               record(resnet("b"), median_ms=1.0),
               record(resnet("b"), backend="onednn", median_ms=0.8),   # ours 0.8x
               record(resnet("c"), median_ms=1.0),
               record(resnet("c"), backend="onednn", median_ms=0.9),
               record(dw, median_ms=1.0), record(dw, backend="onednn", median_ms=0.5),
               record(pw, median_ms=1.0), record(pw, backend="onednn", median_ms=1.0),
               # an AVX2-capped run joins its own rows only
               record(resnet("a"), median_ms=2.0, isa="avx2"),
               record(resnet("a"), backend="onednn", median_ms=1.9, isa="avx2")]
    rows = {r.target.label: r for r in
            perf_table.rows_of(perf_table.cases_of(records), ONEDNN)}
    row = rows["ResNet-50 f32 forward, mb1"]
    assert [c.layer for c in row.cases] == ["a", "b", "c"]
    assert row.vs_onednn == pytest.approx((1.6 * 0.8 * 0.9) ** (1 / 3))
    assert row.vs_onednn_min == pytest.approx(0.8)
    assert [c.layer for c in row.weakest()] == ["b", "c"]      # the slower ones, worst first
    assert dict(row.verdicts()) == {">= 1x oneDNN": True,
                                    "every case >= 0.85x oneDNN": False}
    avx2 = rows["ResNet-50 f32 forward, mb1, AVX2"]
    assert len(avx2.cases) == 1 and avx2.vs_onednn == pytest.approx(0.95)
    assert dict(avx2.verdicts()) == {">= 0.9x oneDNN": True}
    # the 1x1 row leaves the depthwise layer to the depthwise row
    assert [c.layer for c in rows["MobileNet v1 f32 forward, conv1 and 1x1 layers, mb1"]
            .cases] == ["conv2_1_pw"]
    assert [c.layer for c in rows["MobileNet v1 f32 depthwise, mb1"].cases] == ["conv2_1_dw"]
    lines = perf_table.markdown(list(rows.values()))
    assert lines[0] == ("| target group | cases | ours GFLOPS | % of peak (geomean, min) | "
                        "oneDNN GFLOPS | ours / oneDNN (geomean, min) | "
                        "weakest layers (ours / oneDNN) | bars |")
    assert lines[2].startswith("| ResNet-50 f32 forward, mb1 | 3 | 200 | 50, 50 | ")
    assert "| 1.05x, 0.80x | b 0.80, c 0.90 | >= 1x oneDNN: met; every case >= 0.85x " \
           "oneDNN: missed |" in lines[2]
    # the CLI, by the targets a results file carries, with oneDNN's columns per layer
    res = run_cli("perf-table", "--layers", _carrying(tmp_path / "onednn.jsonl", ONEDNN, records))
    assert res.code == 0, res.err
    assert "| ResNet-50 f32 forward, mb1, AVX2 | 1 | 100 |" in res.out
    assert "| resnet_50 | b | FWD_I | f32 | 1 | 200 | 50 | - | - | 250 | 0.80 | onednn:x | " \
           "native:x |" in res.out
    assert "| resnet_50 | a --isa=avx2 | FWD_I |" in res.out
    assert "| case |" not in res.out     # no per-case table: oneDNN has its columns


def test_the_guard_line_counts_retimed_and_still_degraded_cases():
    rec = [record(resnet(layer)) for layer in "abcd"]
    for r, (share, attempts) in zip(rec, [(0.97, 1), (0.93, 2), (0.51, 3), (0.6, 1)]):
        r["machine"] = {"share": share, "attempts": attempts}   # (before the cache probe)
    assert perf_table.guard_line(rec) == (
        "perf guard: 4 cases timed between probes, 2 timed again after a degraded "
        "probe, 2 still degraded (lowest compute probe 51% of the peak, lowest cache probe "
        "100% of its best)")
    assert perf_table.guard_line(rec[:2]).endswith(", 0 still degraded")
    rec[1]["machine"]["cache"] = 0.8      # degraded by its cache probe alone
    assert perf_table.guard_line(rec[:2]) == (
        "perf guard: 2 cases timed between probes, 1 timed again after a degraded probe, "
        "1 still degraded (lowest compute probe 93% of the peak, lowest cache probe 80% of "
        "its best)")


def test_post_op_overhead_divides_by_the_plain_case():
    records = [record(resnet("a"), median_ms=1.0),
               {**record(resnet("a"), median_ms=1.02),
                "key": f"--conv --dir=FWD_I --attr-post-ops=relu {resnet('a')}"},
               record(resnet("b"), median_ms=1.0),
               {**record(resnet("b"), median_ms=1.21),
                "key": f"--conv --dir=FWD_I --attr-post-ops=relu {resnet('b')}"}]
    cases = perf_table.cases_of(records)
    relu = [c for c in cases if c.post_ops == "relu"]
    assert sorted(c.over_plain for c in relu) == pytest.approx([1.02, 1.21])
    plain_rows = {r.target.label: len(r.cases) for r in perf_table.rows_of(cases, TARGETS)}
    assert plain_rows["ResNet-50 f32 forward, mb1"] == 2       # post-op cases stay out
    lines = perf_table.kind_lines("overhead", cases, TARGETS)
    assert "| ResNet-50 f32 forward + relu, mb1 | 2 | 1.111, 1.210 | geomean <= 1.05: missed |" in lines
    assert "| ResNet-50 f32 forward + sum, mb1 | 0 | - | not measured |" in lines


def test_depthwise_fusion_divides_by_the_two_convolutions_run_separately():
    def pair(name, fused, pw, dw, mb=1):
        n = f'n"mobilenet_v1_fusion:{name}"'
        return [{**record(f"mb{mb}ic32ih56oc64oh56kh1ph0{n}", median_ms=fused),
                 "key": f"--conv --dir=FWD_I --attr-post-ops=dw_k3s1p1 "
                        f"mb{mb}ic32ih56oc64oh56kh1ph0{n}"},
                record(f"mb{mb}ic32ih56oc64oh56kh1ph0{n}", median_ms=pw),
                record(f"g64mb{mb}ic64ih56oc64oh56kh3ph1{n}", median_ms=dw)]
    # the same pairs at mb16, slower apart: each fused case is divided by its own batch
    # size's separate cases, not by the last ones of that name
    cases = perf_table.cases_of(pair("a", 1.5, 1.0, 1.0) + pair("b", 2.4, 2.0, 1.0)
                                + pair("a", 18.0, 16.0, 14.0, mb=16)
                                + pair("b", 33.0, 32.0, 16.0, mb=16))
    fused = sorted((c for c in cases if c.post_ops), key=lambda c: (c.desc.mb, c.layer))
    assert [c.over_separate for c in fused] == pytest.approx([0.75, 0.8, 0.6, 0.6875])
    lines = perf_table.kind_lines("fusion", cases, TARGETS)
    assert ("| MobileNet v1 f32 1x1 + depthwise fused, mb1 | 2 | 0.775, 0.800 | "
            "geomean < 1: met |") in lines
    assert ("| MobileNet v1 f32 1x1 + depthwise fused, mb16 | 2 | 0.642, 0.688 | "
            "geomean < 1: met |") in lines
    # the pairs' plain cases stay out of the MobileNet v1 targets
    rows = {r.target.label: len(r.cases) for r in perf_table.rows_of(cases, TARGETS)}
    assert rows["MobileNet v1 f32 forward, mb1"] == 0


def test_winograd_row_divides_direct_by_wino_per_layer():
    def wino(desc, ms):
        r = record(desc, median_ms=ms)
        r["key"] = r["key"].replace(f" {desc}", f" --alg=wino {desc}")
        return r
    a, b = resnet("a", mb=16), 'mb16ic512ih14oc512oh14kh3ph1n"vgg_19:conv5_1"'
    records = [record(a, median_ms=2.0), wino(a, 1.0),      # 2x
               record(b, median_ms=1.5), wino(b, 1.25)]     # 1.2x
    cases = perf_table.cases_of(records)
    speedups = sorted(c.wino_speedup for c in cases if c.alg == "wino")
    assert speedups == pytest.approx([1.2, 2.0])
    # the wino cases stay out of the other targets' groups
    rows = perf_table.rows_of(cases, TARGETS)
    assert all(c.alg == "" for row in rows for c in row.cases)
    (line,) = [l for l in perf_table.kind_lines("wino", cases, TARGETS) if "ResNet-50 and VGG-19" in l]
    assert "| 2 | 1.55, 1.20 |" in line and "missed" in line


def reorder_record(sdt, ddt, stag, dtag, *, median_ms, eff_pct, min_ms=None):
    """A reorder record at a 100 G/s limit: eff_pct is the best-time GB/s."""
    pattern = {"nchw": "abcd", "nhwc": "acdb"}
    return {"type": "case", "driver": "reorder", "impl": "reorder:x",
            "key": f"--reorder --sdt={sdt} --ddt={ddt} --stag={stag} --dtag={dtag} 2x3x4x5",
            "settings": {"driver": {
                "sdt": sdt, "ddt": ddt, "stag": {"text": stag, "pattern": pattern[stag]},
                "dtag": {"text": dtag, "pattern": pattern[dtag]}, "strides": [None, None],
                "attr-scales": {"entries": []}, "attr-post-ops": {"entries": []}}},
            "median_ms": median_ms, "min_ms": min_ms or median_ms, "eff_pct": eff_pct,
            "limit": "bw", "limit_g_per_s": 100.0}


def test_reorders_are_read_against_the_copies_of_their_run_at_median_bandwidth(tmp_path):
    records = [reorder_record("f32", "f32", "nchw", "nchw", median_ms=1, eff_pct=40),
               reorder_record("f32", "f32", "nchw", "nhwc", median_ms=1, eff_pct=30),
               # median twice the best: 25 GB/s at the median
               reorder_record("f32", "bf16", "nchw", "nhwc", median_ms=2, min_ms=1,
                              eff_pct=50),
               reorder_record("f32", "f32", "nchw", "nchw", median_ms=1, eff_pct=10)]
    cases = perf_table.reorder_cases_of(records)
    assert [c.is_copy for c in cases] == [True, False, False, True]
    assert cases[2].gbps == pytest.approx(25.0)
    lines = perf_table.reorder_lines(cases, BAR)
    assert "copies (runs: 2), 20.0 GB/s" in lines[0]    # geomean of 40 and 10
    assert any("--stag=nchw --dtag=nhwc 2x3x4x5 | reorder:x | 30.0 | 0.67x | met |" in l
               for l in lines)
    assert any("nhwc 2x3x4x5 | reorder:x | 25.0 | 0.80x | met |" in l for l in lines)
    assert "| 2.00x | copy |" in lines[-3]                # the yardstick, not judged
    assert lines[-1].endswith("met by all 2 cases")
    slow = records + [reorder_record("f32", "s8", "nchw", "nhwc", median_ms=1, eff_pct=10)]
    lines = perf_table.reorder_lines(perf_table.reorder_cases_of(slow), BAR)
    assert "| 2.00x | missed |" in lines[-3]
    assert lines[-1].endswith("missed by 1 of 3 cases")
    path = tmp_path / "reo.jsonl"
    header = {"type": "header", "schema": "benchdnn-py-results", "version": 1}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *records]))
    res = run_cli("perf-table", "--targets=batches/perf_targets.json", str(path))
    assert res.code == 0 and "reorder bar" in res.out and "ResNet" not in res.out
    res = run_cli("perf-table", str(path))     # no targets: a row per case, no verdict
    assert res.code == 0 and "reorder bar" not in res.out and "| case |" in res.out


def test_post_op_section_of_its_own_pairs_within_its_network():
    """perf_conv's post-op section names its layers apart (resnet_50_post_ops), each
    alone, with relu and with sum back to back: the ratios divide by that section's alone
    case, and the ResNet-50 rows keep their own cases."""
    own = 'mb1ic64ih56oc64oh56kh3ph1n"resnet_50_post_ops:a"'
    records = [record(resnet("a"), median_ms=2.0),
               record(own, median_ms=1.0),
               {**record(own, median_ms=1.03),
                "key": f"--conv --dir=FWD_I --attr-post-ops=relu {own}"},
               {**record(own, median_ms=0.99),
                "key": f"--conv --dir=FWD_I --attr-post-ops=sum {own}"}]
    cases = perf_table.cases_of(records)
    lines = perf_table.kind_lines("overhead", cases, TARGETS)
    assert "| ResNet-50 f32 forward + relu, mb1 | 1 | 1.030, 1.030 | geomean <= 1.05: met |" in lines
    assert "| ResNet-50 f32 forward + sum, mb1 | 1 | 0.990, 0.990 | geomean <= 1.05: met |" in lines
    rows = {r.target.label: r.cases for r in perf_table.rows_of(cases, TARGETS)}
    assert [c.layer for c in rows["ResNet-50 f32 forward, mb1"]] == ["a"]
    assert rows["ResNet-50 f32 forward, mb1"][0].ours["median_ms"] == 2.0


def _results_file(path, threads, records):
    header = {"type": "header", "schema": "benchdnn-py-results", "version": 1,
              "environment": {"threads": {"max": threads}}}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *records]))
    return str(path)


def test_threads_row_joins_a_one_thread_run_on_the_large_layers(tmp_path):
    big, small = resnet("big"), resnet("small")        # same shape, ops set per record
    two = _results_file(tmp_path / "two.jsonl", 2, [
        record(big, median_ms=1.0, gops=0.2), record(small, median_ms=1.0, gops=0.1)])
    one = _results_file(tmp_path / "one.jsonl", 1, [
        record(big, median_ms=1.8, gops=0.2), record(small, median_ms=1.0, gops=0.1)])
    lines = perf_table.table([two, one], targets=TARGETS)
    # only the 200 M op layer counts (150 M or more); 1.8x misses the 1.85x bar
    assert ("| 2 threads over 1, ResNet-50 f32 forward mb1, layers of 150 M ops or more | 1 "
            "| 1.80, 1.80 | geomean and every layer >= 1.85: missed |") in lines
    # the one-thread run stays out of the other targets: 200 and 100 GFLOPS, not 111
    assert any(l.startswith("| ResNet-50 f32 forward, mb1 | 2 | 141 |") for l in lines)
    alone = [l for l in perf_table.table([two], targets=TARGETS) if l.startswith("| 2 threads")]
    assert alone == ["| 2 threads over 1, ResNet-50 f32 forward mb1, layers of 150 M ops or "
                     "more | 0 | - | not measured |"]
    res = run_cli("perf-table", one)
    assert res.code == 2 and "only runs on one thread" in res.err


def test_threads_row_pairs_each_layer_with_its_one_thread_twin_in_the_same_run(tmp_path):
    """perf_conv runs `--threads=2,1`: a layer's --threads=1 case is the one-thread side
    of its --threads=2 case, and neither joins the other targets."""
    def layer(name, threads, median_ms):
        r = record(f'mb1ic64ih56oc64oh56kh3ph1n"resnet_50_threads:{name}"', median_ms=median_ms)
        return {**r, "key": r["key"].replace("--conv ", f"--conv --threads={threads} ")}
    records = [layer("a", 2, 1.0), layer("a", 1, 1.9), layer("b", 2, 1.0), layer("b", 1, 2.0),
               layer("c", 2, 1.0)]                   # c: no twin, so no ratio
    cases = perf_table.cases_of(records)
    assert [(c.layer, c.threads, c.thread_speedup) for c in cases] == \
        [("a", 2, pytest.approx(1.9)), ("b", 2, pytest.approx(2.0)), ("c", 2, None)]
    lines = perf_table.table([_results_file(tmp_path / "run.jsonl", 2, records)], targets=TARGETS)
    assert ("| 2 threads over 1, ResNet-50 f32 forward mb1, layers of 150 M ops or more | 2 "
            "| 1.95, 1.90 | geomean and every layer >= 1.85: met |") in lines
    assert "| ResNet-50 f32 forward, mb1 | 0 | - | -, - | - | -x | not measured |" in lines
    # the same layers on resnet_50 itself, by --threads: still out of the forward target
    on_resnet = [{**r, "key": r["key"].replace("resnet_50_threads", "resnet_50")}
                 for r in records]
    rows = {r.target.label: r for r in perf_table.rows_of(perf_table.cases_of(on_resnet), TARGETS)}
    assert rows["ResNet-50 f32 forward, mb1"].cases == []
    # a run on one thread only (`--threads=1` alone): its cases are cases, with no ratio
    alone = perf_table.cases_of([layer("a", 1, 1.9), layer("b", 1, 2.0)])
    assert [(c.layer, c.threads, c.thread_speedup) for c in alone] == \
        [("a", 1, None), ("b", 1, None)]
