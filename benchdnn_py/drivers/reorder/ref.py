"""The reorder reference: the formula, element by element in logical order, in f32 steps
(benchdnn reference 9.1):

    dst = (src * src_scale + sum_scale * dst_prior) / dst_scale

each operation rounded to f32 on its own; rounding and saturation to the destination type
are the comparison's (check.round_to_dt). Layouts play no part: the driver places values
with the layout module's offsets, independently of the kernel's loop nests.
"""

from __future__ import annotations

import numpy as np


def reorder(src: np.ndarray, src_scale: float, dst_scale: float,
            sum_scale: float | None, dst_prior: np.ndarray | None) -> np.ndarray:
    v = src.astype(np.float32)
    if src_scale != 1.0:
        v = v * np.float32(src_scale)
    if sum_scale is not None:
        v = v + np.float32(sum_scale) * dst_prior.astype(np.float32)
    if dst_scale != 1.0:
        v = v / np.float32(dst_scale)
    return v
