"""Batch file tokenizing and lookup (benchdnn reference 4)."""

from pathlib import Path

import pytest

from benchdnn_py.engine import batch
from benchdnn_py.errors import UsageError


def test_comments_continuations_and_whitespace():
    text = ("--dir=FWD_B  # a comment --not-an-option\n"
            "# whole line\n"
            "--mb=1,\\\n  2\n"
            "--dt=f32 \\ \n:f32:f32\n"
            'ic3ih5oc3kh3n"name#hash"\n')
    assert batch.tokenize(text) == ["--dir=FWD_B", "--mb=1,2", "--dt=f32:f32:f32",
                                    'ic3ih5oc3kh3n"name#hash"']


def test_lone_backslash_glues_neighbours():
    assert batch.tokenize("--attr=a, \\ \n b") == ["--attr=a,b"]


def test_find_prefers_including_dir(tmp_path: Path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "shapes").write_text("ic3ih5oc3kh3\n")
    (tmp_path / "shapes").write_text("ic4ih5oc4kh3\n")
    monkeypatch.chdir(tmp_path)
    assert batch.find("shapes", tmp_path / "sub", []) == tmp_path / "sub" / "shapes"
    assert batch.find("shapes", None, []) == Path("shapes")


def test_missing_file_is_a_usage_error(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="cannot open batch file `nope`"):
        batch.find("nope", None, [])
