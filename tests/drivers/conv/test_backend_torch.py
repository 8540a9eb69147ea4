"""The torch backend: the same problems through PyTorch, checked by the same reference.

Tests that need torch skip, saying so, when it is not installed (the README's plain test
command installs only the test extra); with BENCHDNN_PY_REQUIRE_TORCH=1 (set by .ci/run,
which installs the torch extra) a missing torch fails them instead. The geometry and the
no-torch behaviour are tested everywhere.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import backend_unsupported, cli_threads, create_executor, run_cli

from benchdnn_py import backends, core
from benchdnn_py.backends import torch as torch_loader
from benchdnn_py.common import eltwise
from benchdnn_py.drivers import DRIVERS
from benchdnn_py.drivers.base import CaseResult
from benchdnn_py.drivers.conv import backend_torch as torch_backend
from benchdnn_py.drivers.conv.desc import parse_desc
from benchdnn_py.drivers.deconv.desc import parse_deconv
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.errors import ProblemError
from benchdnn_py.status import Status

ALL_DIRS = "--dir=FWD_B,FWD_D,FWD_I,BWD_D,BWD_W,BWD_WB"
CASE_RE = re.compile(r"^(\d+):(\w+) ")


def _cases(res) -> list[tuple[str, str]]:
    """(status, line) of every result line."""
    return [(m.group(2), line) for line in res.lines if (m := CASE_RE.match(line))]


def _problem(driver: str, text: str, **values):
    drv = DRIVERS[driver]
    full = {o.slot: o.default for o in drv.options}
    full.update(values)
    return drv.make_problem(full, text, GlobalSettings())


# --------------------------------------------------------------------------------------
# Geometry: no torch needed
# --------------------------------------------------------------------------------------

def test_geometry_of_asymmetric_padding():
    # p_r > p: one zero appended to the input, nothing cropped.
    g = torch_backend.geometry(parse_desc("ic16ih4oc16kh5sh2ph0"))
    assert (g.in_ext, g.out_ext, g.padding) == ((1, 1), (0, 0), (0, 0))
    # p_r = -7 < p = 2: torch's symmetric padding gives 9 extra outputs, cropped.
    g = torch_backend.geometry(parse_desc("ic4iw10oc4ow3kw3pw2"))
    assert (g.in_ext, g.out_ext, g.padding, g.dilation) == ((0,), (9,), (2,), (1,))
    # deconv: C is the swapped convolution; its input is the deconvolution's dst.
    g = torch_backend.geometry(parse_deconv("ic4iw5oc4ow10kw3sw2pw1"))
    assert (g.transposed, g.output_padding, g.src_ext, g.dst_ext) == (True, (1,), (0,), (0,))
    g = torch_backend.geometry(parse_deconv("ic4iw5oc4ow9kw3pw1"))
    assert (g.src_ext, g.dst_ext) == ((4,), (0,))
    assert torch_backend.geometry(parse_desc("ic4iw9oc4kw3dw1")).dilation == (2,)


@pytest.mark.parametrize("kind", ["conv", "deconv"])
def test_geometry_reproduces_every_small_problem(kind):
    """For every small 1D problem (any output size the sizes allow, so any right padding),
    torch's sizes with the extensions are consistent: C's outputs cover the problem's,
    and a transposed operator with output_padding gives back C's extended input."""
    parse = parse_desc if kind == "conv" else parse_deconv
    seen = 0
    for i, k, s, p, d in itertools.product(range(1, 7), range(1, 4), range(1, 4), range(3),
                                           range(2)):
        for o in range(1, 9):
            try:
                desc = parse(f"ic1iw{i}oc1ow{o}kw{k}sw{s}pw{p}dw{d}")
            except ProblemError:   # sizes the grammar rejects are not problems
                continue
            c_in, c_out = (o, i) if kind == "deconv" else (i, o)
            ek = (k - 1) * (d + 1) + 1
            g = torch_backend.geometry(desc)
            (ie,), (oe,), (op,) = g.in_ext, g.out_ext, g.output_padding
            assert ie >= 0 and oe >= 0
            t_in = c_in + ie
            t_out = (t_in + 2 * p - ek) // s + 1
            assert t_out == c_out + oe
            if kind == "deconv":
                assert 0 <= op < s and (t_out - 1) * s - 2 * p + ek + op == t_in
            seen += 1
    assert seen > 200


def test_no_torch_is_one_line_per_case_saying_how_to_get_it():
    """torch made unimportable: the torch cases are UNIMPLEMENTED with the install
    command, the native ones still run, and nothing else goes wrong."""
    # As on a machine without it: importing torch raises ModuleNotFoundError (a None in
    # sys.modules would also confuse scipy's own check for torch arrays).
    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'):\n"
            "            raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n"
            "sys.meta_path.insert(0, NoTorch()); sys.argv[0] = 'benchdnn-py'\n"
            "from benchdnn_py.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, "--conv", "--backend=torch,native",
                           "ic4ih5oc4kh3", "ic4iw7oc8kw3"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    lines = lines[:lines.index("= Failed cases summary (--summary=no-failures to disable) =")]
    torch_lines = [l for l in lines if re.match(r"^\d+:", l) and "--backend=torch" in l]
    assert len(torch_lines) == 2
    for line in torch_lines:
        assert line.startswith(tuple(f"{i}:UNIMPLEMENTED (PyTorch is not installed; get it "
                                     f"with: pip install \"benchdnn-py[torch]\")"
                                     for i in (0, 2))), line
    assert sum(bool(re.match(r"^\d+:PASSED .* --conv --impl=\S+ ic4", l)) for l in lines) == 2
    assert "unimplemented:2" in proc.stdout


def test_unknown_backend_is_a_usage_error_naming_it():
    res = run_cli("--conv", "--backend=native,tensorflow", "ic4ih5oc4kh3")
    assert res.code == 2
    assert "--backend=tensorflow: unknown backend `tensorflow`; expected one of native, " \
           "torch" in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_registry_is_the_one_place_and_native_is_default():
    assert list(backends.BACKENDS) == ["native", "torch", "onednn"]
    assert backends.parse("torch") == "torch"
    prb = _problem("conv", "ic4ih5oc4kh3")
    assert prb.backend == backends.NATIVE and "--backend" not in prb.repro()
    assert _problem("conv", "ic4ih5oc4kh3", backend="torch").repro().startswith(
        "--backend=torch ")


# --------------------------------------------------------------------------------------
# With torch
# --------------------------------------------------------------------------------------

def test_eltwise_table_covers_every_algorithm(torch):
    assert set(torch_loader.eltwise_ops(torch)) == set(eltwise.ALGS)


def test_threads_match_the_native_count(torch):
    torch.set_num_threads(core.max_threads() + 1)
    torch_loader.load.cache_clear()
    mod, why = torch_loader.load()
    assert mod is torch and why == ""
    assert torch.get_num_threads() == core.max_threads()
    assert torch_loader.describe()["threads"] == core.max_threads()


@pytest.mark.parametrize("driver,batch,count", [
    ("conv", "problems/shapes_basic", 216),
    ("deconv", "problems/shapes_deconv_basic", 120),
])
def test_basic_grids_pass_in_every_direction(torch, driver, batch, count):
    res = run_cli(f"--{driver}", "--backend=torch", ALL_DIRS, f"--batch={batch}")
    cases = _cases(res)
    assert res.code == 0, res.out[-3000:]
    assert len(cases) == count and all(s == "PASSED" for s, _ in cases)
    name = f"torch:{torch.__version__}"
    assert all(f"--{driver} --impl={name} --backend=torch " in l for _, l in cases)


@pytest.mark.parametrize("driver,problems", [
    # conv: extra outputs cropped (p_r < p by more than a stride), zeros appended (p_r > p),
    # 3D with a large stride
    ("conv", ["ic4iw10oc4ow3kw3pw2", "mb2ic6ih7oc4oh2kh3sh2ph3", "ic16ih4oc16kh5sh2ph0",
              "ic4id6oc4od2kd2sd3pd2", "g2ic4iw9oc6ow4kw2sw2pw1dw1"]),
    # deconv: output_padding, src extended, dst extended (dilated, grouped), 3D
    ("deconv", ["ic4iw5oc4ow10kw3sw2pw1", "ic4iw5oc4ow9kw3pw1", "ic4iw5oc4ow4kw3pw1",
                "g2ic4ih5oc6oh7kh2sh2ph1dh1", "ic3id4oc5od3kd3sd2pd2"]),
])
def test_asymmetric_padding_and_post_ops_match_the_reference(torch, driver, problems):
    res = run_cli(f"--{driver}", "--backend=native,torch", "--dir=FWD_B,BWD_D,BWD_WB",
                  *problems, "--dir=FWD_B", "--attr-post-ops=sum:0.5+relu,gelu_erf",
                  *problems)
    cases = _cases(res)
    assert res.code == 0, res.out[-3000:]
    assert len(cases) == 2 * 5 * (3 + 2) and all(s == "PASSED" for s, _ in cases)
    # native then torch for each problem, side by side
    assert all(("--backend=torch" in l) == (i % 2 == 1) for i, (_, l) in enumerate(cases))


def test_depthwise_fusion_runs_natively_and_torch_says_why_not(torch):
    res = run_cli("--conv", "--backend=native,torch", "--attr-post-ops=relu+dw_k3s2p1",
                  "ic8ih6oc8kh1")
    status = _cases(res)
    assert status[0][0] == "PASSED" and "--impl=fused_dw" in status[0][1]
    assert status[1][0] == "UNIMPLEMENTED" and "torch has no fused depthwise post-op" in \
        status[1][1]


def test_chains_torch_expresses_and_what_it_cannot(torch):
    res = run_cli("--conv", "--backend=native,torch",
                  "--attr-post-ops=relu+sum:0.5,relu+tanh,dw:k3s1p1", "ic8ih6oc8kh3ph1",
                  "--attr-post-ops=relu", "--dir=BWD_D", "ic8ih6oc8kh3ph1",
                  "--attr-post-ops=", "--dir=FWD_B", "--dt=bf16", "ic8ih6oc8kh3ph1")
    status = [(s, l) for s, l in _cases(res)]
    # relu+sum and relu+tanh (beyond the spec's f32 matrix): both backends run them
    assert [s for s, _ in status[:4]] == ["PASSED"] * 4
    # dw after a 3x3: the spec's limit, on both backends
    assert all(s == "UNIMPLEMENTED" and "follows a 2D 1x1 convolution only" in l
               for s, l in status[4:6])
    # backward with post-ops: the problem's own limit, on both backends
    assert all(s == "UNIMPLEMENTED" and "no intermediate for the backward pass" in l
               for s, l in status[6:8])
    # bf16: both backends run it
    assert status[8][0] == "PASSED" and status[9][0] == "PASSED"
    assert res.code == 1


def test_skip_impl_and_perf_lines(torch):
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=3", "--backend=native,torch",
                  "--skip-impl=gemm", "ic8ih6oc8kh3ph1", "--skip-impl=torch", "ic8ih6oc8kh3ph1")
    cases = _cases(res)
    assert [s for s, _ in cases] == ["SKIPPED", "SKIPPED"]
    perf = [l for l in res.lines if l.startswith("perf,cpu,")]
    assert len(perf) == 2 and perf[0].startswith(f"perf,cpu,torch:{torch.__version__},")
    assert perf[1].startswith(("perf,cpu,gemm_conv:", "perf,cpu,gemm_conv_blocked:"))
    assert all("Skip-impl option hit" in l for _, l in cases)


def test_run_is_only_the_torch_call(torch):
    """The timed callable leaves the output buffers alone (the copy back is collect's,
    untimed); after collect they hold the reference's values."""
    from benchdnn_py.drivers.conv import driver
    prb = _problem("conv", "g2ic8ih7oc8kh3sh2ph1", backend="torch")
    res = CaseResult(Status.UNTESTED)
    assert backend_unsupported(prb) is None
    ex = create_executor(prb, res)
    assert ex is not None and ex.name == f"torch:{torch.__version__}"
    t = driver.tensors(prb.desc, prb.shape)
    inputs = driver.fill_inputs(prb, t, perf=False)
    outs = driver.outputs(prb, t)
    run, collect = ex.bind(inputs, outs)
    run()
    assert np.isnan(outs["dst"].array).all()
    collect()
    ref = driver.reference(prb, inputs, driver.quant_of(prb, prb.shape.oc), None)["dst"]
    assert np.array_equal(outs["dst"].array, ref.ravel().astype(np.float32))


def test_torch_rejection_is_unimplemented_with_its_message(torch, monkeypatch):
    prb = _problem("conv", "ic4ih5oc4kh3", backend="torch")

    def reject(self):
        raise RuntimeError("Given groups=1, weight of size [4, 4, 3, 3] is wrong\nmore")
    monkeypatch.setattr(torch_backend._Program, "meta_check", reject)
    res = CaseResult(Status.UNTESTED)
    assert create_executor(prb, res) is None
    assert res.status is Status.UNIMPLEMENTED
    assert res.reason == "torch rejects this problem: Given groups=1, weight of size " \
                         "[4, 4, 3, 3] is wrong"


def test_results_record_backend_version_and_threads(torch, tmp_path):
    from benchdnn_py.reports import results
    head = results.header("conv", ["--conv"], ["native", "torch", "native"])
    assert head["backend"] == "native,torch"
    assert head["environment"]["backends"] == {"torch": {
        "available": True, "version": torch.__version__, "threads": core.max_threads(),
        "mkldnn": torch.backends.mkldnn.is_available()}}
    assert head["environment"]["threads"]["max"] == core.max_threads()
    assert results.header("conv", ["--conv"])["backend"] == "native"
    path = tmp_path / "r.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=2", "--backend=native,torch",
                  "ic8ih6oc8kh3ph1", f"--results={path}")
    assert res.code == 0, res.err
    cases = results.read(str(path)).cases
    assert [(c["backend"], c["impl"].startswith("torch:")) for c in cases] == [
        ("native", False), ("torch", True)]
    assert all(len(c["samples_ms"]) == 2 for c in cases)


def test_data_types_torch_cannot_express_are_unimplemented(torch):
    res = run_cli("--conv", "--backend=torch", "--dt=bf16:bf16:f32,u8:s8:u8",
                  "ic8ih6oc8kh3ph1", "--dt=bf16", "--dir=BWD_WB", "ic8ih6oc8kh3ph1")
    status = [(s, l) for s, l in _cases(res)]
    assert all(s == "UNIMPLEMENTED" and "torch runs a convolution in one data type" in l
               for s, l in status[:2])
    assert status[2][0] == "PASSED"


def test_torch_runs_plain_layouts_only(torch):
    from benchdnn_py.common import layout
    tag = layout.parse_tag
    plain = _problem("conv", "ic4ih5oc4kh3", backend="torch", stag=tag("nchw"),
                     wtag=tag("oihw"))
    assert backend_unsupported(plain) is None
    res = CaseResult(Status.UNTESTED)
    ex = create_executor(plain, res)
    assert ex.layouts["src"].describe() == "abcd"
    for values in ({"stag": tag("nhwc")}, {"dtag": tag("nChw16c")},
                   {"strides": (None, None, ((1, 2, 8, 24), 0))}):
        status, why = backend_unsupported(_problem("conv", "ic4ih5oc4kh3", backend="torch",
                                                    **values))
        assert status is Status.UNIMPLEMENTED and "plain layouts only" in why


def test_threads_sets_torchs_thread_count_case_by_case(torch):
    """--threads runs torch's operators on that many threads too (its executor reports the
    count at -v5), and the next case gets the process's count back."""
    res = run_cli("--conv", "--backend=torch", "--threads=1,0", "-v5", "mb1ic8ih6oc8kh3ph1")
    assert res.code == 0, res.err
    counts = [l.split("(threads=")[1].split(")")[0] for l in res.lines
              if "implementation: torch:" in l]
    assert counts == ["1", str(cli_threads())]
