"""Eltwise problem descriptors and memory tags (benchdnn reference 9.1, 9.2).

A descriptor is dims joined by `x` (`50x192x55x55`, logical order N, C, then spatial),
optionally followed by a name: `2x16x7x7_n"relu_small"` (the `_` is optional). It prints
back as `AxBxC` plus `_n<name>`. --mb replaces dims[0].

Tags: `abx` (plain, dims in logical order) and `axb` (channels last) are the layouts these
drivers run, with their per-rank spellings (nchw, nhwc, ...). Blocked tags (an upper-case
letter or a digit, e.g. aBx16b, nChw16c) are recognised and reported UNIMPLEMENTED: they
belong to the formats work.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ...errors import ProblemError, UsageError

_DESC = re.compile(r"(\d+(?:x\d+)*)(?:_?n(.*))?")


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


# Per-rank spellings of the two plain layouts (benchdnn's meta tags abx/axb).
_NAMED = {"nc": "abx", "ncw": "abx", "nchw": "abx", "ncdhw": "abx",
          "nwc": "axb", "nhwc": "axb", "ndhwc": "axb", "x": "abx", "a": "abx"}
_PLAIN = re.compile(r"[a-l]+")


@dataclasses.dataclass(frozen=True)
class Tag:
    text: str          # as given (printed back in the repro)
    kind: str          # "abx", "axb", or "blocked"

    def __str__(self) -> str:
        return self.text


def parse_tag(text: str) -> Tag:
    if text in ("abx", "axb", "any"):
        return Tag(text, "abx" if text == "any" else text)
    if text in _NAMED:
        return Tag(text, _NAMED[text])
    if _PLAIN.fullmatch(text):
        letters = "abcdefghijkl"[:len(text)]
        if text == letters:
            return Tag(text, "abx")
        if len(text) >= 3 and text == letters[0] + letters[2:] + letters[1]:
            return Tag(text, "axb")
    if re.fullmatch(r"[a-lA-L]+(\d+[a-l])+|[a-lA-L]*[A-L][a-lA-L]*", text) or \
            re.fullmatch(r"[a-z]*[A-Z][a-zA-Z]*\d+[a-z](\d+[a-z])*", text):
        return Tag(text, "blocked")
    raise UsageError(f"--tag={text}: unknown memory tag; expected abx, axb, a plain tag "
                     f"like nchw/nhwc/acdb, or a blocked tag like aBx16b")


def to_memory(logical, tag: Tag):
    """The tensor in the tag's memory order (a contiguous copy for axb)."""
    if tag.kind == "axb" and logical.ndim >= 3:
        return np.ascontiguousarray(np.moveaxis(logical, 1, -1))
    return np.ascontiguousarray(logical)


def from_memory(memory, logical_shape: tuple[int, ...], tag: Tag):
    """A memory-order buffer viewed back in logical order."""
    if tag.kind == "axb" and len(logical_shape) >= 3:
        mem_shape = (logical_shape[0],) + logical_shape[2:] + (logical_shape[1],)
        return np.moveaxis(memory.reshape(mem_shape), -1, 1)
    return memory.reshape(logical_shape)
