"""Shards: a stable split by the canonical repro line, chosen by --shard=K/N or GoogleTest's
variables; --mode=L lists a shard's cases; merged shards equal the unsharded run."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

from benchdnn_py.engine import harness, runner, shard
from benchdnn_py.engine.settings import Shard
from benchdnn_py.errors import UsageError
from benchdnn_py.reports.results import read

GRID = ("--dir=FWD_B,BWD_D,BWD_WB", "--batch=problems/shapes_basic")


def cases_of(res) -> list[str]:
    """The result lines (not their repeat in the failed-cases summary)."""
    end = next((i for i, l in enumerate(res.lines) if l.startswith("=")), len(res.lines))
    return [l for l in res.lines[:end] if re.match(r"^\d+:", l)]


def test_the_split_is_a_stable_hash_of_the_canonical_line():
    # sha1, not hash(): the same in every process (this value is fixed forever).
    assert shard.owner("--conv ic3ih5oc5oh3kh3ph0", 7) == shard.owner(
        "--conv ic3ih5oc5oh3kh3ph0", 7)
    assert [shard.owner(f"--conv mb{i}ic3ih5oc5", 4) for i in range(8)] == [
        int.from_bytes(__import__("hashlib").sha1(f"--conv mb{i}ic3ih5oc5".encode())
                       .digest()[:8], "big") % 4 for i in range(8)]
    plan = harness.plan(["--conv", *GRID])
    lines = [shard.canonical_line(p.case, p.prb) for p in runner.prepare(plan)]
    assert all(l.startswith("--conv ") and "mb2" in l for l in lines)   # every field
    sizes = [sum(shard.owner(l, 3) == k for l in lines) for k in range(3)]
    assert sum(sizes) == len(lines) and min(sizes) > len(lines) / 6   # roughly even


def test_the_implementation_filter_is_part_of_the_line():
    plan = harness.plan(["--conv", "ic8ih8oc8kh3", "--impl=gemm_conv:avx2", "ic8ih8oc8kh3"])
    a, b = (shard.canonical_line(p.case, p.prb) for p in runner.prepare(plan))
    assert a != b and b.startswith("--conv --impl=gemm_conv:avx2 ")


@pytest.mark.parametrize("env,expected", [
    ({}, None),
    ({"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3"}, Shard(1, 3)),
    ({"GTEST_SHARD_INDEX": " 0 ", "GTEST_TOTAL_SHARDS": "1"}, Shard(0, 1)),
])
def test_shard_from_gtest_variables(env, expected):
    assert shard.from_env(env) == expected


@pytest.mark.parametrize("env,fragment", [
    ({"GTEST_SHARD_INDEX": "1"}, "GTEST_SHARD_INDEX is set but GTEST_TOTAL_SHARDS is not"),
    ({"GTEST_TOTAL_SHARDS": "2"}, "GTEST_TOTAL_SHARDS is set but GTEST_SHARD_INDEX is not"),
    ({"GTEST_SHARD_INDEX": "2", "GTEST_TOTAL_SHARDS": "2"},
     "GTEST_SHARD_INDEX=2 GTEST_TOTAL_SHARDS=2: expected 0 <= GTEST_SHARD_INDEX < "),
])
def test_bad_gtest_variables(env, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        shard.from_env(env)


def test_two_shards_merged_equal_the_unsharded_run(tmp_path):
    env = {"BENCHDNN_PY_TEST_FAULT": "right_pad_edge"}   # some cases fail: statuses differ
    whole = run_cli("--conv", f"--results={tmp_path / 'all.jsonl'}", *GRID, env=env)
    parts = [run_cli("--conv", f"--shard={k}/2", f"--results={tmp_path / f's{k}.jsonl'}",
                     f"--junit={tmp_path / f's{k}.xml'}", *GRID, env=env) for k in (0, 1)]
    assert whole.code == 1 and whole.summary()["failed"] > 0
    # each shard runs a part, numbered as in the unsharded run; together, every case once
    ran = [cases_of(p) for p in parts]
    assert ran[0] and ran[1]
    idx = sorted(int(l.split(":")[0]) for l in ran[0] + ran[1])
    assert idx == list(range(whole.summary()["tests"]))
    assert "benchdnn-py: shard 0/2: " in parts[0].err

    merged = run_cli("merge", str(tmp_path / "m.jsonl"), str(tmp_path / "s1.jsonl"),
                     str(tmp_path / "s0.jsonl"))
    assert merged.code == 1
    assert merged.summary() == whole.summary()
    key = lambda r: (r["idx"], r["repro"], r["status"], r["reason"], r["errors"])  # noqa: E731
    assert [key(r) for r in read(str(tmp_path / "m.jsonl")).cases] == \
        [key(r) for r in read(str(tmp_path / "all.jsonl")).cases]

    xml = run_cli("merge", str(tmp_path / "m.xml"), str(tmp_path / "s0.xml"),
                  str(tmp_path / "s1.xml"))
    assert xml.code == 1 and xml.summary() == whole.summary()
    assert "merged 2 junit files" in xml.err


def test_gtest_variables_pick_the_same_shard_and_list_mode_shows_it(tmp_path):
    by_option = run_cli("--conv", "--shard=1/3", *GRID)
    by_env = run_cli("--conv", *GRID, env={"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3",
                                           "GTEST_SHARD_STATUS_FILE": str(tmp_path / "ack")})
    listed = run_cli("--conv", "--mode=L", "--shard=1/3", *GRID)
    assert (tmp_path / "ack").exists()     # GoogleTest's "sharding honoured" handshake
    repro = lambda res: [l.split(" __REPRO: ")[0].split(":")[0] + " " +  # noqa: E731
                         re.sub(r"--impl=\S+ ", "", l.split(" __REPRO: ")[1])
                         for l in cases_of(res)]
    assert repro(by_env) == repro(by_option) == [r.replace("--mode=L ", "")
                                                 for r in repro(listed)]
    assert all(":LISTED " in l for l in cases_of(listed))
    assert 0 < len(cases_of(listed)) < 108


@pytest.mark.parametrize("spec", ["2/2", "-1/2", "1", "a/b", "1/0", "0/2/3", ""])
def test_bad_shard_specs(spec):
    res = run_cli("--conv", f"--shard={spec}", "ic8ih8oc8kh3")
    assert res.code == 2 and res.out == ""
    assert res.err == (f"benchdnn-py: error: --shard={spec}: expected K/N with 0 <= K < N "
                       f"(K counts from 0, as GTEST_SHARD_INDEX does), e.g. --shard=0/2\n")


def test_bad_gtest_variables_on_the_command_line():
    res = run_cli("--conv", "ic8ih8oc8kh3", env={"GTEST_TOTAL_SHARDS": "4"})
    assert res.code == 2
    assert res.err.strip() == ("benchdnn-py: error: GTEST_TOTAL_SHARDS is set but "
                               "GTEST_SHARD_INDEX is not: set both, or neither")
