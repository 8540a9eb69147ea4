"""Every concat kernel row the CPU runs: runs of each source land after those before it,
scaled and rounded once; empty sources; the thread split."""

import numpy as np
import pytest

from benchdnn_py import core
from benchdnn_py.common import check

ROWS = [i for i in core.concat_impls() if core.isa_supported(i.isa)]


@pytest.mark.parametrize("impl", ROWS, ids=lambda i: i.name)
@pytest.mark.parametrize("sdt,ddt", [("f32", "f32"), ("bf16", "f16"), ("f32", "s8"),
                                     ("u8", "bf16"), ("f16", "f8_e4m3"), ("s32", "f32")])
def test_each_source_is_copied_scaled_into_its_place(impl, sdt, ddt):
    rng = np.random.default_rng(2)
    outer, inner, sizes = 7, 129, (3, 0, 1030, 2)
    xs = [check.round_to_dt(rng.uniform(0 if sdt == "u8" else -200, 200,
                                        (outer, k, inner)).astype(np.float32), sdt)
          for k in sizes]
    scales = (1.0, 2.0, 0.5, -1.25)
    dst = np.zeros(outer * sum(sizes) * inner, core.numpy_dtype(ddt))
    prim = core.ConcatPrimitive(impl, sdt, ddt)
    prim.bind([x.astype(core.numpy_dtype(sdt)).reshape(-1) for x in xs], dst, outer, sizes,
              inner, scales)()
    exp = np.concatenate([x * np.float32(k) for x, k in zip(xs, scales)], axis=1)
    assert np.array_equal(dst.astype(np.float32).reshape(exp.shape),
                          check.round_to_dt(exp.astype(np.float32), ddt))


def test_the_split_over_threads_writes_every_element_once():
    impl = ROWS[0]
    a = np.arange(3 * 5 * 11, dtype=np.float32)
    b = -np.arange(3 * 2 * 11, dtype=np.float32)
    for threads in (1, 2, 7):
        dst = np.full(3 * 7 * 11, np.nan, np.float32)
        with core.threads(threads):
            core.ConcatPrimitive(impl, "f32", "f32").bind([a, b], dst, 3, (5, 2), 11,
                                                          (1.0, 1.0))()
        exp = np.concatenate([a.reshape(3, 5, 11), b.reshape(3, 2, 11)], axis=1)
        assert np.array_equal(dst.reshape(3, 7, 11), exp), threads
