"""The eltwise table: the kernels' f32 formulas against the table's double ones."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import eltwise

X = np.concatenate([np.linspace(-30, 30, 1201), np.linspace(-2, 2, 401),
                    [0.0, -0.0, 0.5, -0.5, 1.5, 2.5]]).astype(np.float32)
PARAMS = {"": (0.0, 0.0), "a": (0.5, 0.0), "ab": (0.25, 0.75)}
SPECIAL = {"soft_relu": (2.0, 0.0), "pow": (1.5, 2.0), "clip": (-1.0, 3.0),
           "clip_v2": (-1.0, 3.0), "clip_v2_dst": (-1.0, 3.0), "elu": (1.0, 0.0)}


@pytest.mark.parametrize("name", sorted(eltwise.ALGS))
def test_kernel_formula_within_the_table_tolerance(name):
    alg = eltwise.ALGS[name]
    alpha, beta = SPECIAL.get(name, PARAMS[alg.params])
    got = X.copy()
    core.eltwise_fwd(core.PostOp(core.PostKind.ELTWISE, alg.code, 1.0, alpha, beta), got)
    ref = eltwise.apply(name, X, alpha, beta)
    with np.errstate(all="ignore"):
        exp = ref.astype(np.float32).astype(np.float64)
        diff = np.abs(got - exp)
        rel = np.where(np.abs(exp) > 1e-5, diff / np.abs(exp), diff)
    both_nan = np.isnan(exp) & np.isnan(got)
    same_inf = np.isinf(exp) & (exp == got)
    # rule 4 with the table's threshold, or rule 8's absolute bound for tiny results
    ok = both_nan | same_inf | (rel <= alg.trh) | (diff <= 2e-5)
    assert ok.all(), (name, X[~ok][:5], got[~ok][:5], exp[~ok][:5])
    if not alg.nan_inf_possible:
        assert np.isfinite(got).all()


def test_round_is_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
    core.eltwise_fwd(core.PostOp(core.PostKind.ELTWISE, eltwise.ALGS["round"].code), x)
    assert x.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]


def test_eltwise_scale_multiplies_the_result():
    x = np.array([-2.0, 3.0], np.float32)
    core.eltwise_fwd(core.PostOp(core.PostKind.ELTWISE, eltwise.ALGS["relu"].code, 2.5), x)
    assert x.tolist() == [-0.0, 7.5]


def test_negative_zeroing_list_follows_benchdnn():
    assert eltwise.zeroes_negatives("relu", 0.0) and eltwise.zeroes_negatives("abs", 1.0)
    assert eltwise.zeroes_negatives("clip_v2_dst", 0.0)
    assert not eltwise.zeroes_negatives("relu", 0.1) and not eltwise.zeroes_negatives("tanh", 0)


def test_every_algorithm_has_a_reason_and_aliases_resolve():
    assert all(alg.reason for alg in eltwise.ALGS.values())
    assert eltwise.lookup("eltwise_srelu")[0] == "soft_relu" and eltwise.lookup("nope") is None
