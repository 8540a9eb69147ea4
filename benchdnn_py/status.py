"""Case statuses, how the summary counts them, and the process exit status.

Counting follows benchdnn (reference section 8): UNIMPLEMENTED and INVALID_ARGUMENTS are
counted under their own name *and* as failed, so that
tests = passed + skipped + mistrusted + failed + listed always holds.
"""

from __future__ import annotations

import enum


class Status(enum.Enum):
    PASSED = "PASSED"
    MISTRUSTED = "MISTRUSTED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    LISTED = "LISTED"
    EXECUTED = "EXECUTED"
    UNTESTED = "UNTESTED_FAILED"

    @property
    def counters(self) -> tuple[str, ...]:
        return _COUNTERS[self]

    @property
    def is_failure(self) -> bool:
        return "failed" in self.counters


_COUNTERS: dict[Status, tuple[str, ...]] = {
    Status.PASSED: ("passed",),
    Status.EXECUTED: ("passed",),
    Status.MISTRUSTED: ("mistrusted",),
    Status.SKIPPED: ("skipped",),
    Status.LISTED: ("listed",),
    Status.FAILED: ("failed",),
    Status.UNTESTED: ("failed",),
    Status.UNIMPLEMENTED: ("unimplemented", "failed"),
    Status.INVALID_ARGUMENTS: ("invalid_arguments", "failed"),
}

SUMMARY_FIELDS = ("tests", "passed", "skipped", "mistrusted", "unimplemented",
                  "invalid_arguments", "failed", "listed")


class Reason(str, enum.Enum):
    """Why a case was not run or not fully run (printed in parentheses after the status)."""

    CASE_NOT_SUPPORTED = "Case not supported"
    DATA_TYPE_NOT_SUPPORTED = "Data type not supported"
    SKIP_IMPL_HIT = "Skip-impl option hit"
    NOT_ENOUGH_RAM = "Not enough RAM"
    INVALID_CASE = "Invalid case"


# Process exit statuses (documented in the README).
EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2


class Counts:
    """Running summary counters."""

    def __init__(self) -> None:
        self.values = dict.fromkeys(SUMMARY_FIELDS, 0)

    def add(self, status: Status) -> None:
        self.values["tests"] += 1
        for name in status.counters:
            self.values[name] += 1

    def __getitem__(self, name: str) -> int:
        return self.values[name]

    def line(self) -> str:
        return " ".join(f"{k}:{self.values[k]}" for k in SUMMARY_FIELDS)

    def exit_status(self) -> int:
        return EXIT_FAILURES if self.values["failed"] else EXIT_OK
