"""Per-data-type numbers of the pooling driver, each with its reason (benchdnn reference
9.3, 6.4, 6.7, 6.8): one row per type that has an implementation; any other --dt is
UNIMPLEMENTED."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from ... import core

@dataclasses.dataclass(frozen=True)
class DtCfg:
    fill: tuple[int, int]          # dense integer fill (src and diff_dst)
    perf: tuple[float, float]      # performance-mode fill range (reals, then rounded)
    eps: float                     # machine epsilon of the type (0 for integers)
    integral: bool = False         # integers: saturated, forward only


CFG: dict[str, DtCfg] = {
    "f32": DtCfg(
        fill=(-2048, 2048),        # sums of up to 2**24 / 2048 = 8192 taps stay exact
        perf=(-1024.0, 1024.0),    # ordinary finite values
        eps=float(np.finfo(np.float32).eps),
    ),
    # benchdnn's range: every integer up to 256 is a bf16 value, so max selects exact
    # inputs and the f32 sums of averages stay exact; only the final rounding differs
    "bf16": DtCfg(fill=(-32, 32), perf=(-32.0, 32.0), eps=2.0**-7),
    # as bf16 (f16 holds every integer up to 2048); perf range far from overflow (65504)
    "f16": DtCfg(fill=(-32, 32), perf=(-8.0, 8.0), eps=2.0**-10),
    # integers: the type's whole range (s32: as f32, so f32 sums stay exact); averages
    # round to nearest even, exactly (threshold 0, ties by the off-by-one rule)
    "s32": DtCfg(fill=(-2048, 2048), perf=(-1024.0, 1024.0), eps=0.0, integral=True),
    "s8": DtCfg(fill=(-128, 127), perf=(-32.0, 32.0), eps=0.0, integral=True),
    "u8": DtCfg(fill=(0, 255), perf=(0.0, 64.0), eps=0.0, integral=True),
}


def lowest(dt: str) -> float:
    """The type's lowest finite value: where a max over no tap starts (reference 9.3)."""
    dtype = core.numpy_dtype(dt)
    info = np.iinfo(dtype) if dtype.kind in "iu" else ml_dtypes.finfo(dtype)
    return float(info.min)


def not_supported(dt: tuple[str, str], backward: bool) -> str | None:
    """Why the CPU implementations do not take these types (SKIPPED, Case not supported),
    or None (reference 9.3: integers forward only; backward in one type; forward may
    store another type than it reads, as benchdnn's s8:u8, f32:s8, u8:f16 ...)."""
    if backward and dt[0] != dt[1]:
        return "src and dst must have the same data type"
    if backward and CFG[dt[0]].integral:
        return f"{dt[0]} has no backward (gradients are not integers)"
    return None


def fill_range(dtc: DtCfg, is_max: bool) -> tuple[int, int]:
    """Averages get no negatives: with all terms of one sign, a sum of quotients (backward)
    cannot cancel, so its rounding error stays relative to the result."""
    return dtc.fill if is_max else (0, dtc.fill[1])


def threshold(dtc: DtCfg, is_max: bool) -> float:
    """max selects an input value: exact. Averages divide (and backward sums quotients):
    a few roundings, so 10 eps."""
    return 0.0 if is_max else 10 * dtc.eps


# Zero trust: a pooled dst is rarely 0, but backward leaves every input that wins no
# window (max) at 0, so diff_src is never mistrusted (benchdnn 6.8).
ZERO_TRUST_FWD_PERCENT = 99.0
ZERO_TRUST_BWD_PERCENT = 100.0

# An unwritten workspace entry keeps this value (benchdnn's): no tap index reaches it.
WORKSPACE_POISON = 2**24 - 1
