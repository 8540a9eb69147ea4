"""bnorm's per-type numbers and fill: benchdnn's choice between its two fills, statistics
that the fill makes exact, the thresholds' scaling, the flags' spelling."""

import numpy as np
import pytest

from benchdnn_py.drivers.bnorm import cfg, driver
from benchdnn_py.errors import UsageError


@pytest.mark.parametrize("L,dt,alg,flex", [
    (2, "f32", cfg.CheckAlg.ALG_1, 10), (1088, "f32", cfg.CheckAlg.ALG_1, 5),
    (2 ** 20, "f32", cfg.CheckAlg.ALG_0, 6), (1568, "bf16", cfg.CheckAlg.ALG_0, 4),
    (8, "f16", cfg.CheckAlg.ALG_1, 3), (1568, "f16", cfg.CheckAlg.ALG_0, 5),
])
def test_the_fill_plan_is_benchdnns(L, dt, alg, flex):
    plan = cfg.FillPlan.of(L, dt, cfg.CheckAlg.AUTO)
    assert (plan.alg, plan.flex_bits) == (alg, flex)
    assert plan.density == (1.0 if alg is cfg.CheckAlg.ALG_1
                            else 2.0 ** (cfg.CFG[dt].digits - 2 * flex) / L)


@pytest.mark.parametrize("mb,C,sp,dt,asked", [
    (2, 7, 15, "f32", cfg.CheckAlg.AUTO), (3, 5, 9, "f32", cfg.CheckAlg.AUTO),
    (4, 6, 300, "f32", cfg.CheckAlg.ALG_0), (2, 4, 4, "f16", cfg.CheckAlg.AUTO),
    (4, 3, 200, "bf16", cfg.CheckAlg.AUTO),
])
def test_statistics_are_exact_in_any_order(mb, C, sp, dt, asked):
    """The mean the fill chose is the mean of src whatever the summation order, in f32 as
    in double; the variance rounds once."""
    plan = cfg.FillPlan.of(mb * sp, dt, asked)
    mean = cfg.fill_mean(C, plan, glob=False)
    src = cfg.fill_src(mb, C, sp, mean, plan, False, dt)
    assert np.array_equal(cfg.to_dt(src, dt), src)                 # exact in dt
    x = src.transpose(1, 0, 2).reshape(C, -1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        perm = x[:, rng.permutation(x.shape[1])]
        f32_sum = np.zeros(C, np.float32)
        for col in perm.T:                       # one order in f32, point by point
            f32_sum += col
        assert np.array_equal(f32_sum.astype(np.float64), x.sum(axis=1, dtype=np.float64))
    assert np.array_equal(x.sum(axis=1, dtype=np.float64) / x.shape[1], mean)
    var = cfg.variance(src, mean, glob=False)
    d = x.astype(np.float64) - mean[:, None]
    assert np.array_equal(var, ((d * d).sum(axis=1) / x.shape[1]).astype(np.float32))


def test_pairs_mirror_the_mean_and_an_odd_sequence_ends_on_it():
    plan = cfg.FillPlan.of(5 * 3, "f32", cfg.CheckAlg.ALG_1)
    mean = cfg.fill_mean(4, plan, glob=False)
    src = cfg.fill_src(5, 4, 3, mean, plan, False, "f32")
    seq = src.transpose(1, 0, 2).reshape(4, -1)
    assert np.array_equal(seq[:, 0:14:2] + seq[:, 1:14:2], 2 * seq[:, :1] * 0
                          + 2 * mean[:, None].repeat(7, axis=1))
    assert np.array_equal(seq[:, -1], mean)
    assert len(np.unique(seq[0])) > 4                              # not a constant


def test_global_stats_fill_and_parameters():
    plan = cfg.FillPlan.of(8, "f32", cfg.CheckAlg.AUTO)
    src = cfg.fill_src(2, 3, 4, cfg.fill_mean(3, plan, True), plan, True, "f32")
    assert src.min() >= -32 and src.max() <= 32 and np.array_equal(src, np.round(src))
    assert list(cfg.variance(src, None, True)) == [0.0, 2.0, 4.0]
    assert list(cfg.fill_scale(3, False)) == [0.125, 0.25, 0.5]
    assert list(cfg.fill_shift(3, False)) == [-1 / 512, 0.0, 4 / 512]


def test_diff_dst_is_sparse_small_integers():
    dd = cfg.fill_diff_dst(10000, "f32")
    assert set(np.unique(dd)) <= {-2, -1, 0, 1, 2}
    assert 0.02 < np.mean(dd != 0) < 0.2


def test_thresholds_scale_with_the_significand():
    assert cfg.threshold("DST", "f32") == 6e-7
    assert cfg.threshold("SRC", "bf16") == 6e-7 * 2 ** 16
    assert cfg.threshold("SC", "f16") == 5e-6 * 2 ** 13
    assert cfg.threshold("MEAN", "bf16") == cfg.threshold("MEAN", "f32") == 2.0 ** -23
    assert cfg.zero_trust_percent("f32", False, 0.0) == 30.0
    assert cfg.zero_trust_percent("f32", True, 0.0) == 65.0
    assert cfg.zero_trust_percent("bf16", False, 0.0) == 99.0
    assert cfg.zero_trust_percent("f32", False, 0.9) == pytest.approx(93.0)


def test_flags_print_in_benchdnns_order_and_bad_letters_are_named():
    assert driver.parse_flags("RHCG") == "GCHR" and driver.parse_flags("") == ""
    assert driver.parse_flags("AHC") == "CHA"
    with pytest.raises(UsageError) as exc:
        driver.parse_flags("GX")
    assert "--flags=GX: unknown flag `X`" in str(exc.value)
