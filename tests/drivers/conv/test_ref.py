"""The C reference convolution (core.ref_conv_fwd) against an independent NumPy one.

The NumPy side below shares nothing with benchdnn_py: it zero-pads (or crops, for a
negative right padding) the input explicitly, then for every kernel tap takes a strided
window of the padded input and contracts it with that tap's weights, group by group, in
float64. It works in the problem's own rank (1D, 2D or 3D), not in the 3D form the C core
uses.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.drivers.conv.desc import parse_desc


def _problem(text: str):
    desc = parse_desc(text)
    shape = core.ConvShape(desc.g, desc.mb, desc.ic, desc.oc, desc.i, desc.o, desc.k, desc.s,
                           desc.p, desc.dil)
    return desc, shape


def numpy_conv(src, wei, bias, groups, out_sizes, strides, pads, dilations):
    """src [N][IC][*I], wei [G][OCg][ICg][*K], bias [OC] or None -> dst [N][OC][*O] (f64).

    Dilation follows the oneDNN convention: 0 means none, taps are d + 1 apart."""
    src = np.asarray(src, np.float64)
    wei = np.asarray(wei, np.float64)
    n, ic = src.shape[:2]
    in_sizes = src.shape[2:]
    g, ocg, icg = wei.shape[:3]
    k_sizes = wei.shape[3:]
    nsp = len(in_sizes)
    assert g == groups and ic == g * icg and len(k_sizes) == nsp == len(out_sizes)

    # Padded length along each axis: exactly what the last output point's last tap needs.
    need = [(o - 1) * s + (k - 1) * (d + 1) + 1
            for o, s, k, d in zip(out_sizes, strides, k_sizes, dilations)]
    padded = np.zeros((n, ic, *need))
    # Input element x lands at x + p; elements at or past `need` are cropped away (this is
    # a negative right padding).
    kept = [max(0, min(i, L - p)) for i, L, p in zip(in_sizes, need, pads)]
    dst_index = (slice(None), slice(None)) + tuple(slice(p, p + c) for p, c in zip(pads, kept))
    src_index = (slice(None), slice(None)) + tuple(slice(0, c) for c in kept)
    if all(c > 0 for c in kept):
        padded[dst_index] = src[src_index]
    grouped = padded.reshape(n, g, icg, *need)

    letters = "xyz"[:nsp]
    spec = f"ngc{letters},goc->ngo{letters}"
    out = np.zeros((n, g, ocg, *out_sizes))
    for tap in itertools.product(*(range(k) for k in k_sizes)):
        window = tuple(slice(t * (d + 1), t * (d + 1) + (o - 1) * s + 1, s)
                       for t, d, o, s in zip(tap, dilations, out_sizes, strides))
        patch = grouped[(slice(None),) * 3 + window]
        assert patch.shape[3:] == tuple(out_sizes)
        out += np.einsum(spec, patch, wei[(slice(None),) * 3 + tap])
    out = out.reshape(n, g * ocg, *out_sizes)
    if bias is not None:
        out += np.asarray(bias, np.float64).reshape(1, -1, *([1] * nsp))
    return out


def _numpy_ref(desc, shape, src, wei, bias):
    """Calls numpy_conv in the problem's own rank and returns the result in 3D form."""
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    src_nd = src.reshape(desc.mb, desc.ic, *pick(desc.i))
    wei_nd = wei.reshape(desc.g, desc.oc // desc.g, desc.ic // desc.g, *pick(desc.k))
    out = numpy_conv(src_nd, wei_nd, bias, desc.g, pick(desc.o), pick(desc.s), pick(desc.p),
                     pick(desc.dil))
    return out.reshape(shape.dst_shape)


# (descriptor, what it covers)
DESCRIPTORS = [
    ("mb1ic2iw9oc3kw3", "1D, mb=1, no padding"),
    ("ic4iw10oc6kw3sw2pw1", "1D, stride, padding"),
    ("mb3ic2iw7oc4kw2dw1pw1", "1D, dilation, mb=3"),
    ("ic2iw10oc2kw3sw4", "1D, right padding -3 (cropped input)"),
    ("mb1ic1ih5oc1kh3", "2D square, single channel"),
    ("ic3ih5oc3kh2sh2", "2D, right padding -1"),
    ("ic3ih6oc4kh3ph1", "2D square, padding 1"),
    ("ic2ih5iw7oc3kh3kw2ph1pw0", "2D rectangular"),
    ("ic4ih8iw6oc4kh3kw3sh2sw1ph1pw1", "2D rectangular, stride in h only"),
    ("ic3ih7oc2kh3sh3ph2", "2D stride 3, padding 2"),
    ("ic2ih4oc3oh6kh3ph1", "2D, explicit large output: right padding 3"),
    ("ic2ih3oc2oh7kh2ph2", "2D, outputs that read only padding"),
    ("ic2ih9oc3kh3dh1ph2", "2D square dilation"),
    ("ic2ih10iw8oc2kh3kw2dh2dw3sh2", "2D rectangular dilation, stride, negative pad"),
    ("g2ic4ih6oc6kh3ph1", "2D groups"),
    ("g3mb1ic6ih7oc3kh3sh2ph1", "2D groups, one output channel per group"),
    ("ic5ih7oc5kh3ph1_dw", "2D depthwise"),
    ("g4mb3ic4ih6iw5oc4kh2kw3sh2sw1ph0pw1", "2D depthwise, rectangular, strided"),
    ("mb1ic2id4oc3kd3pd1", "3D cubic"),
    ("ic2id5ih4iw6oc3kd2kh3kw3sd2sh1sw2pd0ph1pw1", "3D non-cubic, mixed pads"),
    ("g2ic4id5oc4kd3sd2pd1dd1", "3D groups, stride, dilation"),
    ("ic3id4oc3kd3pd1_dw", "3D depthwise"),
    # Long rows and many channels: the C side sums up to 8 points of a row (forward), 8
    # input channels (backward data) or 8 weights (backward weights) side by side, and
    # takes the rest 4, 2 or 1 at a time; the edges of a row take fewer taps.
    ("ic11iw40oc3kw5pw2", "1D long row: blocks of 8 points, edges, 11 = 8+2+1 channels"),
    ("ic9ih5iw37oc4kh3kw3sw2ph1pw1", "2D long strided row, 36 = 4*8+4 weights"),
    ("ic13ih6iw21oc5kh1kw1", "2D 1x1 long rows, 65 = 8*8+1 weights"),
    ("ic9ih4iw40oc3kh1kw1sh2sw2", "2D strided 1x1, long rows"),
    ("ic10iw30oc2kw3sw3pw2dw1", "1D long row, stride 3 and dilation"),
    ("g2ic16ih4iw19oc6kh2kw3sh1sw1ph1pw2dw2", "2D groups, long dilated row, wide padding"),
]
DESC_IDS = [d for d, _ in DESCRIPTORS]


def _int_data(shape: core.ConvShape, seed: int, with_bias: bool):
    rng = np.random.default_rng(seed)
    src = rng.integers(-5, 6, size=shape.src_shape).astype(np.float32)
    wei = rng.integers(-5, 6, size=shape.wei_shape).astype(np.float32)
    bias = rng.integers(-8, 9, size=shape.oc).astype(np.float32) if with_bias else None
    return src, wei, bias


@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("text", DESC_IDS)
def test_ref_matches_numpy_on_integers(text, with_bias):
    desc, shape = _problem(text)
    src, wei, bias = _int_data(shape, seed=len(text) * 7 + with_bias, with_bias=with_bias)
    got = core.ref_conv_fwd(shape, src, wei, bias)
    assert got.dtype == np.float64
    assert got.shape == shape.dst_shape
    expected = _numpy_ref(desc, shape, src, wei, bias)
    # Integer data: every partial sum is exact in double, so both sides agree exactly.
    np.testing.assert_array_equal(got, expected)
    # The data is not degenerate: the comparison means something.
    assert np.count_nonzero(expected) > expected.size // 4


@pytest.mark.parametrize("text", ["ic3ih6oc4kh3ph1", "ic2ih5iw7oc3kh3kw2ph1pw0",
                                  "g2ic4id5oc4kd3sd2pd1dd1", "ic2iw10oc2kw3sw4",
                                  "ic5ih7oc5kh3ph1_dw"])
def test_ref_matches_numpy_on_reals(text):
    desc, shape = _problem(text)
    rng = np.random.default_rng(1234)
    src = rng.uniform(-1, 1, size=shape.src_shape).astype(np.float32)
    wei = rng.uniform(-1, 1, size=shape.wei_shape).astype(np.float32)
    bias = rng.uniform(-1, 1, size=shape.oc).astype(np.float32)
    got = core.ref_conv_fwd(shape, src, wei, bias)
    expected = _numpy_ref(desc, shape, src, wei, bias)
    # Products of floats are exact in double; only the summation order differs.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert not np.all(got == np.round(got))   # really non-integer data


def test_descriptor_geometry_exercises_padding_edges():
    """The list above really contains negative and large right paddings, dilation,
    groups, depthwise problems and every rank."""
    descs = [parse_desc(t) for t in DESC_IDS]
    assert parse_desc("ic3ih5oc3kh2sh2").p_r[1:] == (-1, -1)
    assert parse_desc("ic2ih4oc3oh6kh3ph1").p_r[1:] == (3, 3)
    assert {d.ndims for d in descs} == {3, 4, 5}
    assert any(min(d.p_r) < 0 for d in descs)
    assert any(any(x > 0 for x in d.dil) for d in descs)
    assert any(d.g == d.ic == d.oc > 1 for d in descs)
    assert any(1 < d.g < d.ic for d in descs)
    assert {d.mb for d in descs} >= {1, 2, 3}


def test_numpy_side_hand_computed():
    """The NumPy formulation itself on a case small enough to do by hand: 1D, ic=oc=1,
    k=2, stride 1, left pad 1, right pad 1 (o = 4), dilation 0."""
    src = np.array([[[1.0, 2.0, 3.0]]])
    wei = np.array([[[[10.0, 1.0]]]])
    got = numpy_conv(src, wei, np.array([100.0]), 1, (4,), (1,), (1,), (0,))
    # o=0: 0*10 + 1*1; o=1: 1*10 + 2*1; o=2: 2*10 + 3*1; o=3: 3*10 + 0*1
    np.testing.assert_array_equal(got, [[[101.0, 112.0, 123.0, 130.0]]])
    # Dilation 1 (taps 2 apart), no padding: o = 1: 1*10 + 3*1.
    np.testing.assert_array_equal(numpy_conv(src, wei, None, 1, (1,), (1,), (0,), (1,)),
                                  [[[13.0]]])


def test_ref_hand_computed_2d():
    """core.ref_conv_fwd on a hand-checked 2D case with padding and bias."""
    _, shape = _problem("mb1ic1ih2oc1kh2ph1")       # oh = ow = 3
    assert shape.dst_shape == (1, 1, 1, 3, 3)
    src = np.array([1, 2, 3, 4], np.float32)
    wei = np.array([1, 10, 100, 1000], np.float32)
    got = core.ref_conv_fwd(shape, src, wei, np.array([0.5], np.float32))
    # dst(y, x) = sum_{ky,kx} src(y+ky-1, x+kx-1) * wei(ky, kx)
    expected = np.array([[1000 * 1, 100 * 1 + 1000 * 2, 100 * 2],
                         [10 * 1 + 1000 * 3, 1 * 1 + 10 * 2 + 100 * 3 + 1000 * 4,
                          1 * 2 + 100 * 4],
                         [10 * 3, 1 * 3 + 10 * 4, 1 * 4]], np.float64) + 0.5
    np.testing.assert_array_equal(got.reshape(3, 3), expected)


def test_ref_rejects_bad_buffers():
    _, shape = _problem("mb1ic2ih4oc2kh3")
    src = np.zeros(shape.src_shape, np.float32)
    wei = np.zeros(shape.wei_shape, np.float32)
    with pytest.raises(TypeError):
        core.ref_conv_fwd(shape, src.astype(np.float64), wei, None)
    with pytest.raises(ValueError):
        core.ref_conv_fwd(shape, src.ravel()[:-1].copy(), wei, None)


# ---- backward directions -----------------------------------------------------------------
# The NumPy side reuses only the geometry of numpy_conv above (padding, per-tap windows):
# backward data scatters every tap's contribution back into a padded input-shaped buffer,
# backward weights contracts each tap's input window with diff_dst.

def _geometry(desc):
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    o, s, k, p, d, i = (pick(desc.o), pick(desc.s), pick(desc.k), pick(desc.p),
                        pick(desc.dil), pick(desc.i))
    need = [(oo - 1) * ss + (kk - 1) * (dd + 1) + 1 for oo, ss, kk, dd in zip(o, s, k, d)]
    return axes, i, o, s, k, p, d, need


def _windows(k, d, o, s):
    for tap in itertools.product(*(range(kk) for kk in k)):
        yield tap, tuple(slice(t * (dd + 1), t * (dd + 1) + (oo - 1) * ss + 1, ss)
                         for t, dd, oo, ss in zip(tap, d, o, s))


def numpy_bwd_data(desc, diff_dst, wei):
    axes, i, o, s, k, p, d, need = _geometry(desc)
    g, ocg, icg = desc.g, desc.oc // desc.g, desc.ic // desc.g
    dd = np.asarray(diff_dst, np.float64).reshape(desc.mb, g, ocg, *o)
    w = np.asarray(wei, np.float64).reshape(g, ocg, icg, *k)
    letters = "xyz"[:len(axes)]
    padded = np.zeros((desc.mb, g, icg, *need))
    for tap, window in _windows(k, d, o, s):
        padded[(slice(None),) * 3 + window] += np.einsum(
            f"ngo{letters},goc->ngc{letters}", dd, w[(slice(None),) * 3 + tap])
    # Input x sat at x + p in the padded buffer; inputs past it read nothing (zero grad).
    out = np.zeros((desc.mb, g, icg, *i))
    kept = [max(0, min(ii, L - pp)) for ii, L, pp in zip(i, need, p)]
    if all(c > 0 for c in kept):
        out[(slice(None),) * 3 + tuple(slice(0, c) for c in kept)] = padded[
            (slice(None),) * 3 + tuple(slice(pp, pp + c) for pp, c in zip(p, kept))]
    return out.reshape(desc.mb, desc.ic, *i)


def numpy_bwd_weights(desc, src, diff_dst):
    axes, i, o, s, k, p, d, need = _geometry(desc)
    g, ocg, icg = desc.g, desc.oc // desc.g, desc.ic // desc.g
    x = np.asarray(src, np.float64).reshape(desc.mb, g, icg, *i)
    dd = np.asarray(diff_dst, np.float64).reshape(desc.mb, g, ocg, *o)
    padded = np.zeros((desc.mb, g, icg, *need))
    kept = [max(0, min(ii, L - pp)) for ii, L, pp in zip(i, need, p)]
    if all(c > 0 for c in kept):
        padded[(slice(None),) * 3 + tuple(slice(pp, pp + c) for pp, c in zip(p, kept))] = \
            x[(slice(None),) * 3 + tuple(slice(0, c) for c in kept)]
    letters = "xyz"[:len(axes)]
    dw = np.zeros((g, ocg, icg, *k))
    for tap, window in _windows(k, d, o, s):
        dw[(slice(None),) * 3 + tap] = np.einsum(
            f"ngo{letters},ngc{letters}->goc", dd, padded[(slice(None),) * 3 + window])
    bias = dd.sum(axis=tuple(a for a in range(dd.ndim) if a not in (1, 2))).reshape(-1)
    return dw, bias


@pytest.mark.parametrize("text", DESC_IDS)
def test_ref_bwd_data_matches_numpy(text):
    desc, shape = _problem(text)
    rng = np.random.default_rng(len(text))
    diff_dst = rng.integers(-5, 6, size=shape.dst_shape).astype(np.float32)
    wei = rng.integers(-5, 6, size=shape.wei_shape).astype(np.float32)
    got = core.ref_conv_bwd_data(shape, diff_dst, wei)
    want = numpy_bwd_data(desc, diff_dst, wei).reshape(shape.src_shape)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("text", DESC_IDS)
def test_ref_bwd_weights_matches_numpy(text):
    desc, shape = _problem(text)
    rng = np.random.default_rng(len(text) + 7)
    src = rng.integers(-5, 6, size=shape.src_shape).astype(np.float32)
    diff_dst = rng.integers(-5, 6, size=shape.dst_shape).astype(np.float32)
    got_w, got_b = core.ref_conv_bwd_weights(shape, src, diff_dst, with_bias=True)
    want_w, want_b = numpy_bwd_weights(desc, src, diff_dst)
    assert np.array_equal(got_w, want_w.reshape(shape.wei_shape))
    assert np.array_equal(got_b, want_b)
    no_bias_w, no_bias = core.ref_conv_bwd_weights(shape, src, diff_dst, with_bias=False)
    assert no_bias is None and np.array_equal(no_bias_w, got_w)


def test_backward_is_the_adjoint_of_forward():
    """<conv(x, w), y> == <x, bwd_data(y, w)> == <w, bwd_weights(x, y)>: the three
    references describe one linear map, checked on reals."""
    for text in DESC_IDS:
        desc, shape = _problem(text)
        rng = np.random.default_rng(3)
        x = rng.standard_normal(shape.src_shape).astype(np.float32)
        w = rng.standard_normal(shape.wei_shape).astype(np.float32)
        y = rng.standard_normal(shape.dst_shape).astype(np.float32)
        fwd = core.ref_conv_fwd(shape, x, w, None)
        a = float(np.sum(fwd * y))
        b = float(np.sum(x.astype(np.float64) * core.ref_conv_bwd_data(shape, y, w)))
        c = float(np.sum(w.astype(np.float64) * core.ref_conv_bwd_weights(shape, x, y, False)[0]))
        assert np.isclose(a, b, rtol=1e-9, atol=1e-9) and np.isclose(a, c, rtol=1e-9, atol=1e-9), text


# ---- the reference at a list of points (--check=sampled) ---------------------------------
# The *_at entry points must give, bit for bit, the whole-tensor reference's value at each
# offset asked for (reals, so that every product and sum order shows), in the order asked,
# repeats and all.

def _some_offsets(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, size, size=min(size, 23))
    return np.concatenate([[size - 1, 0], picks, picks[:2]]).astype(np.int64)


@pytest.mark.parametrize("text", DESC_IDS)
def test_reference_at_points_equals_the_full_reference_there(text):
    desc, shape = _problem(text)
    rng = np.random.default_rng(len(text) + 11)
    x = rng.standard_normal(shape.src_shape).astype(np.float32)
    w = rng.standard_normal(shape.wei_shape).astype(np.float32)
    y = rng.standard_normal(shape.dst_shape).astype(np.float32)
    b = rng.standard_normal(shape.oc).astype(np.float32)

    fwd = core.ref_conv_fwd(shape, x, w, b)
    at = _some_offsets(fwd.size, 1)
    assert np.array_equal(core.ref_conv_fwd(shape, x, w, b, at), fwd.ravel()[at])
    assert np.array_equal(core.ref_conv_fwd(shape, x, w, None, at),
                          core.ref_conv_fwd(shape, x, w, None).ravel()[at])

    bwd_d = core.ref_conv_bwd_data(shape, y, w)
    at = _some_offsets(bwd_d.size, 2)
    assert np.array_equal(core.ref_conv_bwd_data(shape, y, w, at), bwd_d.ravel()[at])

    bwd_w, bwd_b = core.ref_conv_bwd_weights(shape, x, y, with_bias=True)
    at = _some_offsets(bwd_w.size, 3)
    assert np.array_equal(core.ref_conv_bwd_weights_at(shape, x, y, at), bwd_w.ravel()[at])
    at = _some_offsets(shape.oc, 4)
    assert np.array_equal(core.ref_conv_bwd_bias_at(shape, y, at), bwd_b[at])


@pytest.mark.parametrize("text", ["mb2ic8ih7oc12kh3ph1", "g2mb1ic8id4ih5iw6oc6kd2kh3kw2sh2ph1",
                                  "mb1ic16iw30oc8kw5dw1"])
def test_backward_weights_at_many_points_of_one_tap_in_blocks(text):
    """Hundreds of points, so each tap's run fills whole blocks of arbitrary channel
    triples (and repeats): still the whole tensor's bits, in the order asked."""
    desc, shape = _problem(text)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape.src_shape).astype(np.float32)
    y = rng.standard_normal(shape.dst_shape).astype(np.float32)
    bwd_w, _ = core.ref_conv_bwd_weights(shape, x, y, with_bias=False)
    at = rng.integers(0, bwd_w.size, size=400).astype(np.int64)
    assert np.array_equal(core.ref_conv_bwd_weights_at(shape, x, y, at), bwd_w.ravel()[at])


def test_reference_at_points_rejects_offsets_outside_the_tensor():
    _, shape = _problem("mb1ic2ih4oc2kh3")
    x = np.zeros(shape.src_shape, np.float32)
    w = np.zeros(shape.wei_shape, np.float32)
    y = np.zeros(shape.dst_shape, np.float32)
    dst_size = int(np.prod(shape.dst_shape))
    for bad in ([dst_size], [-1], [0, dst_size + 5]):
        with pytest.raises(core.InvalidProblem):
            core.ref_conv_fwd(shape, x, w, None, np.array(bad))
    with pytest.raises(core.InvalidProblem):
        core.ref_conv_bwd_data(shape, y, w, np.array([x.size]))
    with pytest.raises(core.InvalidProblem):
        core.ref_conv_bwd_weights_at(shape, x, y, np.array([w.size]))
    with pytest.raises(core.InvalidProblem):
        core.ref_conv_bwd_bias_at(shape, y, np.array([shape.oc]))
    assert core.ref_conv_fwd(shape, x, w, None, np.array([], np.int64)).size == 0


@pytest.mark.parametrize("o,k,s,p", [((1, 9, 11), 3, 1, 1), ((1, 10, 7), 3, 2, 0),
                                     ((1, 8, 8), 5, 1, 2), ((1, 13, 6), 7, 2, 3)])
def test_depthwise_at_points_is_the_c_reference_there(o, k, s, p):
    """ref.dw_at_points, which sums a fused depthwise step at sampled points from the 1x1
    output's values where they are read, gives the C reference's bits at those points."""
    from benchdnn_py.drivers.conv.ref import dw_at_points, dw_taps_read
    oc, mb = 6, 2
    dw_o = tuple((o[i] + 2 * p - k) // s + 1 for i in (1, 2))
    dw = core.ConvShape(oc, mb, oc, oc, o, (1, *dw_o), (1, k, k), (1, s, s), (0, p, p),
                        (0, 0, 0))
    rng = np.random.default_rng(k * 10 + s)
    mid = rng.standard_normal(dw.src_shape).astype(np.float32)
    wei = rng.standard_normal(dw.wei_shape).astype(np.float32)
    points = np.unique(rng.integers(0, np.prod(dw.dst_shape), 200)).astype(np.int64)
    read = dw_taps_read(dw, points)
    got = dw_at_points(dw, read, mid.reshape(-1)[read], wei, points)
    want = core.ref_conv_fwd(dw, mid, wei, None, points)
    assert np.array_equal(got, want)
