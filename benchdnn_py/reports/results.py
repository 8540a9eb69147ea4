"""Results files: versioned JSON Lines, written one record per case as each case ends, and
read back through one function, :func:`read`.

A file is a header record (schema name and version, backend, the environment, the
command), one ``case`` record per case in run order, and a ``footer`` record when the run
ended normally (or by Ctrl-C). A killed run has no footer, but keeps every case written
before it died: each record is one ``write`` followed by a flush. README.md ("Results
files and comparing runs") documents every field; bump SCHEMA_VERSION when a field
changes meaning or disappears (adding a field does not need a bump: readers ignore what
they do not know).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import gzip
import io
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .. import __version__, backends, core
from ..engine.settings import RUN_FIELDS
from ..errors import BenchError, UsageError
from ..status import Status
from .perf_report import BANDWIDTH, machine_limit

SCHEMA = "benchdnn-py-results"
SCHEMA_VERSION = 1
# The kernels under test: the header's `backend` names every backend the run's cases use
# (--backend=, benchdnn_py/backends), comma-joined in first-use order, and each case record
# its own. compare reports a difference without refusing, since the backend is then the
# variable under test. A run without --backend is "native" (this C core).
BACKEND = "native"
STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


class ResultsError(BenchError):
    """A results file that cannot be read; str() names the file (and line) and the fault."""


# --------------------------------------------------------------------------------------
# Environment capture
# --------------------------------------------------------------------------------------

def cpu_model_and_flags() -> tuple[str, list[str]]:
    """The CPU's model name and feature flags (Linux /proc/cpuinfo; elsewhere the model
    from platform and no flags)."""
    model, flags = "", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and not model:
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = value.split()
                if model and flags:
                    break
    except OSError:
        pass
    return model or platform.processor() or platform.machine(), flags


def _git_commit() -> dict[str, Any] | None:
    """The checkout's commit and whether tracked files differ from it; None outside a git
    checkout or without git (an installed wheel has neither, and that is not an error)."""
    if not (_PROJECT_ROOT / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(_PROJECT_ROOT), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=5, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(_PROJECT_ROOT), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(),
            "dirty": bool(dirty.stdout.strip()) if dirty.returncode == 0 else None}


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _version_of(module: str) -> str | None:
    try:
        return getattr(__import__(module), "__version__", None)
    except ImportError:
        return None


def _cpu_clock() -> tuple[float, float, float] | None:
    """(CPU seconds used machine-wide, by this process and its finished workers, wall
    seconds) now; None without
    /proc/stat. Busy is everything but idle and iowait, so steal (a hypervisor giving the
    CPU to another guest) counts as someone else's use, which it is."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)
    own = os.times()
    # The run's worker processes (-j N) are its own use too; they have exited and been
    # waited for by the time the footer is written, so their times are the children's.
    return (busy / ticks, own.user + own.system + own.children_user + own.children_system,
            time.monotonic())


def others_cpus(start: tuple[float, float, float] | None,
                end: tuple[float, float, float] | None) -> float | None:
    """How many CPUs, on average, other processes kept busy between two _cpu_clock()
    readings: what competed with the run for the machine."""
    if start is None or end is None or end[2] <= start[2]:
        return None
    others = (end[0] - start[0]) - (end[1] - start[1])
    return max(others, 0.0) / (end[2] - start[2])


def environment(backend_names: list[str] | None = None) -> dict[str, Any]:
    """Everything about the machine and the build that a timing depends on; for each
    backend other than native, what it reports about itself (torch: version, threads)."""

    model, flags = cpu_model_and_flags()
    build = core.build_info()
    compiler, _, build_flags = build.partition("; flags: ")
    return {
        "cpu": {"model": model, "flags": flags, "logical_cpus": os.cpu_count(),
                "governor": _read_text("/sys/devices/system/cpu/cpu0/cpufreq/"
                                       "scaling_governor")},
        "isa": {"usable": [isa.name.lower() for isa in core.Isa if core.isa_supported(isa)]},
        "threads": {"max": core.max_threads(),
                    "env": {k: v for k, v in sorted(os.environ.items())
                            if k.startswith(("OMP_", "GOMP_", "KMP_"))}},
        "core": {"build_info": build, "compiler": compiler, "flags": build_flags},
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "test_fault": os.environ.get(core.FAULT_ENV) or None,
        "platform": platform.platform(),
        "hostname": platform.node(),
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "packages": {"benchdnn-py": __version__, "numpy": _version_of("numpy"),
                     "cffi": _version_of("cffi")},
        "git": _git_commit(),
        "backends": {name: backends.describe(name) for name in backend_names or []
                     if name != BACKEND},
    }


def run_json(settings) -> dict[str, Any]:
    """How the run was carried out (settings.RUN_FIELDS): workers, shard, executor."""
    return {name: _jsonable(getattr(settings, name)) for name in sorted(RUN_FIELDS)}


def header(driver: str, argv: list[str],
           backend_names: list[str] | None = None,
           run: dict[str, Any] | None = None) -> dict[str, Any]:
    names = list(dict.fromkeys(backend_names or [BACKEND]))
    return {
        "type": "header", "schema": SCHEMA, "version": SCHEMA_VERSION,
        "backend": ",".join(names),
        "driver": driver,
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": list(argv), "command": shlex.join(["benchdnn-py", *argv]),
        "cwd": os.getcwd(),
        "environment": environment(names),
        "run": run or {},
    }


# --------------------------------------------------------------------------------------
# Case records
# --------------------------------------------------------------------------------------

def _jsonable(value: Any) -> Any:
    """Option values as JSON: enums by value, patterns by text, dataclasses as objects."""
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, (str, int, float)) else value.name
    if isinstance(value, re.Pattern):
        return value.pattern
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def global_settings_json(settings) -> dict[str, Any]:
    # A run's cases share a handful of (frozen) settings: converted once each, copied out.
    return dict(_global_settings_json(settings))


@lru_cache(maxsize=64)
def _global_settings_json(settings) -> dict[str, Any]:
    out = {f.name: _jsonable(getattr(settings, f.name))
           for f in dataclasses.fields(settings) if f.name not in RUN_FIELDS}
    out["mode"] = settings.mode.letters
    out["perf_template"] = str(settings.perf_template)
    return out


def selection_options(values: dict[str, Any]) -> list[str]:
    """The implementation filter as the user gave it (``--impl=``/``--skip-impl=``).

    The problem's own repro leaves it out, because the result line prints the chosen
    implementation instead. It belongs to the case's identity: conv_ci runs the same
    descriptor once on the best implementation and once per forced ISA variant, and those
    are different measurements.
    """
    flt = values.get("impl_filter")
    names = getattr(flt, "names", ())
    if not names:
        return []
    return [f"--{'impl' if flt.include else 'skip-impl'}={','.join(names)}"]


def case_key(driver: str, values: dict[str, Any], problem_repro: str) -> str:
    """The comparison key: driver, implementation filter and the driver's repro (options
    that differ from their defaults, then the canonical short descriptor). Never the
    chosen implementation, never global options: a run is compared with another run of
    the same problems, whatever each ran them on and however long it timed them."""
    return " ".join([f"--{driver}", *selection_options(values), problem_repro])


# The first diagnostics lines kept in a case record (the first mismatching points and the
# compare statistics; --verbose=10 can print thousands).
MAX_RECORD_DIAGNOSTICS = 20


def case_record(case, prb, result, idx: int, wall_ms: float) -> dict[str, Any]:
    """One finished case of a plan (harness.PlannedCase; prb is None when the descriptor
    did not parse). Times are milliseconds; ``samples_ms`` is every timed run, in order."""
    driver, settings = case.driver.name, case.settings
    key = case_key(driver, case.values,
                   prb.repro(False) if prb is not None else case.unparsed_repro)
    perf = result.perf
    samples = list(perf.times_ms) if perf is not None else []
    best = min(samples) if samples else None
    return {
        "type": "case", "idx": idx, "driver": driver, "key": key,
        "repro": settings.repro_prefix() + key,
        "status": result.status.value, "reason": result.reason,
        "errors": result.errors, "total": result.total,
        "output_points": result.outputs,
        "impl": result.impl,
        "backend": case.values.get("backend", BACKEND),
        "settings": {"global": global_settings_json(settings),
                     "driver": {k: _jsonable(v) for k, v in case.values.items()}},
        "wall_ms": round(wall_ms, 3),
        # where wall_ms went, per service timer (the `total:` line's parts for this case)
        "service_ms": {name: round(seconds * 1e3, 3)
                       for name, seconds in result.timers.seconds.items()},
        "samples_ms": samples,
        "min_ms": best,
        "avg_ms": statistics.fmean(samples) if samples else None,
        "median_ms": statistics.median(samples) if samples else None,
        "ops": perf.ops if perf is not None else None,
        # benchdnn's %-Gflops%: the op count over the best time.
        "gflops": perf.ops / best / 1e6 if perf is not None and best else None,
        # %-eff%: the share of the machine's measured limit (perf_report.machine_limit)
        # reached at the best time, and which limit that is.
        "limit": perf.limit if perf is not None else None,
        "limit_g_per_s": _limit_g(perf.limit, perf.threads)
        if perf is not None and best else None,
        "eff_pct": float(perf.value("eff", "-", "")) if perf is not None and best else None,
        # %iobytes%: bytes read and written per run; for a memory-bound case (a bandwidth
        # limit, or a depthwise convolution) the copy bandwidth this process measured
        "bytes": perf.ibytes + perf.obytes if perf is not None else None,
        "copy_g_per_s": _limit_g(BANDWIDTH, perf.threads)
        if perf is not None and best and perf.bandwidth_bound else None,
        "diagnostics": list(result.diagnostics[:MAX_RECORD_DIAGNOSTICS]),
        # the perf guard (timing.MachineGuard): the lower compute probe around the kept
        # timing over the peak, and how many timings were made
        "machine": result.machine.record() if result.machine else None,
        # the memory guard (engine.memory.CaseMemory): tensor bytes, its estimate, and
        # the peak RSS the case added
        "memory": result.memory.record() if result.memory else None,
    }


def _limit_g(limit: str, threads: int) -> float:
    return machine_limit(limit, threads) / 1e9


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------

def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"


class ResultsWriter:
    """Writes the header at open, one case record per finished case, the footer at close.

    Every record is written whole and flushed (for ``.gz``, a zlib sync flush), so a run
    killed at any point leaves a file whose complete lines are all readable.
    """

    def __init__(self, path: str, driver: str, argv: list[str],
                 backend_names: list[str] | None = None, *,
                 head: dict[str, Any] | None = None,
                 prior: list[dict[str, Any]] | None = None,
                 run: dict[str, Any] | None = None, option: str = "--results") -> None:
        """head and prior: continue an earlier run (--resume): its header and the case
        records to keep, written to a temporary file that then replaces ``path``, so the
        earlier records are never at risk; new records go on through the same handle."""
        self.path = path
        target = path + ".resume-tmp" if prior is not None else path
        try:
            raw = open(target, "wb")  # noqa: SIM115 - open for the whole run; close() ends it
        except OSError as exc:
            raise UsageError(f"{option}={path}: cannot write: {exc.strerror}") from None
        self._raw = raw
        self._gz = gzip.GzipFile(fileobj=raw, mode="wb") if path.endswith(".gz") else None
        self.cases = 0
        self._write(head if head is not None else header(driver, argv, backend_names, run))
        for record in prior or []:
            self.write_record(record)
        if target != path:
            os.fsync(raw.fileno())
            os.replace(target, path)
        self._clock = _cpu_clock()

    def _write(self, record: dict[str, Any]) -> None:
        data = _dumps(record).encode()
        if self._gz is not None:
            self._gz.write(data)
            self._gz.flush(zlib.Z_SYNC_FLUSH)
        else:
            self._raw.write(data)
        self._raw.flush()

    def write_case(self, case, prb, result, idx: int, wall_ms: float) -> None:
        self.write_record(case_record(case, prb, result, idx, wall_ms))

    def write_record(self, record: dict[str, Any]) -> None:
        self._write(record)
        self.cases += 1

    def close(self, counts: dict[str, int] | None = None, interrupted: bool = False,
              wall_seconds: float | None = None) -> None:
        if self._raw.closed:
            return
        # A busy machine is the first suspect for a surprising time; compare warns on it.
        busy = others_cpus(self._clock, _cpu_clock())
        self._write({"type": "footer", "cases": self.cases, "counts": counts or {},
                     "interrupted": interrupted,
                     "others_cpus": None if busy is None else round(busy, 3),
                     "wall_seconds": None if wall_seconds is None else round(wall_seconds, 3),
                     "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(
                         timespec="seconds")})
        if self._gz is not None:
            self._gz.close()
        self._raw.close()


# --------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------

@dataclasses.dataclass
class ResultsFile:
    path: str
    header: dict[str, Any]
    cases: list[dict[str, Any]]
    footer: dict[str, Any] | None        # None: the run was killed (or is still running)
    warnings: list[str] = dataclasses.field(default_factory=list)

    @property
    def environment(self) -> dict[str, Any]:
        return self.header.get("environment", {})

    @property
    def complete(self) -> bool:
        return self.footer is not None and not self.footer.get("interrupted")


def _open_bytes(path: str) -> bytes:
    if path == STDIN:
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a directory, not a results file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from None


def _decompress(data: bytes, name: str) -> tuple[bytes, str | None]:
    """gzip is recognised by its magic bytes, so `-` and any file name work. A gzip stream
    cut short (a killed run writing .gz) yields what it holds, with a warning."""
    if not data.startswith(_GZIP_MAGIC):
        return data, None
    out = io.BytesIO()
    decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        out.write(decomp.decompress(data))
    except zlib.error as exc:
        raise ResultsError(f"{name}: corrupt gzip data ({exc})") from None
    if not decomp.eof and not out.getvalue():
        raise ResultsError(f"{name}: gzip data without a complete record (corrupt or cut "
                           f"short)")
    return out.getvalue(), None if decomp.eof else "the gzip stream ends early"


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield number, line


_NUMBER = "number"
_TEXT = "text"
_OPT_NUMBER = "number or null"
_OPT_TEXT = "text or null"
_OBJECT = "object"
_OPT_OBJECT = "object or null"
_LIST = "list"
_STATUS = "a case status (" + ", ".join(s.value for s in Status) + ")"
# The fields readers use, by record type, and what each must be when present: a file
# whose records break this is refused with the line and field, so that compare, merge
# and --resume never meet a value they cannot use. Absent fields are allowed (older
# writers, other drivers).
_FIELD_KINDS: dict[str, dict[str, str]] = {
    "header": {"environment": _OBJECT, "driver": _TEXT, "backend": _TEXT,
               "argv": _LIST, "command": _TEXT, "started": _TEXT, "run": _OPT_OBJECT},
    "case": {"key": _TEXT, "repro": _TEXT, "status": _STATUS, "reason": _TEXT,
             "driver": _TEXT, "impl": _TEXT, "backend": _TEXT, "idx": _NUMBER,
             "errors": _NUMBER, "total": _NUMBER, "settings": _OBJECT, "wall_ms": _NUMBER,
             "samples_ms": _LIST, "min_ms": _OPT_NUMBER, "avg_ms": _OPT_NUMBER,
             "median_ms": _OPT_NUMBER, "ops": _OPT_NUMBER, "gflops": _OPT_NUMBER,
             "limit": _OPT_TEXT, "limit_g_per_s": _OPT_NUMBER, "eff_pct": _OPT_NUMBER,
             "bytes": _OPT_NUMBER, "copy_g_per_s": _OPT_NUMBER, "diagnostics": _LIST,
             "machine": _OPT_OBJECT},
    "footer": {"cases": _NUMBER, "counts": _OBJECT, "interrupted": "boolean",
               "wall_seconds": _OPT_NUMBER, "others_cpus": _OPT_NUMBER},
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


_KIND_CHECKS: dict[str, Callable[[Any], bool]] = {
    "number": _is_number, "text": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict), "list": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    _STATUS: lambda v: isinstance(v, str) and v in Status._value2member_map_}
_KIND_CHECKS.update({f"{kind} or null": lambda v, check=check: v is None or check(v)
                     for kind, check in list(_KIND_CHECKS.items())})


def _check_fields(name: str, number: int, record: dict[str, Any]) -> None:
    kind = record.get("type")
    kinds = _FIELD_KINDS.get(kind, {}) if isinstance(kind, str) else {}
    for field, kind in kinds.items():
        if field in record and not _KIND_CHECKS[kind](record[field]):
            raise ResultsError(f"{name}:{number}: `{field}` must be {kind}, not "
                               f"`{json.dumps(record[field])[:30]}`")
    if record.get("type") == "case":
        if not all(_is_number(s) for s in record.get("samples_ms", [])):
            raise ResultsError(f"{name}:{number}: `samples_ms` must hold numbers")
        for part in ("global", "driver"):
            if not isinstance(record.get("settings", {}).get(part, {}), dict):
                raise ResultsError(f"{name}:{number}: `settings.{part}` must be an object")


def read(path: str) -> ResultsFile:
    """Reads a results file (plain or gzip; ``-`` is standard input).

    Raises ResultsError, naming the file and line, for anything that is not a results file
    this version can read. A last line cut off mid-record (the run was killed while
    writing it) is dropped with a warning; a cut anywhere else is an error.
    """
    name = "<stdin>" if path == STDIN else path
    data, gz_warning = _decompress(_open_bytes(path), name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{name}: not a results file (not UTF-8 text: byte "
                           f"{exc.start})") from None
    warnings = [f"{name}: {gz_warning}"] if gz_warning else []
    lines = list(_lines(text))
    if not lines:
        raise ResultsError(f"{name}: empty, not a results file")
    records: list[tuple[int, dict]] = []
    for i, (number, line) in enumerate(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            last = i == len(lines) - 1 and not text.endswith("\n")
            if last and records:
                warnings.append(f"{name}:{number}: last record is cut off (killed run?); "
                                f"ignored")
                break
            raise ResultsError(f"{name}:{number}: not a JSON record ({exc.msg} at column "
                               f"{exc.colno}: `{line[:40]}`)") from None
        if not isinstance(record, dict):
            raise ResultsError(f"{name}:{number}: expected a JSON object, got `{line[:40]}`")
        records.append((number, record))
    head = records[0][1]
    for number, record in records:
        _check_fields(name, number, record)
    if head.get("type") != "header" or head.get("schema") != SCHEMA:
        raise ResultsError(f"{name}:{records[0][0]}: not a benchdnn-py results file (the "
                           f"first record must be a header with \"schema\": \"{SCHEMA}\")")
    version = head.get("version")
    if not isinstance(version, int) or version < 1:
        raise ResultsError(f"{name}:{records[0][0]}: bad schema version `{version}`")
    if version > SCHEMA_VERSION:
        raise ResultsError(f"{name}: schema version {version} was written by a newer "
                           f"benchdnn-py; this one reads versions up to {SCHEMA_VERSION}")
    cases: list[dict[str, Any]] = []
    footer = None
    for number, record in records[1:]:
        kind = record.get("type")
        if kind == "case":
            if not isinstance(record.get("key"), str) or not isinstance(
                    record.get("samples_ms", []), list):
                raise ResultsError(f"{name}:{number}: case record without a `key` string "
                                   f"or with non-list `samples_ms`")
            cases.append(record)
        elif kind == "footer":
            footer = record
        elif kind == "header":
            raise ResultsError(f"{name}:{number}: a second header (two files "
                               f"concatenated?)")
        # Unknown record types are skipped: newer writers may add some (no version bump).
    if footer is None:
        warnings.append(f"{name}: no footer record: the run did not finish (killed?); "
                        f"{len(cases)} finished cases read")
    elif footer.get("interrupted"):
        warnings.append(f"{name}: the run was interrupted; {len(cases)} finished cases read")
    return ResultsFile(name, head, cases, footer, warnings)


def open_writer(path: str, driver: str, argv: list[str] | None = None,
                backend_names: list[str] | None = None,
                run: dict[str, Any] | None = None) -> ResultsWriter:
    """backend_names: the backends the run's cases use (backends.used_by(plan.cases));
    None is native only. run: results.run_json(settings)."""
    return ResultsWriter(path, driver, sys.argv[1:] if argv is None else argv, backend_names,
                         run=run)


def write(path: str, header_record: dict[str, Any], cases: Iterable[dict[str, Any]],
          footer: dict[str, Any] | None = None) -> None:
    """Writes whole records (used by tests and by compare's --rerun merge); plain or .gz."""
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt") as f:
        f.write(_dumps(header_record))
        for record in cases:
            f.write(_dumps(record))
        if footer is not None:
            f.write(_dumps(footer))
