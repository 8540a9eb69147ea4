"""Memory formats of a convolution's (or deconvolution's) tensors: --stag, --wtag, --dtag
and --strides=SRC:WEI:DST (benchdnn reference 3.1, 6.5; the tags and strides themselves
are layout.py's).

Data flow, as in oneDNN and benchdnn:

* the user's data is made in the plain layout of each tensor's logical dims (``user``:
  the fill, as without formats);
* it is reordered, by this project's reorder kernels and outside the timed region, into
  the layout the primitive is given (``memory``): the requested one, or for ``any`` the
  one the implementation picks (the executor's ``layouts``). Input buffers start as
  poison, so that a primitive that reads the gaps of non-dense strides reads NaN;
* the primitive runs (the timed region);
* each output is read back through its layout's offsets (numpy, never the reorder
  kernel), compared point by point, and its memory beyond the points checked
  (check.memory_faults: the padded tail of a blocked layout is zero, the gaps of
  non-dense strides untouched).

Weights have the dims (g, oc/g, ic/g, spatial...) with groups, (oc, ic, spatial...)
without; src and dst (mb, channels, spatial...). Bias is always plain.
"""

from __future__ import annotations

import dataclasses

from ...common import layout
from ...errors import ProblemError

ANY = layout.parse_tag("any")
# tensor -> (its tag option, its place in --strides)
OPTIONS = {"src": ("stag", 0), "wei": ("wtag", 1), "dst": ("dtag", 2)}
STRIDES_NAMES = ("SRC", "WEI", "DST")
NO_STRIDES: tuple[layout.Strides, ...] = (None, None, None)


def parse_strides_option(text: str) -> tuple[layout.Strides, ...]:
    return layout.parse_strides_option(text, STRIDES_NAMES)


@dataclasses.dataclass(frozen=True)
class Formats:
    """The tags and strides a case asks for (the options as given)."""

    stag: layout.Tag = ANY
    wtag: layout.Tag = ANY
    dtag: layout.Tag = ANY
    strides: tuple[layout.Strides, ...] = NO_STRIDES

    def tag(self, name: str) -> layout.Tag:
        return getattr(self, OPTIONS[name][0])

    @property
    def is_default(self) -> bool:
        return self == Formats()

    def repro(self) -> list[str]:
        """The options that differ from the defaults, in benchdnn's order."""
        parts = [f"--{opt}={self.tag(name)}" for name, (opt, _) in OPTIONS.items()
                 if not self.tag(name).is_any]
        if self.strides != NO_STRIDES:
            parts.append(f"--strides={layout.format_strides(self.strides)}")
        return parts


def formats_of(values) -> Formats:
    return Formats(values["stag"], values["wtag"], values["dtag"], values["strides"])


ROLES = {"src": "src: mb, ic, spatial", "dst": "dst: mb, oc, spatial"}


def requested(formats: Formats, name: str, dims: tuple[int, ...],
              has_groups: bool) -> layout.Layout | None:
    """The layout asked for tensor name (src, wei, dst) of these logical dims; None for
    `any`. ProblemError, one line naming the option and the token, when the tag does not
    fit the tensor's rank, the strides are invalid, or both a tag and strides are given."""
    opt, k = OPTIONS[name]
    tag, strides = formats.tag(name), formats.strides[k]
    role = ROLES.get(name) or ("weights with groups: g, oc/g, ic/g, spatial" if has_groups
                               else "weights: oc, ic, spatial")
    if strides is not None:
        if not tag.is_any:
            raise ProblemError(f"--{opt}={tag} and --strides give {name} both a tag and "
                               f"strides; give one")
        if len(strides[0]) != len(dims):
            raise ProblemError(f"--strides={layout.format_strides(formats.strides)}: "
                               f"{len(strides[0])} strides for {name}, which has "
                               f"{len(dims)} dims ({role.split(': ')[1]})")
        try:
            return layout.strided_layout(dims, strides[0], strides[1])
        except ProblemError as exc:
            raise ProblemError(f"--strides, {name}: {exc}") from None
    if tag.is_any:
        return None
    try:
        return tag.layout(dims)
    except ProblemError as exc:
        raise ProblemError(f"--{opt}={tag}: {exc} ({role})") from None


def shown(formats: Formats, name: str, lay: layout.Layout) -> str:
    """A tensor's layout for -v5: `any=<chosen>`, the tag as given with its canonical
    form, or the strides; then the padded dims when padding exists."""
    tag = formats.tag(name)
    if formats.strides[OPTIONS[name][1]] is not None:
        text = f"strides {lay.describe()}"
    elif tag.is_any:
        text = f"any={lay.describe()}"
    else:
        text = f"{tag}={tag.canonical(lay.ndims)}"
    if lay.padded_dims != lay.dims:
        text += f" padded {'x'.join(map(str, lay.padded_dims))}"
    return text
