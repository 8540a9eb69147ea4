"""The statistics compare uses: pure functions of samples, no printing, no state.

Conventions: a *speedup* is base time / new time, so > 1 means the new run is faster
(oneDNN's perf CI label, "speedup, >1 = faster"). Bootstraps take an explicit seed, so a
report is the same every time it is made from the same files.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

# Above this many draws x samples, the resampled median comes from the exact distribution
# of a resample's order statistics instead of explicit resamples: O(n log n + draws)
# instead of O(draws * n). A perf run of microsecond problems holds thousands of samples
# per case, and a batch thousands of cases.
_DIRECT_BOOTSTRAP_LIMIT = 100_000


@functools.cache
def _sp():
    # scipy.stats takes about a second to import: only when a statistic needs it, so that
    # a usage error or a bad file is reported at once.
    from scipy import stats
    return stats


def median(samples: Sequence[float]) -> float:
    """The sample median (the mean of the two middle values for an even count)."""
    if len(samples) == 0:
        raise ValueError("median of no samples")
    return float(np.median(np.asarray(samples, dtype=float)))


def _resampled_medians(x: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` medians of bootstrap resamples (size n, with replacement) of ``x``.

    Small inputs are resampled explicitly. For larger ones, the k-th smallest value of a
    resample is <= x_(j) exactly when at least k of its n draws fall among the j smallest
    values, a Binomial(n, j/n) event; inverting that distribution gives the resample's
    middle order statistic directly. For even n the median averages the two middle ones,
    each drawn from its exact distribution with one shared uniform, which keeps them in
    order (the upper one never below the lower).
    """
    n = x.size
    if n * draws <= _DIRECT_BOOTSTRAP_LIMIT:
        return np.median(x[rng.integers(0, n, size=(draws, n))], axis=1)
    xs = np.sort(x)
    fractions = np.arange(1, n + 1) / n
    u = rng.random(draws)

    from scipy.special import bdtrc  # binom.sf as a bare ufunc: no per-call overhead

    def order_stat(k: int) -> np.ndarray:
        cdf = bdtrc(k - 1, n, fractions)     # P(k-th smallest <= xs[j])
        return xs[np.minimum(np.searchsorted(cdf, u, side="left"), n - 1)]

    if n % 2:
        return order_stat((n + 1) // 2)
    return (order_stat(n // 2) + order_stat(n // 2 + 1)) / 2


def bootstrap_speedup_ci(base: Sequence[float], new: Sequence[float], *,
                         confidence: float = 0.95, draws: int = 2000,
                         seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of median(base) / median(new).

    Test: none (an interval estimate). Two-sided, ``confidence`` (default 95%: the 2.5th
    and 97.5th percentiles of ``draws`` bootstrap ratios). Base and new are resampled
    independently, each with replacement at its own size. Distribution-free, so it suits
    skewed kernel timings. Fallback: with a single sample on a side that side does not
    vary, and with one sample on both the interval is the point estimate itself.
    """
    b, n = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if b.size == 0 or n.size == 0:
        raise ValueError("bootstrap of an empty sample")
    rng = np.random.default_rng(seed)
    ratios = _resampled_medians(b, draws, rng) / _resampled_medians(n, draws, rng)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def min_p_value(n_base: int, n_new: int) -> float:
    """The smallest two-sided Mann-Whitney p-value samples of these sizes can give (total
    separation, no ties): 2 / C(n_base + n_new, n_base). When it exceeds the level, the
    test cannot reject whatever the data (asv's ``_stats.is_different`` check)."""
    if n_base < 1 or n_new < 1:
        return 1.0
    # In logs: C(n + m, n) overflows a float beyond a thousand or so samples.
    log_comb = (math.lgamma(n_base + n_new + 1) - math.lgamma(n_base + 1)
                - math.lgamma(n_new + 1))
    return min(1.0, 2.0 * math.exp(-log_comb))


def mann_whitney_p(base: Sequence[float], new: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U test p-value (scipy.stats.mannwhitneyu).

    Null hypothesis: a base time and a new time are equally likely to be the larger (no
    shift between the two distributions). Two-sided, since compare reports both slower
    and faster cases; the level is applied by the caller, after Benjamini-Hochberg
    correction. Exact distribution when a side has at most 8 samples and there are no
    ties, otherwise the normal approximation with tie and continuity correction (scipy's
    choice). Fallback: fewer than 2 samples on a side, or no variation at all (every time
    equal), gives p = 1.0 (no evidence).
    """
    return mann_whitney_p_many([(base, new)])[0]


def mann_whitney_p_many(pairs: Sequence[tuple[Sequence[float], Sequence[float]]]
                        ) -> list[float]:
    """mann_whitney_p of each (base, new) pair, the same numbers as one call per pair.

    Pairs of equal sizes above 8 samples a side are tested in one vectorised call: scipy
    uses the normal approximation for them whatever the data and corrects ties row by
    row, so grouping changes nothing but the time (a thousand cases: milliseconds, not a
    second). Smaller pairs go one by one, since whether they get the exact test depends
    on their own ties.
    """
    out = [1.0] * len(pairs)
    groups: dict[tuple[int, int], list[int]] = {}
    arrays = []
    for i, (base, new) in enumerate(pairs):
        b, n = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
        arrays.append((b, n))
        if b.size < 2 or n.size < 2 or np.ptp(np.concatenate([b, n])) == 0:
            continue
        if b.size > 8 and n.size > 8:
            groups.setdefault((b.size, n.size), []).append(i)
        else:
            out[i] = float(_sp().mannwhitneyu(b, n, alternative="two-sided",
                                              method="auto").pvalue)
    for rows in groups.values():
        b = np.stack([arrays[i][0] for i in rows])
        n = np.stack([arrays[i][1] for i in rows])
        p = _sp().mannwhitneyu(b, n, alternative="two-sided", method="asymptotic",
                               axis=1).pvalue
        for i, value in zip(rows, np.atleast_1d(p)):
            out[i] = float(value)
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input order.

    Rejecting every hypothesis whose adjusted value is <= alpha controls the false
    discovery rate at alpha across the whole family, for independent or positively
    dependent tests (Benjamini & Hochberg 1995). Step-up: sorted ascending, p_(i) * m / i,
    made monotone from the largest down and capped at 1. An empty input gives [].
    """
    m = len(p_values)
    if m == 0:
        return []
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out.tolist()


def paired_rounds(base_medians: Sequence[float], new_medians: Sequence[float], *,
                  confidence: float = 0.95) -> tuple[float, tuple[float, float], float]:
    """Speedup, its confidence interval and p-value from rounds measured in pairs.

    Round i timed base then new back to back, so both saw the same state of the machine;
    the round's log speedup log(base_i / new_i) cancels that state, and rounds are the
    independent observations (samples within a round are not: they share it). Test: the
    one-sample Student t-test of the mean log speedup against 0 (a paired t-test on log
    times), two-sided; the level is applied by the caller. Speedup: exp(mean), with the
    t interval at ``confidence``. Fallbacks: one round gives its speedup, an interval of
    that point and p = 1.0; rounds that all agree exactly give p = 0.0 (or 1.0 if they
    all show no change).
    """
    logs = np.log(np.asarray(base_medians, dtype=float) / np.asarray(new_medians, dtype=float))
    if logs.size == 0:
        raise ValueError("no rounds")
    mean = float(logs.mean())
    point = math.exp(mean)
    if logs.size < 2:
        return point, (point, point), 1.0
    sem = float(logs.std(ddof=1)) / math.sqrt(logs.size)
    if sem == 0.0:
        return point, (point, point), 1.0 if mean == 0.0 else 0.0
    half = float(_sp().t.ppf(0.5 + confidence / 2, logs.size - 1)) * sem
    p = float(2 * _sp().t.sf(abs(mean) / sem, logs.size - 1))
    return point, (math.exp(mean - half), math.exp(mean + half)), p


def geometric_mean(values: Sequence[float]) -> float:
    """exp(mean(log x)) of positive values: the mean speedup that treats 2x faster and 2x
    slower symmetrically (Fleming & Wallace 1986)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or np.any(x <= 0):
        raise ValueError("geometric mean needs positive values")
    return float(np.exp(np.mean(np.log(x))))


def geometric_mean_ci(values: Sequence[float], *, confidence: float = 0.95,
                      draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the geometric mean, resampling the
    values (cases) with replacement.

    Test: none (an interval estimate); two-sided, ``confidence`` (default 95%). It answers
    "how much would the mean speedup move with another set of such cases", not the
    within-case timing noise (each case's own interval carries that). Fallback: one value
    gives the value itself as both bounds.
    """
    x = np.log(np.asarray(values, dtype=float))
    if x.size == 0:
        raise ValueError("geometric mean of no values")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(draws, x.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(np.exp(low)), float(np.exp(high))
