"""Every binary kernel row the CPU runs against numpy: every algorithm and type, sources
broadcast and strided in any plain layout, select, a chain with sum entries; and the rows'
own rules."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import check, post_ops
from benchdnn_py.common.attr import parse_post_ops

ROWS = [i for i in core.binary_impls() if core.isa_supported(i.isa)]
TYPES = ("f32", "bf16", "f16", "s32", "s8", "u8")
NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
         "max": np.maximum, "min": np.minimum, "ge": np.greater_equal, "gt": np.greater,
         "le": np.less_equal, "lt": np.less, "eq": np.equal, "ne": np.not_equal}


def _values(rng, shape, dt, nonzero=False):
    x = rng.integers(0 if dt == "u8" else -8, 9, shape).astype(np.float32)
    if nonzero:
        x[x == 0] = 1
    return check.round_to_dt(x * (np.float32(0.5) if dt in ("f32", "bf16", "f16") else 1), dt)


def _strides(shape, dims):
    """Dense strides of a tensor of shape, 0 where it is broadcast against dims."""
    st, out = 1, []
    for n in reversed(shape):
        out.append(st)
        st *= n
    return tuple(s if n > 1 else 0 for s, n in zip(reversed(out), shape))


def _run(impl, alg, sdts, ddt, a, b, dims, scales=(1.0, 1.0), c=None, chain=None, dst=None,
         strides=None):
    prim = core.BinaryPrimitive(impl, alg, sdts, ddt, dims,
                                strides or (_strides(a.shape, dims), _strides(b.shape, dims)),
                                scales)
    if dst is None:
        dst = np.zeros(int(np.prod(dims)), core.numpy_dtype(ddt))
    typed = lambda x, dt: np.ascontiguousarray(x.reshape(-1).astype(core.numpy_dtype(dt)))  # noqa: E731
    prim.bind(typed(a, sdts[0]), typed(b, sdts[1]), None if c is None else typed(c, "s8"),
              dst, chain)()
    return dst.astype(np.float32).reshape(dims)


@pytest.mark.parametrize("impl", ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("alg", sorted(NUMPY))
def test_every_algorithm_over_broadcast_shapes(impl, alg):
    rng = np.random.default_rng(1)
    for s0, s1 in (((3, 5, 7, 9), (3, 5, 7, 9)), ((3, 5, 7, 9), (1, 5, 1, 1)),
                   ((1, 5, 1, 9), (3, 5, 7, 1)), ((2, 3, 1100), (2, 1, 1100)), ((7,), (1,))):
        dims = tuple(max(p, q) for p, q in zip(s0, s1))
        a, b = _values(rng, s0, "f32"), _values(rng, s1, "f32", nonzero=True)
        got = _run(impl, alg, ("f32", "f32"), "f32", a, b, dims, scales=(0.5, 2.0))
        exp = NUMPY[alg](0.5 * a.astype(np.float64), 2.0 * b).astype(np.float32)
        assert np.array_equal(got, np.broadcast_to(exp, dims)), (s0, s1)


@pytest.mark.parametrize("impl", ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("ddt", TYPES)
def test_every_type_pair_rounds_the_f32_result_into_dst(impl, ddt):
    rng = np.random.default_rng(2)
    for sdts in (("f32", "bf16"), ("f16", "s8"), ("s32", "u8"), ("u8", "f32")):
        a, b = _values(rng, (4, 3, 333), sdts[0]), _values(rng, (4, 3, 1), sdts[1])
        got = _run(impl, "sub", sdts, ddt, a, b, (4, 3, 333))
        exp = check.round_to_dt((a - b).astype(np.float32), ddt)
        assert np.array_equal(got, exp), sdts


@pytest.mark.parametrize("impl", ROWS, ids=lambda i: i.name)
def test_select_takes_src0_where_the_condition_is_not_zero(impl):
    rng = np.random.default_rng(3)
    a, b = _values(rng, (2, 4, 50), "f32"), _values(rng, (1, 4, 1), "f32")
    c = rng.integers(0, 3, (2, 4, 50)).astype(np.float32)
    got = _run(impl, "select", ("f32", "f32"), "f32", a, b, (2, 4, 50), c=c)
    assert np.array_equal(got, np.where(c != 0, a, np.broadcast_to(b, a.shape)))


def test_a_source_in_another_order_is_read_through_its_strides():
    impl = ROWS[0]
    rng = np.random.default_rng(4)
    a = _values(rng, (3, 5, 7), "f32")
    b = _values(rng, (7, 5, 3), "f32")      # stored transposed: b[w][c][n] is element (n, c, w)
    strides = ((35, 7, 1), (1, 3, 15))
    got = _run(impl, "add", ("f32", "f32"), "f32", a, b, (3, 5, 7), strides=strides)
    assert np.array_equal(got, a + b.transpose(2, 1, 0))


def test_a_chain_with_sums_reads_the_prior_dst_of_the_sum_type():
    impl = ROWS[0]
    rng = np.random.default_rng(5)
    dims = (2, 4, 3, 5)
    a, b = _values(rng, dims, "f32"), _values(rng, (1, 4, 1, 1), "f32")
    chain_ops = parse_post_ops("sum:0.5:0:u8+relu:0.25+sum:2:1:u8+mul:f32:per_oc")
    src1 = post_ops.fill_src1(chain_ops, dims)
    chain = post_ops.kernel_chain(chain_ops, src1, dims)
    prior = rng.integers(0, 9, dims).astype(np.int8)
    dst = prior.reshape(-1).copy()
    got = _run(impl, "add", ("f32", "f32"), "s8", a, b, dims, chain=chain, dst=dst)
    x = (a + b).astype(np.float32)
    x = x + np.float32(0.5) * prior.view(np.uint8)
    x = np.where(x > 0, x, np.float32(0.25) * x)
    x = x + np.float32(2) * (prior.view(np.uint8).astype(np.float32) - 1)
    x = x * src1["src1_3"]
    assert np.array_equal(got, check.round_to_dt(x.astype(np.float32), "s8"))


def test_over_threads_and_in_place_every_bit_is_the_same():
    impl = ROWS[0]
    rng = np.random.default_rng(6)
    a = rng.uniform(-3, 3, (4, 64, 1000)).astype(np.float32)
    b = rng.uniform(-3, 3, (1, 64, 1)).astype(np.float32)
    out = {}
    for threads in (1, 3):
        with core.threads(threads):
            out[threads] = _run(impl, "div", ("f32", "f32"), "f32", a, b, a.shape)
    assert np.array_equal(out[1].view(np.uint32), out[3].view(np.uint32))
    inplace = a.reshape(-1).copy()
    prim = core.BinaryPrimitive(impl, "div", ("f32", "f32"), "f32", a.shape,
                                (_strides(a.shape, a.shape), _strides(b.shape, a.shape)))
    prim.bind(inplace, b.reshape(-1), None, inplace)()
    assert np.array_equal(inplace.reshape(a.shape), out[1])


def test_the_rows_refuse_what_they_cannot_run():
    impl = ROWS[0]
    with pytest.raises(core.Unimplemented):
        core.BinaryPrimitive(impl, "add", ("f64", "f32"), "f32", (4,), ((1,), (1,)))
    with pytest.raises(core.InvalidProblem):
        core.BinaryPrimitive(impl, "add", ("f32", "f32"), "f32", (4,), ((-1,), (1,)))
    prim = core.BinaryPrimitive(impl, "add", ("f32", "f32"), "f32", (4, 4), ((4, 1), (4, 1)))
    with pytest.raises(ValueError, match="its strides reach 16"):
        prim.bind(np.zeros(15, np.float32), np.zeros(16, np.float32), None,
                  np.zeros(16, np.float32))
    with pytest.raises(ValueError, match="select takes a condition"):
        prim.bind(np.zeros(16, np.float32), np.zeros(16, np.float32),
                  np.zeros(16, np.int8), np.zeros(16, np.float32))
