"""Binary problem descriptors: two tensors' dims joined by `:` (`8x8x3x5:8x1x3x5`),
optionally named (`_n"name"`), as common/dims.py parses them. src1 may have fewer dims
than src0: its missing trailing dims are 1 (`15x12x3x5:15` is `15x12x3x5:15x1x1x1`, and
prints so, as benchdnn prints it). Along each dim the tensors agree or one of them is 1
(broadcast); dst takes the larger size, or 0 where either is 0."""

from __future__ import annotations

import dataclasses

from ...common.dims import MultiDims, parse_multi_dims
from ...core import MAX_BINARY_NDIMS
from ...errors import ProblemError

BinaryDims = MultiDims


def parse_binary(text: str) -> BinaryDims:
    desc = parse_multi_dims(text, "8x8x3x5:8x1x3x5")
    if len(desc.srcs) != 2:
        raise ProblemError(f"`{text}`: binary takes exactly two tensors' dims (A0xA1x...:"
                           "B0xB1x...)")
    d0, d1 = desc.srcs
    if len(d1) > len(d0):
        raise ProblemError(f"`{text}`: src1 has more dims than src0 ({len(d1)} > {len(d0)})")
    if len(d0) > MAX_BINARY_NDIMS:
        raise ProblemError(f"`{text}`: at most {MAX_BINARY_NDIMS} dims")
    desc = dataclasses.replace(desc, srcs=(d0, d1 + (1,) * (len(d0) - len(d1))))
    check_broadcast(desc)
    return desc


def check_broadcast(desc: BinaryDims) -> None:
    """ProblemError naming the first dim along which the tensors neither agree nor
    broadcast."""
    for d, (a, b) in enumerate(zip(*desc.srcs)):
        if a != b and 1 not in (a, b):
            raise ProblemError(f"`{desc}`: dim {d} is {a} in src0 and {b} in src1; they "
                               "must agree, or one be 1 (broadcast)")


def dst_dims(desc: BinaryDims) -> tuple[int, ...]:
    return tuple(0 if 0 in (a, b) else max(a, b) for a, b in zip(*desc.srcs))
