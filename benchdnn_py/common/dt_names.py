"""The data type names benchdnn's parser knows (its str2dt): an option naming one of them
parses in every driver, and whether a case of that type runs is the driver's own table,
which answers with a per-case verdict. A name outside this list is a typo and stops the
run, as in benchdnn."""

from __future__ import annotations

from ..errors import UsageError

DT_NAMES = ("f32", "bf16", "f16", "f64", "s32", "s8", "u8", "s4", "u4", "f8_e5m2", "f8_e4m3",
            "f4_e2m1", "e8m0", "s64", "boolean")


def option(name: str):
    """The parser of a --NAME=DT option value: one type name."""
    def parse(text: str) -> str:
        return parse_name(text, name, text)
    return parse


def parse_name(item: str, option: str, text: str, undef: bool = False) -> str:
    """One data type name of `--option=text` (a `dnnl_` prefix allowed); `undef` also
    accepts the name undef."""
    name = item.removeprefix("dnnl_")
    names = DT_NAMES + (("undef",) if undef else ())
    if name not in names:
        raise UsageError(f"--{option}={text}: unknown data type `{item}`; expected one of "
                         f"{', '.join(names)}")
    return name
