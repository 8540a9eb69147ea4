"""Concat problem descriptors: each source's dims joined by `x`, the sources joined by `:`
(`6x48x3x4:6x32x3x4`), optionally named (`_n"name"`). The sources have one rank and agree
on every dim but the axis; dst's dims are theirs with the axis summed. A dim may be 0: a
source empty along the axis adds nothing, and a 0 elsewhere makes every tensor empty.
--mb replaces every source's first dim."""

from __future__ import annotations

from ...common import layout
from ...common.dims import MultiDims, parse_multi_dims
from ...errors import ProblemError

ConcatDims = MultiDims


def dst_dims(desc: ConcatDims, axis: int) -> tuple[int, ...]:
    first = desc.srcs[0]
    return first[:axis] + (sum(d[axis] for d in desc.srcs),) + first[axis + 1:]


def parse_concat(text: str) -> ConcatDims:
    desc = parse_multi_dims(text, "2x16x3x4:2x8x3x4")
    if len({len(d) for d in desc.srcs}) != 1:
        raise ProblemError(f"`{text}`: the sources differ in rank")
    return desc


def check_axis(desc: ConcatDims, axis: int) -> None:
    """ProblemError naming --axis unless it is one of the dims and the only one along which
    the sources differ."""
    ndims = len(desc.srcs[0])
    if not 0 <= axis < ndims:
        raise ProblemError(f"--axis={axis}: the problem has {ndims} dims (axis 0 to "
                           f"{ndims - 1})")
    for dims in desc.srcs[1:]:
        other = [d for d in range(ndims) if d != axis and dims[d] != desc.srcs[0][d]]
        if other:
            raise ProblemError(f"`{desc}`: the sources differ along dim {other[0]}, not "
                               f"only along --axis={axis}")


def order_tag(order: tuple[int, ...]) -> str:
    """The plain tag of a memory order (dims outermost first): (0, 2, 3, 1) is acdb."""
    return "".join(layout.LETTERS[d] for d in order)
