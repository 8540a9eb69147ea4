"""Reorder problems: dims, the two layouts, and --strides (benchdnn reference 9.1, 3.1).

A descriptor is dims joined by `x` (`2x64x3x3`, any rank up to 6), optionally followed by
a name (`_n"name"`), as eltwise's. Tags and strides are benchdnn_py/layout.py's; this
module only ties them to the options: `--stag`/`--dtag` name each tensor's layout and
`--strides=SRC:DST` gives plain strides instead (one colon; either side may be empty).
"""

from __future__ import annotations

from ...common import layout
from ...common.dims import Dims
from ...common.dims import parse_dims as _parse_dims
from ...errors import ProblemError

Strides = layout.Strides
tag_option = layout.tag_option


def parse_dims(text: str) -> Dims:
    dims = _parse_dims(text)
    if len(dims.dims) > layout.MAX_NDIMS:
        raise ProblemError(f"`{text}`: {len(dims.dims)} dims; at most {layout.MAX_NDIMS}")
    return dims


def parse_strides_option(text: str) -> tuple[Strides, Strides]:
    """--strides=SRC:DST, each side `S0xS1x...[@OFFSET]` or empty."""
    return layout.parse_strides_option(text, ("SRC", "DST"))


format_strides = layout.format_strides


DEFAULT_TAG = "abx"


def tensor_layout(which: str, tag: layout.Tag, strides: Strides,
                  dims: tuple[int, ...]) -> layout.Layout:
    """The layout of src or dst: strides when given (then the tag must be the default),
    else the tag; `any` is the plain layout (a reorder has nothing better to choose)."""
    opt = "stag" if which == "src" else "dtag"
    if strides is not None:
        if tag.text != DEFAULT_TAG:
            raise ProblemError(f"--{opt}={tag} and --strides give {which} both a tag and "
                               f"strides; give one")
        try:
            return layout.strided_layout(dims, strides[0], strides[1])
        except ProblemError as exc:
            raise ProblemError(f"--strides, {which}: {exc}") from None
    if tag.is_any:
        tag = layout.parse_tag(DEFAULT_TAG)
    try:
        return tag.layout(dims)
    except ProblemError as exc:
        raise ProblemError(f"--{opt}={tag}: {exc}") from None
