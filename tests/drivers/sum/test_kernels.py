"""Every sum kernel row the CPU runs against the reference: every type, two to five
sources, in place; and the rows' own rules."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import check

ROWS = [i for i in core.sum_impls() if core.isa_supported(i.isa)]
TYPES = ("f32", "bf16", "f16", "s32", "s8", "u8")


def _values(rng, n, dt):
    x = rng.uniform(0 if dt == "u8" else -100, 100, n).astype(np.float32)
    return check.round_to_dt(x, dt)


@pytest.mark.parametrize("impl", ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("ddt", TYPES)
def test_every_pair_of_types_is_the_rounded_f32_sum(impl, ddt):
    rng = np.random.default_rng(4)
    n = 5003                      # tiles of 1024 and a tail
    for sdts in (("f32", "bf16"), ("f16", "s8", "u8"), ("s32", "f32", "bf16", "f16", "s8")):
        xs = [_values(rng, n, dt) for dt in sdts]
        scales = tuple(float(np.float32(s)) for s in rng.uniform(-2, 2, len(sdts)))
        prim = core.SumPrimitive(impl, sdts, ddt)
        dst = np.zeros(n, core.numpy_dtype(ddt))
        prim.bind([x.astype(core.numpy_dtype(dt)) for x, dt in zip(xs, sdts)], dst, scales)()
        # the kernels' order: f32 terms added source by source (FMA may contract each)
        acc, terms = np.zeros(n, np.float64), np.zeros(n, np.float64)
        for x, k in zip(xs, scales):
            acc += np.float32(k) * x.astype(np.float64)
            terms += np.abs(np.float32(k) * x.astype(np.float64))
        exp = check.round_to_dt(acc.astype(np.float32), ddt)
        got = dst.astype(np.float32)
        # each f32 step rounds by half an ulp of the terms' size; the store then rounds
        # once more (by up to one step of the type, which an f32 error can tip over)
        f32_error = terms * 2.0**-24 * (2 * len(sdts))
        exp_lo = check.round_to_dt((acc - f32_error).astype(np.float32), ddt)
        exp_hi = check.round_to_dt((acc + f32_error).astype(np.float32), ddt)
        ok = (got >= np.minimum(exp_lo, exp_hi) - f32_error * (ddt == "f32")) & \
             (got <= np.maximum(exp_lo, exp_hi) + f32_error * (ddt == "f32"))
        assert np.all(ok), (sdts, ddt, np.flatnonzero(~ok)[:5], exp[~ok][:5])


def test_in_place_and_over_threads_every_bit_is_the_same():
    impl = ROWS[0]
    rng = np.random.default_rng(6)
    a, b = _values(rng, 100_000, "f32"), _values(rng, 100_000, "f32")
    prim = core.SumPrimitive(impl, ("f32", "f32"), "f32")
    out = {}
    for threads in (1, 3):
        with core.threads(threads):
            dst = np.zeros_like(a)
            prim.bind([a, b], dst, (0.5, 1.5))()
            out[threads] = dst
    assert np.array_equal(out[1].view(np.uint32), out[3].view(np.uint32))
    inplace = a.copy()
    prim.bind([inplace, b], inplace, (0.5, 1.5))()
    assert np.array_equal(inplace.view(np.uint32), out[1].view(np.uint32))


def test_rows_take_the_types_of_onednns_sum():
    impl = ROWS[0]

    def runs(sdts, ddt):
        try:
            core.SumPrimitive(impl, sdts, ddt)
            return True
        except core.Unimplemented:
            return False

    assert runs(("f32", "s32", "u8"), "bf16") and runs(("f16", "f16"), "s8")
    assert not runs(("f64", "f32"), "f32") and not runs(("f32", "f32"), "f8_e4m3")
    assert not runs(("s4", "f32"), "f32")
