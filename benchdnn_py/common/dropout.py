"""The dropout attribute's reference (oneDNN's attribute, `--attr-dropout`): which elements
are kept, and the kept elements' scaling.

oneDNN defines dropout as a step between a primitive's result and its post-ops:
mask = draw(seed, offset, i) > P and dst = mask * dst / (1 - P), with the draw a Philox
generator. The kernels' definition (kernels/include/bdnn_eltwise.h, common/dropout.h),
written here again from the published algorithm and sharing no code with them:

  - The draw for element i (its offset in dst's memory) is word i mod 4 of Philox4x32-10
    (Salmon et al., SC 2011) applied to the counter (offset low, offset high, (i & ~3)
    low, (i & ~3) high) under the key (seed low, seed high): oneDNN's 64-bit arrangement.
  - The element is kept when the draw, in double, exceeds P * (2^32 - 1), and then scaled
    by 1 / (1 - P) (0 when P = 1); a dropped element is 0.
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
# Philox4x32's round multipliers and its key schedule's Weyl increments
MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
KEY_STEPS = (0x9E3779B9, 0xBB67AE85)
ROUNDS = 10


def philox4x32(counter: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
               key: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """Philox4x32-10 of each counter (four arrays of 32-bit words) under key (two words):
    its four output words, as uint64 arrays. Round: (x0, x1, x2, x3) -> (hi(M1 x2) ^ x1 ^
    k0, lo(M1 x2), hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)); the key grows by the Weyl steps
    between rounds."""
    x0, x1, x2, x3 = (np.asarray(c, np.uint64) & np.uint64(MASK32) for c in counter)
    m0, m1 = (np.uint64(m) for m in MULTIPLIERS)
    for r in range(ROUNDS):
        k0 = np.uint64((key[0] + r * KEY_STEPS[0]) & MASK32)
        k1 = np.uint64((key[1] + r * KEY_STEPS[1]) & MASK32)
        p0, p1 = m0 * x0, m1 * x2        # 32 x 32 bits: exact in 64
        x0, x1, x2, x3 = ((p1 >> np.uint64(32)) ^ x1 ^ k0, p1 & np.uint64(MASK32),
                          (p0 >> np.uint64(32)) ^ x3 ^ k1, p0 & np.uint64(MASK32))
    return x0, x1, x2, x3


def draws(index: np.ndarray, seed: int, offset: int) -> np.ndarray:
    """The 32-bit draw of each element index (uint64 array)."""
    i = np.asarray(index, np.uint64)
    base = i & ~np.uint64(3)
    seed64, offset64 = seed % 2**64, offset % 2**64
    words = philox4x32((np.full(i.shape, offset64 & MASK32), np.full(i.shape, offset64 >> 32),
                        base & np.uint64(MASK32), base >> np.uint64(32)),
                       (seed64 & MASK32, seed64 >> 32))
    lane = (i & np.uint64(3)).astype(np.intp)
    return np.choose(lane, words)


def keep_mask(index: np.ndarray, p: float, seed: int, offset: int) -> np.ndarray:
    """Which elements dropout keeps (bool, index's shape)."""
    return draws(index, seed, offset).astype(np.float64) > float(p) * float(MASK32)


def apply(x: np.ndarray, keep: np.ndarray, p: float, ftype: type = np.float64) -> np.ndarray:
    """x after dropout, computed in ftype (returned as double): the kept elements times
    1 / (1 - p), the others 0. ftype float32 takes the steps of a kernel computing in f32,
    x rounded and the factor rounded (a post-op chain's reference starts from them)."""
    one = ftype(1.0)
    inv_q = one / (one - ftype(p)) if p != 1.0 else ftype(0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(keep, np.asarray(x).astype(ftype) * inv_q, ftype(0.0)).astype(
            np.float64)
