"""Shell completion: the words that can stand where the cursor is, and the scripts that
ask for them (``benchdnn-py completion bash``; docs/completion.md).

``candidates(words, current)`` is the rule: ``words`` are the arguments before the cursor
(without the command itself), ``current`` the part of the argument under the cursor that
is typed so far; it returns every full argument that completes it. Everything it knows
comes from a *spec*, plain data read from the code: the click commands, the drivers and
their options, the global options, and the values each option's parser accepts.

Reading the spec imports the drivers, and with them the kernel core and numpy. A key
press must not wait for that, so ``main()`` (the hidden entry point the scripts run)
keeps the spec in a cache file, keyed by the package's source files, and imports only
the standard library when the cache is current. This module imports nothing else at
the top for the same reason.
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from typing import Any, Sequence

SHELLS = ("bash", "zsh")

# A value no parser with a fixed set of values accepts: its error names the set.
_PROBE = "\x01"


# -- the spec: plain data read from the code ----------------------------------------------

def build_spec() -> dict[str, Any]:
    """The commands, drivers, options and values, as JSON-ready data."""
    import click

    from . import cli
    from .drivers import DRIVERS
    from .engine.settings import GLOBAL_OPTIONS

    group = cli.cli
    top = [name for p in group.params if isinstance(p, click.Option) for name in p.opts]
    return {
        "commands": {name: _command_spec(cmd) for name, cmd in group.commands.items()
                     if not cmd.hidden},
        "stream_command": cli.run.name,
        "top_options": [*top, *_help_names(group)],
        "drivers": {name: {"options": {o.name: _option_spec(o.parse, o.is_list)
                                       for o in d.options},
                           "case_option": d.case_option}
                    for name, d in DRIVERS.items()},
        "globals": {o.name: _option_spec(o.parse, o.is_list) for o in GLOBAL_OPTIONS.values()},
    }


def _help_names(cmd) -> list[str]:
    return list(cmd.context_settings.get("help_option_names", ["--help"]))


def _command_spec(cmd) -> dict[str, Any]:
    import click

    options: dict[str, dict[str, Any]] = {}
    arguments = []
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            for name in (*p.opts, *p.secondary_opts):
                if name.startswith("--"):
                    options[name] = {"flag": bool(p.is_flag or p.count),
                                     "choices": _click_choices(p.type)}
        elif isinstance(p, click.Argument):
            arguments.append({"nargs": p.nargs, "choices": _click_choices(p.type)})
    for name in _help_names(cmd):
        options[name] = {"flag": True, "choices": []}
    return {"options": options, "arguments": arguments}


def _click_choices(kind) -> list[str]:
    return [str(c) for c in getattr(kind, "choices", None) or ()]


def _option_spec(parse, is_list: bool) -> dict[str, Any]:
    values = parser_values(parse)
    # SRC:WEI:DST data types: `:` joins items of one value (tried on the option's own parser)
    joins = bool(values) and any(_accepts(parse, ":".join([values[0]] * n)) for n in (2, 3))
    return {"values": values, "list": is_list, "joins": joins}


def _accepts(parse, text: str) -> bool:
    try:
        parse(text)
    except Exception:
        return False
    return True


def parser_values(parse) -> list[str]:
    """The values of an option with a fixed set, read from its parser's own error for a
    value it cannot accept (`expected one of A, B, C`; `expected true, false, 1 or 0`).
    All or nothing: every item named must be one word the parser accepts, so free text
    and examples (`expected any, a plain tag (...)`) give no values."""
    import re

    try:
        parse(_PROBE)
    except Exception as exc:
        message = str(exc)
    else:
        return []   # free text: a file name, a regular expression
    found = re.search(r"expected (?:one of )?(.+)$", message)
    if not found:
        return []
    items = [i.strip().rstrip(".") for i in re.split(r",\s+or\s+|,\s+|\s+or\s+", found[1])]
    if not all(i and not any(c.isspace() for c in i) and _accepts(parse, i) for i in items):
        return []
    return list(dict.fromkeys(items))


@lru_cache(maxsize=None)
def live_spec() -> dict[str, Any]:
    return build_spec()


# -- the cache ----------------------------------------------------------------------------

def _cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "benchdnn-py", "completion.json")


def _source_key() -> str:
    """Changes whenever a source file of the package does: an edit, an upgrade, another
    install (its path)."""
    import hashlib

    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1(package.encode())
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name} {st.st_mtime_ns} {st.st_size}\n".encode())
    return digest.hexdigest()


def cached_spec() -> dict[str, Any]:
    """The spec from the cache file when it matches the sources; else read from the code
    and saved (a cache that cannot be written only costs time)."""
    key = _source_key()
    path = _cache_path()
    try:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        if saved.get("key") == key:
            return saved["spec"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    spec = live_spec()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}"
        with open(partial, "w", encoding="utf-8") as f:
            json.dump({"key": key, "spec": spec}, f)
        os.replace(partial, path)   # whole or absent: another shell may be reading it
    except (OSError, ValueError):
        pass
    return spec


# -- the rule -----------------------------------------------------------------------------

def candidates(words: Sequence[str], current: str,
               spec: dict[str, Any] | None = None) -> list[str]:
    """Every argument that completes ``current`` after ``words``."""
    spec = live_spec() if spec is None else spec
    words = list(words)
    commands = spec["commands"]
    if words and words[0] in commands and words[0] != spec["stream_command"]:
        return _command_candidates(commands[words[0]], words[1:], current)
    first = not words
    if words and words[0] == spec["stream_command"]:
        words = words[1:]
    return _stream_candidates(spec, words, current, first)


def _starting(names, current: str) -> list[str]:
    return list(dict.fromkeys(n for n in names if n.startswith(current)))


def _stream_candidates(spec, words: list[str], current: str, first: bool) -> list[str]:
    """The benchdnn argument stream: global options anywhere, one driver, then its
    options, --batch=, --reset and problems."""
    drivers = spec["drivers"]
    driver = next((drivers[w[2:]] for w in words if w.startswith("--") and w[2:] in drivers),
                  None)
    commands = list(spec["commands"])
    if current.startswith("--") and "=" in current:
        name, _, value = current[2:].partition("=")
        head = f"--{name}="
        if driver is not None and name in {"batch", driver["case_option"]} - {""}:
            return [head + p for p in paths(value, shipped_names())]
        opt = spec["globals"].get(name)
        if opt is None and driver is not None:
            opt = driver["options"].get(name)
        return [head + v for v in _values(opt, value)] if opt else []
    if current and not current.startswith("-"):
        # a problem descriptor, or the start of a subcommand
        return _starting(commands, current) if first else []
    names = [*commands, *spec["top_options"]] if first else []
    if driver is None:
        names += [f"--{d}" for d in drivers] + ["--help"]
    else:
        names += [f"--{o}=" for o in driver["options"]]
        names += [f"--{driver['case_option']}="] if driver["case_option"] else []
        names += ["--batch=", "--reset", "--help"]
    names += [f"--{g}=" for g in spec["globals"]]
    return _starting(names, current)


def _values(opt: dict[str, Any], value: str) -> list[str]:
    """The option's values that complete ``value``: after the last comma of a list, and
    after the last `:` of an option whose items `:` joins."""
    head = ""
    if opt["list"]:
        cut = value.rfind(",") + 1
        head, value = value[:cut], value[cut:]
    if opt["joins"]:
        cut = value.rfind(":") + 1
        head, value = head + value[:cut], value[cut:]
    return [head + v for v in opt["values"] if v.startswith(value)]


def _command_candidates(cmd, words: list[str], current: str) -> list[str]:
    """A click subcommand: its options (`--name=` for those with a value), the choices of
    an option's value, and its arguments (choices or file paths)."""
    options = cmd["options"]
    if current.startswith("--") and "=" in current:
        name, _, value = current.partition("=")
        opt = options.get(name)
        return [f"{name}={c}" for c in opt["choices"] if c.startswith(value)] if opt else []
    if current.startswith("-"):
        return _starting((n if o["flag"] else n + "=" for n, o in options.items()), current)
    positional = 0
    wants_value = None
    for word in words:
        if wants_value is not None:
            wants_value = None
        elif word in options and not options[word]["flag"]:
            wants_value = options[word]   # `--format md`: the next word is its value
        elif not word.startswith("-"):
            positional += 1
    if wants_value is not None:
        return _starting(wants_value["choices"], current)
    for arg in cmd["arguments"]:
        if arg["nargs"] < 0 or positional < arg["nargs"]:
            return _starting(arg["choices"], current) if arg["choices"] else paths(current)
        positional -= arg["nargs"]
    return []


def paths(typed: str, extra: Sequence[str] = ()) -> list[str]:
    """Files and folders (ending `/`) that complete ``typed``, relative to the working
    directory, then the names in ``extra`` (paths too), one folder level at a time."""
    cut = typed.rfind("/") + 1
    folder, stem = typed[:cut], typed[cut:]
    found = []
    try:
        entries = sorted(os.scandir(folder or "."), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        hidden = entry.name.startswith(".") and not stem.startswith(".")
        if entry.name.startswith(stem) and not hidden:
            try:
                slash = "/" if entry.is_dir() else ""
            except OSError:
                slash = ""
            found.append(folder + entry.name + slash)
    for name in extra:
        if name.startswith(typed):
            end = name.find("/", len(typed))
            found.append(name if end < 0 else name[:end + 1])
    return list(dict.fromkeys(f for f in found if "\n" not in f))


def shipped_names() -> list[str]:
    """The shipped shape and batch files as --batch= takes them (`benchdnn-py files`)."""
    from .engine import shipped

    return [f.name for f in shipped.listing()]


# -- the entry point and the scripts ------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """``-- WORD... CURRENT``: prints the candidates, one a line. Prints nothing on any
    error: a traceback would land in the user's command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    try:
        if args:
            found = candidates(args[:-1], args[-1], cached_spec())
            sys.stdout.write("".join(f"{c}\n" for c in found))
            sys.stdout.flush()
    except BaseException:   # noqa: BLE001 (KeyboardInterrupt and a closed pipe too)
        pass
    return 0


_ASK = r"""
_benchdnn_py_ask() {
    # The Python that printed this script answers without loading the kernels; the
    # command's own hidden entry point answers when that Python is gone.
    if [[ -x @PYTHON@ ]] && PYTHONSAFEPATH=1 @PYTHON@ -c \
        'import sys; from benchdnn_py.completion import main; sys.exit(main())' \
        -- "$@" 2>/dev/null; then
        return 0
    fi
    command benchdnn-py __complete -- "$@" 2>/dev/null
}
"""

_BASH = r"""# Completion of benchdnn-py for bash. Install: eval "$(benchdnn-py completion bash)"
# in ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/benchdnn-py
@ASK@
_benchdnn_py() {
    local line=${COMP_LINE:0:COMP_POINT} cur= prefix= candidate nospace= i
    local -a words
    # Split at blanks only: COMP_WORDS also splits at `=` and `:` (COMP_WORDBREAKS),
    # which would cut --dir=FWD_B in three.
    read -r -a words <<< "$line"
    if [[ $line != *[[:blank:]] && ${#words[@]} -gt 0 ]]; then
        cur=${words[${#words[@]}-1]}
        unset "words[${#words[@]}-1]"
    fi
    # Drop the command and what stands before it (VAR=VALUE benchdnn-py ...).
    for (( i = 0; i < ${#words[@]}; i++ )); do
        [[ ${words[i]} == *benchdnn-py ]] && break
    done
    (( i == ${#words[@]} )) && i=0
    words=("${words[@]:i+1}")
    # Bash replaces only the part of the word after its last COMP_WORDBREAKS character.
    for (( i = ${#cur} - 1; i >= 0; i-- )); do
        if [[ $COMP_WORDBREAKS == *"${cur:i:1}"* ]]; then
            prefix=${cur:0:i+1}
            break
        fi
    done
    COMPREPLY=()
    while IFS= read -r candidate; do
        [[ -n $candidate && $candidate == "$prefix"* ]] || continue
        COMPREPLY+=("${candidate#"$prefix"}")
        # an option waiting for its value, a list item or a folder: keep typing
        [[ $candidate == *[=,/] ]] && nospace=1
    done < <(_benchdnn_py_ask "${words[@]}" "$cur")
    [[ -n $nospace ]] && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _benchdnn_py benchdnn-py
"""

_ZSH = r"""# Completion of benchdnn-py for zsh. Install: eval "$(benchdnn-py completion zsh)"
# in ~/.zshrc, after compinit.
@ASK@
_benchdnn_py() {
    local -a found spaced unspaced
    local candidate
    found=("${(@f)$(_benchdnn_py_ask "${(@)words[2,CURRENT-1]}" "$PREFIX")}")
    for candidate in "${found[@]}"; do
        [[ -n $candidate ]] || continue
        # an option waiting for its value, a list item or a folder: keep typing
        if [[ $candidate == *[=,/] ]]; then
            unspaced+=("$candidate")
        else
            spaced+=("$candidate")
        fi
    done
    compadd -S '' -a unspaced
    compadd -a spaced
}
compdef _benchdnn_py benchdnn-py
"""


def script(shell: str) -> str:
    """The completion script for ``shell`` (one of SHELLS)."""
    import shlex

    body = {"bash": _BASH, "zsh": _ZSH}[shell]
    # (an interpreter with no path, or none, leaves only the hidden entry point)
    python = shlex.quote(sys.executable or "/nonexistent")
    return body.replace("@ASK@", _ASK.replace("@PYTHON@", python))
