"""The performance loop (benchdnn reference 7) and the service timers of a run."""

from __future__ import annotations

import time
from typing import Callable

MIN_TIMES_PER_PRB = 5

# Service timers, in the order the `total:` line prints them, and the mode part that
# enables each: creation always runs when executing, fill/execute when executing,
# compute_ref/compare only when checking correctness.
TIMERS = ("create_pd", "create_prim", "fill", "execute", "compute_ref", "compare")


def measure(run: Callable[[], None], max_ms: float, fix_times: int) -> list[float]:
    """One untimed warm-up, then individually timed runs (ms) until either ``fix_times``
    runs are done (when > 0) or both the time budget and MIN_TIMES_PER_PRB runs are
    reached."""
    run()
    samples: list[float] = []
    total = 0.0
    clock = time.perf_counter_ns
    while True:
        start = clock()
        run()
        elapsed = (clock() - start) / 1e6
        samples.append(elapsed)
        total += elapsed
        if fix_times > 0:
            if len(samples) >= fix_times:
                return samples
        elif total >= max_ms and len(samples) >= MIN_TIMES_PER_PRB:
            return samples


class Stopwatch:
    """Accumulates seconds per named timer: ``with sw("fill"): ...``."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(TIMERS, 0.0)
        self._name: str | None = None
        self._start = 0.0

    def __call__(self, name: str) -> "Stopwatch":
        self._name = name
        return self

    def __enter__(self) -> "Stopwatch":
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        assert self._name is not None
        self.seconds[self._name] += time.perf_counter() - self._start
        self._name = None

    def add(self, other: "Stopwatch") -> None:
        for k, v in other.seconds.items():
            self.seconds[k] += v
