"""The softmax fill and thresholds (drivers/softmax/cfg.py)."""

import numpy as np
import pytest

from benchdnn_py.common import check
from benchdnn_py.drivers.softmax import cfg


@pytest.mark.parametrize("sdt,ddt", [("f32", "f32"), ("bf16", "f16"), ("s8", "u8"),
                                     ("u8", "f32"), ("f32", "s8")])
@pytest.mark.parametrize("dims,axis", [((6, 19, 5), 1), ((40, 3), 1), ((7, 30), 0)])
def test_each_line_holds_its_top_values_side_by_side_over_the_floor(sdt, ddt, dims, axis):
    x = cfg.fill_forward(dims, axis, sdt, ddt)
    assert x.shape == dims
    assert np.array_equal(check.round_to_dt(x, sdt), x)          # exact in sdt
    floor = check.round_to_dt(np.float32([max(cfg.CFG[sdt].lowest, cfg.CFG[ddt].lowest)]),
                              sdt)[0]
    lines = np.moveaxis(x, axis, -1).reshape(-1, dims[axis])
    ranges = cfg.TOP_COUNTS_INT8_DST if ddt in ("s8", "u8") else cfg.TOP_COUNTS
    signs = set()
    for line in lines:
        top = line[line != floor]
        assert top.size >= 1
        signs.add(np.sign(top[0]))
        peak = top[0]
        # the top values are contiguous and in order: peak, peak - 1, peak - 2
        where = np.flatnonzero(line != floor)
        assert np.array_equal(where, np.arange(where[0], where[0] + where.size))
        assert np.all(np.diff(top) <= 0) and np.all(peak - top <= 2)
        assert peak in (cfg.TOP + 2, -cfg.TOP + 2)
        counts = [int(np.sum(top == peak - k)) for k in range(3)]
        if sum(r[0] for r in ranges) <= dims[axis]:   # room for every top value drawn
            assert all(lo <= c <= hi for c, (lo, hi) in zip(counts, ranges)), counts
    # lines of both signs, unless the source holds no negative value
    assert signs == ({1.0} if sdt == "u8" or len(lines) == 1 else {1.0, -1.0})


@pytest.mark.parametrize("dt", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("log", [False, True])
def test_backward_inputs_are_exact_with_the_signs_that_avoid_cancellation(dt, log):
    d = cfg.fill_backward(5000, "dst", dt, log)
    g = cfg.fill_backward(5000, "diff_dst", dt, log)
    for values in (d, g):
        assert np.array_equal(check.round_to_dt(values, dt), values)
    assert (np.all(d >= 0) and np.all(g <= 0)) if log else (np.all(d <= 0) and np.all(g >= 0))
    assert np.abs(d).max() < 1 and len(np.unique(g)) == cfg.CFG[dt].bwd_range


def test_thresholds_follow_the_compared_type_the_algorithm_and_the_direction():
    eps = 2.0**-23
    assert cfg.threshold(False, False, "f32", "strict") == 10 * eps
    assert cfg.threshold(True, True, "f32", "strict") == 5 * 4 * 10 * eps
    assert cfg.threshold(False, False, "f64", "strict") == 10 * 2.0**-52
    assert cfg.threshold(False, False, "bf16", "strict") == 0
    assert cfg.threshold(False, False, "bf16", "relaxed") == 2.0**-7
    assert cfg.threshold(True, False, "s8", "relaxed") == 0
    assert cfg.zero_trust_percent(False, False, 10, "f32") == 20
    assert cfg.zero_trust_percent(False, False, 10, "u8") == 90
    assert cfg.zero_trust_percent(True, False, 10, "u8") == 100
    assert cfg.zero_trust_percent(False, True, 10, "f32") == 30
