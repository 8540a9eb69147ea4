"""Text benchdnn users and their scripts read: result lines, the end-of-run block
(reference 5.1, 5.3), and the rich tables shown on a terminal's standard error."""

from __future__ import annotations

import dataclasses
from collections import Counter

from rich.console import Console
from rich.table import Table

from ..engine.settings import GlobalSettings, Summary
from ..engine.timing import TIMERS, WAIT_TIMER, GuardTally, Stopwatch
from ..status import SUMMARY_FIELDS, Counts, Status
from .perf_report import PerfRecord

MAX_LISTED_FAILURES = 10


def stderr_console(color: str = "auto") -> Console:
    """The console for standard error's tables and bar. auto: rich's own choice (colours
    on a terminal, none under NO_COLOR); always: colours and tables even into a pipe
    (`| less -R`), whatever NO_COLOR says; never: no escape codes at all (no colours,
    no bold), even on a terminal."""
    if color == "always":
        return Console(stderr=True, force_terminal=True, color_system="standard")
    if color == "never":
        return Console(stderr=True, color_system=None)
    return Console(stderr=True)


def result_line(idx: int, status: Status, reason: str, errors: int, total: int, ms: float,
                prefix: str, driver: str, impl: str, repro: str, selection: str = "") -> str:
    """A case's line. Its repro names the implementation that ran (impl) or, where none
    did, the --impl or --skip-impl option that left every one out (selection), so that
    it reruns to the same verdict."""
    parts = [f"{idx}:{status.value}"]
    if reason:
        parts.append(f"({reason})")
    if errors:
        parts.append(f"(errors:{errors} total:{total})")
    parts.append(f"({int(ms)} ms)")
    impl_part = f"--impl={impl} " if impl else f"{selection} " if selection else ""
    return " ".join(parts) + f" __REPRO: {prefix}--{driver} {impl_part}{repro}"


@dataclasses.dataclass
class RunSummary:
    """Everything the end of a run reports."""

    counts: Counts = dataclasses.field(default_factory=Counts)
    timers: Stopwatch = dataclasses.field(default_factory=Stopwatch)
    impl_hits: Counter = dataclasses.field(default_factory=Counter)
    failed_lines: list[str] = dataclasses.field(default_factory=list)
    perf: list[tuple[str, PerfRecord]] = dataclasses.field(default_factory=list)
    guard: GuardTally = dataclasses.field(default_factory=GuardTally)
    memory_over: int = 0     # cases whose peak RSS exceeded the memory guard's estimate
    wall_seconds: float = 0.0
    interrupted: bool = False
    error: str = ""          # why the run stopped early (its workers failed), if it did


def _banner(title: str) -> list[str]:
    rule = "=" * len(title)
    return [rule, title, rule]


def impl_block(hits: Counter, summary: Summary) -> list[str]:
    if not hits:
        return []
    if summary.impl_csv:
        return ["benchdnn_summary,impl_names," + ",".join(f"{k}:{v}" for k, v in hits.most_common())]
    total = sum(hits.values())
    width = max(len(k) for k in hits)
    lines = _banner("= Implementation statistics (--summary=no-impl to disable) =")
    for name, n in hits.most_common():
        lines.append(f"| {name:>{width}} : {n} ({100 * n / total:.0f}%) |")
    lines.append(lines[0])
    return lines


def failures_block(failed: list[str]) -> list[str]:
    if not failed:
        return []
    lines = _banner("= Failed cases summary (--summary=no-failures to disable) =")
    lines += failed[:MAX_LISTED_FAILURES]
    if len(failed) > MAX_LISTED_FAILURES:
        lines.append(f"(... {len(failed) - MAX_LISTED_FAILURES} more cases ...)")
    lines.append("=" * 28)
    return lines


def active_timers(settings: GlobalSettings, timers: Stopwatch | None = None) -> tuple[str, ...]:
    """The `total:` line's timers: the mode's steps, and the memory guard's wait when
    a case waited."""
    mode = settings.mode
    if not mode.execute:
        return ()
    steps = TIMERS if mode.correctness else TIMERS[:4]
    return steps + ((WAIT_TIMER,) if timers is not None and timers.seconds[WAIT_TIMER] else ())


def end_of_run(run: RunSummary, settings: GlobalSettings) -> list[str]:
    lines: list[str] = []
    if settings.summary.impl:
        lines += impl_block(run.impl_hits, settings.summary)
    perf_only = settings.mode.performance and not settings.mode.correctness
    if settings.summary.failures and not perf_only:
        lines += failures_block(run.failed_lines)
    lines.append(run.counts.line())
    if run.memory_over:
        lines.append(f"memory guard: {run.memory_over} case(s) grew past their estimate "
                     f"(lines `memory guard:` above)")
    if settings.mode.performance:
        mins = sum(r.time_stat("-") for _, r in run.perf)
        avgs = sum(r.time_stat("0") for _, r in run.perf)
        lines.append(f"total perf: min(ms):{mins:g} avg(ms):{avgs:g}")
        if run.guard.cases:
            lines.append(run.guard.line())
    total = run.wall_seconds
    timer_text = "".join(
        f" {name}: {run.timers.seconds[name]:.2f}s "
        f"({100 * run.timers.seconds[name] / total if total > 0 else 0:.0f}%);"
        for name in active_timers(settings, run.timers))
    lines.append(f"total: {total:.2f}s;{timer_text}")
    return lines


def rich_summary(console: Console, run: RunSummary) -> None:
    """Tables for a person at a terminal (standard error): statuses, implementations and,
    after a performance run, one row per case."""
    status_table = Table(title="Cases by status")
    status_table.add_column("status")
    status_table.add_column("cases", justify="right")
    for name in SUMMARY_FIELDS:
        status_table.add_row(name, str(run.counts[name]))
    console.print(status_table)
    if run.impl_hits:
        total = sum(run.impl_hits.values())
        impl_table = Table(title="Implementations used")
        impl_table.add_column("implementation")
        impl_table.add_column("cases", justify="right")
        impl_table.add_column("share", justify="right")
        for name, n in run.impl_hits.most_common():
            impl_table.add_row(name, str(n), f"{100 * n / total:.0f}%")
        console.print(impl_table)
    if run.perf:
        perf_table = Table(title="Performance (ops / min time)")
        perf_table.add_column("#", justify="right")
        perf_table.add_column("problem", overflow="fold", ratio=1)
        perf_table.add_column("implementation", no_wrap=True)
        for col in ("min ms", "median ms", "IQR", "GFLOPS", "runs"):
            perf_table.add_column(col, justify="right", no_wrap=True)
        for repro, rec in run.perf:
            best, median = rec.time_stat("-"), rec.time_stat("=")
            gflops = rec.ops / (best / 1e3) / 1e9 if best > 0 else 0.0
            spread = f"{100 * rec.iqr_ms() / median:.1f}%" if median > 0 else "-"
            perf_table.add_row(str(rec.idx), repro, rec.text["impl"], f"{best:.3f}",
                               f"{median:.3f}", spread, f"{gflops:.1f}",
                               str(len(rec.times_ms)))
        console.print(perf_table)
