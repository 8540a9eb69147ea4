"""Concat problem descriptors: each source's dims joined by `x`, the sources joined by `:`
(`6x48x3x4:6x32x3x4`), optionally named (`_n"name"`). The sources have one rank and agree
on every dim but the axis; dst's dims are theirs with the axis summed. A dim may be 0: a
source empty along the axis adds nothing, and a 0 elsewhere makes every tensor empty.
--mb replaces every source's first dim."""

from __future__ import annotations

import dataclasses
import re

from ...common import layout
from ...errors import ProblemError

_DESC = re.compile(r"([0-9]+(?:x[0-9]+)*(?::[0-9]+(?:x[0-9]+)*)+)(?:_?n(.*))?")


@dataclasses.dataclass(frozen=True)
class ConcatDims:
    srcs: tuple[tuple[int, ...], ...]
    name: str = ""

    def with_mb(self, mb: int) -> "ConcatDims":
        return dataclasses.replace(self, srcs=tuple((mb,) + d[1:] for d in self.srcs))

    def format(self, canonical: bool = False) -> str:
        text = ":".join("x".join(map(str, d)) for d in self.srcs)
        return text + (f"_n{self.name}" if self.name else "")

    __str__ = format

    def dst(self, axis: int) -> tuple[int, ...]:
        first = self.srcs[0]
        return first[:axis] + (sum(d[axis] for d in self.srcs),) + first[axis + 1:]


def parse_concat(text: str) -> ConcatDims:
    m = _DESC.fullmatch(text)
    if not m:
        raise ProblemError(f"`{text}`: expected two sources' dims or more, joined by `:` "
                           "(like 2x16x3x4:2x8x3x4), optionally followed by _n\"name\"")
    srcs = tuple(tuple(int(d) for d in part.split("x")) for part in m.group(1).split(":"))
    if len({len(d) for d in srcs}) != 1:
        raise ProblemError(f"`{text}`: the sources differ in rank")
    return ConcatDims(srcs, m.group(2) or "")


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
