"""check.compare (benchdnn reference 6.6, 6.8) and check.diagnostics (reference 5.2)."""

from __future__ import annotations

import numpy as np
import pytest

from benchdnn_py.common import check
from benchdnn_py.common.check import CompareSetup, compare, diagnostics, round_to_dt
from benchdnn_py.errors import UsageError

FLT_EPS = 1.1920928955078125e-07   # 2**-23


def setup(trh=0.0, ztp=70.0, **kw) -> CompareSetup:
    return CompareSetup("DST", trh, ztp, **kw)


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    ref = rng.integers(1, 50, size=n).astype(np.float64)
    return ref, ref.astype(np.float32)


# ---- pass / fail rules ----------------------------------------------------------------

def test_flt_epsilon_constant():
    assert check.FLT_EPSILON == FLT_EPS


def test_exact_equality_passes():
    ref, got = _data()
    v = compare(ref.reshape(2, 3, 4), got.reshape(2, 3, 4), setup())
    assert not v.failed and v.errors == 0
    assert v.total == 24 and v.failing.size == 0
    assert v.zeros == 0 and not v.mistrusted


def test_single_wrong_element_fails_at_its_offset():
    ref, got = _data()
    got[17] += 1
    v = compare(ref.reshape(2, 3, 4), got.reshape(2, 3, 4), setup())
    assert v.failed and v.errors == 1
    assert v.failing.tolist() == [17]
    assert not v.mistrusted


def test_several_wrong_elements_sorted_offsets():
    ref, got = _data(50)
    for off in (40, 3, 22):
        got[off] = -got[off]
    v = compare(ref, got, setup())
    assert v.errors == 3 and v.failing.tolist() == [3, 22, 40]


def test_nan_result_fails_where_reference_finite():
    ref, got = _data()
    got[5] = np.nan
    v = compare(ref, got, setup())
    assert v.errors == 1 and v.failing.tolist() == [5]
    # ...even with a huge threshold and with NaNs allowed (the reference is not NaN).
    assert compare(ref, got, setup(trh=1e30)).errors == 1
    assert compare(ref, got, setup(allow_nans=True)).errors == 1


def test_shape_mismatch_raises():
    with pytest.raises(ValueError):
        compare(np.zeros(4), np.zeros(5, np.float32), setup())


def test_rule3_tiny_values():
    ref = np.array([1e-6, 1e-6, -3e-6, 1e-5, 0.0, 0.0])
    got = np.array([1e-6 + 1e-7,     # |exp| <= 1e-5, diff ~1e-7 < FLT_EPSILON: pass
                    1e-6 + 5e-7,     # diff 5e-7 >= FLT_EPSILON: fail
                    -3e-6 - 1.1e-7,  # pass
                    1e-5 + 1e-7,     # f32(1e-5) is just below 1e-5: still tiny, pass
                    1e-7,            # pass
                    2e-7], np.float32)  # fail
    v = compare(ref, got, setup())
    exp = ref.astype(np.float32)
    tiny = np.abs(exp) <= 1e-5
    assert tiny.all()
    assert v.failing.tolist() == [1, 5]
    assert v.errors == 2


def test_rule3_does_not_apply_to_larger_values():
    ref = np.array([1e-4, 2.0])
    got = np.array([1e-4 + 1e-8, 2.0 + 2 * FLT_EPS], np.float32)
    assert got[0] != np.float32(1e-4) and got[1] != np.float32(2.0)
    v = compare(ref, got, setup())
    assert v.failing.tolist() == [0, 1]


def test_threshold_relative_difference():
    ref = np.array([100.0, 100.0, -100.0, 100.0])
    got = np.array([100.5, 99.0, -100.9, 100.0], np.float32)   # rdiff .005, .01, .009, 0
    assert compare(ref, got, setup(trh=0.01)).errors == 0
    v = compare(ref, got, setup(trh=0.006))
    assert v.failing.tolist() == [1, 2]
    v = compare(ref, got, setup(trh=0.001))
    assert v.failing.tolist() == [0, 1, 2]
    assert compare(ref, got, setup(trh=0.0)).errors == 3


def test_threshold_absolute_for_tiny_reference():
    ref = np.array([0.0, 1e-6])
    got = np.array([0.004, 1e-6 + 0.004], np.float32)      # diff 0.004 (absolute)
    assert compare(ref, got, setup(trh=0.005)).errors == 0
    assert compare(ref, got, setup(trh=0.003)).errors == 2


def test_f16_subnormal_results_get_one_ulp_rule_4b():
    # 1.93362e-05 lies just below a tie of two f16 subnormals (spacing 2**-24): the other
    # neighbour is one ulp away but 3e-3 relative, more than eps(f16)
    ref = np.array([1.93362e-05] * 10)
    other = (np.array([1.93715e-05] * 10)).astype(np.float16)
    v = compare(ref, other, setup(trh=2.0**-10, dt="f16", eps=2.0**-10))
    assert not v.failed
    two_ulps = (other.astype(np.float32) + np.float32(2.0**-24)).astype(np.float16)
    assert compare(ref, two_ulps, setup(trh=2.0**-10, dt="f16", eps=2.0**-10)).failed
    # normal values keep the relative rule; exact types (threshold 0) are unaffected
    assert compare(np.array([1.0] * 10), np.array([1.0 + 2**-9] * 10, np.float16),
                   setup(trh=2.0**-10, dt="f16")).failed
    assert compare(ref, other, setup(trh=0.0, dt="f16")).failed


def test_allow_nans():
    ref = np.array([np.nan, np.inf, -np.inf, -np.inf, 1.0])
    got = np.array([np.nan, np.inf, -np.inf, np.inf, 1.0], np.float32)
    v = compare(ref, got, setup(allow_nans=True))
    assert v.failing.tolist() == [3]               # -inf vs +inf fails
    v = compare(ref, got, setup(allow_nans=False))
    assert 0 in v.failing.tolist() and 3 in v.failing.tolist()   # NaN == NaN needs rule 5
    v = compare(ref[:1], np.array([1.0], np.float32), setup(allow_nans=True))
    assert v.errors == 1                          # NaN reference vs a number fails
    v = compare(np.array([np.inf]), np.array([-np.inf], np.float32), setup(allow_nans=True))
    assert v.errors == 1


def test_integral_output_nan_reference_passes():
    ref = np.array([np.nan, 3.0])
    got = np.array([7.0, 3.0], np.float32)
    assert compare(ref, got, setup(integral=True)).errors == 0
    assert compare(ref, got, setup(integral=False)).failing.tolist() == [0]


def test_reference_rounded_to_integer_output():
    ref = np.array([2.4, 2.6, 2.0])
    got = np.array([2.0, 3.0, 2.0], np.float32)
    v = compare(ref, got, setup(integral=True, dt="s8"))
    assert v.errors == 0
    np.testing.assert_array_equal(v.exp, [2.0, 3.0, 2.0])
    np.testing.assert_array_equal(v.exp_f32, np.array([2.4, 2.6, 2.0], np.float32))
    assert compare(ref, got, setup()).failing.tolist() == [0, 1]


@pytest.mark.parametrize("dt, ref, exp", [
    ("u8", [-3.0, 300.0, 2.5, 3.5], [0.0, 255.0, 2.0, 4.0]),          # saturate, ties even
    ("s8", [-200.0, 200.0, -2.5], [-128.0, 127.0, -2.0]),
    ("s32", [3e9, -3e9], [2.0**31, -2.0**31]),                         # float(INT_MAX)
    ("bf16", [1.0 + 2**-8, 1.0 + 3 * 2**-8], [1.0, 1.0 + 2**-6]),      # ties to even
    ("f16", [1.0 + 2**-11, 70000.0], [1.0, np.inf]),
])
def test_round_to_dt(dt, ref, exp):
    np.testing.assert_array_equal(round_to_dt(np.array(ref, np.float32), dt), exp)


def test_wrapped_or_truncated_integer_outputs_fail():
    ref = np.array([300.0, 2.7, -1.6])
    assert compare(ref, np.array([44.0, 3.0, 0.0], np.float32),          # 300 wrapped
                   setup(integral=True, dt="u8")).failing.tolist() == [0]
    assert compare(ref, np.array([255.0, 2.0, -2.0], np.float32),        # 2.7 truncated
                   setup(integral=True, dt="s8")).failing.tolist() == [0, 1]


def test_s32_saturation_rule_6():
    ref = np.array([3e9, 3e9, 3e9])
    got = np.array([2147483520.0, 2147483392.0, 2.0**31], np.float32)
    v = compare(ref, got, setup(integral=True, dt="s32"))
    assert v.failing.tolist() == [1]


def test_off_by_one_at_ties_rule_13():
    ref = np.array([2.5 + 4e-6, 2.5 + 4e-6, 2.5 + 0.1])
    got = np.array([2.0, 3.0, 2.0], np.float32)   # exp of 2.500004 is 3; 2 is the other side
    v = compare(ref, got, setup(integral=True, dt="s8"))
    assert v.failing.tolist() == [2]


def test_dst_scale_rule_10():
    ref = np.array([1.0])
    got = np.array([1.0 + 8e-6], np.float32)
    assert compare(ref, got, setup(dst_scale=True)).errors == 0
    assert compare(ref, got, setup()).errors == 1


# ---- zero trust -----------------------------------------------------------------------

def test_all_zero_result_of_ten_is_mistrusted():
    v = compare(np.zeros(10), np.zeros(10, np.float32), setup(ztp=70.0))
    assert not v.failed and v.zeros == 10 and v.mistrusted


def test_fewer_than_ten_elements_not_mistrusted():
    v = compare(np.zeros(9), np.zeros(9, np.float32), setup(ztp=70.0))
    assert not v.failed and v.zeros == 9 and not v.mistrusted


def test_zeros_exactly_at_threshold_not_mistrusted():
    ref = np.array([0.0] * 7 + [1.0, 2.0, 3.0])
    v = compare(ref, ref.astype(np.float32), setup(ztp=70.0))
    assert v.zeros == 7 and not v.mistrusted            # 70 % is not > 70 %
    ref[7] = 0.0
    v = compare(ref, ref.astype(np.float32), setup(ztp=70.0))
    assert v.zeros == 8 and v.mistrusted               # 80 % > 70 %
    v = compare(ref, ref.astype(np.float32), setup(ztp=80.0))
    assert not v.mistrusted                            # 80 % is not > 80 %
    # 17 of 20 = 85 %: the halved-trust threshold (85 %) is not exceeded.
    ref20 = np.array([0.0] * 17 + [1.0, 2.0, 3.0])
    assert not compare(ref20, ref20.astype(np.float32), setup(ztp=85.0)).mistrusted


def test_failing_result_is_not_mistrusted():
    ref = np.zeros(20)
    got = np.zeros(20, np.float32)
    got[3] = 1.0
    v = compare(ref, got, setup())
    assert v.failed and not v.mistrusted


# ---- diagnostics ----------------------------------------------------------------------

def _point_line(off, idx, e32, e, g):
    d = abs(e - g)
    rd = d / abs(e) if abs(e) > np.finfo(np.float32).tiny else d
    return ("[%4ld][DST][%s] exp_f32:%12g exp:%12g got:%12g diff:%8g rdiff:%8g"
            % (off, idx, e32, e, g, d, rd))


def test_diagnostics_exact_point_line():
    shape = (2, 3, 4)
    ref = np.arange(1, 25, dtype=np.float64) * 0.5       # 0.5, 1.0, ..., 12.0
    got = ref.astype(np.float32)
    got[23] = 2.25                                       # offset 23 -> [1:2:3]
    got[6] = -1234567.0                                  # offset 6 -> [0:1:2]
    v = compare(ref.reshape(shape), got.reshape(shape), setup())
    lines = diagnostics(v, shape, verbose=0)
    assert len(lines) == 3
    assert lines[0] == ("[   6][DST][0:1:2] exp_f32:         3.5 exp:         3.5 "
                        "got:-1.23457e+06 diff:1.23457e+06 rdiff:  352734")
    assert lines[0] == _point_line(6, "0:1:2", 3.5, 3.5, -1234567.0)
    assert lines[1] == ("[  23][DST][1:2:3] exp_f32:          12 exp:          12 "
                        "got:        2.25 diff:    9.75 rdiff:  0.8125")
    assert lines[2].startswith("[COMPARE_STATS][DST]: trh=")
    assert lines[2] == ("[COMPARE_STATS][DST]: trh=0 err_max_diff:1.23457e+06 "
                        "err_max_rdiff:  352734 all_max_diff:1.23457e+06 "
                        "all_max_rdiff:  352734")


def test_diagnostics_zero_reference_rdiff_is_diff():
    ref = np.zeros((3, 4))
    ref[0, 0] = 1.0
    got = ref.astype(np.float32)
    got[2, 1] = 0.125
    v = compare(ref, got, setup())
    lines = diagnostics(v, (3, 4), 0)
    assert lines[0] == _point_line(9, "2:1", 0.0, 0.0, 0.125)
    assert lines[0].endswith("diff:   0.125 rdiff:   0.125")


def _many_failures(n_fail=15, shape=(2, 5, 3, 2)):
    size = int(np.prod(shape))
    ref = np.arange(1, size + 1, dtype=np.float64)
    got = ref.astype(np.float32)
    offs = np.sort(np.random.default_rng(7).choice(size, n_fail, replace=False))
    got[offs] += 0.5
    return compare(ref.reshape(shape), got.reshape(shape), setup()), offs, ref, got


def test_diagnostics_limits_points_at_verbose_0():
    shape = (2, 5, 3, 2)
    v, offs, ref, got = _many_failures(15, shape)
    assert v.errors == 15
    lines = diagnostics(v, shape, verbose=0)
    points = [ln for ln in lines if not ln.startswith("[COMPARE_")]
    assert len(points) == 10
    assert lines[-1].startswith("[COMPARE_STATS][DST]: trh=")
    assert not any(ln.startswith("[COMPARE_TRUST]") for ln in lines)
    for line, off in zip(points, offs[:10]):
        idx = ":".join(str(int(i)) for i in np.unravel_index(int(off), shape))
        assert line == _point_line(int(off), idx, ref[off], ref[off], float(got[off]))


def test_diagnostics_all_points_at_verbose_10():
    shape = (2, 5, 3, 2)
    v, offs, ref, got = _many_failures(15, shape)
    lines = diagnostics(v, shape, verbose=10)
    points = [ln for ln in lines if not ln.startswith("[COMPARE_")]
    assert len(points) == 15
    expected_prefixes = ["[%4ld][DST][%s]" % (off, ":".join(
        str(int(i)) for i in np.unravel_index(int(off), shape))) for off in offs]
    assert [p[:len(e)] for p, e in zip(points, expected_prefixes)] == expected_prefixes
    assert all(p[len(e)] == " " for p, e in zip(points, expected_prefixes))
    assert sum(ln.startswith("[COMPARE_STATS][DST]: trh=0 ") for ln in lines) == 1


def test_diagnostics_passing_case_quiet_at_verbose_0():
    ref, got = _data()
    v = compare(ref, got, setup())
    assert diagnostics(v, (24,), 0) == []
    lines = diagnostics(v, (24,), 6)
    assert any(ln.startswith("[COMPARE_STATS][DST]: trh=") for ln in lines)
    assert any(ln.startswith("[COMPARE_TRUST][DST]: ") for ln in lines)


def test_diagnostics_trust_line_when_mistrusted():
    v = compare(np.zeros(20), np.zeros(20, np.float32), setup(ztp=70.0))
    assert v.mistrusted
    assert diagnostics(v, (20,), 0) == []
    lines = diagnostics(v, (4, 5), 2)
    assert lines == ["[COMPARE_TRUST][DST]: z:%2.0f%% (>%2.0f%%) (z: %ld, total: %ld)"
                     % (100.0, 70.0, 20, 20)]


# ---- --check: parsing, the draw, sampled compares ---------------------------------------

@pytest.mark.parametrize("text", ["full", "sampled:1", "sampled:1000", "sampled:123456789"])
def test_check_value_round_trips(text):
    value = check.parse_check(text)
    assert str(value) == text
    assert check.parse_check(str(value)) == value
    assert value.sampled == (text != "full")


def test_check_sampled_without_n_takes_the_default():
    value = check.parse_check("sampled")
    assert value.points == check.DEFAULT_SAMPLED_POINTS
    assert check.parse_check(str(value)) == value
    assert check.parse_check("FULL") == check.FULL and not check.FULL.sampled


@pytest.mark.parametrize("text", ["foo", "sampled:0", "sampled:x", "sampled:", "sampled:-5",
                                  "sampled:1.5", "full:10", "sampled:10:2", ""])
def test_bad_check_values_name_the_token(text):
    with pytest.raises(UsageError) as err:
        check.parse_check(text)
    message = str(err.value)
    assert message.startswith(f"--check={text}: expected full, sampled or sampled:N")
    assert "\n" not in message


@pytest.mark.parametrize("size,n", [(1, 1), (10, 3), (1000, 999), (10**9, 500), (2**40, 64)])
def test_draw_is_distinct_sorted_in_range_and_deterministic(size, n):
    points = check.draw_points(size, n, "--conv ic4ih5oc4kh3 DST")
    assert points.dtype == np.int64 and points.size == n
    assert np.all(np.diff(points) > 0)
    assert points[0] >= 0 and points[-1] < size
    assert np.array_equal(points, check.draw_points(size, n, "--conv ic4ih5oc4kh3 DST"))
    if size > n:
        assert not np.array_equal(points, check.draw_points(size, n, "--conv ic4ih5oc4kh3 SRC"))


def test_draw_of_at_least_the_size_is_every_point():
    for n in (7, 8, 100):
        assert np.array_equal(check.draw_points(7, n, "x"), np.arange(7))


def test_draw_is_uniform_over_points():
    """Over many seeds each of 20 points is drawn (5 at a time) about a quarter of the
    time: a chi-square test at a generous level, and the draws of one point are no more
    alike than chance (its pairwise co-occurrence near 5*4/(20*19))."""
    draws = [check.draw_points(20, 5, f"seed {i}") for i in range(4000)]
    counts = np.bincount(np.concatenate(draws), minlength=20)
    expected = 4000 * 5 / 20
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 45.3          # chi-square, 19 degrees of freedom, p = 0.001
    both = sum(1 for d in draws if 0 in d and 19 in d)
    assert abs(both / 4000 - 20 / 380) < 0.015


def test_sampled_compare_reports_tensor_offsets_and_counts():
    shape = (2, 3, 4)
    ref = np.arange(1, 25, dtype=np.float64)
    got = ref.astype(np.float32)
    got[17] = -3.0
    points = np.array([2, 5, 17, 20], np.int64)
    v = compare(ref[points], got[points], setup(), points, ref.size)
    assert (v.total, v.size, v.errors) == (4, 24, 1)
    lines = diagnostics(v, shape, verbose=0)
    assert lines[0] == _point_line(17, "1:1:1", 18.0, 18.0, -3.0)
    assert lines[1].startswith("[COMPARE_STATS][DST]: trh=0 ")
    assert lines[2] == "[COMPARE_SAMPLED][DST]: checked 4 of 24 points (--check=sampled)"


def test_sampled_pass_says_so_from_verbose_2():
    ref, got = _data()
    points = np.array([0, 3, 9], np.int64)
    v = compare(ref[points], got[points], setup(), points, ref.size)
    assert not v.failed and diagnostics(v, (24,), 1) == []
    assert diagnostics(v, (24,), 2) == [
        "[COMPARE_SAMPLED][DST]: checked 3 of 24 points (--check=sampled)"]
    full = compare(ref, got, setup())
    assert full.size == full.total == 24 and full.points is None
    assert not any("SAMPLED" in ln for ln in diagnostics(full, (24,), 6))


# ---- Winograd's norm fallback (reference 6.7) ------------------------------------------

def test_norm_fallback_passes_small_l2_error_that_fails_point_to_point():
    ref = np.full(1000, 100.0)
    ref[0] = 0.0                       # a zero the transforms' rounding does not keep
    got = ref.astype(np.float32)
    got[0] = 1e-3                      # fails rules 3 and 4 at trh 2e-5
    assert compare(ref, got, setup(trh=2e-5)).errors == 1
    verdict = compare(ref, got, setup(trh=2e-5, norm_fallback=True))
    assert verdict.errors == 0 and not verdict.failed


def test_norm_fallback_still_fails_a_large_l2_error():
    ref = np.full(100, 100.0)
    got = ref.astype(np.float32) * np.float32(1.001)
    verdict = compare(ref, got, setup(trh=2e-5, norm_fallback=True))
    assert verdict.errors == 100


def test_l2_rel_error_ignores_non_finite_references():
    exp = np.array([np.nan, 3.0, 4.0], np.float32)
    got = np.array([1.0, 3.0, 4.0], np.float32)
    assert check.l2_rel_error(exp, got) == 0.0
