"""Comparing two results files: matching, per-case verdicts, the summary and the gate.

Cases match by their comparison key (driver, implementation filter, the driver's repro:
see results.case_key) and, when a key repeats within a run, by its occurrence. Each pair
gets one mark:

  +  slower: beyond the threshold and significant after Benjamini-Hochberg
  -  faster: the same, the other way
  ~  within noise: the change is not beyond the threshold
  !  newly failing (a failure in new, not in base) - always a failure, whatever the speed
  *  fixed (a failure in base, not in new)
  x  not comparable: missing on one side, failing on both, or no timing on a side
  ?  too few samples to test, or a change beyond the threshold that is not significant

README.md ("Results files and comparing runs") explains the statistics and exit codes;
stats.py holds the tests themselves.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import stats
from .results import ResultsFile, read
from .status import EXIT_FAILURES, EXIT_OK, Status
from .timing import GUARD_CACHE_SHARE, GUARD_SHARE, GuardTally

EXIT_REGRESSION = 3

MARKS = "+-~!*x?"
MARK_MEANING = {
    "+": "slower", "-": "faster", "~": "within noise", "!": "newly failing",
    "*": "fixed", "x": "not comparable", "?": "too few samples or too noisy",
}

# --fail-on conditions -> the exit status each one gives when it gates. Correctness
# conditions outrank performance ones when both gate.
FAIL_CONDITIONS = {
    "flip": EXIT_FAILURES,         # a `!`: passed (or ran) in base, fails in new
    "failure": EXIT_FAILURES,      # any case failing in new, old failures included
    "missing": EXIT_FAILURES,      # a base case absent from new (a crashed run?)
    "regression": EXIT_REGRESSION,  # a `+`
    "improvement": EXIT_REGRESSION,  # a `-` (forces a baseline refresh)
    "noisy": EXIT_REGRESSION,      # a `?`
}
DEFAULT_FAIL_ON = ("flip", "regression")
# The performance marks --rerun remeasures.
_RERUN_MARKS = frozenset("+-?")

# Many cases slower AND many faster in one comparison (at least this many, and this share
# of the tested cases, each way) is the signature of a machine whose speed moved.
DRIFT_CASES, DRIFT_SHARE = 20, 0.05

# --rerun measures in chunks of about this much time per build and round: short enough
# that both builds of a round see one state of the machine (a virtual machine's speed can
# drift by half within a minute), long enough that process start-up does not dominate.
RERUN_CHUNK_MS = 2000.0

# Other processes keeping this many CPUs busy on average during a run competed with it
# (an OpenMP thread whose CPU is taken stalls its whole team): the run's times are
# suspect. An idle machine's background is a few hundredths.
BUSY_CPUS = 0.2

_FAILURE_STATUSES = frozenset(s.value for s in Status if s.is_failure)


@dataclasses.dataclass(frozen=True)
class Options:
    threshold: float = 0.05        # relative: 0.05 = 5% slower (or faster)
    # Absolute floor: a change smaller than this many microseconds of median time is never
    # beyond the threshold. Microsecond problems move by a few tenths of a microsecond
    # between runs (timer and call overhead, cache state), well over 5% of their time.
    floor_us: float = 1.0
    alpha: float = 0.05            # false discovery rate across the compared cases
    min_samples: int = 5           # benchdnn's minimum timed runs per problem
    confidence: float = 0.95
    draws: int = 2000              # bootstrap resamples per interval
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    force: bool = False
    top: int = 10


@dataclasses.dataclass
class CaseComparison:
    key: str
    occurrence: int                  # 1 for the first case with this key in a run
    base: dict[str, Any] | None
    new: dict[str, Any] | None
    mark: str = "x"
    note: str = ""
    base_median: float | None = None   # ms
    new_median: float | None = None
    base_min: float | None = None
    new_min: float | None = None
    speedup: float | None = None       # base median / new median; > 1 = faster
    ci: tuple[float, float] | None = None
    p_value: float | None = None       # Mann-Whitney, two-sided
    q_value: float | None = None       # after Benjamini-Hochberg
    remeasured: bool = False

    @property
    def label(self) -> str:
        return self.key if self.occurrence == 1 else f"{self.key} (#{self.occurrence})"

    @property
    def impl_base(self) -> str:
        return self.base.get("impl", "") if self.base else ""

    @property
    def impl_new(self) -> str:
        return self.new.get("impl", "") if self.new else ""

    @property
    def impl_changed(self) -> bool:
        return bool(self.base and self.new and self.impl_base != self.impl_new)

    @property
    def rerun(self) -> str:
        """The command that reruns this case on either build (no pinned implementation)."""
        record = self.new or self.base
        assert record is not None
        return shlex.join(["benchdnn-py", *record.get("repro", record["key"]).split()])

    @property
    def n_base(self) -> int:
        return len(self.base.get("samples_ms") or []) if self.base else 0

    @property
    def n_new(self) -> int:
        return len(self.new.get("samples_ms") or []) if self.new else 0


@dataclasses.dataclass
class Comparison:
    base: ResultsFile
    new: ResultsFile
    options: Options
    cases: list[CaseComparison]
    refusals: list[str]              # why the runs are not comparable (unless --force)
    warnings: list[str]
    geomean: float | None = None
    geomean_ci: tuple[float, float] | None = None
    geomean_cases: int = 0
    rerun_note: str = ""
    drift_warning: str = ""          # also in warnings; a rerun answers it

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(case.mark for case in self.cases)
        return {m: c.get(m, 0) for m in MARKS}

    @property
    def conditions(self) -> dict[str, int]:
        """How many cases meet each --fail-on condition."""
        counts = self.counts
        return {
            "flip": counts["!"],
            "failure": sum(1 for c in self.cases if c.new and _failing(c.new)),
            "missing": sum(1 for c in self.cases if c.base and not c.new),
            "regression": counts["+"],
            "improvement": counts["-"],
            "noisy": counts["?"],
        }

    @property
    def gated(self) -> list[tuple[str, int]]:
        hits = self.conditions
        return [(c, hits[c]) for c in self.options.fail_on if hits[c]]

    @property
    def exit_code(self) -> int:
        codes = {FAIL_CONDITIONS[c] for c, _ in self.gated}
        if EXIT_FAILURES in codes:
            return EXIT_FAILURES
        return EXIT_REGRESSION if codes else EXIT_OK

    @property
    def regressions(self) -> list[CaseComparison]:
        """The slowed cases, worst first (the first ``options.top`` are the summary's)."""
        slowed = [c for c in self.cases if c.mark == "+"]
        return sorted(slowed, key=lambda c: (c.speedup or 0.0, c.label))

    @property
    def impl_changes(self) -> int:
        return sum(1 for c in self.cases if c.impl_changed)

    def verdict(self) -> str:
        gated = self.gated
        if not gated:
            return "nothing gated (exit 0)"
        parts = ", ".join(f"{c}: {n}" for c, n in gated)
        return f"gated by --fail-on={','.join(self.options.fail_on)}: {parts} " \
               f"(exit {self.exit_code})"


def _failing(record: dict[str, Any]) -> bool:
    return record.get("status") in _FAILURE_STATUSES


def _seed(key: str, occurrence: int) -> int:
    # From the case itself, so an interval does not depend on which other cases ran.
    return zlib.crc32(f"{key}#{occurrence}".encode())


# --------------------------------------------------------------------------------------
# Comparability
# --------------------------------------------------------------------------------------

def _env_get(env: dict[str, Any], *path: str) -> Any:
    for part in path:
        if not isinstance(env, dict):
            return None
        env = env.get(part)  # type: ignore[assignment]
    return env


def comparability(base: ResultsFile, new: ResultsFile) -> tuple[list[str], list[str]]:
    """(refusals, warnings). Refused: a different CPU model, set of usable instruction
    sets or thread count, since every time would differ for that reason alone. Warned:
    whatever else could move times (compiler, OpenMP settings, timing settings, an
    unfinished run), and differences that are the point (backend, injected fault)."""
    refusals, warnings = [], []
    b, n = base.environment, new.environment
    for label, path in (("CPU model", ("cpu", "model")),
                        ("usable instruction sets", ("isa", "usable")),
                        ("thread count", ("threads", "max"))):
        bv, nv = _env_get(b, *path), _env_get(n, *path)
        if bv != nv:
            refusals.append(f"{label} differs: base {_show(bv)}, new {_show(nv)}")
    for label, path in (("CPU flags", ("cpu", "flags")),
                        ("C compiler", ("core", "compiler")),
                        ("C flags", ("core", "flags")),
                        ("OpenMP environment", ("threads", "env")),
                        ("injected test fault", ("test_fault",))):
        bv, nv = _env_get(b, *path), _env_get(n, *path)
        if bv != nv:
            if path == ("test_fault",):   # absent means none, not unknown
                warnings.append(f"{label} differs: base {_show(bv) if bv else 'none'}, "
                                f"new {_show(nv) if nv else 'none'}")
            elif isinstance(bv, list) and isinstance(nv, list):
                only_b = sorted(set(bv) - set(nv))[:5]
                only_n = sorted(set(nv) - set(bv))[:5]
                warnings.append(f"{label} differ: only in base {only_b}, only in new {only_n}")
            else:
                warnings.append(f"{label} differs: base {_show(bv)}, new {_show(nv)}")
    if base.header.get("backend") != new.header.get("backend"):
        warnings.append(f"backend differs: base {base.header.get('backend')}, new "
                        f"{new.header.get('backend')}")
    timing = _timing_settings(base), _timing_settings(new)
    if timing[0] != timing[1]:
        warnings.append(f"timing settings differ: base {timing[0] or 'none'}, new "
                        f"{timing[1] or 'none'}")
    for side, f in (("base", base), ("new", new)):
        busy = (f.footer or {}).get("others_cpus")
        if isinstance(busy, (int, float)) and busy >= BUSY_CPUS:
            cpus = _env_get(f.environment, "cpu", "logical_cpus") or "?"
            warnings.append(f"{side}: other processes kept {busy:.2f} of {cpus} CPUs busy "
                            f"during the run; its times may be inflated")
        degraded = GuardTally.of_records(f.cases).degraded
        if degraded:
            warnings.append(f"{side}: {degraded} case{'s' if degraded > 1 else ''} timed on a "
                            f"degraded machine (the perf guard's compute probe read under "
                            f"{GUARD_SHARE:.0%} of the peak, or its cache probe under "
                            f"{GUARD_CACHE_SHARE:.0%} of its best); their times are the "
                            f"machine's")
        warnings += f.warnings
    return refusals, warnings


def _timing_settings(f: ResultsFile) -> str:
    seen = []
    for record in f.cases:
        g = record.get("settings", {}).get("global", {})
        text = (f"--mode={g.get('mode')} --max-ms-per-prb={g.get('max_ms_per_prb'):g} "
                f"--fix-times-per-prb={g.get('fix_times_per_prb')}"
                if isinstance(g.get("max_ms_per_prb"), (int, float)) else str(g.get("mode")))
        if g.get("perf_interleave"):   # (records before it have no such setting: false)
            text += " --perf-interleave=true"
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value)) or "(none)"
    return "(unknown)" if value is None else f"`{value}`"


# --------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------

_BACKEND_OPTION = re.compile(r"--backend=\S+\s*")


def pair_key(key: str) -> str:
    """A case's key without its backend: `compare torch.jsonl native.jsonl` pairs the
    same problem run on two backends (the backend is then what is under test)."""
    return _BACKEND_OPTION.sub("", key).strip()


def _indexed(f: ResultsFile) -> dict[tuple[str, int], dict[str, Any]]:
    seen: Counter = Counter()
    out = {}
    for record in f.cases:
        key = pair_key(record["key"])
        seen[key] += 1
        out[(key, seen[key])] = record
    return out


def _pair(base: ResultsFile, new: ResultsFile) -> list[CaseComparison]:
    b, n = _indexed(base), _indexed(new)
    keys = list(b) + [k for k in n if k not in b]
    return [CaseComparison(key, occ, b.get((key, occ)), n.get((key, occ)))
            for key, occ in keys]


def _measure(case: CaseComparison, opt: Options) -> bool:
    """Everything that does not depend on the other cases: correctness marks, medians and
    the interval. True when the case is to be tested (the caller computes every p-value
    at once); its performance mark waits for the BH correction."""
    b, n = case.base, case.new
    if b is None or n is None:
        case.mark = "x"
        case.note = "only in base" if n is None else "only in new"
        return False
    bf, nf = _failing(b), _failing(n)
    if nf and not bf:
        case.mark = "!"
        case.note = f"{b['status']} -> {_status_text(n)}"
        return False
    if bf and not nf:
        case.mark, case.note = "*", f"{_status_text(b)} -> {n['status']}"
        return False
    if bf and nf:
        case.mark, case.note = "x", f"fails in both runs ({n['status']})"
        return False
    bs, ns = b.get("samples_ms") or [], n.get("samples_ms") or []
    if not bs or not ns:
        case.mark = "x"
        sides = [f"{side} {r['status']}" for side, r, s in (("base", b, bs), ("new", n, ns))
                 if not s]
        case.note = f"no timing samples ({', '.join(sides)})"
        return False
    case.base_median, case.new_median = stats.median(bs), stats.median(ns)
    case.base_min, case.new_min = min(bs), min(ns)
    if case.new_median <= 0 or case.base_median <= 0:
        case.mark, case.note = "?", "a median time of 0"
        return False
    case.speedup = case.base_median / case.new_median
    case.ci = stats.bootstrap_speedup_ci(bs, ns, confidence=opt.confidence,
                                         draws=opt.draws, seed=_seed(case.key, case.occurrence))
    if (len(bs) < opt.min_samples or len(ns) < opt.min_samples
            or stats.min_p_value(len(bs), len(ns)) > opt.alpha):
        case.mark = "?"
        case.note = f"too few samples ({len(bs)} base, {len(ns)} new; at least " \
                    f"{opt.min_samples} each)"
        return False
    return True


def _status_text(record: dict[str, Any]) -> str:
    """A status as the result line shows it: with its reason and error count."""
    text = record["status"]
    if record.get("reason"):
        text += f" ({record['reason']})"
    if record.get("errors"):
        text += f" (errors:{record['errors']} total:{record.get('total', 0)})"
    return text


def _decide(case: CaseComparison, opt: Options) -> None:
    """The performance mark of a tested case: beyond the threshold (and the absolute
    floor) AND significant after Benjamini-Hochberg."""
    assert case.speedup is not None and case.q_value is not None
    assert case.base_median is not None and case.new_median is not None
    delta_us = (case.new_median - case.base_median) * 1e3
    beyond = 1.0 + opt.threshold
    slower = 1.0 / case.speedup > beyond and delta_us > opt.floor_us
    faster = case.speedup > beyond and -delta_us > opt.floor_us
    if not (slower or faster):
        case.mark = "~"
        return
    if case.q_value <= opt.alpha:
        case.mark = "+" if slower else "-"
        return
    case.mark = "?"
    change = (1.0 / case.speedup - 1.0) * 100
    case.note = (f"{abs(change):.1f}% {'slower' if slower else 'faster'} but not "
                 f"significant (q={case.q_value:.2g} > {opt.alpha:g})")


def compare_files(base: ResultsFile, new: ResultsFile, opt: Options = Options()
                  ) -> Comparison:
    """Compares two read results files."""
    refusals, warnings = comparability(base, new)
    cases = _pair(base, new)
    tested = [case for case in cases if _measure(case, opt)]
    p_values = stats.mann_whitney_p_many([(c.base["samples_ms"], c.new["samples_ms"])
                                          for c in tested])  # type: ignore[index]
    for case, p in zip(tested, p_values):
        case.p_value = p
    for case, q in zip(tested, stats.benjamini_hochberg([c.p_value for c in tested])):
        case.q_value = q
        _decide(case, opt)
    result = Comparison(base, new, opt, cases, refusals, warnings)
    _summarise(result)
    slower, faster = result.counts["+"], result.counts["-"]
    if min(slower, faster) >= max(DRIFT_CASES, DRIFT_SHARE * len(tested)):
        result.drift_warning = (
            f"{slower} cases slower and {faster} faster at once: more likely the machine's "
            f"speed drifted between or during the runs than a change; --rerun remeasures "
            f"them interleaved")
        result.warnings.append(result.drift_warning)
    return result


def _summarise(result: Comparison) -> None:
    """The geometric mean of the speedups of every case timed on both sides."""
    speedups = [c.speedup for c in result.cases if c.speedup is not None]
    result.geomean, result.geomean_ci, result.geomean_cases = None, None, len(speedups)
    if speedups:
        result.geomean = stats.geometric_mean(speedups)
        result.geomean_ci = stats.geometric_mean_ci(
            speedups, confidence=result.options.confidence, draws=result.options.draws)


def compare(base_path: str, new_path: str, opt: Options = Options()) -> Comparison:
    """Reads both files (results.read: ResultsError on a bad one) and compares them."""
    return compare_files(read(base_path), read(new_path), opt)


# --------------------------------------------------------------------------------------
# --rerun: remeasure the flagged cases, alternating the builds
# --------------------------------------------------------------------------------------

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


def parse_threshold(text: str) -> float:
    """--threshold as a fraction: `5%` and `5` are both 5 percent."""
    value = text.strip().rstrip("%")
    number = float(value)  # ValueError is the caller's to report
    if not math.isfinite(number) or number < 0:
        raise ValueError(text)
    return number / 100.0
