"""The oneDNN backend of the pooling driver: oneDNN's pooling primitives through the same
fill and checks, backward on the workspace of oneDNN's own forward. Skips (or fails under
BENCHDNN_PY_REQUIRE_ONEDNN=1) without the onednn extra, as tests/backends/test_onednn.py
explains."""

from __future__ import annotations

import pytest
from conftest import assert_onednn_cases, case_statuses, run_cli


def test_every_algorithm_direction_and_layout_passes_on_onednn(onednn_lib):
    res = run_cli("--pool", "--backend=onednn", "--summary=no-failures",
                  "--dir=FWD_D,FWD_I,BWD_D", "--alg=max,avg_np,avg_p", "--tag=abx,axb,aBx16b",
                  "--dt=f32,bf16", "mb2ic19ih9oh4kh3sh2", "mb1ic16ih10oh10kh3ph1",
                  "ic5id4kd2sd2")
    assert_onednn_cases(res, 3 * 3 * 3 * 2 * 3, onednn_lib)


def test_torch_runs_no_pooling():
    res = run_cli("--pool", "--backend=torch", "ic4ih4kh2")
    assert case_statuses(res)[0][1].startswith(
        "0:UNIMPLEMENTED (--backend=torch: runs no pooling (its drivers: conv, deconv, softmax, sum, concat, binary, ip, bnorm))")
