"""The driver registry: the one place a driver is made known (--NAME on the command line)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from functools import lru_cache

from .base import Driver

# --NAME -> the package that defines it (its DRIVER), in --help order. A driver's modules
# load when a run first names it, not at start: a run pays for its own driver only.
_PACKAGES = ("conv", "graph", "deconv", "eltwise", "pool", "reorder", "softmax", "sum",
             "concat", "binary", "ip", "bnorm")


class _Registry(Mapping[str, Driver]):
    """The drivers by name; `name in DRIVERS` and iteration load nothing."""

    def __init__(self) -> None:
        self._loaded: dict[str, Driver] = {}

    def __getitem__(self, name: str) -> Driver:
        if name not in self._loaded:
            if name not in _PACKAGES:
                raise KeyError(name)
            if name == "graph":   # the graph driver runs its convolutions on conv's
                from .graph import make_driver
                self._loaded[name] = make_driver(self["conv"])
            else:
                self._loaded[name] = importlib.import_module(f".{name}", __name__).DRIVER
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_PACKAGES)

    def __len__(self) -> int:
        return len(_PACKAGES)

    def __contains__(self, name: object) -> bool:
        return name in _PACKAGES


DRIVERS: Mapping[str, Driver] = _Registry()


@lru_cache(maxsize=None)
def _implementation_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every row of the core's tables, as is and through the reorder route; each peer
    backend's name prefix, `torch:`)."""
    from .. import backends, core
    from ..common.reorders import ROUTE_SUFFIX

    rows = [impl.name for table in (core.conv_impls, core.eltwise_impls, core.pool_impls,
                                    core.reorder_impls, core.softmax_impls, core.sum_impls,
                                    core.concat_impls, core.binary_impls,
                                    core.bnorm_impls)
            for impl in table()]
    peers = tuple(f"{name}:" for name in backends.BACKENDS if name != backends.NATIVE)
    return (*rows, *(row + ROUTE_SUFFIX for row in rows)), peers


def names_an_implementation(part: str) -> bool:
    """Whether `part` is part of an implementation name that a case of any driver can
    report: a row of the core's tables, as is or through the reorder route, or a peer
    backend's (`torch:` and its version). A filter name that is not filters nothing."""
    rows, peers = _implementation_names()
    return (any(part in row for row in rows)
            or any(part in peer or part.startswith(peer) for peer in peers))
