"""The dims descriptor of the drivers whose problem is a tensor's shape (eltwise, softmax, sum,
reorder; benchdnn reference 9.1, 9.2).

A descriptor is dims joined by `x` (`50x192x55x55`, logical order N, C, then spatial),
optionally followed by a name: `2x16x7x7_n"relu_small"` (the `_` is optional). It prints
back as `AxBxC` plus `_n<name>`. --mb replaces dims[0].
"""

from __future__ import annotations

import dataclasses
import re

from ..errors import ProblemError

_DESC = re.compile(r"([0-9]+(?:x[0-9]+)*)(?:_?n(.*))?")


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
