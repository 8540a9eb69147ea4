"""--impl and --skip-impl: which implementations a driver may pick, by name. Every driver
that chooses among implementations takes these options and asks ``allows`` per row."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from .. import core
from ..errors import UsageError
from ..status import Reason, Status
from .case import CaseResult
from .options import Option


@dataclasses.dataclass(frozen=True)
class ImplFilter:
    """--impl (keep names containing any of) or --skip-impl (drop names containing any of);
    they share one setting, so the last one given wins."""

    include: bool = True
    names: tuple[str, ...] = ()

    def option(self) -> str:
        """The option that sets this filter, as a command line gives it ("" for none)."""
        if not self.names:
            return ""
        return f"--{'impl' if self.include else 'skip-impl'}={','.join(self.names)}"

    def allows(self, impl_name: str) -> bool:
        if not self.names:
            return True
        hit = any(n in impl_name for n in self.names)
        return hit if self.include else not hit


# A name's `@variant`: the tile its row chose for one execution's data (results show
# `gemm_conv_int8:avx2:shift@pairs16`); a filter selects the row, so it drops the variant.
_VARIANT = re.compile(r"@\w+")


def without_variant(name: str) -> str:
    """The implementation name a filter matches: name without its `@variant`."""
    return _VARIANT.sub("", name)


def _impl_filter(include: bool):
    option = "impl" if include else "skip-impl"

    def parse(text: str) -> ImplFilter:
        given = [n.strip().strip("'\"") for n in text.split(",") if n.strip()]
        names = tuple(without_variant(n) for n in given)
        for n, name in zip(given, names):
            if not name:   # the data choose a tile; a filter can only choose rows
                raise UsageError(f"--{option}={text}: `{n}` names only a tile variant, "
                                 f"which each execution's data choose; name a row")
        return ImplFilter(include, names)
    return parse


# --impl and --skip-impl, shared by every driver that picks among implementations.
IMPL_FILTER_OPTIONS = (
    Option("impl", _impl_filter(True), ImplFilter(),
           "use only implementations whose name contains one of these", key="impl_filter"),
    Option("skip-impl", _impl_filter(False), ImplFilter(),
           "skip implementations whose name contains one of these", key="impl_filter"),
)


def first_accepting(table, allow, build: Callable[[Any], Any], res: CaseResult) -> Any:
    """The primitive of the first implementation, in ``table``'s order of preference, that
    the filter ``allow`` lets through and ``build`` accepts (it raises core.Unimplemented
    otherwise); None with res SKIPPED (the filter left some out) or UNIMPLEMENTED."""
    with res.timers("create_pd"):
        candidates = [i for i in table if allow.allows(i.name)]
    with res.timers("create_prim"):
        for impl in candidates:
            try:
                return build(impl)
            except core.Unimplemented:
                continue
    if len(candidates) < len(table):
        res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
    else:
        res.status, res.reason = Status.UNIMPLEMENTED, "no implementation accepts this problem"
    return None
