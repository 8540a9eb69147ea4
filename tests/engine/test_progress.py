"""The progress bar: on a terminal's standard error only, never in a log."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import time

from conftest import ROOT, run_cli

from benchdnn_py.engine import progress

ARGS = ("--conv", "--mb=1", "--match=res2", "--batch=problems/shapes_resnet_50")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_wanted_only_on_a_terminal_without_no_color_or_ci():
    assert progress.wanted(_Tty(), {})
    assert not progress.wanted(io.StringIO(), {})
    assert not progress.wanted(_Tty(), {"NO_COLOR": "1"})
    assert not progress.wanted(_Tty(), {"CI": "true"})
    assert isinstance(progress.for_stream(io.StringIO()), progress.NoBar)


def run_on_terminal(*args: str, env: dict[str, str]) -> tuple[str, str, int]:
    """Runs the CLI with standard error on a pseudo-terminal; returns (stdout, what the
    terminal showed, exit status)."""
    master, slave = pty.openpty()
    full = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR")}
    full.update(TERM="xterm", COLUMNS="160", BENCHDNN_PY_NO_TABLES="1")
    full.update(env)
    proc = subprocess.Popen([sys.executable, "-m", "benchdnn_py", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=slave, env=full, text=True)
    os.close(slave)
    shown = b""
    out = proc.stdout.read()
    proc.wait(timeout=120)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:      # the terminal is closed: everything was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return out, shown.decode(errors="replace"), proc.returncode


def test_a_terminal_gets_the_bar_and_the_same_stdout():
    out, shown, code = run_on_terminal(*ARGS, "-j", "2", env={})
    assert code == 0
    assert "cases" in shown and "ETA" in shown and "passed:" in shown
    assert "/" in shown     # done/total
    plain = run_cli(*ARGS, "-j", "2")
    strip = lambda text: [l.split(" (")[0] for l in text.splitlines()  # noqa: E731
                          if not l.startswith("total:")]
    assert strip(out) == strip(plain.out)
    assert "ETA" not in plain.err and "\x1b[" not in plain.err


def test_ci_or_no_color_on_a_terminal_get_plain_lines():
    for env in ({"CI": "1"}, {"NO_COLOR": "1"}):
        _, shown, code = run_on_terminal(*ARGS, env=env)
        assert code == 0
        assert "ETA" not in shown


SGR = re.compile(r"\x1b\[[0-9;]*m")   # a colour or style (the bar's cursor moves are not)


def test_color_never_keeps_the_terminal_free_of_colours_and_styles():
    tables = {"BENCHDNN_PY_NO_TABLES": ""}
    _, shown, code = run_on_terminal(*ARGS, "--color=never", env=tables)
    assert code == 0 and "Cases by status" in shown and "ETA" in shown
    assert not SGR.search(shown)
    _, shown, _ = run_on_terminal(*ARGS, env=tables)
    assert SGR.search(shown)                  # auto: a terminal gets them
