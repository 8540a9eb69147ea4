"""The progress bar on a terminal's standard error: cases done of all, running pass and
fail counts, elapsed time and ETA. A log (standard error not a terminal, or NO_COLOR or
CI set) gets no bar: only the plain lines, which are the same either way."""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from ..status import Status


def wanted(stream: TextIO, env=os.environ) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not env.get("NO_COLOR") and not env.get("CI")


class NoBar:
    """Nothing on screen; lines go straight to their streams."""

    active = False

    def start(self, total: int, done: int = 0) -> None:
        pass

    def advance(self, status: Status, step: int = 1) -> None:
        pass

    def print(self, line: str) -> None:  # pragma: no cover - never called when inactive
        raise AssertionError("no bar to print above")

    def stop(self) -> None:
        pass


class Bar:
    """A rich progress bar. While it shows, lines meant for the same terminal go through
    print(), which puts them above the bar instead of through it."""

    active = False

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress = None
        self._task = None
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}

    def _text(self) -> str:
        return " ".join(f"{k}:{v}" for k, v in self.counts.items())

    def start(self, total: int, done: int = 0) -> None:
        self._progress = Progress(
            TextColumn("cases"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
            TimeRemainingColumn(), console=self.console, transient=True,
            redirect_stdout=False, redirect_stderr=False)
        self._task = self._progress.add_task("cases", total=total, completed=done,
                                             counts=self._text())
        self._progress.start()
        self.active = True

    def advance(self, status: Status, step: int = 1) -> None:
        """Counts a finished case; step=0 counts one already done before start (--resume),
        which start's ``done`` covers, so the ETA rests on this run's speed only."""
        for name in ("passed", "failed", "skipped"):
            if name in status.counters:
                self.counts[name] += 1
        self._progress.update(self._task, advance=step, counts=self._text())

    def print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
        self.active = False


def for_stream(stream: TextIO, console: Console | None = None) -> Bar | NoBar:
    """The bar on `console` (default: standard error's) when the stream is a terminal."""
    return Bar(console) if wanted(stream) else NoBar()
