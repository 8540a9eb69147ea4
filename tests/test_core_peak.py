"""The measured machine limits (kernels/common/peak.c) behind `info` and %eff%."""

import pytest

from benchdnn_py import core
from benchdnn_py._core import lib


def test_every_usable_route_measures_a_positive_rate():
    for operands in ("f32", "bf16", "f16", "int8"):
        peak = core.measured_peak(operands)
        routes = core.PEAK_ROUTES["f32" if operands == "f16" else operands]
        usable = [(kind, isa) for kind, isa in routes if core.isa_supported(isa)]
        if not usable:
            assert peak is None
            continue
        assert (peak.kind, peak.isa) == usable[0]     # the fastest route the CPU has
        assert peak.ops_per_s > 1e9


def test_f16_shares_the_f32_measurement():
    assert core.measured_peak("f16") is core.measured_peak("f32")


@pytest.mark.parametrize("kind,isa", [(lib.BDNN_PEAK_BF16, lib.BDNN_ISA_AVX2),
                                      (lib.BDNN_PEAK_F32, lib.BDNN_ISA_SCALAR),
                                      (99, lib.BDNN_ISA_AVX512)])
def test_no_such_route_is_zero(kind, isa):
    assert lib.bdnn_peak_ops(kind, isa, 0.001, 1) == 0.0


def test_copy_bandwidth_is_positive():
    assert lib.bdnn_peak_copy_bandwidth(8 << 20, 1) > 1e8
