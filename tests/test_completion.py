"""Shell completion: the candidates rule (completion.candidates) and the scripts of
`benchdnn-py completion`, run in a real bash (and zsh, where installed)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import click
import pytest
from conftest import run_cli

from benchdnn_py import cli, completion
from benchdnn_py.backends import BACKENDS
from benchdnn_py.common import dt_names, eltwise
from benchdnn_py.common.direction import Dir
from benchdnn_py.completion import candidates
from benchdnn_py.drivers import DRIVERS
from benchdnn_py.drivers.binary import driver as binary_driver
from benchdnn_py.drivers.bnorm import cfg as bnorm_cfg
from benchdnn_py.drivers.bnorm import driver as bnorm_driver
from benchdnn_py.drivers.conv import problem as conv_problem
from benchdnn_py.drivers.conv.dt import DT_NAMES
from benchdnn_py.drivers.pool import driver as pool_driver
from benchdnn_py.drivers.softmax import driver as softmax_driver
from benchdnn_py.engine import shipped
from benchdnn_py.engine.options import enum_value, int_value
from benchdnn_py.engine.settings import COLOR_CHOICES, GLOBAL_OPTIONS, ISA_LEVELS, MODES
from benchdnn_py.errors import UsageError

SUBCOMMANDS = [name for name, cmd in cli.cli.commands.items() if not cmd.hidden]
DRIVER_FLAGS = [f"--{name}" for name in DRIVERS]
GLOBAL_NAMES = [f"--{o.name}=" for o in GLOBAL_OPTIONS.values()]


def values(words: list[str], current: str) -> list[str]:
    """The candidates with the `--name=` that completion keeps in front of each value."""
    head = current[:current.index("=") + 1]
    found = candidates(words, current)
    assert all(c.startswith(head) for c in found), found
    return [c[len(head):] for c in found]


# -- subcommands, drivers, global options --------------------------------------------------

def test_first_word_offers_subcommands_drivers_and_global_options():
    found = candidates([], "")
    for name in [*SUBCOMMANDS, *DRIVER_FLAGS, *GLOBAL_NAMES, "--help", "--version"]:
        assert name in found
    assert "completion" in found and "files" in found and "compare" in found
    assert "__complete" not in found   # hidden


def test_a_prefix_keeps_what_it_starts():
    assert candidates([], "--co") == [n for n in [*DRIVER_FLAGS, *GLOBAL_NAMES]
                                      if n.startswith("--co")]
    assert "--conv" in candidates([], "--co")
    assert candidates([], "comp") == ["compare", "completion"]
    assert candidates([], "--re") == ["--reorder", "--results=", "--replace=", "--resume="]


def test_subcommands_only_in_first_position():
    assert candidates(["--mode=P"], "comp") == []
    assert candidates(["--conv"], "comp") == []
    found = candidates(["--mode=P"], "--")
    assert "compare" not in found and "--conv" in found and "--mode=" in found


def test_before_a_driver_no_driver_options():
    found = candidates(["--mode=P"], "--")
    assert "--dir=" not in found and "--batch=" not in found
    assert candidates([], "--dir=") == []


@pytest.mark.parametrize("name", list(DRIVERS))
def test_after_a_driver_its_options_and_the_global_ones(name):
    driver = DRIVERS[name]
    found = candidates([f"--{name}"], "--")
    for opt in driver.options:
        assert f"--{opt.name}=" in found
    for extra in ("--batch=", "--reset", "--help", *GLOBAL_NAMES):
        assert extra in found
    if driver.case_option:
        assert f"--{driver.case_option}=" in found
    # one driver per run
    assert not [f for f in found if f in DRIVER_FLAGS]


def test_the_driver_counts_wherever_it_stands():
    assert "--dir=" in candidates(["--mode=P", "--conv", "--dir=FWD_B", "ic8ih5oc8kh3"], "--")
    assert "--sdt=" in candidates(["run", "--reorder"], "--s")
    assert "--conv" in candidates(["run"], "--co")


# -- option values -------------------------------------------------------------------------

def test_dir_values_come_from_the_drivers_enum():
    assert values(["--conv"], "--dir=FW") == ["FWD_B", "FWD_D", "FWD_I"]
    assert values(["--conv"], "--dir=") == [d.value for d in Dir]
    assert set(values(["--eltwise"], "--dir=")) < {d.value for d in Dir}


def test_global_values():
    assert values([], "--mode=") == list(MODES)
    assert values(["--conv"], "--mode=C") == ["C", "CP"]
    assert values([], "--isa=") == list(ISA_LEVELS)
    assert values([], "--color=") == list(COLOR_CHOICES)
    assert {"true", "false"} <= set(values([], "--canonical="))


def test_backend_alg_and_data_type_values():
    for name in ("conv", "deconv", "eltwise", "pool", "reorder", "softmax", "sum", "concat",
                 "binary", "ip", "bnorm"):
        assert values([f"--{name}"], "--backend=") == list(BACKENDS)
    assert values(["--binary"], "--alg=") == [a.upper() for a in binary_driver.ALGS]
    assert values(["--conv"], "--alg=") == list(conv_problem.ALGS)
    assert values(["--eltwise"], "--alg=") == sorted(eltwise.ALGS)
    assert values(["--pool"], "--alg=") == list(pool_driver.ALG_SPELLINGS)
    assert values(["--softmax"], "--alg=") == list(softmax_driver.ALGS)
    assert values(["--conv"], "--dt=") == list(DT_NAMES)
    assert values(["--conv"], "--bia-dt=") == list(DT_NAMES)
    # every name benchdnn parses (a type the kernels lack is a per-case verdict)
    assert values(["--reorder"], "--sdt=") == list(dt_names.DT_NAMES)
    assert values(["--eltwise"], "--dt=") == list(dt_names.DT_NAMES)
    assert values(["--softmax"], "--ddt=") == list(dt_names.DT_NAMES)
    assert values(["--bnorm"], "--dt=") == list(dt_names.DT_NAMES)
    assert values(["--bnorm"], "--dir=") == [d.value for d in bnorm_driver.Dir]
    assert values(["--bnorm"], "--check-alg=") == list(bnorm_cfg.CHECK_ALGS)


def test_list_values_complete_the_item_after_the_last_comma():
    assert values(["--conv"], "--dir=FWD_B,BWD_W") == ["FWD_B,BWD_W", "FWD_B,BWD_WB"]
    assert values(["--conv"], "--backend=native,t") == ["native,torch"]


def test_data_types_joined_by_colons():
    assert values(["--conv"], "--dt=f32:b") == ["f32:bf16", "f32:boolean"]
    assert values(["--conv"], "--dt=u8:s8:f3") == ["u8:s8:f32"]
    assert values(["--pool"], "--dt=f32:f1") == ["f32:f16"]
    # a value that `:` does not join stays whole
    assert values(["--conv"], "--dir=FWD_B:") == []


def test_options_without_a_fixed_set_offer_nothing():
    for current in ("--mb=", "--match=", "--stag=", "--strides=", "--threads=",
                    "--attr-scales=", "--results=", "--jobs=", "--summary=", "--nope="):
        assert candidates(["--conv"], current) == [], current


def test_parser_values_all_or_nothing():
    assert completion.parser_values(enum_value("x", {"a": 1, "bb": 2})) == ["a", "bb"]
    assert completion.parser_values(int_value("x")) == []
    assert completion.parser_values(str) == []   # accepts anything

    def examples_only(text: str) -> str:
        if text != "abc":
            raise UsageError(f"--x={text}: expected abc, a plain tag (nchw, ...)")
        return text
    assert completion.parser_values(examples_only) == []


# -- files ---------------------------------------------------------------------------------

def test_batch_completes_paths_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "my_batch").write_text("--dir=FWD_B\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner").write_text("")
    (tmp_path / ".hidden").write_text("")
    monkeypatch.chdir(tmp_path)
    assert candidates(["--conv"], "--batch=m") == ["--batch=my_batch"]
    assert candidates(["--conv"], "--batch=s") == ["--batch=sub/"]
    assert candidates(["--conv"], "--batch=sub/") == ["--batch=sub/inner"]
    assert "--batch=.hidden" not in candidates(["--conv"], "--batch=")
    assert candidates(["--conv"], "--batch=.h") == ["--batch=.hidden"]
    assert candidates(["--conv"], "--batch=nothing/here") == []


def test_batch_completes_the_shipped_names_a_folder_at_a_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # nothing here: only the shipped files
    names = [f.name for f in shipped.listing()]
    assert names
    tops = sorted({n.split("/")[0] + "/" for n in names})
    assert candidates(["--conv"], "--batch=") == [f"--batch={t}" for t in tops]
    for name in names:
        assert f"--batch={name}" in candidates(["--conv"], f"--batch={name}")
    graph_cases = [n for n in names if n.endswith(".json")]
    for name in graph_cases:
        assert f"--case={name}" in candidates(["--graph"], f"--case={name}")


# -- subcommand options --------------------------------------------------------------------

def test_subcommand_options_come_from_the_click_command():
    found = candidates(["compare"], "--")
    for p in cli.compare.params:
        if isinstance(p, click.Option):
            long = [n for n in p.opts if n.startswith("--")][0]
            assert (long if p.is_flag else long + "=") in found
    assert "--help" in found
    assert "--format=" in found and "--force" in found
    assert candidates(["merge"], "--") == ["--replace", "--help"]


def test_subcommand_choices():
    fmt = next(p for p in cli.compare.params if p.name == "fmt")
    assert candidates(["compare"], "--format=") == [f"--format={c}" for c in fmt.type.choices]
    assert candidates(["compare", "--format"], "m") == ["md"]
    assert candidates(["completion"], "") == list(completion.SHELLS)
    assert candidates(["completion", "bash"], "") == []


def test_subcommand_arguments_are_files(tmp_path, monkeypatch):
    (tmp_path / "base.jsonl").write_text("")
    (tmp_path / "new.jsonl").write_text("")
    monkeypatch.chdir(tmp_path)
    assert candidates(["compare"], "b") == ["base.jsonl"]
    assert candidates(["compare", "--format", "md", "base.jsonl"], "n") == ["new.jsonl"]
    assert candidates(["compare", "base.jsonl", "new.jsonl"], "") == []
    assert candidates(["files"], "") == []


# -- the entry point -----------------------------------------------------------------------

def test_main_prints_one_candidate_a_line_and_caches_the_spec(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert completion.main(["--", "--conv", "--dir=FW"]) == 0
    assert capsys.readouterr().out == "--dir=FWD_B\n--dir=FWD_D\n--dir=FWD_I\n"
    saved = json.loads((tmp_path / "benchdnn-py" / "completion.json").read_text())
    assert saved["spec"] == json.loads(json.dumps(completion.live_spec()))

    def no_code():
        raise AssertionError("the cache should have answered")
    monkeypatch.setattr(completion, "live_spec", no_code)
    completion.main(["--", "--co"])
    assert "--conv\n" in capsys.readouterr().out
    # an edited source makes the cache stale: the spec is read from the code again
    monkeypatch.setattr(completion, "_source_key", lambda: "another")
    completion.main(["--", "--co"])
    assert capsys.readouterr() == ("", "")


def test_main_prints_nothing_on_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(completion, "candidates", broken)
    assert completion.main(["--", "--conv", ""]) == 0
    assert capsys.readouterr() == ("", "")


def test_hidden_entry_point_of_the_cli(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    res = run_cli("__complete", "--", "--conv", "--dir=FW", env=env)
    assert res.code == 0
    assert res.lines == ["--dir=FWD_B", "--dir=FWD_D", "--dir=FWD_I"]
    assert "__complete" not in run_cli("--help").out
    bad = run_cli("__complete", "--", "--conv", "--batch=/no/such/folder/", env=env)
    assert (bad.code, bad.out, bad.err) == (0, "", "")


# -- the scripts in a real shell -----------------------------------------------------------

BASH = shutil.which("bash")
ZSH = shutil.which("zsh")


def bash_complete(script: str, line: str, comp_words: list[str],
                  env: dict[str, str]) -> list[str]:
    """COMPREPLY of the script's function for `line`, the cursor at its end; `comp_words`
    are its words as bash splits them (at COMP_WORDBREAKS too)."""
    program = (script + '\nCOMP_LINE=$1; COMP_POINT=$((${#COMP_LINE} ${POINT:-+0})); shift\n'
               'COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n'
               '_benchdnn_py\nprintf "%s\\n" "${COMPREPLY[@]}"\n')
    proc = subprocess.run([BASH, "-c", program, "bash", line, *comp_words],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return [l for l in proc.stdout.splitlines() if l]


@pytest.fixture
def shell_env(tmp_path):
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_script_completes_options_and_values(tmp_path, shell_env):
    res = run_cli("completion", "bash", module=False)
    assert res.code == 0 and "complete -F _benchdnn_py benchdnn-py" in res.out
    path = tmp_path / "benchdnn-py.bash"
    path.write_text(res.out)
    check = subprocess.run([BASH, "-n", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    # bash splits `--dir=FW` at `=` and replaces only `FW`
    assert bash_complete(res.out, "benchdnn-py --conv --dir=FW",
                         ["benchdnn-py", "--conv", "--dir", "=", "FW"],
                         shell_env) == ["FWD_B", "FWD_D", "FWD_I"]
    found = bash_complete(res.out, "benchdnn-py --co", ["benchdnn-py", "--co"], shell_env)
    assert "--conv" in found and all(f.startswith("--co") for f in found)
    assert bash_complete(res.out, "benchdnn-py --conv --dt=f32:bf1",
                         ["benchdnn-py", "--conv", "--dt", "=", "f32", ":", "bf1"],
                         shell_env) == ["bf16"]
    # the cursor inside the line: what stands after it does not count
    assert bash_complete(res.out, "benchdnn-py --conv --dir=FWD_I", ["benchdnn-py", "--conv",
                         "--dir", "=", "FWD_I"], {**shell_env, "POINT": "-3"}) == [
        "FWD_B", "FWD_D", "FWD_I"]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_script_falls_back_to_the_cli_without_its_python(shell_env):
    script = completion.script("bash").replace(shlex.quote(sys.executable), "/no/such/python")
    assert "/no/such/python" in script
    if shutil.which("benchdnn-py", path=shell_env.get("PATH")) is None:
        pytest.skip("the benchdnn-py console script is not on PATH")
    assert bash_complete(script, "benchdnn-py --conv --mode=C",
                         ["benchdnn-py", "--conv", "--mode", "=", "C"],
                         shell_env) == ["C", "CP"]


@pytest.mark.skipif(ZSH is None, reason="zsh is not installed")
def test_zsh_script_adds_full_words(shell_env):
    script = completion.script("zsh").replace("compdef _benchdnn_py benchdnn-py", "")
    # compadd works only inside a completion widget: a stand-in prints what it is given
    program = (script + '\ncompadd() { local c s=space; [[ $1 == -S ]] && s=nospace\n'
               '  for c in "${(@P)${@[-1]}}"; do print -r -- "$s $c"; done; }\n'
               'words=(benchdnn-py --conv --dir=FW); CURRENT=3; PREFIX=--dir=FW; _benchdnn_py\n'
               'words=(benchdnn-py --conv --ba); CURRENT=3; PREFIX=--ba; _benchdnn_py\n')
    proc = subprocess.run([ZSH, "-f", "-c", program], capture_output=True, text=True,
                          env=shell_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [l for l in lines if "--dir=" in l] == ["space --dir=FWD_B", "space --dir=FWD_D",
                                                     "space --dir=FWD_I"]
    assert "nospace --batch=" in lines and "nospace --backend=" in lines
