"""The driver registry: the one place a driver is made known (--NAME on the command line)."""

from __future__ import annotations

from .base import Driver
from .conv import DRIVER as _CONV
from .deconv import DRIVER as _DECONV
from .eltwise import DRIVER as _ELTWISE
from .graph import make_driver as _graph_on
from .pool import DRIVER as _POOL
from .reorder import DRIVER as _REORDER

DRIVERS: dict[str, Driver] = {
    "conv": _CONV,
    "graph": _graph_on(_CONV),
    "deconv": _DECONV,
    "eltwise": _ELTWISE,
    "pool": _POOL,
    "reorder": _REORDER,
}
