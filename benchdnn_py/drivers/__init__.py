"""The driver registry: the one place a driver is made known (--NAME on the command line)."""

from __future__ import annotations

from functools import lru_cache

from .base import Driver
from .binary import DRIVER as _BINARY
from .bnorm import DRIVER as _BNORM
from .concat import DRIVER as _CONCAT
from .conv import DRIVER as _CONV
from .deconv import DRIVER as _DECONV
from .eltwise import DRIVER as _ELTWISE
from .graph import make_driver as _graph_on
from .ip import DRIVER as _IP
from .pool import DRIVER as _POOL
from .reorder import DRIVER as _REORDER
from .softmax import DRIVER as _SOFTMAX
from .sum import DRIVER as _SUM

DRIVERS: dict[str, Driver] = {
    "conv": _CONV,
    "graph": _graph_on(_CONV),
    "deconv": _DECONV,
    "eltwise": _ELTWISE,
    "pool": _POOL,
    "reorder": _REORDER,
    "softmax": _SOFTMAX,
    "sum": _SUM,
    "concat": _CONCAT,
    "binary": _BINARY,
    "ip": _IP,
    "bnorm": _BNORM,
}


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
