"""compare --rerun: the cases two results files leave inconclusive, run again on this
machine in alternating chunks of both builds, so that noise falls on both sides alike."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import stats
from .compare import (_RERUN_MARKS, RERUN_CHUNK_MS, CaseComparison, Comparison, Options, _decide,
                      _failing, _measure, _summarise, pair_key)
from .results import read


class RerunError(Exception):
    """A rerun could not run (bad interpreter, the command failed); str() is one line."""


def check_python(path: str, option: str) -> str:
    found = shutil.which(path)
    if found is None or not os.access(found, os.X_OK):
        raise RerunError(f"{option}={path}: not an executable")
    return found


def rerun_candidates(comparison: Comparison) -> list[CaseComparison]:
    """Every case whose performance verdict is not `~` (+, - and ?), gated or not: noise
    that made one case look slower makes another look faster, and a report that cleared
    only the first would still be wrong."""
    return [c for c in comparison.cases if c.mark in _RERUN_MARKS and c.n_base and c.n_new]


def _rerun_args(cases: list[CaseComparison], results_path: str, side: int = 0) -> list[str]:
    """One argument stream running every case as its side (0 base, 1 new) recorded it
    (its own backend too), each under its own timing settings and after --reset, so no
    option of one case leaks into the next (options are sticky)."""
    args = [f"--results={results_path}", "--summary=no-impl"]
    for case in cases:
        record = (case.base, case.new)[side] or case.base or case.new
        assert record is not None
        g = record.get("settings", {}).get("global", {})
        tokens = record["key"].split()
        args += ["--mode=P", f"--max-ms-per-prb={g.get('max_ms_per_prb', 3000.0):g}",
                 f"--fix-times-per-prb={g.get('fix_times_per_prb', 0)}",
                 tokens[0], "--reset", *tokens[1:]]
    return args


def _run_side(python: str, cases: list[CaseComparison], workdir: Path, tag: str,
              side: int = 0) -> list[dict[str, Any]]:
    path = workdir / f"{tag}.jsonl"
    cmd = [python, "-m", "benchdnn_py", *_rerun_args(cases, str(path), side)]
    env = {k: v for k, v in os.environ.items() if k != "BENCHDNN_PY_NO_TABLES"}
    env["BENCHDNN_PY_NO_TABLES"] = "1"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode not in (0, 1) or not path.exists():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RerunError(f"rerun with {python} exited with {proc.returncode}: {last}")
    records = read(str(path)).cases
    keys = [pair_key(r["key"]) for r in records]
    if keys != [c.key for c in cases]:
        raise RerunError(f"rerun with {python} ran other cases than asked "
                         f"({len(keys)} records for {len(cases)} cases)")
    return records


def _chunks(cases: list[CaseComparison]) -> list[list[CaseComparison]]:
    """Consecutive groups of about RERUN_CHUNK_MS of measurement (by the runs' own wall
    times), so that the two halves of a round are seconds apart, not minutes."""
    chunks: list[list[CaseComparison]] = [[]]
    budget = 0.0
    for case in cases:
        cost = max(float(r.get("wall_ms") or 0.0) for r in (case.base, case.new) if r)
        if chunks[-1] and budget + cost > RERUN_CHUNK_MS:
            chunks.append([])
            budget = 0.0
        chunks[-1].append(case)
        budget += cost
    return chunks


def rerun(comparison: Comparison, base_python: str, new_python: str, rounds: int = 5,
          log: Callable[[str], None] = lambda line: None) -> Comparison:
    """Remeasures the flagged cases (rerun_candidates) in ``rounds`` rounds of base and
    new timed back to back, and decides them again from those rounds alone.

    Samples within one run share the machine's state (another job, the clock, a virtual
    machine's host), so the first verdict can mistake a shift of the whole machine for a
    change; a round pairs a base and a new measurement under one state. The cases go in
    chunks of a couple of seconds, each chunk's rounds back to back, in ABBA order (base
    first in odd rounds, new first in even ones) so that a steady drift cancels. A
    remeasured case's speedup, interval and p-value then come from stats.paired_rounds,
    Benjamini-Hochberg runs over the remeasured cases (a second, confirming stage on fresh
    data), and the threshold and floor apply as before. Every other case keeps its
    verdict. Raises RerunError.
    """
    flagged = rerun_candidates(comparison)
    if not flagged:
        return comparison
    # (key, occurrence) -> per side, one record per round
    measured: dict[tuple[str, int], tuple[list[dict], list[dict]]] = {
        (c.key, c.occurrence): ([], []) for c in flagged}
    pythons = (base_python, new_python)
    chunks = _chunks(flagged)
    done = 0
    with tempfile.TemporaryDirectory(prefix="benchdnn-py-rerun-") as tmp:
        for n, chunk in enumerate(chunks, 1):
            log(f"rerun: cases {done + 1}-{done + len(chunk)} of {len(flagged)} "
                f"(chunk {n}/{len(chunks)}), {rounds} rounds")
            done += len(chunk)
            for r in range(rounds):
                for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                    records = _run_side(pythons[side], chunk, Path(tmp), f"{n}-{r}-{side}",
                                        side)
                    for case, record in zip(chunk, records):
                        measured[(case.key, case.occurrence)][side].append(record)
    cases = [dataclasses.replace(c) for c in comparison.cases]
    redo = [c for c in cases if (c.key, c.occurrence) in measured]
    for case in redo:
        _from_rounds(case, *measured[(case.key, case.occurrence)], comparison.options)
    tested = [c for c in redo if c.p_value is not None]
    for case, q in zip(tested, stats.benjamini_hochberg([c.p_value for c in tested])):
        case.q_value = q
        _decide(case, comparison.options)
    result = dataclasses.replace(
        comparison, cases=cases, drift_warning="",
        warnings=[w for w in comparison.warnings if w != comparison.drift_warning])
    _summarise(result)
    before = {(c.key, c.occurrence): c.mark for c in flagged}
    kept = sum(1 for c in redo if c.mark == before[(c.key, c.occurrence)])
    result.rerun_note = (f"{len(flagged)} flagged cases remeasured in {rounds} rounds "
                         f"alternating base ({base_python}) and new ({new_python}); "
                         f"{kept} kept their mark")
    return result


def _from_rounds(case: CaseComparison, base: list[dict], new: list[dict],
                 opt: Options) -> None:
    """A remeasured case's figures: pooled samples for the medians and minimums shown,
    the paired-rounds statistics for the verdict."""
    case.remeasured = True
    # A round that failed speaks for its side: its status is the one shown.
    worst_b = next((r for r in base if _failing(r)), base[0])
    worst_n = next((r for r in new if _failing(r)), new[0])
    case.base = {**worst_b, "samples_ms": [s for r in base for s in r["samples_ms"]]}
    case.new = {**worst_n, "samples_ms": [s for r in new for s in r["samples_ms"]]}
    case.note, case.p_value, case.q_value = "", None, None
    if any(_failing(r) or not r["samples_ms"] for r in base + new):
        _measure(case, opt)    # it failed or stopped timing on the rerun: say so
        return
    case.base_median = stats.median(case.base["samples_ms"])
    case.new_median = stats.median(case.new["samples_ms"])
    case.base_min, case.new_min = min(case.base["samples_ms"]), min(case.new["samples_ms"])
    case.speedup, case.ci, case.p_value = stats.paired_rounds(
        [stats.median(r["samples_ms"]) for r in base],
        [stats.median(r["samples_ms"]) for r in new], confidence=opt.confidence)
    if len(base) < 2:
        case.mark, case.note, case.p_value = "?", "one rerun round: no test", None
