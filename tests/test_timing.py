"""timing.py: the timed loop and the perf guard around it (MachineGuard), on scripted
probes (a real probe's reading depends on the machine's moment)."""

import pytest

from benchdnn_py.timing import GUARD_ATTEMPTS, GUARD_SHARE, GUARD_WAITS_S, MachineCheck, \
    MachineGuard, measure

PEAK = 200.0


class Script:
    """Probe readings in order; counts the timed runs and the waits."""

    def __init__(self, readings, threads=2):
        self.readings = list(readings)
        self.runs = 0
        self.waits = []
        self.n_threads = threads

    def probe(self):
        return self.readings.pop(0)

    def run(self):
        self.runs += 1

    def guard(self):
        return MachineGuard(self.probe, lambda: PEAK, lambda: self.n_threads, self.waits.append)


def test_measure_warms_up_once_then_takes_the_fixed_count():
    s = Script([])
    samples = measure(s.run, 10.0, 7)
    assert len(samples) == 7 and s.runs == 8 and all(t >= 0 for t in samples)


def test_a_healthy_machine_is_timed_once():
    s = Script([198.0, 190.0])
    g = s.guard()
    samples, check = g.measure(s.run, 10.0, 3)
    assert len(samples) == 3 and s.runs == 4
    assert check == MachineCheck(share=190.0 / PEAK, attempts=1) and not check.degraded
    assert s.waits == [] and s.readings == []


def test_a_degraded_timing_is_redone_after_a_wait_and_the_healthy_one_kept():
    # first timing: the probe after it reads half the peak (one core's worth)
    s = Script([196.0, 100.0, 195.0, 197.0])
    samples, check = s.guard().measure(s.run, 10.0, 2)
    assert check.attempts == 2 and check.share == pytest.approx(195.0 / PEAK)
    assert not check.degraded
    assert s.runs == 2 * 3 and s.waits == [GUARD_WAITS_S[0]] and len(samples) == 2


def test_a_machine_degraded_through_every_attempt_is_flagged_and_not_retried_next():
    half = [100.0, 100.0] * GUARD_ATTEMPTS
    s = Script(half + [101.0, 99.0] + [190.0, 192.0] + [190.0, 192.0])
    g = s.guard()
    _, first = g.measure(s.run, 10.0, 1)
    assert first.attempts == GUARD_ATTEMPTS and first.degraded
    assert s.waits == list(GUARD_WAITS_S)
    assert "50% of its peak" in first.diagnostic() and "3 timings" in first.diagnostic()
    # still degraded: one timing only, so a machine that stays so does not triple the run
    _, second = g.measure(s.run, 10.0, 1)
    assert second.attempts == 1 and second.degraded
    # whole again: reported healthy, and the next case may be retried again
    _, third = g.measure(s.run, 10.0, 1)
    assert third.attempts == 1 and not third.degraded
    s.readings = [100.0, 100.0, 190.0, 190.0]
    _, fourth = g.measure(s.run, 10.0, 1)
    assert fourth.attempts == 2 and not fourth.degraded


def test_the_kept_timing_is_the_one_with_the_healthiest_probes():
    s = Script([120.0, 150.0, 100.0, 110.0, 160.0, 155.0])   # 0.6, 0.5, 0.775 of the peak
    _, check = s.guard().measure(s.run, 10.0, 1)
    assert check.attempts == 3 and check.share == pytest.approx(155.0 / PEAK)
    assert check.degraded == (155.0 / PEAK < GUARD_SHARE)


def test_a_probe_above_the_measured_peak_raises_the_reference_for_its_thread_count():
    # The peak was measured in a dip (100): a probe of 200 shows the machine's real rate,
    # and a later probe of 110 on the same threads is then degraded.
    s = Script([200.0, 200.0, 110.0, 110.0, 110.0, 110.0, 110.0, 110.0])
    g = MachineGuard(s.probe, lambda: 100.0, lambda: s.n_threads, s.waits.append)
    assert not g.measure(s.run, 10.0, 1)[1].degraded
    assert g.measure(s.run, 10.0, 1)[1].share == pytest.approx(0.55)
    # on one thread the reference is that thread count's own (the callable's 100)
    s.n_threads = 1
    s.readings = [95.0, 96.0]
    check = g.measure(s.run, 10.0, 1)[1]
    assert check.share == pytest.approx(0.95) and check.attempts == 1
