"""The native backend's layouts: `any` is the kernels' own (channel blocks forward, by
ANY_LAYOUTS), any other layout is served by
the +reorder route inside the primitive (timed), and the conv driver catches a route that
ignores a non-dense stride."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import create_executor

from benchdnn_py import core
from benchdnn_py.common import layout, reorders
from benchdnn_py.drivers.base import CaseResult, RunContext
from benchdnn_py.drivers.conv import backend_native as native
from benchdnn_py.drivers.conv import driver, policy
from benchdnn_py.engine import harness
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.status import Status


def _problem(*args: str, drv: str = "conv"):
    (case,) = harness.plan([f"--{drv}", *args]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def _executor(prb):
    res = CaseResult(Status.UNTESTED)
    ex = create_executor(prb, res)
    assert ex is not None, res.reason
    return ex


@pytest.mark.parametrize("drv,desc,wei,blocked", [
    ("conv", "mb2ic20ih6oc18kh3ph1", "abcd", True),   # forward: any's first layout
    ("conv", "g2mb2ic20iw9oc36kw3pw1", "abcd", False),   # groups of partial blocks: plain
    # iohw: transposed; the backward-data kernel, at unit stride: channel blocks
    ("deconv", "mb2ic20ih6oc18kh3ph1", "bacd", True),
    ("deconv", "g2mb2ic20id4ih5iw5oc36kd2kh3kw3pd1ph1pw1", "acbdef", False),   # giodhw
])
def test_any_is_the_kernels_own_layout_and_takes_no_route(drv, desc, wei, blocked):
    ex = _executor(_problem(desc, drv=drv))
    try:
        assert "+reorder" not in ex.name
        assert ex.layouts["wei"].describe() == wei
        kernel_dir = core.Direction.FWD if drv == "conv" else core.Direction.BWD_DATA
        first = policy.any_layouts(kernel_dir, ex.prim.shape, core.Operands.F32)[0].act
        act = first if blocked else core.ActLayout.PLAIN
        assert ex.prim.attr.layout is act
        assert ex.layouts["src"].same_memory(policy.kernel_layouts(ex.prb, act)["src"])
        if act is core.ActLayout.PLAIN:
            assert ex.layouts["src"].describe() == "abcde"[:ex.layouts["src"].ndims]
        assert not ex.to_kernel and not ex.to_memory
    finally:
        ex.close()


def _on_this_cpu(kind: str) -> core.ActLayout:
    """The layout `any` resolves to for a rule's kind, on this CPU's instruction sets
    (pw/KIND: a pointwise layer both pointwise rows take, on 16-channel blocks where
    AVX-512 runs, on 8-channel ones where only AVX2 does, else KIND's; pw8/KIND: one that
    only AVX2's takes, on 8-channel blocks where AVX2 runs and AVX-512 does not; pw16/KIND:
    one that only AVX-512's takes, on 16-channel blocks where AVX-512 runs)."""
    if kind.startswith(("pw/", "pw8/", "pw16/")):
        rows, kind = kind.split("/")
        if rows in ("pw", "pw16") and core.isa_supported(core.Isa.AVX512):
            return core.ActLayout.BLOCKED16
        if (rows in ("pw", "pw8") and core.isa_supported(core.Isa.AVX2)
                and not core.isa_supported(core.Isa.AVX512)):
            return core.ActLayout.BLOCKED8
    if kind == "blocked" and core.isa_supported(core.Isa.AVX512):
        return core.ActLayout.BLOCKED16
    if kind == "blocked" and core.isa_supported(core.Isa.AVX2):
        return core.ActLayout.BLOCKED8
    if kind == "nhwc" and core.isa_supported(core.Isa.AVX2):
        return core.ActLayout.NHWC
    if kind == "nhwc512" and core.isa_supported(core.Isa.AVX512):
        return core.ActLayout.NHWC
    return core.ActLayout.PLAIN


@pytest.mark.parametrize("direction,desc,kind", [
    ("FWD_B", "mb2ic20ih6oc18kh3ph1", "blocked"),
    ("FWD_I", "mb2ic20ih6oc18kh3sh2ph1", "blocked"),
    ("BWD_D", "mb2ic20ih6oc18kh3ph1", "blocked"),      # unit stride
    ("BWD_D", "mb2ic20ih6oc18kh3sh2ph1", "nhwc"),      # strided
    ("BWD_D", "mb2ic3ih12oc18kh3sh2ph1", "plain"),     # strided, 3 channels
    ("BWD_WB", "mb2ic20ih6oc18kh3ph1", "plain"),       # narrower than 14
    ("BWD_WB", "mb2ic20ih16oc18kh3ph1", "nhwc"),       # 3x3, 16 wide
    ("BWD_W", "mb16ic64ih56oc18kh1", "nhwc"),          # 1x1, few input channels, 12.8 MB: in place
    ("BWD_W", "mb16ic40ih60oc18kh1", "plain"),         # ... copied (40 channels), 9.2 MB
    ("BWD_W", "mb2ic20ih16oc18kh1", "nhwc"),           # the same, 40 KB
    ("BWD_W", "mb1ic128ih14oc16kh1", "pw/nhwc"),       # 1x1, 128 input channels
    ("BWD_W", "mb2ic3ih20oc18kh3", "plain"),           # 3 input channels
    ("BWD_W", "mb2ic3ih20oc64kh3", "nhwc512"),         # ... whole 32-wide panels: windows
    ("BWD_W", "mb2ic3ih20iw20oc64kh3kw3dw1", "plain"),        # ... dilated along w
    ("BWD_W", "mb2ic32ih14oc16kh1sh2", "nhwc"),        # strided 1x1, 7 wide
    ("BWD_W", "mb2ic64ih28oc32kh1sh2", "pw16/nhwc"),   # ... 14 wide, fewer outputs
    ("BWD_W", "mb2ic32ih28oc64kh1sh2", "pw16/nhwc"),   # ... more outputs, 0.3 MB: cached
    ("BWD_W", "mb8ic64ih56oc128kh1sh2", "nhwc"),       # ... 9.6 MB: from memory
    ("BWD_W", "mb2ic32ih7oc16kh1", "pw/plain"),        # the same at unit stride
    ("BWD_WB", "mb2ic64ih28oc256kh1", "pw/nhwc"),      # pointwise
    ("BWD_W", "mb2ic24ih7oc16kh1", "pw8/plain"),       # ... input channels not in 16s
    ("BWD_W", "mb2ic20ih7oc16kh1", "plain"),           # ... input channels not in 8s
    ("BWD_W", "g2mb2ic32ih7oc16kh1", "plain"),         # ... groups
])
def test_any_follows_the_rules_of_the_kernel_direction(direction, desc, kind):
    ex = _executor(_problem(f"--dir={direction}", desc))
    try:
        assert ex.prim.attr.layout is _on_this_cpu(kind)
        assert "+reorder" not in ex.name
    finally:
        ex.close()


@pytest.mark.parametrize("drv,args,routed", [
    ("conv", ("--stag=nchw", "--wtag=oihw", "--dtag=abx"), False),
    ("deconv", ("--wtag=iohw",), False),
    ("deconv", ("--wtag=oihw",), True),         # deconvolution's kernels transpose
    ("conv", ("--stag=nhwc",), False),          # forward: channels-last rows come first
    ("conv", ("--stag=nhwc", "--impl=+reorder"), True),         # the route, forced
    ("conv", ("--dir=BWD_W", "--stag=nChw16c"), True),   # backward weights: route first
    ("conv", ("--dir=BWD_W", "--stag=nChw16c", "--skip-impl=+reorder"), False),
    ("conv", ("--stag=chwn",), True),
    ("conv", ("--strides=::1x4x80x500@7",), True),
])
def test_a_layout_the_kernels_run_on_takes_no_route(drv, args, routed):
    ex = _executor(_problem(*args, "mb2ic20ih6oc18kh3ph1", drv=drv))
    try:
        assert ("+reorder" in ex.name) is routed
        assert native.routed(ex.prb, ex.prim.attr.layout, ex.prim.attr.src_layout) is routed
    finally:
        ex.close()


@pytest.mark.parametrize("isa,stag,desc,pointwise", [
    ("avx2", "nChw8c", "mb2ic32ih7oc16kh1", True),
    ("avx2", "nChw16c", "mb2ic32ih7oc16kh1", True),
    ("avx2", "nChw8c", "mb2ic32ih7oc16kh1sh2", False),    # strided: the route, as any other
    ("avx2", "nChw8c", "mb2ic32ih9oc16kh3ph1", False),
    ("avx512", "nChw16c", "mb2ic32ih7oc16kh1", True),
    ("avx512", "nChw8c", "mb2ic32ih7oc16kh1", False),     # AVX-512's row reads 16s only
    ("avx512", "nChw16c", "mb2ic24ih7oc16kh1", False),    # ... of input channels
    ("avx2", "nChw16c", "mb2ic64ih28oc32kh1sh2", False),  # strided: AVX-512's rule only
])
def test_a_blocked_pointwise_backward_weights_runs_on_its_row_first(isa, stag, desc,
                                                                    pointwise):
    """Backward weights on channel blocks takes the reorder route first, except a pointwise
    layer that the pointwise row of the machine's widest vectors takes: it reads its
    blocks in place."""
    if not core.isa_supported(core.Isa[isa.upper()]):
        pytest.skip(f"no {isa.upper()} on this CPU")
    try:
        core.cap_isa(isa)
        ex = _executor(_problem("--dir=BWD_W", f"--stag={stag}", f"--dtag={stag}", desc))
        try:
            assert ex.name.split("@")[0].endswith(":pointwise") is pointwise, ex.name
            assert ("+reorder" in ex.name) is not pointwise, ex.name
        finally:
            ex.close()
    finally:
        core.cap_isa("")


@pytest.mark.parametrize("drv,dt,desc,src_nhwc", [
    ("conv", "f32", "mb2ic3ih12oc18kh3sh2ph1", True),     # a first layer: src channels last
    ("conv", "f32", "mb2ic1ih9oc16kh3ph1", True),
    ("conv", "bf16", "mb2ic3ih12oc18kh3sh2ph1", True),
    ("conv", "u8:s8:u8", "mb2ic3ih12oc18kh3sh2ph1", False),   # int8: src in blocks
    ("conv", "f32", "mb2ic20ih6oc18kh3ph1", False),       # a block's worth of channels
    ("conv", "f32", "g3mb2ic6ih6oc48kh3ph1", False),      # groups
    ("deconv", "f32", "mb2ic18ih6oc3kh3ph1", False),      # a deconvolution's kernel reads dst
])
def test_any_reads_a_first_layers_src_channels_last(drv, dt, desc, src_nhwc):
    ex = _executor(_problem("--dir=FWD_B", f"--dt={dt}", desc, drv=drv))
    try:
        blocked = ex.prim.attr.layout.block > 1
        assert (ex.prim.attr.src_layout is core.ActLayout.NHWC) is (src_nhwc and blocked)
        if src_nhwc and blocked:
            assert ex.layouts["src"].describe() == "acdb"
            assert ex.layouts["dst"].describe() == f"aBcd{ex.prim.attr.layout.block}b"
        assert "+reorder" not in ex.name and not ex.to_kernel and not ex.to_memory
    finally:
        ex.close()


def test_channels_last_src_and_blocked_dst_asked_for_take_no_route():
    # the block of this CPU's direct rows (16 on AVX-512, 8 on AVX2); with neither, the
    # case takes the route like any layout no row runs on
    block = 16 if core.isa_supported(core.Isa.AVX512) else 8
    direct = core.isa_supported(core.Isa.AVX2)
    for desc in ("mb2ic3ih12oc18kh3sh2ph1", "mb2ic20ih6oc18kh3ph1"):   # any channel count
        ex = _executor(_problem("--stag=nhwc", f"--dtag=nChw{block}c", desc))
        try:
            assert (ex.prim.attr.src_layout is core.ActLayout.NHWC) is direct
            assert ("+reorder" in ex.name) is not direct
        finally:
            ex.close()
    # backward data's diff_src is written by other rows: the route
    ex = _executor(_problem("--dir=BWD_D", "--stag=nhwc", f"--dtag=nChw{block}c",
                            "mb2ic3ih12oc18kh3ph1"))
    try:
        assert ex.prim.attr.src_layout is None and "+reorder" in ex.name
    finally:
        ex.close()


def test_one_memory_is_no_route_when_only_size_one_dims_differ():
    # channels last with one channel puts every point where nchw does
    ex = _executor(_problem("--stag=nhwc", "--dtag=nhwc", "mb2ic1ih6oc1kh3ph1"))
    try:
        assert "+reorder" not in ex.name
    finally:
        ex.close()


@pytest.mark.parametrize("direction,inputs,outputs", [
    ("FWD_B", {"src", "wei"}, {"dst"}),
    ("BWD_D", {"dst", "wei"}, {"src"}),
    ("BWD_WB", {"src", "dst"}, {"wei"}),
])
def test_the_route_reorders_inputs_in_and_outputs_out(direction, inputs, outputs):
    ex = _executor(_problem(f"--dir={direction}", "--stag=nChw16c", "--wtag=OIhw16i16o",
                            "--dtag=nChw8c", "mb2ic20ih6oc18kh3ph1"))
    try:
        assert set(ex.to_kernel) == inputs and set(ex.to_memory) == outputs
        assert ex.name.endswith("+reorder")
    finally:
        ex.close()


def test_a_sum_reads_the_prior_dst_through_its_layout():
    ex = _executor(_problem("--dtag=chwn", "--attr-post-ops=sum:0.5",
                            "mb2ic20ih6oc18kh3ph1"))
    try:
        assert set(ex.to_kernel) == {"dst"} and set(ex.to_memory) == {"dst"}
    finally:
        ex.close()


def _run(prb, wei_change: float | None = None):
    """Executes prb once (after scaling the weights memory by wei_change once bound);
    returns the dst read back in logical order."""
    ex = _executor(prb)
    try:
        t = driver.tensors(prb.desc, prb.shape)
        inputs = driver.fill_inputs(prb, t, perf=False)
        mems = driver.primitive_inputs(prb, inputs, t, ex.layouts)
        outs = driver.outputs(prb, t, ex.layouts)
        run, collect = ex.bind(mems, outs)
        if wei_change is not None:
            mems["wei"][...] *= wei_change
        run()
        collect()
        return reorders.read(outs["dst"].array, ex.layouts["dst"]).copy()
    finally:
        ex.close()


def test_the_route_is_in_the_timed_callable_and_repacks_given_weights():
    desc = "mb2ic20ih6oc18kh3ph1"
    plain = _run(_problem("--dir=FWD_D", desc))
    blocked = _run(_problem("--dir=FWD_D", "--stag=nChw16c", "--dtag=nChw8c", desc))
    assert np.array_equal(plain, blocked)
    # weights in a layout of their own are read on every execution (re-packed, timed);
    # the kernels' own (any) are packed once, at bind, as oneDNN's opaque weights are
    assert np.array_equal(_run(_problem("--dir=FWD_D", "--wtag=hwio", desc), 2.0), 2 * plain)
    assert np.array_equal(_run(_problem("--dir=FWD_D", desc), 2.0), plain)


def test_impl_filter_selects_the_routed_name_it_prints():
    prb = _problem("--impl=gemm_conv:avx512+reorder", "--stag=chwn", "mb2ic20ih6oc18kh3ph1")
    res = CaseResult(Status.UNTESTED)
    ex = create_executor(prb, res)
    if ex is None:                       # a CPU without AVX-512
        assert res.status is Status.SKIPPED
        return
    ex.close()
    skipped = _problem("--skip-impl=+reorder", "--stag=chwn", "mb2ic20ih6oc18kh3ph1")
    res = CaseResult(Status.UNTESTED)
    assert create_executor(skipped, res) is None and res.status is Status.SKIPPED


def _dense_like(lay: layout.Layout) -> layout.Layout:
    """The dense layout with lay's dim order: what a route that ignores strides reads."""
    order = sorted(range(lay.ndims), key=lambda d: -lay.strides[d])
    strides, step = [0] * lay.ndims, 1
    for d in reversed(order):
        strides[d] = step
        step *= lay.dims[d]
    return layout.strided_layout(lay.dims, tuple(strides))


@pytest.mark.parametrize("direction,name", [("FWD_B", "src"), ("BWD_D", "dst"),
                                            ("BWD_WB", "src")])
def test_a_route_that_ignores_an_inputs_non_dense_strides_fails_the_case(monkeypatch,
                                                                         direction, name):
    strides = {"src": "887x1x147x24@3::", "dst": "::1x4x80x500@7"}[name]
    prb = _problem(f"--dir={direction}", f"--strides={strides}", "mb2ic20ih6oc18kh3ph1")
    real_create = native.create

    def create(prb, res):
        ex = real_create(prb, res)
        lay = ex.layouts[name]
        ex.to_kernel[name] = reorders.reorder(_dense_like(lay), ex.kernel[name],
                                             driver.tensor_dts(prb)[name])
        return ex
    monkeypatch.setattr(native, "create", create)
    res = driver.run(prb, RunContext(GlobalSettings(), 0, lambda _: None))
    assert res.status is Status.FAILED and res.errors > 0
    # and the same case with the honest route passes
    monkeypatch.setattr(native, "create", real_create)
    assert driver.run(prb, RunContext(GlobalSettings(), 0, lambda _: None)).status is \
        Status.PASSED
