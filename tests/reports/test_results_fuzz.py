"""Property-based fuzzing of results files (hypothesis): truncated, corrupted, reordered
or retyped files fed to read, compare, merge and --resume either work or stop with one
line (ResultsError, MergeError, UsageError); never another exception."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from benchdnn_py.engine import harness, runner
from benchdnn_py.reports import compare as cmp
from benchdnn_py.reports import compare_report
from benchdnn_py.reports.merge import merge
from benchdnn_py.reports.results import read

import pytest
from conftest import ROOT, assert_one_line, run_cli

BASE = (ROOT / "tests/data/results/marks_base.jsonl").read_bytes()
NEW = (ROOT / "tests/data/results/marks_new.jsonl").read_bytes()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=6)


@st.composite
def damaged(draw, original: bytes, records: bool = True) -> bytes:
    """original, damaged one way: cut short, bytes overwritten, lines dropped or repeated,
    one field of one record given another value (records: JSON Lines), gzip (whole or
    cut), or random bytes."""
    how = draw(st.sampled_from(["cut", "bytes", "lines", "gzip", "random"]
                               + ["field"] * records))
    if how == "cut":
        return original[:draw(st.integers(0, len(original)))]
    if how == "bytes":
        data = bytearray(original)
        for _ in range(draw(st.integers(1, 5))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    lines = original.splitlines(keepends=True)
    if how == "lines":
        picked = draw(st.lists(st.integers(0, len(lines) - 1), max_size=len(lines) + 3))
        return b"".join(lines[i] for i in picked)
    if how == "field":
        i = draw(st.integers(0, len(lines) - 1))
        record = json.loads(lines[i])
        key = draw(st.sampled_from(sorted(record) + ["extra"]))
        record[key] = draw(JSON_VALUES)
        lines[i] = (json.dumps(record) + "\n").encode()
        return b"".join(lines)
    if how == "gzip":
        packed = gzip.compress(original)
        return packed[:draw(st.integers(0, len(packed)))]
    return draw(st.binary(max_size=200))


def _files(factory, contents: dict[str, bytes]) -> Path:
    """A new directory holding the named files."""
    tmp = factory.mktemp("fuzz")
    for name, data in contents.items():
        (tmp / name).write_bytes(data)
    return tmp


@given(damaged(BASE), damaged(NEW))
def test_compare_reads_damaged_files_or_stops_with_one_line(tmp_path_factory, base, new):
    tmp = _files(tmp_path_factory, {"base.jsonl": base, "new.jsonl": new})
    try:
        c = cmp.compare(str(tmp / "base.jsonl"), str(tmp / "new.jsonl"))
    except Exception as exc:   # noqa: BLE001 - the property is about which exceptions
        assert_one_line(exc)
        return
    c.exit_code, c.verdict()
    for fmt in ("md", "csv", "json", "html"):
        compare_report.render(c, fmt)
    compare_report.render_terminal(Console(file=io.StringIO(), width=200), c)


@given(damaged(BASE), damaged(NEW))
def test_merge_takes_damaged_files_or_stops_with_one_line(tmp_path_factory, a, b):
    tmp = _files(tmp_path_factory, {"a.jsonl": a, "b.jsonl": b})
    try:
        merge(str(tmp / "out.jsonl"), [str(tmp / "a.jsonl"), str(tmp / "b.jsonl")])
    except Exception as exc:   # noqa: BLE001
        assert_one_line(exc)
        return
    read(str(tmp / "out.jsonl"))     # what merge wrote reads back


@given(damaged(BASE))
def test_resume_from_a_damaged_file_runs_or_stops_with_one_line(tmp_path_factory, data):
    path = _files(tmp_path_factory, {"run.jsonl": data}) / "run.jsonl"
    argv = ["--mode=L", f"--resume={path}", "--conv", "ic3ih5oc3kh3",
            'mb1ic64ih56oc64oh56kh3ph1n"resnet_50:res2a_branch2b"']
    try:
        runner.Session(harness.plan(argv), argv)
    except Exception as exc:   # noqa: BLE001
        assert_one_line(exc)


@pytest.fixture(scope="module")
def junit_sample(tmp_path_factory) -> bytes:
    """A real run's JUnit report: passed, failed (a deliberate defect) and skipped cases."""
    path = tmp_path_factory.mktemp("junit") / "run.xml"
    run_cli(f"--junit={path}", "--conv", "--skip-impl=dw_conv", "ic8ih8oc8kh3ph1",
            "g8ic8ih8oc8kh3ph1", env={"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"})
    return path.read_bytes()


@given(data=st.data())
def test_merge_takes_damaged_junit_files_or_stops_with_one_line(tmp_path_factory, junit_sample,
                                                                 data):
    tmp = _files(tmp_path_factory, {name: data.draw(damaged(junit_sample, records=False))
                                    for name in ("a.xml", "b.xml")})
    try:
        merge(str(tmp / "out.xml"), [str(tmp / "a.xml"), str(tmp / "b.xml")])
    except Exception as exc:   # noqa: BLE001
        assert_one_line(exc)
