"""The shipped problem and batch files: found from any directory, each with a summary."""

from __future__ import annotations

from pathlib import Path

from benchdnn_py.engine import batch, shipped

from conftest import ROOT


def _shipped_on_disk() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for kind in shipped.KINDS
            for p in (ROOT / kind).rglob("*") if p.is_file()}


def test_a_checkout_ships_its_own_problems_and_batches():
    assert shipped.root() == ROOT


def test_the_listing_holds_every_file_each_with_a_one_line_summary():
    listing = shipped.listing()
    assert {f.name for f in listing} == _shipped_on_disk()
    # The convention that `benchdnn-py files` relies on: each file's first line summarizes it.
    assert [f.name for f in listing if not f.description] == []
    assert all("\n" not in f.description and len(f.description) <= 100 for f in listing)


def test_a_text_file_is_described_by_its_first_comment_line(tmp_path: Path):
    path = tmp_path / "my_grid"
    path.write_text("# my_grid: three shapes for a test.\n# more detail\nmb1ic3ih5oc4kh3\n")
    assert shipped.describe(path) == "three shapes for a test"
    bare = tmp_path / "bare"
    bare.write_text("mb1ic3ih5oc4kh3\n")
    assert shipped.describe(bare) == ""


def test_a_graph_case_is_described_by_its_operations():
    assert (shipped.describe(ROOT / "problems/graph/conv_2d_biasadd_relu.json")
            == "oneDNN Graph JSON case: Convolution -> BiasAdd -> ReLU")


def test_a_shipped_batch_resolves_from_any_directory(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert batch.find("problems/shapes_mobilenet_v1", None, []) == \
        ROOT / "problems/shapes_mobilenet_v1"
    assert batch.find("batches/conv_smoke", None, []) == ROOT / "batches/conv_smoke"
    assert batch.find("conv_smoke", None, []) == ROOT / "batches/conv_smoke"


def test_a_local_file_wins_over_a_shipped_one_of_the_same_name(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems/shapes_mobilenet_v1").write_text("mb1ic3ih5oc4kh3\n")
    assert batch.find("problems/shapes_mobilenet_v1", None, []) == \
        Path("problems/shapes_mobilenet_v1")
