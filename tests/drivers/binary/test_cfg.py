"""The binary fill (drivers/binary/cfg.py): benchdnn's ranges, exact in every type, no zero
divisor, and OP of two inputs exact in f32."""

import numpy as np
import pytest

from benchdnn_py.common import check
from benchdnn_py.drivers.binary import cfg


@pytest.mark.parametrize("dt", sorted(cfg.CFG))
def test_inputs_are_exact_in_their_type_and_in_range(dt):
    a, b = cfg.fill_input(4096, 0, dt), cfg.fill_input(4096, 1, dt)
    for x in (a, b):
        assert np.array_equal(check.round_to_dt(x, dt), x)
        assert x.max() <= 8 and x.min() >= (0 if dt == "u8" else -8)
    assert not np.any(b == 0)                       # a divisor
    assert len(np.unique(b)) > 8 if dt != "u8" else len(np.unique(b)) == 8
    if not cfg.CFG[dt].integral:                    # src0 in halves, src1 integers
        assert np.any(a != np.round(a)) and np.array_equal(b, np.round(b))
    products = a.astype(np.float32) * np.float32(0.25) * b.astype(np.float32)
    assert np.array_equal(products.astype(np.float64),
                          a.astype(np.float64) * 0.25 * b.astype(np.float64))


def test_the_condition_and_the_prior_take_their_ranges():
    c = cfg.fill_input(4096, 2, "s8")
    assert c.min() == 0 and c.max() == 8
    p = cfg.fill_prior(4096, "u8")
    assert p.min() >= 0 and p.max() <= 8 and np.array_equal(p, np.round(p))


def test_the_threshold_is_the_dst_epsilon():
    assert cfg.threshold("f32") == 2.0**-23 and cfg.threshold("bf16") == 2.0**-7
    assert cfg.threshold("s8") == 0
