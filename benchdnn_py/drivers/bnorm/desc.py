"""Batch normalization problem descriptors: ``mbXicXidXihXiwXepsYn"name"`` (benchdnn's
grammar).

Parsing follows benchdnn: on each pass over the token the keys mb, ic, id, ih, iw and eps
are tried in that order, each taking the number that follows it; then ``n`` starts the
name, which runs to the end of the token, and a single ``_`` is skipped. A pass that
matches no key is an error naming where it stopped. Defaults: mb 2, eps 1/16; ic is
required. The rank comes from the spatial sizes given: id makes a 3D problem (ih and iw
both given, or both taken from id), ih a 2D one (iw taken from ih when missing), iw alone
a 1D one, none a 0D one (mb x ic).

Printing gives the short form (mb and eps only when not their defaults, a square or cubic
problem's one size) or, canonical, every field of the rank; eps prints as the shortest
text that reads back to the same f32. Parsing the printed text gives the same problem.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ...engine.options import ascii_number
from ...errors import ProblemError

DEFAULT_MB = 2
DEFAULT_EPS = 1.0 / 16
KEYS = ("mb", "ic", "id", "ih", "iw", "eps")
_INT = re.compile(r"\s*[+-]?[0-9]+")
# what C's strtof reads: decimal with an optional exponent, inf, nan
_FLOAT = re.compile(r"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|inf(?:inity)?|nan)", re.I)


@dataclasses.dataclass(frozen=True)
class BnormDesc:
    mb: int
    ic: int
    id: int
    ih: int
    iw: int
    eps: float
    name: str
    ndims: int            # 2 (0D) to 5 (3D)

    @property
    def dims(self) -> tuple[int, ...]:
        """Logical dims: mb, ic, then the rank's spatial sizes."""
        return (self.mb, self.ic) + (self.id, self.ih, self.iw)[5 - self.ndims:]

    @property
    def spatial(self) -> int:
        return self.id * self.ih * self.iw

    def with_mb(self, mb: int) -> "BnormDesc":
        return dataclasses.replace(self, mb=mb)

    def format(self, canonical: bool = False) -> str:
        n = self.ndims
        square, cubic = self.ih == self.iw, self.id == self.ih == self.iw
        out = f"mb{self.mb}" if canonical or self.mb != DEFAULT_MB else ""
        out += f"ic{self.ic}"
        if n == 5:
            out += f"id{self.id}"
        if n == 4 or (n == 5 and (not cubic or canonical)):
            out += f"ih{self.ih}"
        if n == 3 or (n == 5 and (not cubic or canonical)) \
                or (n == 4 and (not square or canonical)):
            out += f"iw{self.iw}"
        if canonical or self.eps != np.float32(DEFAULT_EPS):
            out += "eps" + str(np.float32(self.eps))
        return out + (f"n{self.name}" if self.name else "")

    __str__ = format


def parse_desc(text: str) -> BnormDesc:
    values = {"mb": DEFAULT_MB, "ic": 0, "id": 0, "ih": 0, "iw": 0, "eps": DEFAULT_EPS}
    name, pos = "", 0
    while pos < len(text):
        matched = False
        for key in KEYS:
            if not text.startswith(key, pos):
                continue
            matched = True
            pos += len(key)
            m = (_FLOAT if key == "eps" else _INT).match(text, pos)
            if not m:
                raise ProblemError(f"`{text}`: no value found for `{key}`")
            try:
                value = (float if key == "eps" else int)(ascii_number(m.group(0).strip()))
            except ValueError:
                raise ProblemError(f"`{text}`: no value found for `{key}`") from None
            if value < 0:
                raise ProblemError(f"`{text}`: `{key}` must be positive")
            values[key] = value
            pos = m.end()
        if text.startswith("n", pos):
            name = text[pos + 1:]
            break
        if text.startswith("_", pos):
            pos += 1
        if not matched:
            raise ProblemError(f"`{text}`: unrecognized pattern starting from "
                               f"`{text[pos:]}`")
    if values["ic"] <= 0:
        raise ProblemError(f"`{text}`: `ic` was not specified or set to 0")
    d, h, w = values["id"], values["ih"], values["iw"]
    ndims = 5 - (d == 0) - (d == 0 and h == 0) - (d == 0 and h == 0 and w == 0)
    if ndims == 5:
        if h == 0 and w == 0:
            h = w = d
        elif h == 0 or w == 0:
            raise ProblemError(f"`{text}`: give both `ih` and `iw`, or neither, with `id`")
    elif ndims == 4 and w == 0:
        w = h
    d, h, w = (d if ndims == 5 else 1), (h if ndims >= 4 else 1), (w if ndims >= 3 else 1)
    return BnormDesc(values["mb"], values["ic"], d, h, w, float(np.float32(values["eps"])),
                     name, ndims)
