"""The statistics on synthetic samples with known answers, and the decision rule compare
builds from them (threshold AND Mann-Whitney after Benjamini-Hochberg)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import results_file
from scipy import stats as sp

from benchdnn_py.reports import stats
from benchdnn_py.reports.compare import Options, compare_files

def test_median():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    with pytest.raises(ValueError):
        stats.median([])


def test_bootstrap_interval_of_constant_samples_is_the_exact_ratio():
    assert stats.bootstrap_speedup_ci([2.0] * 5, [1.0] * 7) == (2.0, 2.0)


def test_bootstrap_interval_covers_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(1)
    base, new = rng.lognormal(0, 0.05, 30), 1.1 * rng.lognormal(0, 0.05, 30)
    low, high = stats.bootstrap_speedup_ci(base, new, seed=7)
    estimate = np.median(base) / np.median(new)
    assert low < estimate < high
    assert high < 1.0                        # 10% slower: the interval excludes 1
    assert (low, high) == stats.bootstrap_speedup_ci(base, new, seed=7)
    narrow = stats.bootstrap_speedup_ci(base, new, confidence=0.5, seed=7)
    assert low < narrow[0] < narrow[1] < high


@pytest.mark.parametrize("n", [401, 400, 60])   # 60: the smallest to take that path
def test_exact_resampled_median_matches_explicit_resampling(monkeypatch, n):
    """The order-statistic path (large inputs) gives the interval explicit resamples
    give, for odd and even sizes."""
    rng = np.random.default_rng(2)
    base, new = rng.lognormal(0, 0.1, n), 1.05 * rng.lognormal(0, 0.1, n)
    monkeypatch.setattr(stats, "_DIRECT_BOOTSTRAP_LIMIT", 10**12)
    direct = stats.bootstrap_speedup_ci(base, new, draws=20000, seed=3)
    monkeypatch.setattr(stats, "_DIRECT_BOOTSTRAP_LIMIT", 0)
    exact = stats.bootstrap_speedup_ci(base, new, draws=20000, seed=3)
    assert exact[0] == pytest.approx(direct[0], rel=0.01)
    assert exact[1] == pytest.approx(direct[1], rel=0.01)


def test_min_p_value_is_total_separation():
    assert stats.min_p_value(5, 5) == pytest.approx(2 / 252)
    assert stats.min_p_value(3, 3) == pytest.approx(0.1)   # can never reach 0.05
    assert stats.min_p_value(0, 5) == 1.0
    assert stats.min_p_value(5000, 4000) == 0.0          # no overflow for long runs


def test_mann_whitney_known_answers():
    # Total separation, no ties: the exact two-sided p is 2 / C(10, 5).
    assert stats.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert stats.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == \
        stats.mann_whitney_p([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])          # two-sided
    assert stats.mann_whitney_p([1.0] * 5, [1.0] * 5) == 1.0            # no variation
    assert stats.mann_whitney_p([1.0], [2.0, 3.0]) == 1.0               # one sample
    interleaved = stats.mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10])
    assert interleaved > 0.5


def test_batched_p_values_equal_one_by_one():
    rng = np.random.default_rng(8)
    pairs = [(rng.lognormal(0, 0.1, 12), rng.lognormal(0.05, 0.1, 12)) for _ in range(5)]
    pairs += [(rng.lognormal(0, 0.1, 20), rng.lognormal(0, 0.1, 15)),
              ([1.0, 2.0, 2.0, 3.0, 4.0], [2.0, 3.0, 5.0, 6.0, 7.0]),     # small, tied
              ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),                        # small: exact
              (np.r_[np.ones(9), 2.0], np.r_[np.ones(9), 3.0]),           # ties, batched
              ([1.0] * 10, [1.0] * 10)]
    batched = stats.mann_whitney_p_many(pairs)
    single = [float(sp.mannwhitneyu(b, n, alternative="two-sided").pvalue) for b, n in pairs]
    single[-1] = 1.0                                     # no variation: no evidence
    assert batched == pytest.approx(single, rel=1e-12)
    assert batched[7] == pytest.approx(2 / 252)


def test_ten_percent_slower_is_significant():
    rng = np.random.default_rng(3)
    base, new = rng.lognormal(0, 0.03, 20), 1.10 * rng.lognormal(0, 0.03, 20)
    assert stats.mann_whitney_p(base, new) < 1e-4


def test_benjamini_hochberg_known_values():
    assert stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == \
        pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert stats.benjamini_hochberg([]) == []
    assert stats.benjamini_hochberg([0.9, 0.95]) == pytest.approx([0.95, 0.95])
    p = np.random.default_rng(4).random(50) ** 3
    assert stats.benjamini_hochberg(p) == pytest.approx(
        sp.false_discovery_control(p, method="bh").tolist())


def test_paired_rounds_known_answers():
    base, new = [1.0, 1.1, 0.9, 1.2, 1.0], [2.0, 2.3, 1.7, 2.5, 2.0]   # about 2x slower
    speedup, (low, high), p = stats.paired_rounds(base, new)
    logs = np.log(np.array(base) / np.array(new))
    assert speedup == pytest.approx(math.exp(logs.mean()))
    assert p == pytest.approx(sp.ttest_1samp(logs, 0.0).pvalue)
    assert p < 1e-4 and low < speedup < high < 0.55
    # The machine's state moves both sides of a round alike: it cancels out.
    drift = [1.0, 1.3, 0.8, 1.5, 1.1]
    _, _, p_drift = stats.paired_rounds(drift, [1.01 * d for d in drift])
    assert p_drift < 1e-9                                 # every round agrees
    assert stats.paired_rounds([1.0, 1.2, 0.9], [1.1, 1.0, 1.0])[2] > 0.5
    assert stats.paired_rounds([2.0], [1.0]) == (2.0, (2.0, 2.0), 1.0)


def test_geometric_mean_and_its_interval():
    assert stats.geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    assert stats.geometric_mean([1.0, 4.0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        stats.geometric_mean([1.0, -1.0])
    assert stats.geometric_mean_ci([1.5]) == pytest.approx((1.5, 1.5))
    values = np.random.default_rng(5).lognormal(0, 0.1, 200)
    low, high = stats.geometric_mean_ci(values)
    assert low < stats.geometric_mean(values) < high
    assert math.log(high / low) < 0.1        # 200 cases pin the mean down


def test_a_ten_percent_slower_case_is_flagged():
    rng = np.random.default_rng(6)
    base = results_file([rng.lognormal(0, 0.03, 20).tolist()], "base")
    new = results_file([(1.10 * rng.lognormal(0, 0.03, 20)).tolist()], "new")
    case = compare_files(base, new).cases[0]
    assert case.mark == "+"
    assert case.speedup == pytest.approx(1 / 1.1, rel=0.03)
    assert case.ci[1] < 1.0


def test_a_change_below_the_threshold_or_the_floor_is_not_flagged():
    rng = np.random.default_rng(7)
    base = rng.lognormal(0, 0.005, 50)
    new = 1.03 * rng.lognormal(0, 0.005, 50)               # significant, but only 3%
    tiny = [(x * 0.002).tolist() for x in (base, 1.3 * base)]   # 30%, but 0.6 us
    cmp = compare_files(results_file([base.tolist(), tiny[0]], "b"),
                        results_file([new.tolist(), tiny[1]], "n"))
    assert [c.mark for c in cmp.cases] == ["~", "~"]
    assert cmp.cases[0].p_value < 1e-6
    cmp = compare_files(results_file([tiny[0]], "b"), results_file([tiny[1]], "n"),
                        Options(floor_us=0.1))
    assert cmp.cases[0].mark == "+"


def test_200_identical_cases_give_no_regression_in_95_of_100_trials():
    """False alarms: every case of every trial draws base and new from one distribution
    (per-case scale and noise, 10 samples a side). BH keeps the whole batch's chance of
    any false flag near alpha; the threshold lowers it further."""
    trials_with_a_flag = 0
    opt = Options(draws=50)   # the interval does not enter the decision; keep this fast
    for seed in range(100):
        rng = np.random.default_rng(seed)
        scale = rng.uniform(0.005, 5.0, 200)
        spread = rng.uniform(0.01, 0.2, 200)
        base = [(s * rng.lognormal(0, w, 10)).tolist() for s, w in zip(scale, spread)]
        new = [(s * rng.lognormal(0, w, 10)).tolist() for s, w in zip(scale, spread)]
        cmp = compare_files(results_file(base, "b"), results_file(new, "n"), opt)
        if any(c.mark == "+" for c in cmp.cases):
            trials_with_a_flag += 1
    assert trials_with_a_flag <= 5
