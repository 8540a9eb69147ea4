"""Softmax problem descriptors: dims joined by `x` (logical N, C, D, H, W; fewer dims by
leaving trailing ones out), optionally named (common/dims.py), and the axis the operation
runs along, which splits them into the dims before it, its own, and those after it."""

from __future__ import annotations

import math

from ...common.dims import Dims, parse_dims
from ...errors import ProblemError

__all__ = ["Dims", "parse_dims", "check_axis", "split"]


def check_axis(dims: tuple[int, ...], axis: int) -> None:
    """ProblemError naming --axis unless it is one of the dims."""
    if not 0 <= axis < len(dims):
        raise ProblemError(f"--axis={axis}: the problem has {len(dims)} dims "
                           f"(axis 0 to {len(dims) - 1})")


def split(dims: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(outer, axis, inner) in logical order: the sizes before, of, and after the axis."""
    return math.prod(dims[:axis]), dims[axis], math.prod(dims[axis + 1:])
