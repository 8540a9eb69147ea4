"""The performance loop (benchdnn reference 7) and the service timers of a run."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterable, TypeVar

import greenlet

T = TypeVar("T")

MIN_TIMES_PER_PRB = 5

# Service timers, in the order the `total:` line prints them, and the mode part that
# enables each: creation always runs when executing, fill/execute when executing,
# compute_ref/compare only when checking correctness.
TIMERS = ("create_pd", "create_prim", "fill", "execute", "compute_ref", "compare")
# The memory guard's wait for room in the run's budget (memory.Budget.hold): part of a
# case's wall time that no step takes; the `total:` line shows it when a run waited.
WAIT_TIMER = "memory_wait"


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


def measure_turns(runs: list[Callable[[], None]], max_ms: float,
                  fix_times: int) -> list[list[float] | BaseException]:
    """``measure`` for several cases at once, in turns: rounds of one turn of each case,
    in order, until ``fix_times`` rounds are done (when > 0) or, after MIN_TIMES_PER_PRB
    rounds, the cases' timed runs add up to the time budget of each (the group takes as
    long as its cases one by one, each with as many samples as the others). A turn is an
    untimed run, then a timed one: the timed run finds the caches and the OpenMP team as
    its own run left them, not as the other case's did (timed without it, a 2-thread 1x1
    of 0.13 ms ran 0.21 ms on average between 1-thread runs of another primitive: its
    team's second thread had gone to sleep). Each case's samples then span the same
    moments as the others' (see TimingGroup). A run that raises gets its exception
    instead of samples and is left out of later rounds."""
    out: list[list[float] | BaseException] = [[] for _ in runs]
    clock = time.perf_counter_ns

    def turn(i: int) -> float:
        try:
            runs[i]()   # untimed: back in the state its own previous run leaves
            start = clock()
            runs[i]()
            return (clock() - start) / 1e6
        except Exception as exc:   # that case's failure, reported by it; the others go on
            out[i] = exc
            return 0.0

    totals = [0.0] * len(runs)
    rounds = 0
    while True:
        live = [i for i, o in enumerate(out) if isinstance(o, list)]
        if not live:
            return out
        for i in live:
            ms = turn(i)
            if isinstance(out[i], list):
                out[i].append(ms)
                totals[i] += ms
        rounds += 1
        if fix_times > 0:
            if rounds >= fix_times:
                return out
        elif (rounds >= MIN_TIMES_PER_PRB
              and sum(totals[i] for i in live) >= max_ms * len(live)):
            return out


# The machine check around each timed case (perf modes; --perf-guard). On a shared virtual
# machine the cores a run is given come and go, in spells of seconds, and a case timed in
# such a spell runs slower with every sample equally slow (its median cannot tell). So a
# case is timed between two short probes of the very loop %eff% divides by, on the case's
# threads, and a probe under GUARD_SHARE of the peak means the machine was not all there:
# - before a timing, a degraded probe is followed by more, GUARD_POLL_S apart, until one
#   is healthy or GUARD_SETTLE_S have passed (the spell is waited out);
# - a timing whose probe after it reads degraded is made again, up to GUARD_ATTEMPTS
#   timings, and the one with the healthiest probes is kept;
# - a case still degraded after them is reported as such (its record and a diagnostic
#   line), and until a later probe finds the machine whole, cases neither wait nor retry:
#   a machine that stays degraded does not multiply the run's time.
# The FMA loop runs in registers and does not see a neighbour taking one of our cores'
# caches, so each probe is two: the compute one and a cache one (every thread streams its
# own buffer through FMAs; the slowest thread's rate), the latter against the best it has
# read on that thread count (best of GUARD_CACHE_FIRST at the first probe).
# A probe is a short run of the peak's own loop and reads within a few percent of a peak
# measured on a healthy machine. One reading over GUARD_REMEASURE_OVER times the peak
# means the process measured its limits in a slow spell: they are measured again, at
# most GUARD_REMEASURE_MAX times per thread count.
GUARD_SHARE = 0.85
GUARD_REMEASURE_OVER = 1.1
GUARD_REMEASURE_MAX = 2
GUARD_CACHE_SHARE = 0.9
GUARD_CACHE_FIRST = 5
GUARD_ATTEMPTS = 3
GUARD_POLL_S = 0.1
GUARD_SETTLE_S = 2.0
PROBE_DIGITS = 3   # a probe's share is kept to 0.1% (a probe's own spread is larger)


@dataclasses.dataclass(frozen=True)
class MachineCheck:
    """What the probes around a case's kept timing read."""

    share: float     # the lower compute probe over the peak (higher of measured and probed)
    attempts: int    # timings made; the kept one had the healthiest probes
    cache: float = 1.0   # the lower cache probe over its best (1: none; records before it)

    def __post_init__(self) -> None:
        # kept as a results record keeps them, so that the run's verdicts and those read
        # back from its file agree at the thresholds' edges
        object.__setattr__(self, "share", round(self.share, PROBE_DIGITS))
        object.__setattr__(self, "cache", round(self.cache, PROBE_DIGITS))

    @property
    def health(self) -> float:
        """1 or more: healthy. The worse of the two probes against its threshold."""
        return min(self.share / GUARD_SHARE, self.cache / GUARD_CACHE_SHARE)

    @property
    def degraded(self) -> bool:
        return self.health < 1.0

    def diagnostic(self) -> str:
        probes = f"compute probe read {self.share:.0%} of its peak"
        if self.cache < GUARD_CACHE_SHARE and self.share >= GUARD_SHARE:
            probes = f"cache probe read {self.cache:.0%} of its best"
        elif self.cache < GUARD_CACHE_SHARE:
            probes += f" and its cache probe {self.cache:.0%} of its best"
        return (f"perf guard: the machine's {probes} around this case's timing "
                f"({self.attempts} timing{'s' if self.attempts > 1 else ''}): its times "
                f"are the machine's, not the kernel's")

    def record(self) -> dict[str, float | int]:
        """As a results record keeps it (`machine`)."""
        return {"share": self.share, "cache": self.cache, "attempts": self.attempts}


@dataclasses.dataclass
class GuardTally:
    """The perf guard over a run (or a results file's records): cases timed between probes,
    those timed again after a degraded probe, those still degraded when kept, and the
    lowest kept shares of the two probes."""

    cases: int = 0
    retimed: int = 0
    degraded: int = 0
    lowest: float = 1.0          # compute probe, over the peak
    lowest_cache: float = 1.0    # cache probe, over its best

    def add(self, check: MachineCheck) -> None:
        self.cases += 1
        self.retimed += check.attempts > 1
        self.degraded += check.degraded
        self.lowest = min(self.lowest, check.share)
        self.lowest_cache = min(self.lowest_cache, check.cache)

    @classmethod
    def of_records(cls, records: Iterable[dict[str, Any]]) -> "GuardTally":
        tally = cls()
        for r in records:
            if r.get("machine"):
                tally.add(MachineCheck(**r["machine"]))
        return tally

    def line(self) -> str:
        return f"perf guard: cases:{self.cases} retimed:{self.retimed} degraded:{self.degraded}"


class MachineGuard:
    """Times cases between probes (see GUARD_SHARE). probe() measures the compute peak now
    and peak() gives the run's measured peak, both in ops/s on the current threads
    (threads() says how many); a probe above that peak raises the reference for that
    thread count (the peak was measured in a dip), and one far above it calls remeasure()
    (optional: the run's limits are measured again; see GUARD_REMEASURE_OVER).
    cache_probe() (optional) reads the cache rate now, against the best it has read on
    that thread count."""

    def __init__(self, probe: Callable[[], float], peak: Callable[[], float],
                 threads: Callable[[], int], sleep: Callable[[float], None] = time.sleep,
                 cache_probe: Callable[[], float] | None = None,
                 remeasure: Callable[[], None] | None = None) -> None:
        self._probe, self._peak, self._threads, self._sleep = probe, peak, threads, sleep
        self._cache_probe, self._remeasure = cache_probe, remeasure
        self._remeasured: dict[int, int] = {}
        self._best_probe: dict[int, float] = {}
        self._best_cache: dict[int, float] = {}
        self._stays_degraded = False

    def _check(self) -> MachineCheck:
        """One probe of each kind, as shares of their references (attempts unset: 0)."""
        reading, n, peak = self._probe(), self._threads(), self._peak()
        if (self._remeasure is not None and reading > GUARD_REMEASURE_OVER * peak
                and self._remeasured.get(n, 0) < GUARD_REMEASURE_MAX):
            self._remeasured[n] = self._remeasured.get(n, 0) + 1
            self._remeasure()
            peak = self._peak()
        self._best_probe[n] = max(self._best_probe.get(n, 0.0), reading)
        reference = max(peak, self._best_probe[n])
        cache = 1.0
        if self._cache_probe is not None:
            if n not in self._best_cache:
                self._best_cache[n] = max(self._cache_probe()
                                          for _ in range(GUARD_CACHE_FIRST))
            rate = self._cache_probe()
            self._best_cache[n] = max(self._best_cache[n], rate)
            cache = rate / self._best_cache[n] if self._best_cache[n] > 0 else 1.0
        return MachineCheck(reading / reference if reference > 0 else 1.0, 0, cache)

    def _settle(self) -> MachineCheck:
        """Probes until they read healthy or GUARD_SETTLE_S have passed (not at all once
        the machine stays degraded); the last probes."""
        check, waited = self._check(), 0.0
        while check.degraded and not self._stays_degraded and waited < GUARD_SETTLE_S:
            self._sleep(GUARD_POLL_S)
            waited += GUARD_POLL_S
            check = self._check()
        return check

    def measure(self, run: Callable[[], None], max_ms: float,
                fix_times: int) -> tuple[list[float], MachineCheck]:
        return self.guarded(lambda: measure(run, max_ms, fix_times))

    def guarded(self, timing: Callable[[], T]) -> tuple[T, MachineCheck]:
        """timing() between probes, as measure() describes; what it returned for the
        kept attempt."""
        attempts = 1 if self._stays_degraded else GUARD_ATTEMPTS
        kept: tuple[T, MachineCheck] | None = None
        made = 0
        for made in range(1, attempts + 1):
            before = self._settle()
            samples = timing()
            after = self._check()
            check = MachineCheck(min(before.share, after.share), made,
                                 min(before.cache, after.cache))
            if kept is None or check.health > kept[1].health:
                kept = (samples, check)
            if not check.degraded:
                break
        assert kept is not None
        check = dataclasses.replace(kept[1], attempts=made)
        self._stays_degraded = check.degraded
        return kept[0], check


class TimingGroup:
    """Cases whose timings are made together, in turns (--perf-interleave): the cases one
    descriptor expands to (`--threads=2,1`, `--alg=direct,wino`, `--attr-post-ops=,relu`).
    Timed one after the other, each median is taken in its own stretch of a fraction of a
    second, and on a shared machine the stretches differ (slow spells last tenths of a
    second), so ratios between cases timed back to back move from run to run. In turns,
    both medians come from the same moments.

    run() runs each case's work in a greenlet of its own, one after the other, up to its
    timing, where the case offers its run (offer: the greenlet waits there); then times the
    offered runs together and resumes each case with its samples. Greenlets, not threads:
    all of it stays on this OS thread, so OpenMP keeps one thread pool (a pool per Python
    thread makes libgomp count more threads than cores and put its workers to sleep
    between runs). The OpenMP thread count is per OS
    thread, so run() gives each case its own again whenever it resumes one."""

    def __init__(self, threads: Callable[[], int], set_threads: Callable[[int], None],
                 rss: Callable[[], Any] | None = None) -> None:
        self._threads, self._set_threads = threads, set_threads
        self._rss = rss   # what measures the timing's memory (memory.PeakRss), if anything
        self._offers: dict[int, tuple[Callable[[], None], int]] = {}
        self._coordinator: greenlet.greenlet | None = None
        self.seconds = 0.0   # each timed member's share of the group's timing (wall clock)
        # the RSS the timing added (all members' runs: none of theirs alone; None unknown)
        self.rss_added: int | None = 0

    def offer(self, member: int, run: Callable[[], None]) -> tuple[list[float],
                                                                   MachineCheck | None]:
        """From member's work: its run, timed with the others'; returns its samples and
        the machine check (raises what the run raised while timed)."""
        assert self._coordinator is not None, "offer() outside TimingGroup.run()"
        self._offers[member] = (run, self._threads())
        got, check = self._coordinator.switch()
        if isinstance(got, BaseException):
            raise got
        return got, check

    def run(self, work: list[Callable[[], T]],
            timing: Callable[[list[Callable[[], None]], int],
                             tuple[list[list[float] | BaseException], MachineCheck | None]]
            ) -> list[T]:
        """Each work item (member i calls offer(i, ...) at most once), with the offered runs
        timed by timing(runs, most threads of them) -> (each run's samples or exception,
        the machine check); what each item returned, in order."""
        self._coordinator = greenlet.getcurrent()
        outer = self._threads()
        members = [greenlet.greenlet(w) for w in work]
        done: dict[int, T] = {}
        try:
            for i, g in enumerate(members):
                self._set_threads(outer)
                got = g.switch()
                if g.dead:
                    done[i] = got
            offered = sorted(self._offers)
            if offered:
                start = time.perf_counter()
                self._set_threads(outer)
                rss = self._rss() if self._rss else None
                samples, check = timing([self._offers[i][0] for i in offered],
                                        max(self._offers[i][1] for i in offered))
                self.seconds = (time.perf_counter() - start) / len(offered)
                self.rss_added = rss.added() if rss else 0
                for i, got in zip(offered, samples):
                    self._set_threads(self._offers[i][1])
                    done[i] = members[i].switch((got, check))
        finally:
            self._set_threads(outer)
            self._coordinator = None
        return [done[i] for i in range(len(work))]


class Stopwatch:
    """Accumulates seconds per named timer: ``with sw("fill"): ...``."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(TIMERS + (WAIT_TIMER,), 0.0)
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
