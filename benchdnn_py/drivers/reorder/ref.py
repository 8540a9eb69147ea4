"""The reorder reference: the formula, element by element in logical order, in f32 steps
(benchdnn reference 9.1, oneDNN's reorder with zero points):

    dst = ((src - src_zp) * src_scale + sum_scale * (dst_prior - dst_zp)) / dst_scale + dst_zp

each operation rounded to f32 on its own; a scale or zero point is one value or an array
broadcast over the tensor (its mask's dims). Rounding and saturation to the destination
type are the comparison's (check.round_to_dt). Layouts play no part: the driver places
values with the layout module's offsets, independently of the kernel's loop nests.
"""

from __future__ import annotations

import numpy as np


def reorder(src: np.ndarray, src_scale, dst_scale, sum_scale: float | None,
            dst_prior: np.ndarray | None, src_zp=0, dst_zp: int = 0) -> np.ndarray:
    f32 = np.float32
    v = src.astype(f32) - np.asarray(src_zp, f32)
    v = v * np.asarray(src_scale, f32)
    if sum_scale is not None:
        v = v + f32(sum_scale) * (dst_prior.astype(f32) - f32(dst_zp))
    v = v / np.asarray(dst_scale, f32)
    return v + f32(dst_zp)
