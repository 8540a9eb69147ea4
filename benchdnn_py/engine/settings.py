"""Global settings: options that parse anywhere, are never reset, and shape the whole run
(benchdnn reference 3.3, 3.4)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Callable

from ..common.check import DEFAULT_SAMPLED_POINTS, FULL, Check, parse_check
from ..errors import UsageError
from ..reports import perf_targets
from ..reports.perf_report import PerfTemplate, parse_template
from . import batch
from .options import Option, ascii_number, bool_value, enum_value, float_value, int_value


@dataclasses.dataclass(frozen=True)
class Mode:
    """What runs for every case. CP is benchdnn's pre-v3.10 correctness-then-performance."""

    letters: str
    correctness: bool
    performance: bool
    execute: bool

    @property
    def list_only(self) -> bool:
        return not self.execute


MODES = {
    "C": Mode("C", correctness=True, performance=False, execute=True),
    "P": Mode("P", correctness=False, performance=True, execute=True),
    "CP": Mode("CP", correctness=True, performance=True, execute=True),
    "L": Mode("L", correctness=False, performance=False, execute=False),
}

MAX_MS_RANGE = (10.0, 60000.0)
COLOR_CHOICES = ("auto", "always", "never")


@dataclasses.dataclass(frozen=True)
class Summary:
    failures: bool = True
    impl: bool = True
    impl_csv: bool = False


def _parse_summary(text: str) -> Summary:
    flags = dataclasses.asdict(Summary())
    for item in text.split("+") if text else []:
        on = not item.startswith("no-")
        key = item[3:] if not on else item
        field = key.replace("-", "_")
        if field not in flags:
            raise UsageError(f"--summary={text}: unknown item `{item}`; expected "
                             f"[no-]failures, [no-]impl or [no-]impl-csv joined by `+`")
        flags[field] = on
    return Summary(**flags)


def _parse_max_ms(text: str) -> float:
    value = float_value("max-ms-per-prb")(text)
    return min(max(value, MAX_MS_RANGE[0]), MAX_MS_RANGE[1])


def _parse_fix_times(text: str) -> int:
    """A count of timed runs; 0 (the default) times by --max-ms-per-prb instead."""
    return int_value("fix-times-per-prb", 0)(text)


def _parse_results(text: str) -> str:
    # Standard output carries the result lines, so the records cannot share it.
    if text == "-":
        raise UsageError("--results=-: standard output carries the result lines; name a file")
    return text


# -- running at scale (docs/running.md) ---------------------------------------------------

def _parse_jobs(text: str) -> int:
    try:
        jobs = int(ascii_number(text))
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise UsageError(f"--jobs={text}: expected a positive number of worker processes, "
                         f"e.g. --jobs=2")
    return jobs


def _parse_timeout(text: str) -> float:
    try:
        seconds = float(ascii_number(text))
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise UsageError(f"--timeout={text}: expected a number of seconds greater than 0, "
                         f"e.g. --timeout=60")
    return seconds


@dataclasses.dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``total``, 0-based like GTEST_SHARD_INDEX."""

    index: int
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def parse_shard(text: str, what: str = "--shard") -> Shard:
    index_text, sep, total_text = text.partition("/")
    try:
        index, total = int(index_text), int(total_text)
    except ValueError:
        index, total = -1, 0
    if not sep or total < 1 or not 0 <= index < total:
        raise UsageError(f"{what}={text}: expected K/N with 0 <= K < N (K counts from 0, "
                         f"as GTEST_SHARD_INDEX does), e.g. --shard=0/2")
    return Shard(index, total)


def _parse_path(name: str):
    def parse(text: str) -> str:
        if text in ("", "-"):
            raise UsageError(f"--{name}={text}: expected a file name")
        return text
    return parse


def parse_perf_targets(text: str, including_dir: Path | None = None,
                       seen_dirs: list[Path] | None = None) -> perf_targets.Targets | None:
    """A targets file for perf-table, found as --batch= finds a batch file (next to the
    batch file naming it first) and checked whole; "" clears it."""
    if not text:
        return None
    path = batch.find(text, including_dir, seen_dirs or [], "perf-targets", "targets file")
    return perf_targets.load(path)


DASK_SCHEME = "dask://"


def parse_executor(text: str) -> str:
    """``local`` (worker processes on this machine) or ``dask://HOST:PORT`` (a running
    Dask distributed scheduler)."""
    if text == "local":
        return text
    if text.startswith(DASK_SCHEME):
        host, sep, port = text[len(DASK_SCHEME):].rpartition(":")
        if sep and host and port.isascii() and port.isdigit() and 0 < int(port) < 65536:
            return text
    raise UsageError(f"--executor={text}: expected local or dask://HOST:PORT (a Dask "
                     f"scheduler's address, e.g. dask://127.0.0.1:8786)")


# --isa levels, lowest first (the C core's BDNN_ISA_* order, as oneDNN's max ISA): a cap
# lets one machine run every row family a lesser CPU would.
ISA_LEVELS = ("scalar", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "avx512_amx")


def _parse_isa(text: str) -> str:
    level = text.lower()
    if level not in ISA_LEVELS:
        raise UsageError(f"--isa={text}: unknown instruction set; expected one of "
                         f"{', '.join(ISA_LEVELS)}")
    return level


@dataclasses.dataclass(frozen=True)
class GlobalSettings:
    mode: Mode = MODES["C"]
    max_ms_per_prb: float = 3000.0
    fix_times_per_prb: int = 0
    canonical: bool = False
    verbose: int = 0
    summary: Summary = Summary()
    perf_template: PerfTemplate = parse_template("def")
    isa: str = ""       # --isa: the highest instruction set rows may use; "": the CPU's
    # time the cases of one descriptor together, in turns (timing.TimingGroup)
    perf_interleave: bool = False
    results: str = ""   # where the run's records go; not part of any repro line
    # How the run is spread out and reported (RUN_FIELDS): never part of a case.
    jobs: int = 0              # 0: not given (cases run in this process)
    timeout: float = 0.0       # seconds per case; 0: none
    shard: Shard | None = None
    junit: str = ""
    resume: str = ""
    replace: bool = False      # --results and --junit may overwrite an existing file
    executor: str = "local"
    perf_guard: bool = True    # time perf cases between compute probes (timing.py)
    color: str = "auto"        # standard error's colours: auto, always or never
    # the targets perf-table judges the run's results by (the results file's header)
    perf_targets: perf_targets.Targets | None = None
    check_ref_impl: bool = False   # a case run by a reference implementation is FAILED
    # --check: every output point or a sample (--conv, --deconv). Global so that a
    # benchdnn file's own --reset keeps what the command line asked for.
    check: Check = FULL

    def repro_prefix(self) -> str:
        """The non-default global options, as benchdnn prints them before the driver."""
        parts = []
        if self.mode != MODES["C"]:   # equality: a worker gets an unpickled copy
            parts.append(f"--mode={self.mode.letters}")
        if self.max_ms_per_prb != GlobalSettings.max_ms_per_prb:
            parts.append(f"--max-ms-per-prb={self.max_ms_per_prb:g}")
        if self.fix_times_per_prb:
            parts.append(f"--fix-times-per-prb={self.fix_times_per_prb}")
        if self.canonical:
            parts.append("--canonical=true")
        if self.isa:
            parts.append(f"--isa={self.isa}")
        if self.check != FULL:
            parts.append(f"--check={self.check}")
        return "".join(p + " " for p in parts)


# field name on GlobalSettings -> option
GLOBAL_OPTIONS: dict[str, Option] = {
    "mode": Option("mode", enum_value("mode", MODES), MODES["C"],
                   "C correctness (default), P performance, CP both, L list only"),
    "check": Option("check", parse_check, FULL,
                    "full (every output point) or sampled[:N] (N points of each output "
                    "tensor drawn at random, the same on every rerun of a case; N "
                    f"defaults to {DEFAULT_SAMPLED_POINTS}); --conv and --deconv"),
    "max_ms_per_prb": Option("max-ms-per-prb", _parse_max_ms, 3000.0,
                             "time budget per problem in perf modes, ms (clamped to 10..60000)"),
    "fix_times_per_prb": Option("fix-times-per-prb", _parse_fix_times, 0,
                                "fixed number of timed runs instead of the time budget"),
    "canonical": Option("canonical", bool_value("canonical"), False,
                        "print repro lines with every descriptor field"),
    "verbose": Option("verbose", int_value("verbose", 0), 0, "verbosity level (also -vN)"),
    "summary": Option("summary", _parse_summary, Summary(),
                      "[no-]failures+[no-]impl+[no-]impl-csv end-of-run sections"),
    "perf_template": Option("perf-template", parse_template, parse_template("def"),
                            "def, csv, or a custom template of %fields%"),
    "isa": Option("isa", _parse_isa, "",
                  "the highest instruction set kernels may use: " + ", ".join(ISA_LEVELS)
                  + " (default: all the CPU has)"),
    "results": Option("results", _parse_results, "",
                      "write every case's record (settings, status, timing samples) to "
                      "FILE as JSON Lines (.gz: gzip); see `benchdnn-py compare`"),
    "jobs": Option("jobs", _parse_jobs, 0,
                   "run correctness cases in N worker processes (also -j N)"),
    "timeout": Option("timeout", _parse_timeout, 0.0,
                      "fail a case that runs longer than SECONDS (cases run in a worker "
                      "process)"),
    "shard": Option("shard", parse_shard, None,
                    "run shard K of N (K from 0); default from GTEST_SHARD_INDEX and "
                    "GTEST_TOTAL_SHARDS"),
    "junit": Option("junit", _parse_path("junit"), "", "write JUnit XML to FILE"),
    "replace": Option("replace", bool_value("replace"), False,
                      "let --results and --junit overwrite a file that exists"),
    "resume": Option("resume", _parse_path("resume"), "",
                     "skip the cases already in results FILE, append the others to it"),
    "executor": Option("executor", parse_executor, "local",
                       "local (worker processes here) or dask://HOST:PORT"),
    "perf_guard": Option("perf-guard", bool_value("perf-guard"), True,
                         "in perf modes, probe the machine's compute peak and caches "
                         "around each case; wait out and retime what the probes find "
                         "degraded"),
    "perf_interleave": Option("perf-interleave", bool_value("perf-interleave"), False,
                              "in perf modes, time the cases one descriptor expands to "
                              "(--threads=2,1, --alg=direct,wino) together, a run of each "
                              "in turn, so their medians come from the same moments"),
    "perf_targets": Option("perf-targets", parse_perf_targets, None,
                           "a targets file (JSON) for perf-table to judge this run's "
                           "results file by; batches/perf_conv names perf_targets.json"),
    "check_ref_impl": Option("check-ref-impl", bool_value("check-ref-impl"), False,
                             "fail a case whose implementation name contains `ref`"),
    "color": Option("color", enum_value("color", {c: c for c in COLOR_CHOICES}), "auto",
                    "colours on standard error: auto (a terminal, unless NO_COLOR is set), "
                    "always, never"),
}

# benchdnn's own global options: as there, an empty value restores the default. This
# tool's run options (--results=, --junit=, --shard=, ...) keep refusing an empty value,
# which is a mistake there, never a request.
EMPTY_IS_DEFAULT = frozenset({"mode", "max_ms_per_prb", "fix_times_per_prb", "canonical",
                              "verbose", "summary", "perf_template", "check_ref_impl",
                              "check"})

# Fields that describe how a run is carried out, not what a case is: results files keep
# them in the header, never in a case's settings.
RUN_FIELDS = frozenset({"jobs", "timeout", "shard", "junit", "resume", "executor",
                        "perf_guard", "color", "replace", "perf_targets"})


# --- benchdnn's knobs that change nothing here ---------------------------------------------
#
# benchdnn's batch files may set these; each parses here with benchdnn's grammar, so that a
# typo still stops the run, and a value other than the default draws one warning saying
# why it changes nothing. They are never part of a case.

_BOOL = r"(?i:true|false|1|0)"
_CTX = r"(?i:auto|[0-9]+)(:(?i:auto|[0-9]+)(:(?i:auto|[0-9]+))?)?"


@dataclasses.dataclass(frozen=True)
class Knob:
    name: str
    grammar: str          # a regular expression of the values benchdnn takes
    expected: str         # the grammar, for the error line
    is_default: Callable[[str], bool]
    why: str              # what it does in benchdnn, and why that is nothing here


KNOBS = {k.name: k for k in (
    Knob("engine", r"(?i:cpu)(:0)?", "cpu or cpu:0 (no GPU engine here)", lambda v: True,
         "the CPU is the only engine here"),
    Knob("allow-enum-tags-only", _BOOL, "true or false", lambda v: True,
         "every tag the tag grammar reads is taken here, in oneDNN's enumeration or not"),
    Knob("cpu-isa-hints", r"(?i:none|no_hints|prefer_ymm)", "none, no_hints or prefer_ymm",
         lambda v: v.lower() != "prefer_ymm", "--isa caps the instruction set here"),
    Knob("attr-same-pd-check", _BOOL, "true or false", lambda v: v.lower() in ("false", "0"),
         "benchdnn checks that attributes did not make oneDNN fall back to another "
         "implementation; here each case names the one implementation it ran"),
    Knob("fast-ref", _BOOL, "true or false", lambda v: True,
         "benchdnn may compute its reference with a faster oneDNN primitive; the reference "
         "here is always the scalar double-precision one"),
    Knob("mem-check", _BOOL, "true or false", lambda v: v.lower() in ("true", "1"),
         "the memory guard always checks each case's estimate against the machine's "
         "memory here (docs/running.md)"),
    Knob("cold-cache", r"(?i:none|wei|all|custom)(\+tlb(:[0-9.]+[MG])?)?",
         "none, wei, all or custom, with +tlb[:SIZE]", lambda v: v.lower() == "none",
         "flushing the caches between timed runs is not implemented: perf runs time warm "
         "caches"),
    Knob("repeats-per-prb", r"[0-9]+", "an integer >= 1", lambda v: int(v) <= 1,
         "running each problem several times in a row is not implemented"),
    Knob("start", r"[0-9]+", "an integer >= 0", lambda v: int(v) == 0,
         "skipping the first cases is not implemented: use --shard or --match"),
    Knob("mode-modifier", r"[PMpm]*", "letters P and M", lambda v: v == "",
         "parallel creation (P) and no reference memory (M) are not implemented"),
    Knob("num-streams", r"[0-9]+", "an integer >= 1", lambda v: int(v) <= 1,
         "streams are for GPU performance runs"),
    Knob("memory-kind", r"(?i:usm|buffer|usm_device|usm_shared)",
         "usm, buffer, usm_device or usm_shared", lambda v: True,
         "memory kinds are for GPU engines; CPU memory is plain here"),
    Knob("stream-kind", r"(?i:def|in_order|out_of_order)", "def, in_order or out_of_order",
         lambda v: v.lower() == "def", "stream kinds are for GPU engines"),
    Knob("execution-mode", r"(?i:direct|graph)", "direct or graph",
         lambda v: v.lower() == "direct", "graph execution is for GPU engines"),
    Knob("buffer-prefix", r".*", "a file name prefix", lambda v: v == "",
         "dumping buffers to files is not implemented"),
    Knob("ctx-init", _CTX, "MAX_CONCURRENCY[:CORE_TYPE[:THREADS_PER_CORE]], each an integer "
         "or auto", lambda v: v.lower() in ("auto", "auto:auto:auto"),
         "threading contexts are not implemented: the kernels create with the process's "
         "threads"),
    Knob("ctx-exe", _CTX, "MAX_CONCURRENCY[:CORE_TYPE[:THREADS_PER_CORE]], each an integer "
         "or auto", lambda v: v.lower() in ("auto", "auto:auto:auto"),
         "threading contexts are not implemented: --threads=N (conv, deconv) sets the "
         "threads a case runs on"),
    Knob("attr-precomputed-reductions", r".*", "ARG:POLICY:DT:GROUPS entries joined by +",
         lambda v: v == "", "precomputed reductions are for grouped (weights-compressed) "
         "matmul; no driver here takes them"),
)}


def knob_warning(name: str, value: str) -> str | None:
    """The warning for `--name=value` when name is a KNOBS entry and the value not its
    default; UsageError when the value is not benchdnn's."""
    knob = KNOBS[name]
    if value == "":
        return None
    if not re.fullmatch(knob.grammar, value):
        raise UsageError(f"--{name}={value}: expected {knob.expected}")
    if knob.is_default(value):
        return None
    return f"WARNING: --{name}={value}: accepted for benchdnn's batch files; no effect here: {knob.why}"
