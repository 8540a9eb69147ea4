"""Per-data-type numbers of the concat driver and its fill (benchdnn's concat method,
reference 6.4 and 6.7).

Concatenation copies: every output is its source's value times the source's scale,
rounded once to dst's type, so the threshold is 0 for every type. The fill draws integers
from the range both types hold (-128 to 255, narrowed to an s8 or u8 end), rounded to the
source's type: a copy that dropped, duplicated or shifted an element changes a value.
"""

from __future__ import annotations

import numpy as np

from ...common import fill

TYPES = ("f32", "bf16", "f16", "s32", "s8", "u8", "f8_e5m2", "f8_e4m3")
INTEGRAL = ("s32", "s8", "u8")
EPS = {"f32": 2.0**-23, "bf16": 2.0**-7, "f16": 2.0**-10, "f8_e5m2": 2.0**-2,
       "f8_e4m3": 2.0**-3}
PERF_RANGE = (-64.0, 64.0)


def fill_range(sdt: str, ddt: str) -> tuple[int, int]:
    """Integers both types hold: s8's upper end and u8's lower one where either is one."""
    lo, hi = -128, 255
    if "s8" in (sdt, ddt):
        hi = 127
    if "u8" in (sdt, ddt):
        lo = 0
    return lo, hi


def fill_source(n: int, index: int, sdt: str, ddt: str) -> np.ndarray:
    """Source index's n values (f32, exact in sdt), seeded by its index."""
    return to_dt(fill.int_fill(n, fill.Kind.MULTI_SRC + index, *fill_range(sdt, ddt)), sdt)


def perf_values(n: int, index: int, sdt: str) -> np.ndarray:
    return to_dt(fill.real_fill(n, fill.Kind.MULTI_SRC + index, *PERF_RANGE), sdt)


# the fill as a tensor of dt holds it
to_dt = fill.exact_in
