"""Memory formats: the one place that knows format tags and strides (spec 003, benchdnn
reference 3.1, 6.5).

A *logical* tensor has dims in a fixed order (CNN activations N, C, [D, [H,]] W; weights
[G,] O, I, [D, [H,]] W). A *layout* maps each logical index to an element offset in a
1-D buffer. Two families:

* plain: an outer stride per logical dim, plus an offset (``offset0``) into a larger
  buffer. Dense plain layouts come from tags (``abcd``, ``acdb``, ``nhwc``, ``hwio``...);
  any valid strides, dense or not, from ``--strides``.
* blocked: some dims are split into an outer part (an uppercase letter in the tag) and
  inner blocks (``16b``), e.g. ``aBcd16b`` = ``nChw16c``: offset =
  ((n*Cb + c/16)*H + h)*W + w)*16 + c%16. A blocked dim is padded up to its block, and the
  padded tail belongs to the tensor: it must hold zeros.

The grammar of a tag (``parse_tag``):

* ``any``: the implementation chooses (``Tag.is_any``; ``layout`` refuses it: the caller
  resolves it first).
* canonical letter tags: the first N letters, each once, outermost first; uppercase
  letters are blocked and carry inner blocks written after them as ``NUMBERletter``,
  outermost first (``ABcd16b16a``; nested blocks like ``ABcd4b16a4b`` too).
* benchdnn's meta tags: ``x`` stands for the letters a tag leaves out, in order, at
  whatever rank the problem has: ``abx`` (plain, dims in logical order), ``axb``
  (channels last), ``aBx16b`` (``nChw16c`` at rank 4), ``xba``...
* domain aliases: the spec's CNN and RNN names (``nchw``, ``hwigo``, ``ldgoi``...) and
  their blocked forms (``nChw16c``, ``OIhw16i16o``, ``gOIhw16i16o``, ``Goihw16g``...):
  ``ALIASES`` maps each to its canonical tag.

API (for every driver; conv's --stag/--wtag/--dtag use the same calls):

    tag = parse_tag("nChw16c")          # UsageError (one line) on an unknown tag
    lay = tag.layout((2, 20, 5, 5))     # ProblemError when the rank does not fit
    lay = strided_layout((2, 3), (8, 1), offset0=4)   # ProblemError on invalid strides
    strides = parse_strides("8x1@4")    # one --strides entry: (strides, offset0) or None
    tag_option("stag"), parse_strides_option(text, ("SRC", "DST"))   # option values
    lay.same_memory(other)              # one placement of every point (no reorder needed)
    lay.padded_dims, lay.size           # padding included; never prod(dims)
    lay.offsets(idx)                    # idx: one integer array per logical dim
    lay.offset_table()                  # offsets of all logical points, shape = dims
    lay.padding_offsets()               # the padded tail, which must hold zeros (unordered)
    copy_jobs(src_lay, dst_lay), zero_jobs(dst_lay)   # affine loop nests for a reorder

Offsets are in elements, not bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re

import numpy as np

from ..errors import ProblemError, UsageError

MAX_NDIMS = 6     # format tags name up to 6 dims (spec 003)
LETTERS = "abcdef"

# -- aliases ----------------------------------------------------------------------------
#
# A CNN alias names dims by role; its canonical letter is the role's position in the
# logical order of the roles it uses: activations n c d h w, weights g o i d h w. So
# "hwigo" (roles g o i h w) is "decab", and "nChw16c" is "aBcd16b". The RNN names do not
# follow one order, so the spec's table gives them directly.
_ACT_ORDER, _WEI_ORDER = "ncdhw", "goidhw"

_CNN_PLAIN = (
    "x", "nc", "cn", "ncw", "nwc", "nchw", "nhwc", "chwn", "ncdhw", "ndhwc",
    "oi", "io", "oiw", "owi", "wio", "iwo", "oihw", "hwio", "ohwi", "ihwo", "iohw",
    "oidhw", "dhwio", "odhwi", "idhwo", "iodhw",
    "goiw", "wigo", "goihw", "hwigo", "giohw", "goidhw", "giodhw", "dhwigo",
)
# Blocked CNN forms: activations with 8- and 16-wide channel blocks, weights with input
# and output channel blocks, depthwise weights with group blocks, in 1D, 2D and 3D.
_CNN_BLOCKED = tuple(
    f"{pre}{sp}{blk}"
    for sp in ("w", "hw", "dhw")
    for pre, blk in (("nC", "8c"), ("nC", "16c"),
                     ("OI", "16i16o"), ("OI", "16o16i"), ("OI", "8i8o"), ("OI", "8o8i"),
                     ("gOI", "16i16o"), ("gOI", "16o16i"), ("gOI", "8i8o"), ("gOI", "8o8i"),
                     ("Goi", "16g"), ("Goi", "8g"))
)
_RNN = {"tn": "ab", "nt": "ba", "tnc": "abc", "ntc": "bac", "ldnc": "abcd", "ldigo": "abcde",
        "ldgoi": "abdec", "ldio": "abcd", "ldoi": "abdc", "ldgo": "abcd"}


# Any CNN alias past the enumerated ones (benchdnn's enum also has gOIhw8i16o2i,
# OIdhw4o8i2o, ...: blocks within blocks): role letters, with at least one that is no
# canonical letter, so that abc tags never read as roles.
_ROLE_TAG = re.compile(r"(?=.*[ghinowGHINOW])[ncdhwgoiNCDHWGOI]+(?:[0-9]+[ncdhwgoi])*")


def _role_pattern(text: str) -> str | None:
    if not _ROLE_TAG.fullmatch(text):
        return None
    roles = set(text.lower()) - set("0123456789")
    if not (roles <= set(_ACT_ORDER) or roles <= set(_WEI_ORDER)):
        return None
    return _from_roles(text)


def _from_roles(name: str) -> str:
    roles = set(name.lower()) - set("0123456789")
    order = _WEI_ORDER if roles & set("goi") else _ACT_ORDER
    present = [r for r in order if r in roles]
    if name == "x":
        present = ["x"]
    letter = {r: LETTERS[k] for k, r in enumerate(present)}
    return "".join(letter[ch.lower()].upper() if ch.isupper() else letter.get(ch, ch)
                   for ch in name)


ALIASES: dict[str, str] = {**{n: _from_roles(n) for n in _CNN_PLAIN + _CNN_BLOCKED}, **_RNN}

# -- parsing ----------------------------------------------------------------------------

_TAG_SHAPE = re.compile(r"([a-fA-Fx]+)((?:[0-9]+[a-f])*)")
_BLOCK = re.compile(r"([0-9]+)([a-f])")
EXPECTED_TAG = ("expected any, a plain tag (abcd, acdb, ... or nchw, nhwc, oihw, hwio, ...), "
                "abx/axb, or a blocked tag (aBcd16b = nChw16c, ABcd16b16a = OIhw16i16o, ...)")


@dataclasses.dataclass(frozen=True)
class Tag:
    """A parsed format tag. ``text`` prints back as given; ``pattern`` is the canonical
    letter form, possibly with a meta ``x`` (resolved by ``canonical(ndims)``)."""

    text: str
    pattern: str

    def __str__(self) -> str:
        return self.text

    @property
    def is_any(self) -> bool:
        return self.pattern == "any"

    def canonical(self, ndims: int) -> str:
        """The canonical letter tag at this rank; ProblemError when the rank does not fit."""
        return _canonical(self.text, self.pattern, ndims)

    def layout(self, dims: tuple[int, ...]) -> "Layout":
        return _blocked_layout(self.canonical(len(dims)), tuple(dims), self.text)


# Called for every tensor of every case: cached (a tag set is small; errors are not cached).
@functools.lru_cache(maxsize=4096)
def _canonical(text: str, pattern: str, ndims: int) -> str:
    if pattern == "any":
        raise ProblemError(f"tag `{text}`: `any` has no layout until an "
                           f"implementation picks one")
    outer, inner = _split(pattern)
    if "x" in outer:
        # below the rank the tag spells out, x is empty and plain letters past the
        # rank drop out too (abx is `a` for one dim, as in benchdnn)
        outer = "".join(c for c in outer if c == "x" or c.isupper()
                        or c in LETTERS[:ndims])
        used = set(outer.lower()) - {"x"}
        if ndims > MAX_NDIMS or ndims < len(used):
            raise ProblemError(f"tag `{text}` does not fit {ndims} dims")
        rest = "".join(c for c in LETTERS[:ndims] if c not in used)
        outer = outer.replace("x", rest)
    letters = sorted(outer.lower())
    if letters != list(LETTERS[:ndims]):
        raise ProblemError(f"tag `{text}` is for {len(letters)} dims, the problem "
                           f"has {ndims}")
    return outer + inner


def _split(pattern: str) -> tuple[str, str]:
    m = _TAG_SHAPE.fullmatch(pattern)
    assert m, pattern
    return m.group(1), m.group(2)


def _unknown(text: str, why: str = "") -> UsageError:
    return UsageError(f"unknown or invalid tag `{text}`{': ' + why if why else ''}; "
                      f"{EXPECTED_TAG}")


@functools.lru_cache(maxsize=1024)
def parse_tag(text: str) -> Tag:
    """A tag from its spelling; UsageError naming the token when it is not one."""
    if text == "any":
        return Tag(text, "any")
    pattern = ALIASES.get(text) or _role_pattern(text) or text
    m = _TAG_SHAPE.fullmatch(pattern)
    if not m:
        raise _unknown(text)
    outer, inner = m.group(1), m.group(2)
    lower = outer.lower()
    if outer.count("x") > 1 or len(set(lower)) != len(lower):
        raise _unknown(text, "a dimension letter appears twice")
    if "x" not in outer and sorted(lower) != list(LETTERS[:len(lower)]):
        raise _unknown(text, f"a {len(lower)}-dim tag uses the letters "
                             f"{LETTERS[:len(lower)]} once each")
    blocked = {b for _, b in _BLOCK.findall(inner)}
    upper = {c.lower() for c in outer if c.isupper()}
    if blocked != upper:
        raise _unknown(text, "the uppercase letters must be exactly the blocked ones")
    if any(int(n) < 1 for n, _ in _BLOCK.findall(inner)):
        raise _unknown(text, "block sizes must be positive")
    return Tag(text, pattern)


def parse_strides(text: str) -> tuple[tuple[int, ...], int] | None:
    """One tensor's --strides entry: ``S0xS1x...`` with an optional ``@OFFSET`` (the
    tensor starts OFFSET elements into its buffer: a sub-tensor); empty: none."""
    if text == "":
        return None
    m = re.fullmatch(r"([0-9]+(?:x[0-9]+)*)(?:@([0-9]+))?", text)
    if not m:
        raise UsageError(f"--strides: `{text}` is not strides; expected positive integers "
                         f"joined by x, optionally @OFFSET (like 96x1x32@5)")
    strides = tuple(int(s) for s in m.group(1).split("x"))
    if 0 in strides:
        raise UsageError(f"--strides: `{text}`: strides must be positive")
    return strides, int(m.group(2) or 0)


def tag_option(name: str):
    """The parser of a --NAME=TAG option value: a Tag, or one UsageError line naming the
    option and the token."""
    def parse(text: str) -> Tag:
        try:
            return parse_tag(text)
        except UsageError as exc:
            raise UsageError(f"--{name}={text}: {exc}") from None
    return parse


def tags_option(name: str):
    """The parser of a --NAME=TAG:TAG... option value (one tag per source of a sum or
    concat): the tags in order."""
    parse_one = tag_option(name)

    def parse(text: str) -> tuple[Tag, ...]:
        return tuple(parse_one(item) for item in text.split(":"))
    return parse


def tag_or_undef_option(name: str):
    """tag_option's parser, which also takes `undef` (None: the primitive's choice, as
    `any`; benchdnn's default dst tag of sum and concat)."""
    parse_tag_value = tag_option(name)

    def parse(text: str) -> Tag | None:
        return None if text == "undef" else parse_tag_value(text)
    return parse


Strides = tuple[tuple[int, ...], int] | None     # (strides, offset0), or none


def parse_strides_option(text: str, names: tuple[str, ...]) -> tuple[Strides, ...]:
    """--strides=A:B[:C]: one entry per tensor of names, each ``S0xS1x...[@OFFSET]`` or
    empty (the tensor's tag decides)."""
    parts = text.split(":")
    if len(parts) != len(names):
        colons = {1: "one", 2: "two"}.get(len(names) - 1, str(len(names) - 1))
        raise UsageError(f"--strides={text}: expected {':'.join(names)} ({colons} `:`), "
                         f"each strides like 96x32x1 or empty")
    try:
        return tuple(parse_strides(p) for p in parts)
    except UsageError as exc:
        raise UsageError(f"--strides={text}: {str(exc).removeprefix('--strides: ')}") \
            from None


def format_strides(strides: tuple[Strides, ...]) -> str:
    """--strides as parse_strides_option reads it back."""
    def one(s: Strides) -> str:
        if s is None:
            return ""
        return "x".join(map(str, s[0])) + (f"@{s[1]}" if s[1] else "")
    return ":".join(one(s) for s in strides)


# -- layouts ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Layout:
    """A concrete layout of a tensor with these dims (oneDNN's blocking descriptor).

    strides: per logical dim, the stride of its *outer* index (index // block), in
    elements. blocks: inner blocks (dim, size), outermost first; the inner block region
    is dense, its innermost block has stride 1. offset0: where the tensor starts.
    """

    dims: tuple[int, ...]
    strides: tuple[int, ...]
    blocks: tuple[tuple[int, int], ...] = ()
    offset0: int = 0
    name: str = ""          # how the user spelled it (tag or strides)

    @property
    def ndims(self) -> int:
        return len(self.dims)

    def block(self, d: int) -> int:
        return math.prod(s for dim, s in self.blocks if dim == d)

    @functools.cached_property
    def padded_dims(self) -> tuple[int, ...]:
        return tuple(-(-n // self.block(d)) * self.block(d) for d, n in enumerate(self.dims))

    @property
    def is_plain(self) -> bool:
        return not self.blocks

    @functools.cached_property
    def nelems(self) -> int:
        return math.prod(self.dims)

    @functools.cached_property
    def padded_nelems(self) -> int:
        return math.prod(self.padded_dims)

    @functools.cached_property
    def size(self) -> int:
        """Elements the buffer must hold: the offset, plus the span of the outer dims
        (each outer stride times its count), padding and gaps included."""
        if 0 in self.dims:
            return self.offset0
        inner = math.prod(s for _, s in self.blocks)
        span = max(p // self.block(d) * s
                   for d, (p, s) in enumerate(zip(self.padded_dims, self.strides)))
        return self.offset0 + max(span, inner)

    @functools.cached_property
    def is_dense(self) -> bool:
        return self.offset0 == 0 and self.size == self.padded_nelems

    def _digit_strides(self, d: int) -> list[tuple[int, int, int]]:
        """(divisor, size, stride) of each inner block digit of dim d."""
        out, stride = [], 1
        for dim, s in reversed(self.blocks):
            if dim == d:
                out.append((0, s, stride))
            stride *= s
        # divisors: a digit's index is (i // product of the inner digits of d) % size
        div = 1
        for k, (_, s, st) in enumerate(out):
            out[k] = (div, s, st)
            div *= s
        return out

    def dim_offsets(self, d: int, index: np.ndarray | None = None) -> np.ndarray:
        """Dim d's share of the offset of each index (offsets are a sum of one share per
        dim); default: every index of the padded dim."""
        i = np.arange(self.padded_dims[d], dtype=np.int64) if index is None else \
            np.asarray(index, np.int64)
        off = (i // self.block(d)) * self.strides[d]
        for div, size, stride in self._digit_strides(d):
            off = off + ((i // div) % size) * stride
        return off

    def offsets(self, idx) -> np.ndarray:
        """Offsets of logical indices: idx holds one integer array (or int) per dim, any
        broadcastable shapes."""
        if len(idx) != self.ndims:
            raise ValueError(f"expected {self.ndims} index arrays, got {len(idx)}")
        total = np.int64(self.offset0)
        for d, i in enumerate(idx):
            total = total + self.dim_offsets(d, i)
        return np.asarray(total, np.int64)

    def offset_table(self, padded: bool = False) -> np.ndarray:
        """Offsets of every logical point (every padded point when padded), in an array
        of that shape."""
        shape = self.padded_dims if padded else self.dims
        table = np.full((1,) * self.ndims, self.offset0, np.int64)
        for d, n in enumerate(shape):
            share = self.dim_offsets(d, np.arange(n)).reshape(
                (1,) * d + (n,) + (1,) * (self.ndims - d - 1))
            table = table + share
        return np.broadcast_to(table, shape)

    def padding_offsets(self) -> np.ndarray:
        """Offsets of the padded points that are not logical ones, each once, in no
        particular order. Built region by region (the points whose first index past its
        dim's size is dim d's), never as a whole padded table to mask and sort: a 2-channel
        tensor in 16-channel blocks is 7/8 padding."""
        parts = []
        for d, (n, p) in enumerate(zip(self.dims, self.padded_dims)):
            if n == p:
                continue
            table = np.full((1,) * self.ndims, self.offset0, np.int64)
            for e in range(self.ndims):
                index = (np.arange(self.dims[e]) if e < d else np.arange(n, p) if e == d
                         else np.arange(self.padded_dims[e]))
                table = table + self.dim_offsets(e, index).reshape(
                    (1,) * e + (index.size,) + (1,) * (self.ndims - e - 1))
            parts.append(table.ravel())
        return np.concatenate(parts) if parts else np.empty(0, np.int64)

    def same_memory(self, other: "Layout") -> bool:
        """Whether both put every point, padding included, at the same offset. The outer
        stride of a dim whose outer index is only ever 0 (a size-1 dim, or one block)
        does not matter, so `nchw` and `nhwc` are one memory when c is 1."""
        if (self.dims, self.blocks, self.offset0) != (other.dims, other.blocks, other.offset0):
            return False
        return all(a == b for d, (p, a, b) in enumerate(zip(self.padded_dims, self.strides,
                                                             other.strides))
                   if p // self.block(d) > 1)

    def describe(self) -> str:
        if self.name:
            return self.name
        return "x".join(map(str, self.strides)) + (f"@{self.offset0}" if self.offset0 else "")


@functools.lru_cache(maxsize=4096)
def _blocked_layout(canonical: str, dims: tuple[int, ...], name: str) -> Layout:
    outer, inner = _split(canonical)
    blocks = tuple((LETTERS.index(b), int(n)) for n, b in _BLOCK.findall(inner))
    lay = Layout(dims, (0,) * len(dims), blocks, 0, name)
    padded = lay.padded_dims
    stride = math.prod(s for _, s in blocks)
    strides = [0] * len(dims)
    for ch in reversed(outer):
        d = LETTERS.index(ch.lower())
        strides[d] = stride
        stride *= padded[d] // lay.block(d)
    return dataclasses.replace(lay, strides=tuple(strides))


def check_strides(dims: tuple[int, ...], strides: tuple[int, ...]) -> str | None:
    """Why strides do not fit dims (spec 003), or None. With the dims sorted by stride
    (largest first; equal strides: the larger dim first), every stride must be at least
    each later one times that one's dim: no two indices share an offset."""
    if len(strides) != len(dims):
        return f"{len(strides)} strides for {len(dims)} dims"
    if any(s < 1 for s in strides):
        return "strides must be positive"
    order = sorted(range(len(dims)), key=lambda d: (-strides[d], -dims[d]))
    for a, b in itertools.combinations(order, 2):
        if strides[a] < strides[b] * dims[b]:
            return (f"dim {a} (stride {strides[a]}) must step over dim {b} "
                    f"(stride {strides[b]} x {dims[b]} = {strides[b] * dims[b]})")
    return None


def strided_layout(dims: tuple[int, ...], strides: tuple[int, ...], offset0: int = 0,
                   name: str = "") -> Layout:
    """A plain layout from strides; ProblemError naming them when they are invalid."""
    text = name or ("x".join(map(str, strides)) + (f"@{offset0}" if offset0 else ""))
    why = check_strides(tuple(dims), tuple(strides))
    if why:
        raise ProblemError(f"strides `{text}` are invalid for dims "
                           f"{'x'.join(map(str, dims))}: {why}")
    return Layout(tuple(dims), tuple(strides), (), offset0, text)


# -- reorder loop nests -----------------------------------------------------------------
#
# A reorder visits every logical point once; the offset of a point is a sum of per-dim
# shares, so the loop order is free. Each dim is cut into pieces inside which both
# layouts' shares are affine in a few counters (the blocks of both layouts must nest:
# 8 in 16 yes, 16 and 24 no), and each combination of pieces is one job: a loop nest of
# (count, src stride, dst stride) with base offsets, the form the C kernel takes.

@dataclasses.dataclass(frozen=True)
class Job:
    # (count, src stride, dst stride, then one stride per extra operand), outer first
    loops: tuple[tuple[int, ...], ...]
    src_off: int
    dst_off: int
    zero: bool = False                        # write zeros to dst (padding), read nothing
    args: tuple[int, ...] = ()                # the extra operands' offsets of the first point


class BlocksDoNotNest(ValueError):
    pass


def _radices(d: int, *lays: Layout) -> list[int]:
    points = {1}
    for lay in lays:
        acc = 1
        for dim, s in reversed(lay.blocks):
            if dim == d:
                acc *= s
                points.add(acc)
    out = sorted(points)
    if any(b % a for a, b in zip(out, out[1:])):
        raise BlocksDoNotNest(f"blocks of dim {d} do not nest ({out})")
    return out


def _pieces(lo: int, hi: int, radices: list[int]) -> list[tuple[int, list[tuple[int, int]]]]:
    """[lo, hi) as pieces (base, [(count, multiplier), ...]): each index is base plus
    sum(counter * multiplier), no counter carrying across a radix boundary."""
    out = []
    top = len(radices) - 1
    while lo < hi:
        j = max(k for k, r in enumerate(radices) if lo % r == 0 and lo + r <= hi)
        limit = hi if j == top else min(hi, (lo // radices[j + 1] + 1) * radices[j + 1])
        q = (limit - lo) // radices[j]
        sub = [(q, radices[j])] + [(radices[i + 1] // radices[i], radices[i])
                                   for i in range(j - 1, -1, -1)]
        out.append((lo, sub))
        lo += q * radices[j]
    return out


def _job(src: Layout | None, dst: Layout, pieces, zero: bool,
         args: tuple[Layout, ...] = ()) -> Job:
    loops = []
    src_off = src.offset0 if src else 0
    dst_off = dst.offset0
    arg_offs = [a.offset0 for a in args]
    for d, (base, sub) in enumerate(pieces):
        dst0 = int(dst.dim_offsets(d, base))
        dst_off += dst0
        src0 = int(src.dim_offsets(d, base)) if src else 0
        src_off += src0
        arg0 = [int(a.dim_offsets(d, base)) for a in args]
        arg_offs = [o + a0 for o, a0 in zip(arg_offs, arg0)]
        for count, mult in sub:
            if count == 1:
                continue
            ds = int(dst.dim_offsets(d, base + mult)) - dst0
            ss = int(src.dim_offsets(d, base + mult)) - src0 if src else 0
            extra = (int(a.dim_offsets(d, base + mult)) - a0 for a, a0 in zip(args, arg0))
            loops.append((count, ss, ds, *extra))
    return Job(_order(loops), src_off, dst_off, zero, tuple(arg_offs))


def _order(loops: list[tuple[int, ...]]) -> tuple[tuple[int, ...], ...]:
    """Largest dst stride outermost (so writes stream), adjacent loops that step as one
    (in every operand) merged; then the loop along which src is contiguous goes second
    innermost, so that a transposition reads and writes whole lines (a 2D tile in the
    kernel)."""
    loops = sorted(loops, key=lambda l: (-l[2], -l[1]))
    merged: list[tuple[int, ...]] = []
    for n, *strides in loops:
        if merged:
            pn, *prev = merged[-1]
            if all(p == st * n for p, st in zip(prev, strides)):
                merged[-1] = (pn * n, *strides)
                continue
        merged.append((n, *strides))
    unit = [k for k, l in enumerate(merged) if l[1] == 1]
    if len(merged) >= 2 and unit and unit[0] < len(merged) - 2:
        merged.insert(len(merged) - 2, merged.pop(unit[0]))
    # A short run contiguous in both (nhwc -> nChw16c copies 16 elements at a time): the
    # loop that carries on src's stream goes next to it, so reads stay sequential and
    # only the writes jump (a few streams) instead of sweeping src once per block. Not
    # when that loop is only a few runs long (nChw16c -> nChw8c: 2): a unit of work
    # would be two 32-byte runs, and the default order writes dst contiguously instead.
    n, ss, ds = merged[-1][:3] if merged else (0, 0, 0)
    if ss == 1 and ds == 1 and n < SHORT_RUN:
        nxt = [k for k, l in enumerate(merged[:-1]) if l[1] == n and l[0] >= SHORT_CARRY]
        if nxt and nxt[0] < len(merged) - 2:
            merged.insert(len(merged) - 2, merged.pop(nxt[0]))
    return tuple(merged)


SHORT_RUN = 64    # elements; below it a run is too short to stream on its own
SHORT_CARRY = 4   # runs; a src-stream loop shorter than this is not worth following


def copy_jobs(src: Layout, dst: Layout, args: tuple[Layout, ...] = ()) -> list[Job]:
    """The jobs that visit every logical point of src and dst once; args: plain layouts
    of extra operands over the same dims (a stride of 0 where a value is shared: a
    reorder's per-channel scales), whose strides and offsets the jobs carry too."""
    if src.dims != dst.dims or any(a.dims != src.dims or a.blocks for a in args):
        raise ValueError(f"dims differ: {src.dims} vs {dst.dims}, "
                         f"{[a.dims for a in args]}")
    per_dim = [_pieces(0, n, _radices(d, src, dst)) for d, n in enumerate(src.dims)]
    return [_job(src, dst, combo, False, args) for combo in itertools.product(*per_dim)]


def check_nesting(src: Layout, dst: Layout) -> None:
    """BlocksDoNotNest when copy_jobs cannot pair the two layouts' blocks (which depends
    on their blocks only, not on the dims' sizes)."""
    for d in range(src.ndims):
        _radices(d, src, dst)


def broadcast_layout(dims: tuple[int, ...], mask: int) -> Layout:
    """A dense plain layout over the dims in mask (logical order), stride 0 along the
    others: how oneDNN indexes a per-dimension attribute array (scales, zero points)."""
    strides, stride = [0] * len(dims), 1
    for d in reversed(range(len(dims))):
        if mask >> d & 1:
            strides[d] = stride
            stride *= dims[d]
    return Layout(tuple(dims), tuple(strides), (), 0, f"mask {mask}")


def zero_jobs(dst: Layout) -> list[Job]:
    """The jobs that write dst's padded tail: for each padded dim d, the points past its
    end with earlier dims inside and later dims anywhere in the padded range (disjoint)."""
    jobs = []
    padded = dst.padded_dims
    for d, (n, p) in enumerate(zip(dst.dims, padded)):
        if p == n:
            continue
        ranges = [(0, dst.dims[k]) for k in range(d)] + [(n, p)] + \
                 [(0, padded[k]) for k in range(d + 1, dst.ndims)]
        per_dim = [_pieces(lo, hi, _radices(k, dst)) for k, (lo, hi) in enumerate(ranges)]
        jobs += [_job(None, dst, combo, True) for combo in itertools.product(*per_dim)]
    return jobs


def tensor_layout(tag: Tag, dims: tuple[int, ...]) -> Layout:
    """tag's layout over dims; ProblemError, one line naming the token, when the tag does
    not fit the rank. Shared with pooling (src and dst of one tag)."""
    if tag.is_any:
        return plain(dims)
    try:
        return tag.layout(dims)
    except ProblemError as exc:
        raise ProblemError(f"--tag={tag}: {exc} (dims: mb, channels, spatial)") from None


def channels_last(lay: Layout) -> bool | None:
    """Whether a dense layout keeps channels last (axb: True), first (abx: False), or
    neither (None): the two orders the memory-bound kernels' post-op chains index."""
    for tag, last in (("abx", False), ("axb", True)):
        if lay.same_memory(plain(lay.dims, tag)):
            return last
    return None


def dense_order(lay: Layout) -> tuple[int, ...] | None:
    """The dims from outermost to innermost when the layout is a dense permutation of
    them (plain, no padding, gaps or offset: `acdb`, `nhwc`, `cn`, ...), else None."""
    if not lay.is_plain or lay.offset0 or lay.size != lay.nelems:
        return None
    order = tuple(sorted(range(lay.ndims), key=lambda d: (-lay.strides[d], d)))
    stride = 1
    for d in reversed(order):
        if lay.dims[d] > 1 and lay.strides[d] != stride:
            return None
        stride *= lay.dims[d]
    return order


def around_axis(dims: tuple[int, ...], order: tuple[int, ...],
                axis: int) -> tuple[int, int, int]:
    """(outer, size, inner) of a dense memory order (dims outermost first, dense_order's):
    how many elements the dims before the axis in memory hold, the axis's size, and how
    many the dims after it hold."""
    pos = order.index(axis)
    return (math.prod(dims[d] for d in order[:pos]), dims[axis],
            math.prod(dims[d] for d in order[pos + 1:]))


@functools.lru_cache(maxsize=4096)
def plain(dims: tuple[int, ...], tag: str = "abx") -> Layout:
    """A dense plain layout named by its canonical letters (how `any` shows once
    resolved): abx is the logical order, the user's layout and the kernels' own."""
    t = parse_tag(tag)
    return dataclasses.replace(t.layout(dims), name=t.canonical(len(dims)))
