"""timing.py: the timed loop and the perf guard around it (MachineGuard), on scripted
probes (a real probe's reading depends on the machine's moment)."""

import pytest

from benchdnn_py.engine.timing import (GUARD_ATTEMPTS, GUARD_CACHE_FIRST, GUARD_CACHE_SHARE,
                                       GUARD_POLL_S, GUARD_REMEASURE_MAX, GUARD_REMEASURE_OVER,
                                       GUARD_SETTLE_S, GUARD_SHARE, MIN_TIMES_PER_PRB, GuardTally,
                                       MachineCheck, MachineGuard, TimingGroup, measure,
                                       measure_turns)

PEAK = 200.0
POLLS = round(GUARD_SETTLE_S / GUARD_POLL_S)   # the probes a settle makes after its first


class Script:
    """Probe readings in order (then `rest` for ever); counts the timed runs and waits."""

    def __init__(self, readings, threads=2, rest=None):
        self.readings = list(readings)
        self.rest = rest
        self.runs = 0
        self.waits = []
        self.n_threads = threads

    def probe(self):
        if not self.readings:
            assert self.rest is not None, "the guard probed more than the script says"
            return self.rest
        return self.readings.pop(0)

    def run(self):
        self.runs += 1

    def guard(self, peak=PEAK):
        return MachineGuard(self.probe, lambda: peak, lambda: self.n_threads, self.waits.append)


def test_measure_warms_up_once_then_takes_the_fixed_count():
    s = Script([])
    samples = measure(s.run, 10.0, 7)
    assert len(samples) == 7 and s.runs == 8 and all(t >= 0 for t in samples)


def test_a_healthy_machine_is_timed_once_without_waiting():
    s = Script([198.0, 190.0])
    samples, check = s.guard().measure(s.run, 10.0, 3)
    assert len(samples) == 3 and s.runs == 4
    assert check == MachineCheck(share=190.0 / PEAK, attempts=1) and not check.degraded
    assert s.waits == [] and s.readings == []


def test_a_degraded_spell_before_the_timing_is_waited_out():
    s = Script([100.0, 100.0, 118.0, 190.0, 195.0])   # half the peak for three probes
    _, check = s.guard().measure(s.run, 10.0, 2)
    assert check == MachineCheck(share=190.0 / PEAK, attempts=1)
    assert s.waits == [GUARD_POLL_S] * 3 and s.runs == 3 and s.readings == []


def test_a_timing_degraded_after_it_is_made_again_and_the_healthy_one_kept():
    s = Script([196.0, 100.0, 195.0, 197.0])   # the probe after the first timing: half
    samples, check = s.guard().measure(s.run, 10.0, 2)
    assert check.attempts == 2 and check.share == pytest.approx(195.0 / PEAK)
    assert not check.degraded and s.waits == []
    assert s.runs == 2 * 3 and len(samples) == 2 and s.readings == []


def test_the_kept_timing_is_the_one_with_the_healthiest_probes():
    s = Script([190.0, 120.0, 190.0, 100.0, 190.0, 155.0])   # after: 0.6, 0.5, 0.775
    _, check = s.guard().measure(s.run, 10.0, 1)
    assert check.attempts == GUARD_ATTEMPTS and check.share == pytest.approx(155.0 / PEAK)
    assert check.degraded == (155.0 / PEAK < GUARD_SHARE)


def test_a_machine_degraded_through_every_attempt_is_flagged_then_not_waited_for():
    s = Script([], rest=100.0)
    g = s.guard()
    _, first = g.measure(s.run, 10.0, 1)
    assert first.attempts == GUARD_ATTEMPTS and first.degraded
    # each attempt waited the whole settle time for a healthy probe
    assert s.waits == [GUARD_POLL_S] * (POLLS * GUARD_ATTEMPTS)
    assert "50% of its peak" in first.diagnostic() and "3 timings" in first.diagnostic()
    # still degraded: one probe, one timing, no wait, so a machine that stays so does not
    # multiply the run's time
    s.waits.clear()
    s.readings, s.rest = [101.0, 99.0], None
    _, second = g.measure(s.run, 10.0, 1)
    assert second.attempts == 1 and second.degraded and s.waits == []
    # whole again: healthy, and the next case may wait and retry again
    s.readings = [190.0, 192.0]
    _, third = g.measure(s.run, 10.0, 1)
    assert third.attempts == 1 and not third.degraded
    s.readings = [190.0, 100.0, 100.0, 190.0, 190.0]
    _, fourth = g.measure(s.run, 10.0, 1)
    assert fourth.attempts == 2 and not fourth.degraded and s.waits == [GUARD_POLL_S]


def test_a_probe_above_the_measured_peak_raises_the_reference_for_its_thread_count():
    # The peak was measured in a dip (100): a probe of 200 shows the machine's real rate,
    # and later probes of 110 on the same threads are then degraded.
    s = Script([200.0, 200.0], rest=110.0)
    g = s.guard(peak=100.0)
    assert not g.measure(s.run, 10.0, 1)[1].degraded
    check = g.measure(s.run, 10.0, 1)[1]
    assert check.degraded and check.share == pytest.approx(0.55)
    # on one thread the reference is that thread count's own (the callable's 100)
    s.n_threads, s.readings, s.rest = 1, [95.0, 96.0], None
    check = g.measure(s.run, 10.0, 1)[1]
    assert check.share == pytest.approx(0.95) and check.attempts == 1


def test_a_probe_far_above_the_peak_has_the_limits_measured_again_at_most_twice():
    """The run's limits (what %eff% divides by) were measured in a slow spell: a probe
    over GUARD_REMEASURE_OVER times the peak has them measured again, up to
    GUARD_REMEASURE_MAX times per thread count; within that margin, never."""
    peak = {"v": 100.0}
    calls = []

    def remeasure():   # on two threads measured again still in the spell, on one out of it
        calls.append(threads["n"])
        peak["v"] = 105.0 if threads["n"] == 2 else 200.0

    threads = {"n": 2}
    s = Script([], rest=GUARD_REMEASURE_OVER * 100.0 - 1.0)   # just within the margin
    guard = MachineGuard(s.probe, lambda: peak["v"], lambda: threads["n"], s.waits.append,
                         remeasure=remeasure)
    guard.measure(s.run, 10.0, 1)
    assert calls == []
    s.rest = 200.0
    for _ in range(3):
        guard.measure(s.run, 10.0, 1)
    assert calls == [2] * GUARD_REMEASURE_MAX     # bounded, whatever the readings
    threads["n"] = 1                              # another count: its own allowance
    peak["v"] = 100.0
    _, check = guard.measure(s.run, 10.0, 1)
    assert calls == [2] * GUARD_REMEASURE_MAX + [1] and check.share == 1.0


# -- the cache probe ------------------------------------------------------------------------

class Cache:
    """Cache probe readings in order, then `rest` for ever."""

    def __init__(self, readings, rest=100.0):
        self.readings, self.rest = list(readings), rest

    def probe(self):
        return self.readings.pop(0) if self.readings else self.rest


def test_a_starved_cache_with_healthy_compute_is_waited_out_then_timed():
    # the first probe takes GUARD_CACHE_FIRST readings for its reference (best: 100)
    cache = Cache([100.0] * GUARD_CACHE_FIRST + [60.0, 70.0, 95.0, 97.0])
    s = Script([], rest=198.0)
    guard = MachineGuard(s.probe, lambda: PEAK, lambda: 2, s.waits.append, cache.probe)
    _, check = guard.measure(s.run, 10.0, 2)
    assert s.waits == [GUARD_POLL_S] * 2 and check.attempts == 1 and not check.degraded
    assert check.cache == pytest.approx(0.95) and check.share == pytest.approx(198.0 / PEAK)


def test_a_timing_with_a_starved_cache_after_it_is_made_again():
    cache = Cache([100.0] * GUARD_CACHE_FIRST + [99.0, 50.0, 98.0, 96.0])
    s = Script([], rest=198.0)
    guard = MachineGuard(s.probe, lambda: PEAK, lambda: 2, s.waits.append, cache.probe)
    _, check = guard.measure(s.run, 10.0, 2)
    assert check.attempts == 2 and check.cache == pytest.approx(0.96)
    assert s.runs == 2 * 3 and not check.degraded


def test_a_cache_under_its_threshold_through_every_attempt_is_reported_as_such():
    cache = Cache([100.0] * GUARD_CACHE_FIRST, rest=80.0)
    s = Script([], rest=198.0)
    guard = MachineGuard(s.probe, lambda: PEAK, lambda: 2, s.waits.append, cache.probe)
    _, check = guard.measure(s.run, 10.0, 2)
    assert check.degraded and check.attempts == GUARD_ATTEMPTS and check.cache == 0.8
    assert check.share >= GUARD_SHARE and check.cache < GUARD_CACHE_SHARE
    assert check.diagnostic().startswith("perf guard: the machine's cache probe read 80% "
                                         "of its best around this case's timing (3 timings)")
    assert check.record() == {"share": round(198.0 / PEAK, 3), "cache": 0.8, "attempts": 3}


def test_both_probes_low_name_both_and_a_record_without_cache_reads_healthy():
    both = MachineCheck(share=0.5, attempts=1, cache=0.7)
    assert both.diagnostic().startswith("perf guard: the machine's compute probe read 50% of "
                                        "its peak and its cache probe 70% of its best")
    # results files from before the cache probe: their checks have share and attempts
    assert not MachineCheck(**{"share": 0.9, "attempts": 1}).degraded


def test_a_check_is_judged_as_its_record_keeps_it():
    """A probe a hair under a threshold rounds to it in the record: the run's verdict and
    the one read back from its results file are the same."""
    for share, cache in ((GUARD_SHARE - 4e-4, 1.0), (0.95, GUARD_CACHE_SHARE - 4e-4),
                         (GUARD_SHARE - 6e-4, 1.0), (0.95, GUARD_CACHE_SHARE - 6e-4)):
        check = MachineCheck(share=share, attempts=1, cache=cache)
        again = MachineCheck(**check.record())
        assert again == check and again.degraded == check.degraded
        assert GuardTally.of_records([{"machine": check.record()}]).degraded == check.degraded
    assert not MachineCheck(share=GUARD_SHARE - 4e-4, attempts=1).degraded
    assert MachineCheck(share=GUARD_SHARE - 6e-4, attempts=1).degraded


def test_the_cache_reference_is_per_thread_count_and_rises_with_better_readings():
    cache = Cache([80.0] * GUARD_CACHE_FIRST + [80.0, 100.0] + [50.0] * GUARD_CACHE_FIRST
                  + [50.0], rest=100.0)
    threads = {"n": 2}
    s = Script([], rest=198.0)
    guard = MachineGuard(s.probe, lambda: PEAK, lambda: threads["n"], s.waits.append,
                         cache.probe)
    _, first = guard.measure(s.run, 10.0, 1)    # reference 80: both probes whole
    assert first.cache == 1.0
    threads["n"] = 1                           # its own reference: 50, read 50
    _, other = guard.measure(s.run, 10.0, 1)
    assert other.cache == 1.0 and not other.degraded
    threads["n"] = 2      # back on 2: the reference is 100 now, so 85 is degraded
    cache.readings += [85.0, 99.0, 99.0]
    _, again = guard.measure(s.run, 10.0, 1)
    assert s.waits == [GUARD_POLL_S] and again.cache == pytest.approx(0.99)


# -- in turns (--perf-interleave) ----------------------------------------------------------

def test_turns_time_each_case_once_per_round_after_an_untimed_run_in_order():
    calls = []
    runs = [lambda: calls.append("a"), lambda: calls.append("b")]
    out = measure_turns(runs, 10.0, 3)
    assert [len(o) for o in out] == [3, 3]
    assert calls == ["a", "a", "b", "b"] * 3   # each turn: untimed, then timed


def test_turns_without_a_fixed_count_stop_when_the_group_has_spent_each_cases_budget():
    import time
    slow = lambda: time.sleep(0.002)   # noqa: E731
    out = measure_turns([slow, lambda: None], 6.0, 0)
    # 12 ms in all (6 per case), never under the minimum rounds, and no round past it
    assert len(out[0]) == len(out[1]) >= MIN_TIMES_PER_PRB
    total = sum(out[0]) + sum(out[1])
    assert total >= 12.0
    assert len(out[0]) == MIN_TIMES_PER_PRB or total - out[0][-1] - out[1][-1] < 12.0


def test_a_run_that_raises_gets_its_error_and_the_others_go_on():
    state = {"n": 0}

    def flaky():
        state["n"] += 1
        if state["n"] == 3:
            raise RuntimeError("boom")

    out = measure_turns([flaky, lambda: None], 10.0, 4)
    assert isinstance(out[0], RuntimeError) and state["n"] == 3
    assert len(out[1]) == 4


class Threads:
    """An OS thread's OpenMP thread count, as core.max_threads / set_threads keep it."""

    def __init__(self, n):
        self.n = n

    def get(self):
        return self.n

    def set(self, n):
        self.n = n


def test_a_group_runs_each_case_up_to_its_timing_times_them_together_then_resumes_each():
    threads = Threads(2)
    group = TimingGroup(threads.get, threads.set)
    trace, timed = [], []

    def case(i, n):
        def work():
            threads.set(n)                     # the case's own count, as core.threads sets it
            trace.append(f"up to timing {i}")
            samples, check = group.offer(i, lambda: None)
            trace.append(f"resumed {i} on {threads.get()}")
            return i, samples, check
        return work

    def timing(runs, most):
        trace.append("timing")
        timed.append((len(runs), most, threads.get()))
        return [[1.0 * k] for k in range(len(runs))], MachineCheck(0.97, 1)

    got = group.run([case(0, 2), case(1, 1)], timing)
    assert trace == ["up to timing 0", "up to timing 1", "timing", "resumed 0 on 2",
                     "resumed 1 on 1"]
    assert timed == [(2, 2, 2)]   # both runs; the most threads; the outer count restored
    assert got == [(0, [0.0], MachineCheck(0.97, 1)), (1, [1.0], MachineCheck(0.97, 1))]
    assert threads.n == 2 and group.seconds >= 0.0


def test_a_group_measures_the_memory_its_timing_adds_around_the_timing_alone():
    threads = Threads(1)
    trace = []

    class Watch:   # memory.PeakRss's part: started by creation, read by added()
        def __init__(self):
            trace.append("watch")

        def added(self):
            trace.append("read")
            return 7 << 20

    group = TimingGroup(threads.get, threads.set, Watch)
    assert group.rss_added == 0   # before any timing: nothing shared yet

    def case(i):
        def work():
            trace.append(f"up to timing {i}")
            group.offer(i, lambda: None)
            trace.append(f"resumed {i}: {group.rss_added}")
        return work

    def timing(runs, most):
        trace.append("timing")
        return [[1.0]] * len(runs), None

    group.run([case(0), case(1)], timing)
    assert trace == ["up to timing 0", "up to timing 1", "watch", "timing", "read",
                     f"resumed 0: {7 << 20}", f"resumed 1: {7 << 20}"]


def test_a_case_that_ends_before_its_timing_is_left_out_of_it():
    threads = Threads(2)
    group = TimingGroup(threads.get, threads.set)
    seen = []

    def timing(runs, most):
        seen.append(len(runs))
        return [[5.0]], None

    got = group.run([lambda: "skipped", lambda: group.offer(1, lambda: None)], timing)
    assert seen == [1] and got == ["skipped", ([5.0], None)]


def test_no_case_reaching_its_timing_times_nothing():
    threads = Threads(1)
    group = TimingGroup(threads.get, threads.set)
    got = group.run([lambda: "a", lambda: "b"],
                    lambda runs, most: pytest.fail("timed with no run offered"))
    assert got == ["a", "b"]


def test_an_error_of_a_timed_run_is_raised_in_its_own_case():
    threads = Threads(1)
    group = TimingGroup(threads.get, threads.set)

    def work(i):
        def body():
            try:
                group.offer(i, lambda: None)
            except RuntimeError as exc:
                return f"{i}: {exc}"
            return f"{i}: timed"
        return body

    got = group.run([work(0), work(1)],
                    lambda runs, most: ([RuntimeError("bad run"), [1.0]], None))
    assert got == ["0: bad run", "1: timed"]
