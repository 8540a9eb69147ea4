"""The oneDNN backend of the bnorm driver: oneDNN's batch normalization primitives
through the same fill and checks. Skips (or fails under BENCHDNN_PY_REQUIRE_ONEDNN=1)
without the onednn extra, as tests/backends/test_onednn.py explains."""

from __future__ import annotations

import pytest
from conftest import assert_onednn_cases, case_statuses, run_cli


def test_directions_flags_and_layouts_pass_on_onednn(onednn_lib):
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=onednn",
                  "--dir=FWD_D,FWD_I,BWD_D,BWD_DW", "--flags=,G,CH,R,GCHR",
                  "--tag=abx,axb,aBx16b", "mb3ic19ih5")
    cases = case_statuses(res)
    assert len(cases) == 4 * 5 * 3
    assert {s for s, _ in cases} == {"PASSED"}, [l for s, l in cases if s != "PASSED"][:5]
    assert all("--impl=onednn:" in l for _, l in cases) and res.code == 0
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=onednn", "--inplace=true",
                  "--dt=bf16", "--dir=FWD_D,BWD_DW", "--flags=CHR", "mb2ic16ih5")
    assert_onednn_cases(res, 2, onednn_lib)


def test_f16_runs_where_onednn_has_avx512_fp16_and_is_unimplemented_elsewhere(onednn_lib):
    """oneDNN 3.2 normalizes f16 only with AVX512-FP16 (its avx512_core_fp16 level and the
    AMX ones above it, which include it); on other CPUs it answers
    `unimplemented` itself, and the cases report that."""
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=onednn", "--inplace=true",
                  "--dt=f16", "--dir=FWD_D,BWD_DW", "--flags=CHR", "mb2ic16ih5")
    cases = case_statuses(res)
    if "fp16" in onednn_lib.isa or "amx" in onednn_lib.isa:
        assert {s for s, _ in cases} == {"PASSED"}, cases
    else:
        assert [s for s, _ in cases] == ["UNIMPLEMENTED"] * 2, cases
        assert all(f"(oneDNN {onednn_lib.version}: dnnl_batch_normalization_forward: "
                   "unimplemented)" in line for _, line in cases), cases


@pytest.mark.usefixtures("onednn_lib")
def test_what_the_backend_lacks_is_unimplemented_with_the_reason():
    res = run_cli("--bnorm", "--summary=no-failures", "--backend=onednn", "--flags=A",
                  "mb2ic16ih5", "--flags=", "--dir=FWD_I", "--attr-post-ops=relu",
                  "mb2ic16ih5")
    lines = [l for _, l in case_statuses(res)]
    assert "UNIMPLEMENTED (oneDNN" in lines[0] and "unimplemented" in lines[0]
    assert "UNIMPLEMENTED (--attr-post-ops=relu: the onednn backend runs a batch " \
        "normalization primitive without post-ops)" in lines[1]
