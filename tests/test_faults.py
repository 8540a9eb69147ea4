"""conv_ci must catch a broken implementation: the kernel core carries two deliberate
defects, switched on only through $BENCHDNN_PY_TEST_FAULT, and the real batch is run with
each. (The clean conv_ci run is part of .ci/run.)"""

import pytest

from conftest import run_cli


@pytest.mark.parametrize("fault", ["skip_last_ic", "right_pad_edge"])
def test_conv_ci_catches_a_broken_kernel(fault):
    res = run_cli("--conv", "--batch=batches/conv_ci", env={"BENCHDNN_PY_TEST_FAULT": fault})
    assert res.code == 1
    s = res.summary()
    assert s["failed"] > 0
    failed = [l for l in res.lines if ":FAILED (errors:" in l]
    assert failed and all(f"+fault:{fault}" in l for l in failed)
    # Every implementation family and ISA variant that conv_ci exercises is caught.
    for impl in ("gemm_conv_fwd:avx2", "gemm_conv_fwd:scalar", "dw_conv_fwd:scalar"):
        assert any(f"--impl={impl}+fault" in l for l in failed), impl


def test_unknown_fault_name_is_one_line_per_case():
    res = run_cli("--conv", "ic3ih5oc3kh3", env={"BENCHDNN_PY_TEST_FAULT": "melt"})
    assert res.code == 1
    assert "unknown fault; expected one of skip_last_ic, right_pad_edge" in res.err
