"""Every shipped batch and problem file reads without a usage error under its driver, and
every batch only names files that exist (checked by planning it, which resolves every
--batch)."""

from pathlib import Path

import pytest

from benchdnn_py import harness

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p for d in ("batches", "problems") for p in (ROOT / d).iterdir() if p.is_file())


def driver_of(path: Path) -> str:
    for prefix in ("deconv", "graph", "eltwise", "pool", "reorder"):
        if any(path.name.startswith(p + prefix) for p in ("", "shapes_", "perf_")):
            return prefix
    return "conv"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_file_plans(path):
    plan = harness.plan([f"--{driver_of(path)}", f"--batch={path}"])
    assert plan.cases, path
    assert plan.warnings == []


def test_every_driver_has_a_ci_batch():
    names = {p.name for p in (ROOT / "batches").iterdir()}
    assert {"conv_ci", "conv_smoke", "deconv_ci", "graph_ci", "reorder_ci"} <= names


def test_batches_start_with_reset():
    for path in (ROOT / "batches").iterdir():
        first = next(l for l in path.read_text().splitlines() if l.strip() and not l.startswith("#"))
        assert first == "--reset", path
