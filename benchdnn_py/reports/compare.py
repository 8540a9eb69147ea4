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
import re
import shlex
import zlib
from collections import Counter
from typing import Any

from ..engine.timing import GUARD_CACHE_SHARE, GUARD_SHARE, GuardTally
from ..errors import BenchError
from ..status import EXIT_FAILURES, EXIT_OK, Status
from . import stats
from .results import ResultsFile, read

class CompareError(BenchError):
    """Two runs that give nothing to compare."""


EXIT_REGRESSION = 3
# A performance condition gated, but on a run timed on a disturbed machine: the marks may
# be the machine's, so the verdict waits for a quiet run or --rerun.
EXIT_INCONCLUSIVE = 4

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
    base_backend: str | None = None   # take only this backend's cases of BASE
    new_backend: str | None = None    # ... and of NEW (two backends of one run)


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
    disturbed: tuple[str, ...] = ()  # the sides ("base", "new") timed on a disturbed machine

    @property
    def paired(self) -> int:
        """Cases present in both runs."""
        return sum(1 for c in self.cases if c.base and c.new)

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
    def inconclusive(self) -> bool:
        """Performance conditions gate, but a side was timed on a disturbed machine and no
        --rerun remeasured the cases: a slowdown there is the machine's as likely as the
        code's. Correctness conditions are never inconclusive."""
        return bool(self.disturbed) and not self.rerun_note and any(
            FAIL_CONDITIONS[c] == EXIT_REGRESSION for c, _ in self.gated)

    @property
    def exit_code(self) -> int:
        codes = {FAIL_CONDITIONS[c] for c, _ in self.gated}
        if EXIT_FAILURES in codes:
            return EXIT_FAILURES
        if not codes:
            return EXIT_OK
        return EXIT_INCONCLUSIVE if self.inconclusive else EXIT_REGRESSION

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
        text = f"gated by --fail-on={','.join(self.options.fail_on)}: {parts}"
        if self.exit_code == EXIT_INCONCLUSIVE:
            sides = " and ".join(self.disturbed)
            were = "was" if len(self.disturbed) == 1 else "were"
            text = (f"inconclusive: {text}, but {sides} {were} timed on a disturbed machine; "
                    f"rerun on a quiet machine or with --rerun")
        return f"{text} (exit {self.exit_code})"


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


def comparability(base: ResultsFile, new: ResultsFile,
                  disturbed: dict[str, list[str]]) -> tuple[list[str], list[str]]:
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
        warnings += [f"{side}: {why}" for why in disturbed[side]]
        warnings += f.warnings
    return refusals, warnings


def disturbances(f: ResultsFile) -> list[str]:
    """Why a run's times may be the machine's rather than the code's: other processes
    kept CPUs busy during it, or the perf guard found cases timed on a degraded machine.
    An empty list: an undisturbed run."""
    found = []
    busy = (f.footer or {}).get("others_cpus")
    if isinstance(busy, (int, float)) and busy >= BUSY_CPUS:
        cpus = _env_get(f.environment, "cpu", "logical_cpus") or "?"
        found.append(f"other processes kept {busy:.2f} of {cpus} CPUs busy during the run; "
                     f"its times may be inflated")
    degraded = GuardTally.of_records(f.cases).degraded
    if degraded:
        found.append(f"{degraded} case{'s' if degraded > 1 else ''} timed on a degraded "
                     f"machine (the perf guard's compute probe read under {GUARD_SHARE:.0%} "
                     f"of the peak, or its cache probe under {GUARD_CACHE_SHARE:.0%} of its "
                     f"best); their times are the machine's")
    return found


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
    disturbed = {"base": disturbances(base), "new": disturbances(new)}
    refusals, warnings = comparability(base, new, disturbed)
    cases = _pair(base, new)
    tested = [case for case in cases if _measure(case, opt)]
    p_values = stats.mann_whitney_p_many([(c.base["samples_ms"], c.new["samples_ms"])
                                          for c in tested])  # type: ignore[index]
    for case, p in zip(tested, p_values):
        case.p_value = p
    for case, q in zip(tested, stats.benjamini_hochberg([c.p_value for c in tested])):
        case.q_value = q
        _decide(case, opt)
    result = Comparison(base, new, opt, cases, refusals, warnings,
                        disturbed=tuple(side for side, why in disturbed.items() if why))
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


def only_backend(f: ResultsFile, backend: str | None) -> ResultsFile:
    """The file with only the cases run on one backend (None: all of them); the header
    names that backend. CompareError when it ran none."""
    if backend is None:
        return f
    cases = [r for r in f.cases if r.get("backend", "native") == backend]
    if not cases:
        ran = sorted({r.get("backend", "native") for r in f.cases})
        raise CompareError(f"{f.path}: no case ran on backend `{backend}` (its cases ran on "
                           f"{', '.join(ran) or 'none'})")
    return dataclasses.replace(f, cases=cases, header={**f.header, "backend": backend})


def compare(base_path: str, new_path: str, opt: Options = Options()) -> Comparison:
    """Reads both files (results.read: ResultsError on a bad one) and compares them;
    CompareError when they have no case in common."""
    base = only_backend(read(base_path), opt.base_backend)
    new = only_backend(read(new_path), opt.new_backend)
    result = compare_files(base, new, opt)
    if not result.paired:
        raise CompareError(f"no case of {new_path} matches a case of {base_path} "
                           f"({len(result.base.cases)} and {len(result.new.cases)} cases): "
                           f"nothing to compare")
    return result


# --------------------------------------------------------------------------------------
# --rerun: remeasure the flagged cases, alternating the builds
# --------------------------------------------------------------------------------------


def parse_threshold(text: str) -> float:
    """--threshold as a fraction: `5%` and `5` are both 5 percent."""
    value = text.strip().rstrip("%")
    number = float(value)  # ValueError is the caller's to report
    if not math.isfinite(number) or number < 0:
        raise ValueError(text)
    return number / 100.0
