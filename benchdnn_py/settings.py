"""Global settings: options that parse anywhere, are never reset, and shape the whole run
(benchdnn reference 3.3, 3.4)."""

from __future__ import annotations

import dataclasses

from .errors import UsageError
from .options import Option, bool_value, enum_value, float_value, int_value
from .perf_report import PerfTemplate, parse_template


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
    return max(int_value("fix-times-per-prb")(text), 0)


def _parse_results(text: str) -> str:
    # Standard output carries the result lines, so the records cannot share it.
    if text == "-":
        raise UsageError("--results=-: standard output carries the result lines; name a file")
    return text


@dataclasses.dataclass(frozen=True)
class GlobalSettings:
    mode: Mode = MODES["C"]
    max_ms_per_prb: float = 3000.0
    fix_times_per_prb: int = 0
    canonical: bool = False
    verbose: int = 0
    summary: Summary = Summary()
    perf_template: PerfTemplate = parse_template("def")
    results: str = ""   # where the run's records go; not part of any repro line

    def repro_prefix(self) -> str:
        """The non-default global options, as benchdnn prints them before the driver."""
        parts = []
        if self.mode is not MODES["C"]:
            parts.append(f"--mode={self.mode.letters}")
        if self.max_ms_per_prb != GlobalSettings.max_ms_per_prb:
            parts.append(f"--max-ms-per-prb={self.max_ms_per_prb:g}")
        if self.fix_times_per_prb:
            parts.append(f"--fix-times-per-prb={self.fix_times_per_prb}")
        if self.canonical:
            parts.append("--canonical=true")
        return "".join(p + " " for p in parts)


# field name on GlobalSettings -> option
GLOBAL_OPTIONS: dict[str, Option] = {
    "mode": Option("mode", enum_value("mode", MODES), MODES["C"],
                   "C correctness (default), P performance, CP both, L list only"),
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
    "results": Option("results", _parse_results, "",
                      "write every case's record (settings, status, timing samples) to "
                      "FILE as JSON Lines (.gz: gzip); see `benchdnn-py compare`"),
}
