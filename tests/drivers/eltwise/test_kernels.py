"""Every eltwise kernel (each ISA variant the CPU runs) against the reference, forward and
backward, for every algorithm, on the driver's hard-zone fill."""

import ml_dtypes
import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import eltwise, fill
from benchdnn_py.common.check import compare
from benchdnn_py.common.layout import parse_tag
from benchdnn_py.drivers.base import CaseResult
from benchdnn_py.drivers.eltwise import cfg, driver
from benchdnn_py.drivers.eltwise.desc import parse_dims
from benchdnn_py.engine.impl_filter import ImplFilter
from benchdnn_py.status import Status


def _route(prb):
    """The case's reorder route (empty for the plain layouts these tests use)."""
    route = driver.make_route(prb, CaseResult(Status.UNTESTED))
    assert route is not None
    return route


RUNNABLE = [i for i in core.eltwise_impls() if core.isa_supported(i.isa)]
IMPLS = [i for i in RUNNABLE if i.operands is core.Operands.F32]
PARAMS = {"clip": (-1.0, 3.0), "clip_v2": (-1.0, 3.0), "clip_v2_dst": (-1.0, 3.0),
          "soft_relu": (1.5, 0.0), "pow": (1.5, 2.0), "hardsigmoid": (0.25, 0.5),
          "hardswish": (0.25, 0.5), "linear": (0.5, 0.25), "elu": (0.5, 0),
          "elu_dst": (0.5, 0), "relu": (0.25, 0), "relu_dst": (0.25, 0), "swish": (0.75, 0)}


def _problem(name, direction):
    alpha, beta = PARAMS.get(name, (0.0, 0.0))
    return driver.EltwiseProblem(parse_dims("3x13x11x9"), direction, "f32", parse_tag("abx"),
                                 name, alpha, beta, False, ImplFilter(), 0)


@pytest.mark.parametrize("impl", IMPLS, ids=lambda i: i.name)
@pytest.mark.parametrize("direction", [driver.Dir.FWD_D, driver.Dir.BWD_D])
def test_every_algorithm_matches_the_reference(impl, direction):
    checked = 0
    for name in sorted(eltwise.ALGS):
        prb = _problem(name, direction)
        if driver.invalid(prb):
            continue
        prim = core.EltwisePrimitive(impl, eltwise.ALGS[name].code, prb.alpha, prb.beta,
                                         prb.backward)
        bufs = driver.prepare(prb, prim, _route(prb), perf=False)
        bufs.run()
        assert bufs.out.intact()
        verdict = compare(driver.reference(prb, bufs),
                          bufs.out.array.reshape(prb.desc.dims), driver.compare_setup(prb))
        verdict = driver.with_cancellation_check(verdict, prb, bufs)
        assert not verdict.failed, (name, verdict.errors)
        checked += 1
    assert checked == len(eltwise.ALGS) - (1 if direction is driver.Dir.BWD_D else 0)


def test_fill_covers_the_hard_zones():
    x = cfg.fill_values(1300, fill.Kind.SRC, "exp", 0.25, 3.0)
    assert x[0] > 0 and (x < 0).any()
    assert ((x >= 88) & (x < 89)).sum() == 100         # variant 8: exp overflows
    assert (x == np.float32(0.25)).sum() >= 100 and (x == 3.0).sum() >= 100
    assert not np.isinf(x).any()
    logs = cfg.fill_values(150, fill.Kind.SRC, "log", 0, 0)
    assert np.isposinf(logs).sum() == 10 and np.isneginf(logs).sum() == 10
    assert not (np.signbit(x) & (x == 0)).any()         # no -0


def test_in_place_forward_overwrites_its_input():
    prb = driver.EltwiseProblem(parse_dims("2x16x7x7"), driver.Dir.FWD_D, "f32",
                                parse_tag("abx"), "tanh", 0, 0, True, ImplFilter(), 0)
    prim = core.EltwisePrimitive(IMPLS[0], eltwise.ALGS["tanh"].code, 0, 0, False)
    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
    before = bufs.out.array.copy()
    np.testing.assert_array_equal(before, bufs.src.ravel())   # starts as src
    bufs.run()
    np.testing.assert_allclose(bufs.out.array, np.tanh(before.astype(np.float64)), rtol=4e-5)


# -- data types: the typed rows (bf16, f16, integers) ------------------------------------

TYPED = [i for i in RUNNABLE if i.operands is not core.Operands.F32]
TYPES = {core.Operands.BF16: ("bf16",), core.Operands.F16: ("f16",),
         core.Operands.INT8: ("s8", "u8", "s32"), core.Operands.F8: ("f8_e5m2", "f8_e4m3"),
         core.Operands.F64: ("f64",)}


def _typed_problem(name, direction, dt):
    alpha, beta = PARAMS.get(name, (0.0, 0.0))
    return driver.EltwiseProblem(parse_dims("3x13x11x9"), direction, dt, parse_tag("abx"),
                                 name, alpha, beta, False, ImplFilter(), 0)


@pytest.mark.parametrize("impl", TYPED, ids=lambda i: i.name)
def test_typed_rows_match_the_reference(impl):
    """Every algorithm and direction the type takes, on the hard-zone fill rounded to the
    type, against the double reference rounded to the type (threshold eps(dt))."""
    checked = 0
    for dt in TYPES[impl.operands]:
        for direction in (driver.Dir.FWD_D, driver.Dir.BWD_D):
            for name in sorted(eltwise.ALGS):
                prb = _typed_problem(name, direction, dt)
                if driver.unsupported(prb):
                    continue
                prim = core.EltwisePrimitive(impl, eltwise.ALGS[name].code, prb.alpha,
                                             prb.beta, prb.backward, dt=dt)
                bufs = driver.prepare(prb, prim, _route(prb), perf=False)
                bufs.run()
                assert bufs.out.intact() and bufs.out.array.dtype == core.numpy_dtype(dt)
                res = driver.CaseResult(driver.Status.UNTESTED)
                driver.judge(prb, bufs, driver.reference(prb, bufs), res, 0)
                assert res.status in (driver.Status.PASSED, driver.Status.MISTRUSTED), \
                    (dt, direction, name, res.diagnostics[:3])
                checked += 1
    # floats: every algorithm both ways but round (f32 only); integers: six, forward
    assert checked == {core.Operands.INT8: 3 * 6}.get(
        impl.operands, len(TYPES[impl.operands]) * (2 * len(eltwise.ALGS) - 2))


F64_ROWS = [i for i in RUNNABLE if i.operands is core.Operands.F64]


@pytest.mark.parametrize("name", ["exp", "gelu_erf", "logistic", "tanh", "mish", "swish"])
@pytest.mark.parametrize("direction", [driver.Dir.FWD_D, driver.Dir.BWD_D])
def test_f64_result_computed_in_f32_fails(name, direction):
    """The f64 rows are held to double's precision: their own result passes, the same
    result rounded through f32 (what a kernel computing in f32 would store) fails."""
    prb = _typed_problem(name, direction, "f64")
    prim = core.EltwisePrimitive(F64_ROWS[0], eltwise.ALGS[name].code, prb.alpha, prb.beta,
                                 prb.backward, dt="f64")
    bufs = driver.prepare(prb, prim, _route(prb), perf=False)
    bufs.run()
    exp = driver.reference(prb, bufs)
    verdicts = []
    for rounded in (False, True):
        if rounded:
            with np.errstate(over="ignore"):
                bufs.out.array[:] = bufs.out.array.astype(np.float32)
        res = driver.CaseResult(driver.Status.UNTESTED)
        driver.judge(prb, bufs, exp, res, 0)
        verdicts.append((res.status, res.errors))
    assert verdicts[0][0] in (Status.PASSED, Status.MISTRUSTED), verdicts
    assert verdicts[1][0] is Status.FAILED and verdicts[1][1] > prb.nelems // 4, verdicts


def _linear(impl, dt, x, alpha, beta=0.0, fault=core.OpFault.NONE):
    """The row's forward linear (alpha x + beta, f32 inside) on the tensor x of type dt."""
    prim = core.EltwisePrimitive(impl, eltwise.ALGS["linear"].code, alpha, beta, False,
                                 fault, dt)
    out = np.empty_like(x)
    prim.bind_fwd(x, out)()
    return out


def _same_bits(got, exp):
    """Equal bits; NaNs need only be NaN (the kernels quiet them), and a zero's sign may
    differ (alpha*x + 0 contracted into one FMA keeps the -0 of an underflow)."""
    g, e = got.view(np.uint16), exp.view(np.uint16)
    gf, ef = got.astype(np.float32), exp.astype(np.float32)
    nan, zero = np.isnan(ef), ef == 0
    assert np.isnan(gf[nan]).all() and (gf[zero] == 0).all()
    bad = np.flatnonzero((g != e) & ~nan & ~zero)
    assert bad.size == 0, (bad.size, ef[bad[:5]], gf[bad[:5]])


ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
FLOAT_STORES = {  # type -> (all bit patterns, numpy/ml_dtypes type, multipliers making ties,
                  #          and results in the type's denormals)
    "bf16": (ALL16.view(ml_dtypes.bfloat16), ml_dtypes.bfloat16,
             (1.0, 1 + 2**-8, 0.75 + 2**-9, 2**-20)),
    "f16": (ALL16.view(np.float16), np.float16, (1.0, 1 + 2**-11, 0.75 + 2**-12, 2**-14)),
}


def _rows(operands):
    return [i for i in TYPED if i.operands is operands]


@pytest.mark.parametrize("impl", _rows(core.Operands.BF16) + _rows(core.Operands.F16),
                         ids=lambda i: i.name)
def test_float_stores_round_like_ml_dtypes_and_numpy(impl):
    """Every bf16 (f16) bit pattern times a multiplier: the product is exact in f32 and
    lands on ties of the type, in its denormals, and past its range; the row's load and
    store must give ml_dtypes' (numpy's) round-to-nearest-even bits."""
    dt = "bf16" if impl.operands is core.Operands.BF16 else "f16"
    x, np_type, alphas = FLOAT_STORES[dt]
    for alpha in alphas:
        with np.errstate(all="ignore"):
            exp = (np.float32(alpha) * x.astype(np.float32)).astype(np_type)
        _same_bits(_linear(impl, dt, x, alpha), exp)


@pytest.mark.parametrize("impl", _rows(core.Operands.BF16) + _rows(core.Operands.F16),
                         ids=lambda i: i.name)
def test_a_store_that_truncates_is_caught(impl):
    """The truncate_dst defect (round toward zero): the bit-exact check sees it. (benchdnn's
    eltwise threshold for these types, eps(dt), admits one ulp, so a compare against the
    reference could not.)"""
    dt = "bf16" if impl.operands is core.Operands.BF16 else "f16"
    x, np_type, alphas = FLOAT_STORES[dt]
    x = x[np.isfinite(x.astype(np.float32))]
    with np.errstate(all="ignore"):
        exp = (np.float32(alphas[1]) * x.astype(np.float32)).astype(np_type)
    got = _linear(impl, dt, x, alphas[1], fault=core.OpFault.TRUNCATE_DST)
    with pytest.raises(AssertionError):
        _same_bits(got, exp)


@pytest.mark.parametrize("impl", _rows(core.Operands.INT8), ids=lambda i: i.name)
def test_integer_stores_round_half_even_and_saturate(impl):
    cases = {"s8": np.arange(-128, 128), "u8": np.arange(256),
             "s32": np.array([0, 1, -1, 3, -3, 7, 2**22 + 1, -(2**22) - 1, 2**30, -(2**30)])}
    lims = {"s8": (-128, 127), "u8": (0, 255), "s32": (-2.0**31, 2147483520.0)}
    for dt, values in cases.items():
        x = values.astype(core.numpy_dtype(dt))
        for alpha, beta in ((0.5, 0.0), (2.5, 0.0), (-0.5, 0.25), (4.0, 0.0)):
            got = _linear(impl, dt, x, alpha, beta)
            exact = np.float32(alpha) * x.astype(np.float32) + np.float32(beta)
            exp = np.rint(np.clip(exact, *lims[dt])).astype(np.int64)
            np.testing.assert_array_equal(got.astype(np.int64), exp, err_msg=f"{dt} {alpha}")
        truncated = _linear(impl, dt, x, 0.5, fault=core.OpFault.TRUNCATE_DST)
        assert (truncated.astype(np.int64) != np.rint(0.5 * values)).any()


ALL8 = np.arange(256, dtype=np.uint8)
F8_STORES = {"f8_e5m2": ml_dtypes.float8_e5m2, "f8_e4m3": ml_dtypes.float8_e4m3fn}


@pytest.mark.parametrize("impl", _rows(core.Operands.F8), ids=lambda i: i.name)
@pytest.mark.parametrize("dt", F8_STORES)
def test_f8_stores_round_through_f16_like_onednn(impl, dt):
    """Every 8-bit pattern times multipliers that make ties, denormals and overflow: the
    row must store f32 -> f16 -> f8, each to nearest even (ml_dtypes from f16), and its
    truncating defect must differ."""
    x = ALL8.view(F8_STORES[dt])
    for alpha in (1.0, 1 + 2**-4, 0.75 + 2**-5, 2**-4, 3.0):
        with np.errstate(all="ignore"):
            exp = (np.float32(alpha) * x.astype(np.float32)).astype(np.float16) \
                .astype(F8_STORES[dt])
        got = _linear(impl, dt, x, alpha)
        g, e = got.view(np.uint8), exp.view(np.uint8)
        # NaNs need only be NaN; a zero's sign may differ (alpha * x + 0 is +0)
        ef = exp.astype(np.float32)
        nan, zero = np.isnan(ef), ef == 0
        assert np.isnan(got[nan].astype(np.float32)).all()
        assert (got[zero].astype(np.float32) == 0).all()
        assert np.array_equal(g[~nan & ~zero], e[~nan & ~zero]), alpha
    finite = x[np.isfinite(x.astype(np.float32))]
    with np.errstate(all="ignore"):
        exp = (np.float32(1 + 2**-4) * finite.astype(np.float32)).astype(np.float16) \
            .astype(F8_STORES[dt])
    got = _linear(impl, dt, finite, 1 + 2**-4, fault=core.OpFault.TRUNCATE_DST)
    assert not np.array_equal(got.view(np.uint8), exp.view(np.uint8))
