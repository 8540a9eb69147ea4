"""Option specifications shared by every driver, and the value parsers they use.

An option is data: its name, how a value string becomes a Python value, its default, and
whether a comma list expands into one case per item. The harness (harness.py) owns the
sticky state; drivers only declare which options they take, in their expansion order.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from ..errors import UsageError

Parser = Callable[[str], Any]


@dataclasses.dataclass(frozen=True)
class Option:
    """One ``--name=value`` option.

    is_list: the value is a comma list and every item gives its own case (cartesian
    product over all list options, in the driver's declared order). The empty value
    ``--name=`` restores the default.
    """

    name: str
    parse: Parser
    default: Any
    help: str
    is_list: bool = False
    key: str = ""   # state slot; options sharing one overwrite each other (last wins)

    @property
    def slot(self) -> str:
        return self.key or self.name


def parse_option_arg(arg: str) -> tuple[str, str | None]:
    """Splits ``--name=value`` into (name, value); value is None when there is no ``=``."""
    body = arg[2:]
    if "=" in body:
        name, value = body.split("=", 1)
        return name, value
    return body, None


def parse_list(option: Option, value: str) -> tuple[Any, ...]:
    """Parses a comma list option value; an empty value means the default."""
    if value == "":
        return (option.default,)
    return tuple(option.parse(item) for item in value.split(","))


def ascii_number(text: str) -> str:
    """text, for int() or float(); ValueError when it holds a character outside ASCII
    (Python would read full-width and other Unicode digits as numbers: `ic４` is no 4)."""
    if not text.isascii():
        raise ValueError(text)
    return text


def read_bool(text: str) -> bool | None:
    """benchdnn's booleans: true, false, 1, 0 in any case; None for anything else."""
    return {"true": True, "1": True, "false": False, "0": False}.get(text.lower())


def bool_value(name: str) -> Parser:
    def parse(text: str) -> bool:
        value = read_bool(text)
        if value is None:
            raise UsageError(f"--{name}={text}: expected true, false, 1 or 0")
        return value
    return parse


def int_value(name: str, minimum: int | None = None) -> Parser:
    def parse(text: str) -> int:
        try:
            value = int(ascii_number(text))
        except ValueError:
            raise UsageError(f"--{name}={text}: expected an integer") from None
        if minimum is not None and value < minimum:
            raise UsageError(f"--{name}={text}: expected an integer >= {minimum}")
        return value
    return parse


def float_value(name: str) -> Parser:
    def parse(text: str) -> float:
        try:
            return float(ascii_number(text))
        except ValueError:
            raise UsageError(f"--{name}={text}: expected a number") from None
    return parse


def enum_value(name: str, choices: dict[str, Any], case_insensitive: bool = True) -> Parser:
    """Maps spellings to values; the error lists the accepted spellings."""
    table = {(k.upper() if case_insensitive else k): v for k, v in choices.items()}

    def parse(text: str) -> Any:
        key = text.upper() if case_insensitive else text
        if key in table:
            return table[key]
        raise UsageError(f"--{name}={text}: unknown value `{text}`; expected one of "
                         f"{', '.join(choices)}")
    return parse


def regex_value(name: str) -> Parser:
    def parse(text: str) -> re.Pattern[str] | None:
        if text == "":
            return None
        try:
            return re.compile(text)
        except re.error as exc:
            raise UsageError(f"--{name}={text}: not a valid regular expression ({exc})") from None
    return parse


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest(name: str, known: list[str], limit: int = 3) -> list[str]:
    """Known option names within edit distance min(len - 1, 6) of ``name``, nearest first
    (benchdnn's rule), plus names that start with it."""
    budget = min(max(len(name) - 1, 1), 6)
    scored = sorted((levenshtein(name, k), k) for k in known)
    near = [k for d, k in scored if d <= budget]
    prefixed = [k for k in known if k.startswith(name) and k not in near]
    return (near + prefixed)[:limit]
