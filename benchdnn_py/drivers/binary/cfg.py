"""Per-data-type numbers of the binary driver, each with its reason, and its fill
(benchdnn's binary method, reference 6.4 and 6.7).

The fill draws integers from [max(-8, the type's lowest), 8]: src0 takes half of each
(values in 0.5 steps, rounded to the integer types), src1 the integers with 0 replaced by
1 (a divisor), select's condition (src2) [0, 8], and a sum's prior dst the integers. All
are exact in every type, and OP of two of them, scaled by powers of two, is exact in f32,
so the kernels' f32 math and the double reference agree before the final rounding. The
threshold is benchdnn's: dst's epsilon (one rounding into dst), 0 for integer dsts, which
are exact after saturation and rounding.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...common import fill


@dataclasses.dataclass(frozen=True)
class DtCfg:
    eps: float           # machine epsilon (benchdnn's epsilon_dt)
    lowest: int          # the fill's floor is max(-8, lowest)
    integral: bool = False


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(eps=2.0**-23, lowest=-8),
    "bf16": DtCfg(eps=2.0**-7, lowest=-8),
    "f16": DtCfg(eps=2.0**-10, lowest=-8),
    "s32": DtCfg(eps=0.0, lowest=-8, integral=True),
    "s8": DtCfg(eps=0.0, lowest=-8, integral=True),
    # unsigned: no negative values
    "u8": DtCfg(eps=0.0, lowest=0, integral=True),
}

HIGHEST = 8
# Comparisons write 0 for every false: a mostly-zero dst is their right answer (benchdnn
# trusts up to 99 % zeros for them; otherwise its default, common/post_ops.py).
ZERO_TRUST_PERCENT_COMPARISON = 99.0


def threshold(ddt: str) -> float:
    return CFG[ddt].eps


def fill_input(n: int, index: int, dt: str) -> np.ndarray:
    """Input `index`'s n values (0: src0, 1: src1, 2: select's condition) as f32 values
    exact in dt (the condition is s8)."""
    lo = 0 if index == 2 else max(-HIGHEST, CFG[dt].lowest)
    k = fill.int_fill(n, fill.Kind.MULTI_SRC + index, lo, HIGHEST)
    if index == 0:
        k = k * np.float32(0.5)
    elif index == 1:
        k[k == 0] = 1
    return to_dt(k, dt)


def fill_prior(n: int, dt: str) -> np.ndarray:
    """A sum post-op's prior dst: n integers in dt's part of [-8, 8]."""
    return fill.int_fill(n, fill.Kind.DST, max(-HIGHEST, CFG[dt].lowest), HIGHEST)


# the fill as a tensor of dt holds it
to_dt = fill.exact_in
