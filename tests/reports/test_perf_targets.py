"""Targets files: the shipped one, the checks on any other, and how a batch's
--perf-targets reaches perf-table through the results file."""

import json

import pytest
from conftest import ROOT, assert_one_line, run_cli

from benchdnn_py.errors import UsageError
from benchdnn_py.reports import perf_targets

SHIPPED = ROOT / "batches" / "perf_targets.json"


def test_the_shipped_file_loads_gives_each_bar_a_reason_and_round_trips():
    targets = perf_targets.load(SHIPPED)
    assert targets.file == "perf_targets.json"
    assert len(targets.peak) == 9 and len(targets.overhead) == 2 and len(targets.fusion) == 2
    assert len(targets.wino) == 1 and len(targets.threads) == 1
    assert targets.reorder.max_over_copy == 1.5
    every = [*targets.peak, *targets.overhead, *targets.fusion, *targets.wino,
             *targets.threads, targets.reorder]
    assert all(t.why and "\n" not in t.why for t in every)
    assert perf_targets.from_json(perf_targets.to_json(targets), "header") == targets
    # what a results header holds is plain JSON, and reads back the same
    again = json.loads(json.dumps(perf_targets.to_json(targets)))
    assert perf_targets.from_json(again, "header") == targets


PEAK = {"label": "x", "network": "resnet_50", "directions": ["FWD_I"], "operands": "f32",
        "mb": 1}


@pytest.mark.parametrize("content,message", [
    ({"peek": []}, ": unknown key `peek`; expected reorder, peak, overhead"),
    ({"peak": {}}, ": peak: expected a list"),
    ({"peak": [{**PEAK, "mb": 0}]}, ": peak[0].mb: expected a positive integer, not 0"),
    ({"peak": [{**PEAK, "mb": True}]}, ": peak[0].mb: expected a positive integer, not true"),
    ({"peak": [{**PEAK, "directions": ["FWD"]}]},
     ": peak[0].directions: unknown direction `FWD`; expected FWD_B"),
    ({"peak": [{**PEAK, "min_vs_torch": "1.3"}]},
     ': peak[0].min_vs_torch: expected a positive number or null, not "1.3"'),
    ({"peak": [{k: v for k, v in PEAK.items() if k != "network"}]},
     ": peak[0]: missing key `network`"),
    ({"wino": [{"label": "w", "networks": "vgg_19", "mb": 16, "min_ratio": 1.4}]},
     ': wino[0].networks: expected a list of strings, not "vgg_19"'),
    ({"reorder": {"max_over_copy": 1.5, "bar": 2}}, ": reorder: unknown key `bar`"),
    ({"peak": [{**PEAK, "isa": "avx3"}]},
     ": peak[0].isa: unknown instruction set `avx3`; expected scalar, avx2"),
    ({"peak": [{**PEAK, "depthwise_only": True, "no_depthwise": True}]},
     ": peak[0]: depthwise_only and no_depthwise select no case together"),
    ([], ": expected a JSON object of target lists"),
])
def test_a_bad_file_is_one_line_naming_the_file_and_entry(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(content))
    with pytest.raises(UsageError) as exc:
        perf_targets.load(path)
    assert_one_line(exc.value)
    assert str(exc.value).startswith(str(path)) and message in str(exc.value), exc.value


def test_the_onednn_file_loads_with_a_row_per_group_mb_and_isa():
    targets = perf_targets.load(ROOT / "batches" / "perf_targets_onednn.json")
    assert len(targets.peak) == 40 and all(t.why for t in targets.peak)
    assert all(t.min_vs_onednn == (0.9 if t.isa else 1.0) for t in targets.peak)
    assert {t.isa for t in targets.peak} == {"", "avx2"}
    assert {t.mb for t in targets.peak} == {1, 16}
    # no layer under 0.85x, except where only a geomean is asked (depthwise, AVX2)
    each = [t for t in targets.peak if t.min_each_vs_onednn]
    assert each and all(not t.isa and not t.depthwise_only and t.min_each_vs_onednn == 0.85
                        for t in each)
    assert perf_targets.from_json(perf_targets.to_json(targets), "header") == targets


def test_a_file_that_is_not_json_names_its_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{\n  "peak": [\n    oops\n')
    with pytest.raises(UsageError) as exc:
        perf_targets.load(path)
    assert_one_line(exc.value)
    assert str(exc.value).startswith(f"{path}:3: not a JSON targets file")


def _targets_file(path, bar):
    path.write_text(json.dumps({"reorder": {"max_over_copy": bar, "why": "test"}}))


def test_a_batch_names_its_targets_and_the_results_file_carries_them(tmp_path):
    """Found beside the batch file that names it (run from another directory), recorded
    in the results header, and read by perf-table from there; --targets overrides it."""
    _targets_file(tmp_path / "mine.json", 1000.0)
    (tmp_path / "perf").write_text(
        "--perf-targets=mine.json\n--reset\n--stag=abcd --dtag=abcd 2x16x8x8\n"
        "--stag=abcd --dtag=acdb 2x16x8x8\n")
    elsewhere = tmp_path / "run"
    elsewhere.mkdir()
    res = run_cli("--reorder", "--mode=P", "--fix-times-per-prb=2", "--perf-guard=false",
                  "--results=r.jsonl", f"--batch={tmp_path / 'perf'}", cwd=elsewhere,
                  env={"OMP_NUM_THREADS": "2"})   # (perf-table refuses one-thread runs)
    assert res.code == 0, res.err
    header = json.loads((elsewhere / "r.jsonl").read_text().splitlines()[0])
    assert header["run"]["perf_targets"]["file"] == "mine.json"
    assert header["run"]["perf_targets"]["reorder"]["max_over_copy"] == 1000.0
    table = run_cli("perf-table", str(elsewhere / "r.jsonl"))
    assert table.code == 0 and table.lines[0] == "targets: mine.json", table.err
    assert table.lines[-1].endswith("met by all 1 cases")
    _targets_file(tmp_path / "strict.json", 1e-6)   # a bar no reorder meets
    table = run_cli("perf-table", f"--targets={tmp_path / 'strict.json'}",
                    str(elsewhere / "r.jsonl"))
    assert table.code == 0 and table.lines[0] == "targets: strict.json"
    assert table.lines[-1].endswith("missed by 1 of 1 cases")


def test_a_missing_or_bad_targets_file_stops_the_run_with_one_line(tmp_path):
    (tmp_path / "bad.json").write_text('{"peak": 3}')
    (tmp_path / "perf").write_text("--reset\n--perf-targets=bad.json\n2x16x8x8\n")
    res = run_cli("--reorder", f"--batch={tmp_path / 'perf'}")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert f"{tmp_path / 'perf'}:2: {tmp_path / 'bad.json'}: peak: expected a list" in res.err
    res = run_cli("--reorder", "--perf-targets=nowhere.json", "2x16x8x8")
    assert res.code == 2 and "--perf-targets=nowhere.json: cannot open targets file" in res.err
    res = run_cli("perf-table", f"--targets={tmp_path / 'bad.json'}", "x.jsonl")
    assert res.code == 2 and "peak: expected a list" in res.err
