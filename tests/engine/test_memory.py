"""The memory guard: each case's estimate (the driver's buffers and the primitive's own
memory) against a RAM budget the run's workers share, SKIPPED (Not enough RAM) before
anything is allocated when it cannot fit, and the peak RSS each case really reached,
reported against its estimate."""

from __future__ import annotations

import json
import time
import types

import numpy as np
import pytest
from conftest import run_cli

from benchdnn_py.drivers.base import RunContext
from benchdnn_py.drivers.conv import driver as conv_driver
from benchdnn_py.drivers.eltwise import driver as eltwise_driver
from benchdnn_py.engine import harness, memory, workers
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.engine.timing import WAIT_TIMER, Stopwatch
from benchdnn_py.reports import text
from benchdnn_py.status import Reason, Status


def test_the_budget_is_a_share_of_physical_memory_split_for_workers(monkeypatch):
    monkeypatch.setattr(memory, "physical_memory_bytes", lambda: 16000)
    serial = memory.Budget()
    assert serial.total == 11200 and serial.fits(11200) and not serial.fits(11201)
    two = memory.Budget(jobs=2)
    # a case of up to an eighth of the total over the workers runs without asking; a
    # larger one may take all but the other worker's small share
    assert (two.small, two.limit) == (700, 10500)
    assert two.fits(10500) and not two.fits(10501)
    assert two.grantable(10500, [0]) and two.grantable(10500, [700])
    assert not two.grantable(10500, [701])
    assert two.grantable(5600, [5600]) and not two.grantable(5601, [5600])
    # what each keeps of freed memory: a worker its share; a serial run a -j 2 worker's
    assert two.keep == two.small == serial.keep == 700
    assert memory.Budget(jobs=4).keep == memory.Budget(jobs=4).small == 350


def test_a_small_case_does_not_ask_and_a_large_one_waits_for_its_grant():
    asked = []
    budget = memory.Budget(asked.append, jobs=2)
    budget.hold(budget.small)
    assert asked == []
    budget.hold(budget.small + 1)
    assert asked == [budget.small + 1]


def test_the_wait_for_a_grant_is_timed_and_shown_only_when_a_case_waited(monkeypatch):
    asked = []

    def ask(nbytes):
        asked.append(nbytes)
        time.sleep(0.05)   # the parent grants after the other worker's case ends

    budget = memory.Budget(ask, jobs=2)
    budget.small = 0       # (this small case asks as a large one does)
    monkeypatch.setattr(memory, "_budget", budget)
    res = conv_driver.run(_problem("ic8ih8oc8kh3"), RunContext(GlobalSettings(), 0, print))
    assert res.status is Status.PASSED and asked == [res.memory.estimate]
    assert res.timers.seconds[WAIT_TIMER] >= 0.05
    settings = GlobalSettings()
    assert text.active_timers(settings, res.timers)[-1] == WAIT_TIMER
    assert WAIT_TIMER not in text.active_timers(settings, Stopwatch())


def _worker(held=0, wants=None, asked=0.0):
    sent = []
    conn = types.SimpleNamespace(send=sent.append)
    return types.SimpleNamespace(held=held, wants=wants, asked=asked, conn=conn, sent=sent)


def test_the_parent_grants_memory_first_asked_first_while_it_fits(monkeypatch):
    monkeypatch.setattr(memory, "physical_memory_bytes", lambda: 16000)   # total 11200
    pool = workers.LocalPool(3)
    small = pool.budget.small
    a = _worker(held=6000)
    b = _worker(wants=6000, asked=1.0)    # first to ask: does not fit beside a
    c = _worker(wants=small, asked=2.0)   # would fit, but may not overtake b
    pool._workers = [a, b, c]
    pool._grant()
    assert (b.sent, c.sent) == ([], [])
    a.held = 0                            # a's case reported
    pool._grant()
    assert b.sent == [workers.GRANTED] and b.held == 6000 and b.wants is None
    assert c.sent == [workers.GRANTED]
    pool._workers = []


def test_a_case_too_big_is_skipped_before_any_allocation(monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("allocated or created for a case that does not fit")

    monkeypatch.setattr(memory, "RAM_SHARE", 1e-12)   # nothing fits
    monkeypatch.setattr(memory, "_budget", None)
    monkeypatch.setattr(conv_driver.STEPS, "create", must_not_run)
    monkeypatch.setattr(conv_driver.STEPS, "prepare", must_not_run)
    plan = harness.plan(["--conv", "--dir=FWD_B,BWD_D,BWD_WB", "ic8ih8oc8kh3"])
    for case in plan.cases:
        prb = case.driver.make_problem(case.values, case.desc_text, case.settings)
        res = conv_driver.run(prb, RunContext(GlobalSettings(), 0, print))
        assert (res.status, res.reason) == (Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value)


def test_the_command_line_skips_a_problem_no_machine_holds():
    res = run_cli("--conv", "-j", "2", "mb4096ic4096ih1024oc4096kh3", "ic8ih8oc8kh3")
    assert res.code == 0
    assert res.lines[0].startswith("0:SKIPPED (Not enough RAM) (")
    assert res.lines[1].startswith("1:PASSED")
    assert res.summary()["skipped"] == 1


def _problem(desc: str, *options: str):
    (case,) = harness.plan(["--conv", *options, desc]).cases
    return case.driver.make_problem(case.values, case.desc_text, case.settings)


def test_sampled_check_is_not_charged_the_full_reference():
    """The f64 reference and compare temporaries scale with the points computed: a
    sampled case is charged them for N points only."""
    full = _problem("mb16ic256ih56oc64kh1")
    sampled = _problem("mb16ic256ih56oc64kh1", "--check=sampled:1000")
    dst = 16 * 64 * 56 * 56
    saved = conv_driver.footprint_bytes(full, full.shape) - conv_driver.footprint_bytes(
        sampled, sampled.shape)
    assert saved == conv_driver.REF_BYTES_PER_POINT * (dst - 1000)


def test_footprint_sizes_each_tensor_by_its_data_type():
    """A u8 dst takes a quarter of f32's bytes; u8 src and s8 weights are held in their
    types beside the f32 values they were filled from, which plain f32 inputs are
    themselves; the f32 bias and the reference's bytes are the same."""
    f32 = _problem("mb2ic64ih28oc64kh3ph1")
    int8 = _problem("mb2ic64ih28oc64kh3ph1", "--dt=u8:s8:u8")
    shape = f32.shape
    src, wei, dst = (int(np.prod(s)) for s in (shape.src_shape, shape.wei_shape, shape.dst_shape))
    delta = conv_driver.footprint_bytes(f32, shape) - conv_driver.footprint_bytes(int8, shape)
    assert delta == 3 * dst - (src + wei)


def test_footprint_counts_the_layouts_the_primitive_resolved():
    """`any` tags resolved to a blocked layout: two channels padded to a block of 16 (8 on
    an AVX2-only CPU) hold 8 (4) times the points, and the judge checks the padding; the
    estimate after creation counts them."""
    prb = _problem("mb2ic2ih64oc2oh64kh1ph0")
    prim = conv_driver.STEPS.create(prb, conv_driver.CaseResult(Status.UNTESTED))
    lays = prim.layouts
    (axis, block), = lays["dst"].blocks
    assert axis == 1 and block in (8, 16)
    grown = block // 2
    assert lays["dst"].padded_nelems == grown * lays["dst"].nelems
    plain = conv_driver.footprint_bytes(prb, prb.shape)
    assert conv_driver.footprint_bytes(prb, prb.shape, lays) > \
        plain + (grown - 1) * conv_driver.PADDING_CHECK_BYTES * lays["dst"].nelems
    assert conv_driver.STEPS.estimate(prb, prim) == (
        conv_driver.footprint_bytes(prb, prb.shape, lays) + prim.memory_bytes)


def test_a_case_past_the_budget_after_creation_is_skipped_before_its_buffers(monkeypatch):
    # The driver's buffers fit; the primitive's own memory (its scratch) does not.
    def must_not_run(*args, **kwargs):
        raise AssertionError("allocated the buffers of a case that does not fit")

    monkeypatch.setattr(memory, "physical_memory_bytes", lambda: 10**9)
    monkeypatch.setattr(memory, "_budget", None)   # (made again from the memory above)
    prb = _problem("ic8ih8oc8kh3")
    created = conv_driver.STEPS.create

    def huge(prb, res):
        prim = created(prb, res)
        prim.memory_bytes = 10**9
        return prim

    monkeypatch.setattr(conv_driver.STEPS, "create", huge)
    monkeypatch.setattr(conv_driver.STEPS, "prepare", must_not_run)
    res = conv_driver.run(prb, RunContext(GlobalSettings(), 0, print))
    assert (res.status, res.reason) == (Status.SKIPPED, Reason.NOT_ENOUGH_RAM.value)


# One of each driver and backend, in the sizes where the buffers dwarf the RSS's noise.
MEASURED = [
    ("--conv", "--dir=FWD_B,BWD_D,BWD_WB", "mb8ic64ih56oc256kh1"),
    ("--conv", "--dt=u8:s8:u8", "mb8ic64ih56oc256kh1"),
    ("--conv", "--dir=BWD_WB", "--stag=axb", "g1ic64ih250oc64oh250kh3ph32dh31"),
    ("--conv", "--backend=onednn,torch", "mb8ic64ih56oc256kh1"),
    ("--deconv", "--dir=BWD_D", "mb8ic64ih56oc64kh3ph1"),
    ("--pool", "--dir=BWD_D", "--tag=aBcd16b", "mb8ic64ih112oh56kh3sh2ph1"),
    ("--eltwise", "--dir=BWD_D", "--alg=gelu_erf", "8x64x56x56"),
    ("--reorder", "--stag=abx", "--dtag=ABx16a16b", "8x64x112x112"),
    ("--bnorm", "--dir=FWD_D,BWD_DW", "--flags=,CHA", "--tag=abx,aBx16b", "mb8ic64ih56"),
]


@pytest.mark.parametrize("args", MEASURED, ids=lambda a: a[0][2:])
def test_every_case_stays_within_its_estimate(tmp_path, request, args):
    if "--backend=onednn,torch" in args:   # (skips without the extras, as their tests do)
        request.getfixturevalue("onednn_lib")
        request.getfixturevalue("torch")
    results = tmp_path / "r.jsonl"
    res = run_cli(args[0], "-v2", f"--results={results}", *args[1:])
    assert res.code == 0, res.out + res.err
    records = [json.loads(line) for line in results.read_text().splitlines()]
    cases = [r for r in records if r["type"] == "case" and r["status"] == "PASSED"]
    assert cases
    for r in cases:
        m = r["memory"]
        assert m["peak_rss_bytes"] is not None, r["repro"]
        # the case's real peak: at least its tensors, at most its estimate (and slack)
        assert m["tensor_bytes"] <= m["peak_rss_bytes"] + memory.RSS_SLACK_BYTES
        assert m["peak_rss_bytes"] <= m["estimate_bytes"] + memory.RSS_SLACK_BYTES, r["repro"]
        assert m["tensor_bytes"] < m["estimate_bytes"]
    # -v2 prints each case's line; no case grew past its estimate
    assert sum(line.startswith("memory: tensors ") for line in res.lines) == len(cases)
    assert "memory guard:" not in res.out


def test_a_peak_past_the_estimate_is_reported(monkeypatch, capsys):
    # (a tensor of 51 MB: numpy maps arrays this large afresh, so the RSS grows even in a
    # process whose heap has room to spare)
    monkeypatch.setattr(memory, "RSS_SLACK_BYTES", 0)
    monkeypatch.setattr(eltwise_driver.STEPS, "footprint", lambda prb: 0)   # a missed buffer
    (case,) = harness.plan(["--eltwise", "16x64x112x112"]).cases
    prb = case.driver.make_problem(case.values, case.desc_text, case.settings)
    res = eltwise_driver.run(prb, RunContext(GlobalSettings(verbose=2), 0, print))
    assert res.status is Status.PASSED
    assert res.memory.peak > res.memory.estimate and res.memory.over
    assert res.diagnostics[-1].startswith("memory guard: the case's peak RSS grew by ")
    assert capsys.readouterr().out.splitlines()[-1].startswith("memory: tensors ")


def test_cases_timed_in_turns_count_their_own_buffers_not_their_group_s(tmp_path):
    """--perf-interleave holds a descriptor's cases alive together: the mb1 case's peak
    is its own (and the shared timing's), not the mb32 case's buffers beside it."""
    results = tmp_path / "r.jsonl"
    res = run_cli("--conv", "--mode=P", "--fix-times-per-prb=2", "--perf-interleave=true",
                  "--dir=BWD_W", "--mb=1,32", f"--results={results}",
                  "ic3ih224oc64oh112kh7sh2ph3")
    assert res.code == 0, res.out + res.err
    cases = [r for r in map(json.loads, results.read_text().splitlines())
             if r["type"] == "case"]
    assert [c["status"] for c in cases] == ["EXECUTED"] * 2
    small, large = (c["memory"] for c in cases)
    # the mb32 case's tensors alone are past the mb1 case's estimate and slack
    assert large["tensor_bytes"] > small["estimate_bytes"] + memory.RSS_SLACK_BYTES
    for c in cases:
        m = c["memory"]
        assert m["peak_rss_bytes"] is not None
        assert m["peak_rss_bytes"] <= m["estimate_bytes"] + memory.RSS_SLACK_BYTES, c["repro"]
        assert not any(d.startswith("memory guard:") for d in c["diagnostics"])


_PAUSED_SCRIPT = r"""
import numpy as np
from benchdnn_py.engine import memory

mib = 1 << 20
rss = memory.PeakRss()
mine = np.ones(64 * mib, np.uint8)       # its own stretch: counted
rss.pause()
other = np.ones(128 * mib, np.uint8)     # another case's, while paused: not counted
rss.resume(32 * mib)                     # what the shared timing added: counted on top
more = np.ones(48 * mib, np.uint8)       # its own again, beside the 64 it holds
print(rss.added())
unknown = memory.PeakRss()
unknown.pause()
unknown.resume(None)
print(unknown.added())
"""


def test_a_paused_peak_counts_its_own_stretches_and_the_shared_one():
    import subprocess
    import sys
    added, unknown = subprocess.run([sys.executable, "-c", _PAUSED_SCRIPT],
                                    capture_output=True, text=True,
                                    check=True).stdout.split()
    mib = 1 << 20
    assert 112 * mib - 4 * mib <= int(added) <= 112 * mib + 8 * mib   # max(64 + 32, 64 + 48)
    assert unknown == "None"


_FREED_SCRIPT = r"""
import sys
import numpy as np
from benchdnn_py.engine import memory

def rss():
    return memory._status_kib("VmRSS")

keep = 256 << 20
if sys.argv[1] == "keep":
    assert memory.keep_freed_memory(keep).active
base = rss()
a = np.ones(64 << 20, np.uint8)            # 64 MiB, touched
del a
kept = rss() - base
b = np.ones(3 * keep, np.uint8)            # past keep, then something above it
c = np.ones(1 << 20, np.uint8)
del b                                      # a hole below c: free() cannot trim it
hole = rss() - base
memory.after_case(3 * keep)                # a case that allocated past keep ended
print(kept, hole, rss() - base)
"""


@pytest.mark.parametrize("mode", ["keep", "default"])
def test_freed_arrays_stay_resident_up_to_the_keep_size(mode):
    """With FreedMemory, an array a case frees stays resident for the next case, and a
    case that allocated past the keep size leaves at most that much behind, holes below
    the heap's top included; by default glibc returns a large array's pages when it is
    freed."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _FREED_SCRIPT, mode], capture_output=True,
                         text=True, check=True).stdout.split()
    kept, hole, after = (int(v) for v in out)
    mib = 1 << 20
    if mode == "keep":
        assert kept >= 60 * mib
        assert hole >= 700 * mib          # resident until the case's end trims it
        assert after <= 256 * mib + 16 * mib
    else:
        assert kept < 4 * mib and hole < 4 * mib and after < 4 * mib
