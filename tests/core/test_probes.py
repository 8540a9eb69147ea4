"""The measured machine limits (kernels/common/peak.c) behind `info` and %eff%."""

import math

import pytest
from benchdnn_py._core import lib

from benchdnn_py import core
from benchdnn_py.core import probes


def test_every_usable_route_measures_a_positive_rate():
    for operands in ("f32", "bf16", "f16", "int8"):
        peak = core.measured_peak(operands)
        routes = core.PEAK_ROUTES["f32" if operands == "f16" else operands]
        usable = [(kind, isa) for kind, isa in routes if core.isa_supported(isa)]
        if not usable:
            assert peak is None
            continue
        assert (peak.kind, peak.isa) == usable[0]     # the fastest route the CPU has
        assert peak.ops_per_s > 0


def test_the_guard_probe_runs_the_f32_peaks_loop_briefly(monkeypatch):
    """The probe (2 ms, best of 2) runs the very loop of the measured peak (50 ms, best of
    5). Checked by the calls, not by comparing readings: on a shared machine either may be
    taken in a spell that halves it (a peak of 117 against a probe of 173 GFLOPS, seen)."""
    peak = core.measured_peak("f32")
    calls = []

    class Recording:
        def __getattr__(self, name):
            return getattr(lib, name)

        def bdnn_peak_ops(self, kind, isa, seconds, repeats):
            rate = lib.bdnn_peak_ops(kind, isa, seconds, repeats)
            calls.append((kind, isa, seconds, repeats, rate))
            return rate

    monkeypatch.setattr(probes, "lib", Recording())
    probe = core.probe_peak()
    if peak is None:
        assert probe == 0.0 and calls == []
        return
    # what the loop read, whatever the machine gave it (no speed is asserted: a loaded
    # machine may read anything above zero)
    ((kind, isa, seconds, repeats, rate),) = calls
    assert (kind, isa, seconds, repeats) == (int(peak.kind), int(peak.isa),
                                             core.PROBE_SECONDS, core.PROBE_REPEATS)
    assert probe == rate > 0


def test_limits_measured_again_keep_the_higher_reading(monkeypatch):
    """remeasure_limits: the current thread count's limits are measured again at their
    next use (the copy bandwidth too), each keeping the higher of the two readings; other
    counts' are left alone. Checked on recorded C calls with scripted rates."""
    if core.measured_peak("f32") is None or core.max_threads() < 2:
        pytest.skip("needs an f32 vector route and two threads")
    rates = {"peak": [300e9, 150e9, 520e9, 400e9], "copy": [20e9, 40e9]}
    calls = []

    class Scripted:
        def __getattr__(self, name):
            return getattr(lib, name)

        def bdnn_peak_ops(self, kind, isa, seconds, repeats):
            calls.append("peak")
            return rates["peak"].pop(0)

        def bdnn_peak_copy_bandwidth(self, nbytes, repeats):
            calls.append("copy")
            return rates["copy"].pop(0)

    monkeypatch.setattr(probes, "_PEAKS", {})
    monkeypatch.setattr(probes, "_COPY", {})
    monkeypatch.setattr(probes, "_STALE", set())
    monkeypatch.setattr(probes, "lib", Scripted())
    f32 = lambda: core.measured_peak("f32").ops_per_s
    assert f32() == 300e9 and core.measured_copy_bandwidth() == 20e9
    with core.threads(1):
        assert f32() == 150e9
    assert f32() == 300e9 and calls == ["peak", "copy", "peak"]    # each measured once
    core.remeasure_limits()
    assert f32() == 520e9 and core.measured_copy_bandwidth() == 40e9
    with core.threads(1):
        assert f32() == 150e9                                     # not measured again
    assert f32() == 520e9 and calls == ["peak", "copy", "peak", "peak", "copy"]
    core.remeasure_limits()
    assert f32() == 520e9                                # 400 read: the higher kept
    assert rates == {"peak": [], "copy": []}


def test_f16_shares_the_f32_measurement():
    assert core.measured_peak("f16") is core.measured_peak("f32")


@pytest.mark.parametrize("kind,isa", [(lib.BDNN_PEAK_BF16, lib.BDNN_ISA_AVX2),
                                      (lib.BDNN_PEAK_F32, lib.BDNN_ISA_SCALAR),
                                      (99, lib.BDNN_ISA_AVX512)])
def test_no_such_route_is_zero(kind, isa):
    assert lib.bdnn_peak_ops(kind, isa, 0.001, 1) == 0.0


def test_copy_bandwidth_is_positive():
    assert lib.bdnn_peak_copy_bandwidth(8 << 20, 1) > 0


def test_the_core_round_trip_is_a_time_on_two_threads_and_none_on_one():
    """Threads 0 and 1 pass a cache line back and forth: some time per round trip (a
    reading, never a speed asserted); one thread has no pair to measure."""
    with core.threads(2):
        trip = core.core_round_trip()
    assert math.isfinite(trip) and trip > 0
    with core.threads(1):
        assert core.core_round_trip() == 0.0


def test_threads_sets_the_count_and_the_limits_are_kept_per_count():
    """core.threads(n) sets OpenMP's count for what runs inside and restores it; a limit
    measured inside is another measurement than the process count's, each kept once."""
    from benchdnn_py.reports import perf_report

    before = core.max_threads()
    with core.threads(1):
        assert core.max_threads() == 1
        one = core.measured_peak("f32")
        copy_one = core.measured_copy_bandwidth()
    assert core.max_threads() == before
    with core.threads(0):            # 0: the count as it is
        assert core.max_threads() == before
    assert perf_report.machine_limit("f32", 1) == one.ops_per_s
    assert perf_report.machine_limit(perf_report.BANDWIDTH, 1) == copy_one
    if before > 1:
        assert core.measured_peak("f32") is not one
        assert perf_report.machine_limit("f32") == core.measured_peak("f32").ops_per_s


def test_the_cache_probe_is_the_best_of_its_readings(monkeypatch):
    readings = [3e11, 5e11, 4e11]
    calls = []

    class Scripted:
        def __getattr__(self, name):
            return getattr(lib, name)

        def bdnn_probe_cache(self, nbytes, passes):
            calls.append((nbytes, passes))
            return readings.pop(0)

    monkeypatch.setattr(probes, "lib", Scripted())
    assert core.probe_cache() == 5e11
    assert calls == [(core.CACHE_PROBE_BYTES, core.CACHE_PROBE_PASSES)] * core.CACHE_PROBE_REPEATS


def test_the_cache_probe_reads_a_rate_from_cache_and_zero_for_nothing_to_read():
    """The slowest thread's rate over a buffer within L2, on every instruction set: a
    reading, never a speed asserted (a loaded machine may read anything above zero)."""
    for level in ("scalar", "avx2", ""):
        core.cap_isa(level)
        try:
            rate = core.probe_cache()
        finally:
            core.cap_isa("")
        assert rate > 0
    assert lib.bdnn_probe_cache(0, 20) == 0.0 and lib.bdnn_probe_cache(1 << 16, 0) == 0.0


def _peaks(f32: float, bf16: float, int8: float, bf16_isa=core.Isa.AVX512_BF16):
    P, K, I = core.Peak, core.PeakKind, core.Isa
    bf16_kind = K.BF16 if bf16_isa == I.AVX512_BF16 else K.F32
    return {"f32": P(K.F32, I.AVX512, f32 * 1e9), "bf16": P(bf16_kind, bf16_isa, bf16 * 1e9),
            "int8": P(K.INT8, I.AVX512_VNNI, int8 * 1e9)}


def test_a_low_precision_peak_under_the_f32_peak_is_called_implausible():
    assert core.implausible_limits(_peaks(232, 460, 900)) == []
    assert core.implausible_limits(_peaks(232, 232 * 0.76, 232)) == []   # within the floor
    lines = core.implausible_limits(_peaks(232, 58, 900))
    assert lines == ["the bf16 probe read 58 G/s against 232 GFLOPS for f32 FMA, which its "
                     "instruction at least matches: other processes held the cores during a "
                     "probe, so these limits (and %eff%) understate the machine"]
    assert [l.split()[1] for l in core.implausible_limits(_peaks(232, 58, 100))] == \
        ["bf16", "int8"]


def test_limits_measured_on_one_route_are_never_compared():
    # bf16 computed as f32 FMA reads the f32 loop itself; 256-bit int8 may trail 512-bit f32
    assert core.implausible_limits(_peaks(232, 100, 900, bf16_isa=core.Isa.AVX512)) == []
    peaks = _peaks(232, 460, 100)
    peaks["int8"] = core.Peak(core.PeakKind.INT8, core.Isa.AVX2, 100e9)
    assert core.implausible_limits(peaks) == []
    assert core.implausible_limits({"f32": None, "bf16": None, "int8": None}) == []
