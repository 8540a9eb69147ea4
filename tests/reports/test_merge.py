"""benchdnn-py merge: inputs recognised by content, one summary, one-line errors.
(Shards merged back into the unsharded run: tests/engine/test_shard.py.)"""

from __future__ import annotations

import gzip
import shutil

import pytest
from conftest import run_cli

from benchdnn_py.reports.results import read


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    d = tmp_path_factory.mktemp("shards")
    for k in (0, 1):
        res = run_cli("--conv", f"--shard={k}/2", f"--results={d / f's{k}.jsonl'}",
                      f"--junit={d / f's{k}.xml'}", "--dir=FWD_B,BWD_D",
                      "--batch=problems/shapes_basic")
        assert res.code == 0
    return d


def test_gzip_and_plain_inputs_merge_into_either(shards, tmp_path):
    with open(shards / "s1.jsonl", "rb") as f, gzip.open(tmp_path / "s1.jsonl.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    res = run_cli("merge", str(tmp_path / "m.jsonl.gz"), str(shards / "s0.jsonl"),
                  str(tmp_path / "s1.jsonl.gz"))
    assert res.code == 0
    assert res.lines == ["tests:72 passed:72 skipped:0 mistrusted:0 unimplemented:0 "
                         "invalid_arguments:0 failed:0 listed:0"]
    merged = read(str(tmp_path / "m.jsonl.gz"))
    assert [r["idx"] for r in merged.cases] == list(range(72))
    assert merged.complete and merged.footer["counts"]["passed"] == 72
    assert merged.header["merged_from"][0].endswith("s0.jsonl")


@pytest.mark.parametrize("make,fragment", [
    (lambda d, t: [d / "s0.jsonl", d / "s0.jsonl"], "is also in"),
    (lambda d, t: [d / "s0.jsonl", d / "s1.xml"], "the inputs mix results files and JUnit"),
    (lambda d, t: [d / "s0.jsonl", t / "missing.jsonl"], "missing.jsonl: cannot read"),
    (lambda d, t: [t / "bad.xml"], "bad.xml: not JUnit XML"),
    (lambda d, t: [t / "bad.jsonl"], "bad.jsonl:1: not a JSON record"),
    # (found by the fuzz tests: a damaged time, summed as a number; an unknown encoding)
    (lambda d, t: [d / "s0.xml", t / "time.xml"],
     "time.xml: testcase `x`: time `:.005` is not a number of seconds"),
    (lambda d, t: [t / "encoding.xml"], "encoding.xml: not JUnit XML (unknown encoding: u-f-8)"),
])
def test_bad_inputs_are_one_line_and_exit_2(shards, tmp_path, make, fragment):
    (tmp_path / "bad.xml").write_text("<testsuites><testsuite>")
    (tmp_path / "encoding.xml").write_text("<?xml version='1.0' encoding='u-f-8'?>\n<testsuites/>")
    (tmp_path / "time.xml").write_text(
        '<testsuites><testsuite><testcase name="x" time=":.005"/></testsuite></testsuites>')
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    inputs = [str(p) for p in make(shards, tmp_path)]
    res = run_cli("merge", str(tmp_path / "out"), *inputs)
    assert res.code == 2 and res.out == ""
    assert res.err.startswith("benchdnn-py merge: error: ") and res.err.count("\n") == 1
    assert fragment in res.err
    assert not (tmp_path / "out").exists()


def test_usage_errors(shards, tmp_path):
    res = run_cli("merge", str(tmp_path / "out"))
    assert res.code == 2 and res.err.count("\n") == 1
    assert "Missing argument 'INPUTS...'" in res.err
    res = run_cli("merge", str(shards / "s0.jsonl"), str(shards / "s0.jsonl"))
    assert res.code == 2 and "is also an input" in res.err


def test_an_existing_out_is_never_overwritten_unless_replace_is_given(shards, tmp_path):
    """`merge s0.jsonl s1.jsonl` (OUT forgotten) would make shard 0's file the output."""
    s0, s1 = shards / "s0.jsonl", shards / "s1.jsonl"
    before = (s0.read_bytes(), s1.read_bytes())
    res = run_cli("merge", str(s0), str(s1))
    assert res.code == 2 and res.out == "" and res.err.count("\n") == 1
    assert "exists (did you forget the output file?)" in res.err and "--replace" in res.err
    assert (s0.read_bytes(), s1.read_bytes()) == before
    # the same file under another name is still an input, --replace or not
    res = run_cli("merge", "--replace", str(shards / "." / "s1.jsonl"), str(s0), str(s1))
    assert res.code == 2 and "is also an input" in res.err
    assert (s0.read_bytes(), s1.read_bytes()) == before
    out = tmp_path / "old.jsonl"
    out.write_text("stale\n")
    assert run_cli("merge", str(out), str(s0), str(s1)).code == 2
    assert out.read_text() == "stale\n"
    res = run_cli("merge", "--replace", str(out), str(s0), str(s1))
    assert res.code in (0, 1) and out.read_text() != "stale\n"
