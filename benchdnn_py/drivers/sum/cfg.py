"""Per-data-type numbers of the sum driver, each with its reason, and its fill
(benchdnn's sum method, reference 6.4 and 6.7).

The fill gives each source sixteen values per type: multiples of 1.25 from -10 (0 for u8)
for f32 and the integers (rounded to the integer types), multiples of 1/16 from -0.5 for
bf16 and f16, so that the scaled terms and their f32 sums are exact for the scales a
batch uses (powers of two and their small multiples). The threshold is benchdnn's: the
dst type's epsilon times the number of sources (one rounding per term for a computation
in that type); 0 for integer dsts, which are exact after saturation and rounding.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...common import fill


@dataclasses.dataclass(frozen=True)
class DtCfg:
    eps: float                     # machine epsilon (benchdnn's epsilon_dt)
    step: float                    # the fill's spacing
    perf: tuple[float, float]      # performance-mode fill range
    integral: bool = False


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(eps=2.0**-23, step=1.25, perf=(-16.0, 16.0)),
    # 1/16 steps in [-0.5, 0.5): exact in bf16's 8-bit and f16's 11-bit significands
    "bf16": DtCfg(eps=2.0**-7, step=1.0 / 16, perf=(-1.0, 1.0)),
    "f16": DtCfg(eps=2.0**-10, step=1.0 / 16, perf=(-1.0, 1.0)),
    "s32": DtCfg(eps=0.0, step=1.25, perf=(-16.0, 16.0), integral=True),
    "s8": DtCfg(eps=0.0, step=1.25, perf=(-16.0, 16.0), integral=True),
    "u8": DtCfg(eps=0.0, step=1.25, perf=(0.0, 32.0), integral=True),
}

RANGE = 16     # values per source


def threshold(ddt: str, n_src: int) -> float:
    return CFG[ddt].eps * n_src


def fill_source(n: int, index: int, dt: str) -> np.ndarray:
    """Source index's n values (f32, exact in dt), seeded by its index."""
    lo = 0 if dt == "u8" else -RANGE // 2
    k = fill.int_fill(n, fill.Kind.MULTI_SRC + index, lo, lo + RANGE - 1)
    return to_dt(k * np.float32(CFG[dt].step), dt)


def perf_values(n: int, index: int, dt: str) -> np.ndarray:
    return to_dt(fill.real_fill(n, fill.Kind.MULTI_SRC + index, *CFG[dt].perf), dt)


# the fill as a tensor of dt holds it
to_dt = fill.exact_in
