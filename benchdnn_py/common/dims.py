"""The dims descriptors of the drivers whose problem is tensors' shapes (benchdnn reference
9.1, 9.2).

One tensor (eltwise, softmax, sum, reorder): dims joined by `x` (`50x192x55x55`, logical
order N, C, then spatial), optionally followed by a name: `2x16x7x7_n"relu_small"` (the
`_` is optional). It prints back as `AxBxC` plus `_n<name>`. --mb replaces dims[0].

Several tensors (concat's sources, binary's inputs): each one's dims, joined by `:`
(`6x48x3x4:6x32x3x4`), then the optional name; a dim may be 0 (an empty tensor). Each
driver says how the tensors' dims relate.
"""

from __future__ import annotations

import dataclasses
import re

from ..errors import ProblemError

_DESC = re.compile(r"([0-9]+(?:x[0-9]+)*)(?:_?n(.*))?")
_MULTI = re.compile(r"([0-9]+(?:x[0-9]+)*(?::[0-9]+(?:x[0-9]+)*)+)(?:_?n(.*))?")


@dataclasses.dataclass(frozen=True)
class Dims:
    dims: tuple[int, ...]
    name: str = ""

    def with_mb(self, mb: int) -> "Dims":
        return dataclasses.replace(self, dims=(mb,) + self.dims[1:])

    def format(self, canonical: bool = False) -> str:
        text = "x".join(map(str, self.dims))
        return text + (f"_n{self.name}" if self.name else "")

    __str__ = format


def parse_dims(text: str) -> Dims:
    m = _DESC.fullmatch(text)
    if not m:
        raise ProblemError(f"`{text}`: expected dims joined by `x` (like 50x192x55x55), "
                           f"optionally followed by _n\"name\"")
    dims = tuple(int(d) for d in m.group(1).split("x"))
    if any(d <= 0 for d in dims):
        raise ProblemError(f"`{text}`: every dimension must be positive")
    return Dims(dims, m.group(2) or "")


@dataclasses.dataclass(frozen=True)
class MultiDims:
    srcs: tuple[tuple[int, ...], ...]
    name: str = ""

    def with_mb(self, mb: int, keep_ones: bool = False) -> "MultiDims":
        """dims[0] of every tensor replaced; keep_ones: not where it is 1 (a tensor
        broadcast along it stays so)."""
        return dataclasses.replace(self, srcs=tuple(
            d if keep_ones and d[0] == 1 else (mb,) + d[1:] for d in self.srcs))

    def format(self, canonical: bool = False) -> str:
        text = ":".join("x".join(map(str, d)) for d in self.srcs)
        return text + (f"_n{self.name}" if self.name else "")

    __str__ = format


def parse_multi_dims(text: str, example: str) -> MultiDims:
    """Two tensors' dims or more; example: a descriptor the error message shows."""
    m = _MULTI.fullmatch(text)
    if not m:
        raise ProblemError(f"`{text}`: expected two tensors' dims or more, joined by `:` "
                           f"(like {example}), optionally followed by _n\"name\"")
    srcs = tuple(tuple(int(d) for d in part.split("x")) for part in m.group(1).split(":"))
    return MultiDims(srcs, m.group(2) or "")
