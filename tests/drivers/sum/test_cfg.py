"""The sum fill (drivers/sum/cfg.py): exact values, sixteen per source, sums exact in f32."""

import numpy as np
import pytest

from benchdnn_py.common import check
from benchdnn_py.drivers.sum import cfg


@pytest.mark.parametrize("dt", sorted(cfg.CFG))
def test_each_source_takes_sixteen_exact_values_and_sources_differ(dt):
    a, b = cfg.fill_source(4096, 0, dt), cfg.fill_source(4096, 1, dt)
    for x in (a, b):
        assert np.array_equal(check.round_to_dt(x, dt), x)
        assert len(np.unique(x)) <= cfg.RANGE and (dt != "u8" or x.min() >= 0)
    assert not np.array_equal(a, b)
    # the scaled terms of a batch's scales add exactly in f32
    total = 0.25 * a.astype(np.float32) + 2 * b.astype(np.float32)
    assert np.array_equal(total.astype(np.float64), 0.25 * a.astype(np.float64) + 2 * b)


def test_the_threshold_is_the_dst_epsilon_per_source():
    assert cfg.threshold("f32", 3) == 3 * 2.0**-23
    assert cfg.threshold("bf16", 2) == 2 * 2.0**-7
    assert cfg.threshold("s8", 4) == 0
