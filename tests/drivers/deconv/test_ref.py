"""The deconvolution reference (swap rule over the conv references) against an independent
NumPy transposed convolution, and its backward directions against the forward one by the
adjoint identities, which determine them uniquely."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchdnn_py.drivers.deconv import ref
from benchdnn_py.drivers.deconv.desc import parse_deconv


def numpy_deconv(desc, src, wei, bias):
    """Scatter form: every input point adds src * wei(k) into output o = i*s - p + k*(d+1).
    Works in the problem's own rank; returns the C core's 3D form."""
    axes = desc.spatial_axes
    pick = lambda t: tuple(t[a] for a in axes)  # noqa: E731
    i, o, k, s, p, d = (pick(desc.i), pick(desc.o), pick(desc.k), pick(desc.s), pick(desc.p),
                        pick(desc.dil))
    g, ocg, icg = desc.g, desc.oc // desc.g, desc.ic // desc.g
    x = src.astype(np.float64).reshape(desc.mb, g, icg, *i)
    w = wei.astype(np.float64).reshape(g, ocg, icg, *k)
    # Output positions before cropping run from -p to (i-1)*s + (k-1)*(d+1) - p.
    full = [(ii - 1) * ss + (kk - 1) * (dd + 1) + 1 for ii, ss, kk, dd in zip(i, s, k, d)]
    buf = np.zeros((desc.mb, g, ocg, *(max(f, pp + oo) for f, pp, oo in zip(full, p, o))))
    letters = "xyz"[:len(axes)]
    for tap in itertools.product(*(range(kk) for kk in k)):
        window = tuple(slice(t * (dd + 1), t * (dd + 1) + (ii - 1) * ss + 1, ss)
                       for t, dd, ii, ss in zip(tap, d, i, s))
        buf[(slice(None),) * 3 + window] += np.einsum(
            f"ngc{letters},goc->ngo{letters}", x, w[(slice(None),) * 3 + tap])
    out = buf[(slice(None),) * 3 + tuple(slice(pp, pp + oo) for pp, oo in zip(p, o))]
    out = out.reshape(desc.mb, desc.oc, *o)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(1, -1, *([1] * len(o)))
    return out.reshape((desc.mb, desc.oc) + desc.o)


DESCS = [
    "ic16iw8oc16kw3sw2pw1", "ic3iw12oc8kw4sw2pw1", "ic8iw10oc8kw3pw1dw1", "g4ic16iw9oc8kw3sw2",
    "ic16ih4oc16kh3sh2", "ic16ih4oc16oh8kh4sh2", "ic8ih7oc12kh3ph1",
    "ic19ih6iw5oc35kh3kw2sh2sw1ph1pw0", "ic8ih5oc8kh2sh2", "ic6ih5oc4kh3sh3",
    "ic8ih6oc8kh3sh2ph1dh1", "g2ic16ih5oc32kh3sh2ph1", "ic8ih6oc8kh3ph1_dw",
    "mb1ic8id4oc8kd3sd2pd1", "ic4id3ih4iw5oc6kd2kh3kw3sd2sh1sw2pd0ph1pw1",
    "ic4ih5oc4oh12kh3sh2ph0",      # explicit output larger than natural: a zero-filled ring
]


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    ints = lambda s: rng.integers(-5, 6, size=s).astype(np.float32)  # noqa: E731
    return ints(shape.src_shape), ints(shape.wei_shape), ints((shape.oc,)), ints(shape.dst_shape)


@pytest.mark.parametrize("text", DESCS)
def test_forward_matches_numpy_transposed_convolution(text):
    desc = parse_deconv(text)
    shape = ref.user_shape(desc)
    src, wei, bias, _ = _data(shape, len(text))
    for b in (None, bias):
        assert np.array_equal(ref.ref_fwd(desc, src, wei, b), numpy_deconv(desc, src, wei, b))


@pytest.mark.parametrize("text", DESCS)
def test_backward_directions_are_the_adjoints(text):
    desc = parse_deconv(text)
    shape = ref.user_shape(desc)
    x, w, _, y = _data(shape, len(text) + 1)
    fwd = ref.ref_fwd(desc, x, w, None)
    bwd_d = ref.ref_bwd_data(desc, y, w)
    bwd_w, bwd_b = ref.ref_bwd_weights(desc, x, y, True)
    # Integer data: every inner product is an exact integer in double.
    inner = float(np.sum(fwd * y))
    assert inner == float(np.sum(x * bwd_d))
    assert inner == float(np.sum(w * bwd_w))
    assert np.array_equal(bwd_b, y.astype(np.float64).sum(axis=(0, 2, 3, 4)))
    assert bwd_d.shape == shape.src_shape and bwd_w.shape == shape.wei_shape


def test_op_count_counts_taps_landing_inside_the_output():
    desc = parse_deconv("ic16ih4oc16kh3sh2")          # oh 9: no tap falls outside
    assert ref.count_ops(desc) == 2 * 2 * 16 * 16 * (4 * 3) ** 2
    padded = parse_deconv("ic2iw4oc2kw3sw1pw1")       # ow 4: the 2 edge taps fall outside
    assert ref.count_ops(padded) == 2 * 2 * 2 * 2 * (4 * 3 - 2)


@pytest.mark.parametrize("text", DESCS)
def test_reference_at_points_is_the_full_reference_there(text):
    """--check=sampled: each direction at a list of offsets (the weights' offsets are
    transposed on the way to the swapped convolution and must come back), on reals."""
    desc = parse_deconv(text)
    shape = ref.user_shape(desc)
    rng = np.random.default_rng(len(text) + 5)
    real = lambda s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    x, w, b, y = real(shape.src_shape), real(shape.wei_shape), real(shape.oc), real(shape.dst_shape)

    def offsets(size):
        return np.unique(np.concatenate([[0, size - 1], rng.integers(0, size, 17)]))
    fwd = ref.ref_fwd(desc, x, w, b)
    at = offsets(fwd.size)
    assert np.array_equal(ref.ref_fwd(desc, x, w, b, at), fwd.ravel()[at])
    bwd_d = ref.ref_bwd_data(desc, y, w)
    at = offsets(bwd_d.size)
    assert np.array_equal(ref.ref_bwd_data(desc, y, w, at), bwd_d.ravel()[at])
    bwd_w, bwd_b = ref.ref_bwd_weights(desc, x, y, True)
    at, at_b = offsets(bwd_w.size), offsets(shape.oc)
    got_w, got_b = ref.ref_bwd_weights(desc, x, y, True, at, at_b)
    assert np.array_equal(got_w, bwd_w.ravel()[at]) and np.array_equal(got_b, bwd_b[at_b])
