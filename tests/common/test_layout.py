"""The layout module: tags against the spec's table, round trips, sizes with padding,
offsets against layouts built independently with numpy reshapes and transposes, strides'
validity rule, and reorder loop nests that visit every point exactly once."""

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

from benchdnn_py.common import layout
from benchdnn_py.errors import ProblemError, UsageError

SPEC = Path(__file__).parent.parent / "data" / "format_tags_spec.txt"
ENUMS = [l.split()[1:] for l in SPEC.read_text().splitlines() if l.startswith("enumerator ")]


def test_every_plain_tag_of_the_spec_is_a_dense_permutation():
    plain = [e[0] for e in ENUMS if len(e) == 1 and re.fullmatch(r"[a-f]+", e[0])]
    assert len(plain) == 25 and "defcab" in plain
    for name in plain:
        n = len(name)
        dims = tuple(range(2, 2 + n))
        lay = layout.parse_tag(name).layout(dims)
        assert lay.is_plain and lay.is_dense and lay.size == math.prod(dims)
        # the tag lists dims outermost first: strides decrease along it
        order = [layout.LETTERS.index(c) for c in name]
        assert [lay.strides[d] for d in order] == sorted(lay.strides, reverse=True)


def test_alias_table_matches_the_spec():
    aliases = {e[0]: e[2] for e in ENUMS if len(e) == 3 and e[1] == "="}
    assert len(aliases) == 43 and aliases["hwigo"] == "decab"
    for name, canonical in aliases.items():
        assert layout.ALIASES[name] == canonical, name
    # every spec alias is also in the table, and the table holds no other plain names
    # than the spec's and the two 3D weight names oneDNN has besides (iodhw)
    plain = {k for k, v in layout.ALIASES.items() if v.islower() and v.isalpha()}
    assert set(aliases) <= plain and plain - set(aliases) <= {"iodhw"}


@pytest.mark.parametrize("name,ndims,canonical", [
    ("nChw16c", 4, "aBcd16b"), ("nChw8c", 4, "aBcd8b"), ("nCw16c", 3, "aBc16b"),
    ("nCdhw16c", 5, "aBcde16b"), ("OIhw16i16o", 4, "ABcd16b16a"),
    ("OIhw16o16i", 4, "ABcd16a16b"), ("gOIhw16i16o", 5, "aBCde16c16b"),
    ("Goihw16g", 5, "Abcde16a"), ("OIdhw16i16o", 5, "ABcde16b16a"), ("Goiw16g", 4, "Abcd16a"),
    ("abx", 4, "abcd"), ("abx", 1, "a"), ("axb", 5, "acdeb"), ("axb", 2, "ab"),
    ("aBx16b", 3, "aBc16b"), ("xba", 4, "cdba"), ("ABcd4b16a4b", 4, "ABcd4b16a4b"),
])
def test_tags_resolve_and_round_trip(name, ndims, canonical):
    tag = layout.parse_tag(name)
    assert str(tag) == name
    assert tag.canonical(ndims) == canonical
    again = layout.parse_tag(canonical)
    assert again.canonical(ndims) == canonical
    dims = tuple(range(3, 3 + ndims))
    assert again.layout(dims) == dataclasses.replace(tag.layout(dims), name=canonical)


def test_every_alias_round_trips_through_its_canonical_tag():
    for name, canonical in layout.ALIASES.items():
        n = len(re.sub(r"\d+[a-f]", "", canonical))
        assert layout.parse_tag(layout.parse_tag(name).canonical(n)).canonical(n) == canonical


@pytest.mark.parametrize("name,canonical", [
    ("gOIhw8i16o2i", "aBCde8c16b2c"), ("gOIhw2i4o2i", "aBCde2c4b2c"),
    ("gOIhw4o8i2o", "aBCde4b8c2b"), ("OIdhw4i16o4i", "ABcde4b16a4b"), ("Ohwi32o", "Acdb32a"),
    ("nCdhw32c", "aBcde32b"), ("gOdhwi16o", "aBdefc16b"),
])
def test_cnn_aliases_past_the_enumerated_ones_read_by_role(name, canonical):
    assert layout.parse_tag(name).pattern == canonical


def test_a_block_within_a_block_lays_out_as_benchdnn_does():
    lay = layout.parse_tag("OIhw8i16o2i").layout((32, 32, 1, 1))
    a, b = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    idx = np.stack([a.ravel(), b.ravel(), 0 * a.ravel(), 0 * a.ravel()])
    # outer blocks O and I, then 8 pairs of i, 16 o, 2 i: ((O*2 + I)*8*16*2 + ...)
    expected = ((a // 16) * 2 + b // 16) * 256 + ((b % 16) // 2) * 32 + (a % 16) * 2 + b % 2
    assert (lay.offsets(idx) == expected.ravel()).all()


@pytest.mark.parametrize("bad", ["nhwcc", "abcc", "abe", "aBcd", "abcd16b", "ABcd16b",
                                 "q", "nchw8", "", "aBcd0b", "nOhw", "gOIhw8i16x"])
def test_unknown_tags_are_one_line_naming_the_token(bad):
    with pytest.raises(UsageError) as exc:
        layout.parse_tag(bad)
    text = str(exc.value)
    assert f"`{bad}`" in text and "\n" not in text and "expected" in text


def test_rank_mismatch_is_a_problem_error():
    with pytest.raises(ProblemError, match="for 4 dims, the problem has 3"):
        layout.parse_tag("nchw").layout((2, 3, 4))
    with pytest.raises(ProblemError, match="any"):
        layout.parse_tag("any").layout((2, 3))


@pytest.mark.parametrize("tag,dims,padded,size", [
    ("nChw16c", (2, 20, 3, 3), (2, 32, 3, 3), 2 * 32 * 9),
    ("nChw8c", (2, 16, 3, 3), (2, 16, 3, 3), 2 * 16 * 9),
    ("OIhw16i16o", (20, 36, 3, 3), (32, 48, 3, 3), 32 * 48 * 9),
    ("gOIhw16i16o", (2, 20, 17, 3, 3), (2, 32, 32, 3, 3), 2 * 32 * 32 * 9),
    ("Goihw16g", (20, 1, 1, 3, 3), (32, 1, 1, 3, 3), 32 * 9),
    ("ABcd4b16a4b", (20, 5, 2, 2), (32, 16, 2, 2), 32 * 16 * 4),
    ("nhwc", (2, 20, 3, 3), (2, 20, 3, 3), 2 * 20 * 9),
])
def test_sizes_include_padding(tag, dims, padded, size):
    lay = layout.parse_tag(tag).layout(dims)
    assert lay.padded_dims == padded and lay.size == size
    pad = lay.padding_offsets()
    assert pad.size == size - math.prod(dims) == np.unique(pad).size
    assert np.intersect1d(pad, lay.offset_table().ravel()).size == 0


def numpy_offsets(canonical: str, dims: tuple[int, ...]) -> np.ndarray:
    """The offsets of a blocked layout built another way: number the padded points, cut
    each blocked dim into (outer, block digits...) with reshape, order the axes as the tag
    says with transpose, and read where each point lands."""
    outer = re.match(r"[a-fA-F]+", canonical).group(0)
    blocks = [(int(n), b) for n, b in re.findall(r"(\d+)([a-f])", canonical)]
    per_dim = {c: [s for s, b in blocks if b == c] for c in layout.LETTERS[:len(dims)]}
    padded = [-(-n // math.prod(per_dim[c] or [1])) * math.prod(per_dim[c] or [1])
              for n, c in zip(dims, layout.LETTERS)]
    ids = np.arange(math.prod(padded)).reshape(padded)
    shape, axis_of = [], {}
    for d, c in enumerate(layout.LETTERS[:len(dims)]):
        sizes = per_dim[c]
        axis_of[(c, "outer")] = len(shape)
        shape.append(padded[d] // math.prod(sizes or [1]))
        for k, s in enumerate(sizes):
            axis_of[(c, k)] = len(shape)
            shape.append(s)
    seen: dict[str, int] = {}
    order = [axis_of[(c.lower(), "outer")] for c in outer]
    for s, b in blocks:
        order.append(axis_of[(b, seen.get(b, 0))])
        seen[b] = seen.get(b, 0) + 1
    phys = ids.reshape(shape).transpose(order).ravel()
    offsets = np.empty(phys.size, np.int64)
    offsets[phys] = np.arange(phys.size)
    return offsets.reshape(padded)[tuple(slice(0, n) for n in dims)]


@pytest.mark.parametrize("tag,dims", [
    ("aBcd16b", (2, 20, 3, 5)), ("aBcd8b", (3, 8, 2, 2)), ("ABcd16b16a", (20, 36, 3, 3)),
    ("ABcd16a16b", (17, 5, 1, 2)), ("aBCde16c16b", (2, 20, 17, 3, 3)), ("Abcde16a", (20, 1, 1, 3, 3)),
    ("ABcd4b16a4b", (20, 5, 2, 2)), ("acdb", (2, 5, 3, 4)), ("cdba", (3, 4, 2, 5)),
    ("aBc16b", (2, 33, 7)), ("decab", (2, 3, 4, 2, 3)),
])
def test_offsets_match_a_numpy_built_layout(tag, dims):
    lay = layout.parse_tag(tag).layout(dims)
    assert np.array_equal(lay.offset_table(), numpy_offsets(tag, dims))
    # the vectorized point query agrees with the table
    idx = tuple(np.array([0, n - 1, n // 2]) for n in dims)
    assert np.array_equal(lay.offsets(idx), numpy_offsets(tag, dims)[idx])


@pytest.mark.parametrize("dims,strides,valid", [
    ((3, 30), (100, 1), True),            # padded rows
    ((3, 30), (1, 3), True),              # column major
    ((3, 30), (1, 2), False),             # columns overlap
    ((2, 3, 4), (12, 1, 3), True),        # a permutation, dense
    ((2, 3, 4), (12, 4, 2), False),       # rows overlap
    ((2, 1, 4), (4, 4, 1), True),         # a size-1 dim may share a stride
    ((2, 3), (3, 0), False),              # zero strides alias
    ((2, 3), (3,), False),                # wrong count
])
def test_strides_validity_follows_the_spec(dims, strides, valid):
    assert (layout.check_strides(dims, strides) is None) == valid
    if not valid:
        with pytest.raises(ProblemError, match="x".join(map(str, strides))):
            layout.strided_layout(dims, strides)


def test_strided_layouts_size_offset_and_sub_tensor():
    lay = layout.strided_layout((3, 30), (100, 1), offset0=7)
    assert lay.size == 7 + 300 and not lay.is_dense and lay.is_plain
    assert lay.offsets((np.array([0, 2]), np.array([0, 29]))).tolist() == [7, 7 + 229]
    assert layout.parse_strides("100x1@7") == ((100, 1), 7)
    assert layout.parse_strides("") is None
    for bad in ("100x", "1x0", "a", "3x1@", "-1x1"):
        with pytest.raises(UsageError, match=re.escape(f"`{bad}`")):
            layout.parse_strides(bad)


def _points(job: layout.Job):
    """The offsets of every point of a job: src, dst, then each extra operand's."""
    grids = np.meshgrid(*[np.arange(l[0]) for l in job.loops], indexing="ij") \
        if job.loops else []
    offs = (job.src_off, job.dst_off, *job.args)
    return tuple(np.ravel(off + sum((g * l[1 + k] for g, l in zip(grids, job.loops)),
                                    np.int64(0)))
                 for k, off in enumerate(offs))


@pytest.mark.parametrize("stag,dtag,dims", [
    ("nchw", "nChw16c", (2, 20, 3, 3)), ("nChw8c", "nChw16c", (2, 30, 2, 3)),
    ("OIhw16i16o", "OIhw16o16i", (20, 36, 3, 3)), ("nChw16c", "nhwc", (2, 19, 3, 1)),
    ("ABcd4b16a4b", "hwio", (20, 5, 2, 2)), ("decab", "Abcde16a", (20, 1, 1, 3, 3)),
])
def test_jobs_visit_every_point_once_and_zero_the_padding(stag, dtag, dims):
    src = layout.parse_tag(stag).layout(dims)
    dst = layout.parse_tag(dtag).layout(dims)
    pairs = [_points(j)[:2] for j in layout.copy_jobs(src, dst)]
    s = np.concatenate([p[0] for p in pairs])
    d = np.concatenate([p[1] for p in pairs])
    order = np.argsort(d)
    expected = np.argsort(dst.offset_table().ravel())
    assert np.array_equal(d[order], dst.offset_table().ravel()[expected])
    assert np.array_equal(s[order], src.offset_table().ravel()[expected])
    zeros = np.concatenate([_points(j)[1] for j in layout.zero_jobs(dst)] or [np.empty(0, int)])
    assert np.array_equal(np.sort(zeros), np.sort(dst.padding_offsets()))


def test_blocks_that_do_not_nest_are_refused():
    a = layout.parse_tag("aBcd16b").layout((2, 48, 1, 1))
    b = layout.Layout(a.dims, a.strides, ((1, 24),), 0, "aBcd24b")
    with pytest.raises(layout.BlocksDoNotNest):
        layout.copy_jobs(a, b)


@pytest.mark.parametrize("stag,dtag,masks", [
    ("nchw", "nhwc", (2, 3)), ("nChw16c", "nchw", (1, 15)), ("nhwc", "nChw8c", (0, 6)),
])
def test_extra_operands_follow_each_point_through_the_jobs(stag, dtag, masks):
    """A per-dimension array (scales) indexed through the jobs: at every point the job's
    offset is the array index of that point's coordinates along the mask's dims."""
    dims = (2, 19, 3, 5)
    src = layout.parse_tag(stag).layout(dims)
    dst = layout.parse_tag(dtag).layout(dims)
    args = tuple(layout.broadcast_layout(dims, m) for m in masks)
    points = [_points(j) for j in layout.copy_jobs(src, dst, args)]
    s = np.concatenate([p[0] for p in points])
    src_table = src.offset_table().ravel()
    where = np.argsort(src_table)[np.searchsorted(np.sort(src_table), s)]  # logical index
    coords = np.unravel_index(where, dims)
    for k, mask in enumerate(masks):
        got = np.concatenate([p[2 + k] for p in points])
        shape = tuple(n if mask >> d & 1 else 1 for d, n in enumerate(dims))
        exp = np.ravel_multi_index([c if mask >> d & 1 else 0 * c
                                    for d, c in enumerate(coords)], shape)
        assert np.array_equal(got, exp), mask


def test_broadcast_layout_is_dense_over_the_mask():
    lay = layout.broadcast_layout((2, 3, 4), 0b101)
    assert lay.strides == (4, 0, 1) and lay.size == 8
