"""Property-based fuzzing of the argument stream (hypothesis): whatever a command line or
a batch file holds, reading it either gives a plan or raises UsageError (one line, exit
2), and every problem either parses or raises ProblemError (INVALID_ARGUMENTS); never
another exception. Every problem that parses prints a repro line that reads back to the
same problem. `--hypothesis-profile=nightly` runs many more examples."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import assert_one_line
from hypothesis import given
from hypothesis import strategies as st

from benchdnn_py.drivers import DRIVERS
from benchdnn_py.engine import batch, harness
from benchdnn_py.engine.execute import repro_of
from benchdnn_py.engine.settings import GLOBAL_OPTIONS
from benchdnn_py.errors import UsageError

# What descriptors and option values are made of: the grammars' letters and digits, the
# separators they use, and characters they must refuse (a full-width digit, a sign).
GRAMMAR_KEYS = ["mb", "g", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd", "kh", "kw",
                "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw", "n", "_dw", "x", "_n"]
NUMBERS = st.one_of(st.integers(-3, 70).map(str), st.sampled_from(
    ["0", "00", "99999999999999999999", "１", "1e3", "", "-0", "7.5"]))
JUNK = st.text(alphabet='abcdefghijklmnopqrstuvwxyz0123456789_:x,.+-="\'#\\ ', max_size=12)
DESCRIPTOR = st.one_of(
    st.lists(st.tuples(st.sampled_from(GRAMMAR_KEYS), NUMBERS), min_size=1, max_size=8)
    .map(lambda parts: "".join(k + v for k, v in parts)),
    st.lists(st.integers(0, 9).map(str), min_size=1, max_size=5).map("x".join),
    JUNK)
GOOD_VALUES = ["f32", "bf16", "f16", "s8", "u8", "s32", "u8:s8:u8", "bf16:bf16:f32",
               "FWD_B", "FWD_D", "FWD_I", "BWD_D", "BWD_W", "BWD_WB", "BWD", "true", "false",
               "1", "2", "16", "0", "any", "abx", "axb", "aBx16b", "nchw", "nhwc", "relu",
               "sum", "sum:0.5", "relu:0.1+sum", "eltwise_relu", "max", "avg_np",
               "avg_p", "direct", "wino", "auto", "common:0.5", "src:common:2", "C", "P",
               "CP", "L", "native", "torch", "avx2", "scalar", "def", "csv", "%-time%"]
VALUE = st.one_of(st.sampled_from(GOOD_VALUES), JUNK,
                  st.lists(st.sampled_from(GOOD_VALUES), min_size=2, max_size=3)
                  .map(",".join))


def _option_names() -> list[str]:
    names = {o.name for o in GLOBAL_OPTIONS.values()}
    for driver in DRIVERS.values():
        names.update(o.name for o in driver.options)
    return sorted(names)


OPTION = st.tuples(st.sampled_from(_option_names() + ["nonexistent", "dir", "cfg"]),
                   VALUE).map(lambda nv: f"--{nv[0]}={nv[1]}")
DRIVER_FLAG = st.sampled_from([f"--{name}" for name in DRIVERS])
TOKEN = st.one_of(OPTION, DESCRIPTOR, DRIVER_FLAG, st.just("--reset"), st.just("-v2"),
                  st.just("--mode=L"))


def _read(argv: list[str]) -> harness.Plan | None:
    """The plan, or None for a usage error, which must be one line naming something."""
    try:
        return harness.plan(argv)
    except UsageError as exc:
        assert_one_line(exc)
        return None
    except harness.HelpRequested:
        return None


def _check_round_trip(plan: harness.Plan) -> None:
    for case in plan.cases[:12]:
        prb, repro, error = repro_of(case)
        if prb is None:
            assert_one_line(error)
            continue
        # read back as a batch file would; a case option's value is a path, which the
        # repro quotes for the shell when it has to
        tokens = shlex.split(repro) if case.driver.case_option else batch.tokenize(repro)
        again = harness.plan([f"--{case.driver.name}", *tokens])
        assert len(again.cases) == 1, (repro, again.cases)
        prb2, repro2, error2 = repro_of(again.cases[0])
        assert error2 is None, (repro, error2)
        assert repro2 == repro


@given(st.lists(TOKEN, max_size=10), DRIVER_FLAG)
def test_any_argument_stream_plans_or_is_one_usage_error(tokens, driver):
    plan = _read([driver, *tokens])
    if plan is not None:
        _check_round_trip(plan)


@given(DRIVER_FLAG, st.lists(st.tuples(st.sampled_from(GRAMMAR_KEYS[:22]),
                                       st.integers(1, 40)), min_size=1, max_size=10))
def test_every_descriptor_that_parses_prints_a_repro_that_reruns_it(driver, parts):
    plan = _read([driver, "".join(f"{k}{v}" for k, v in parts)])
    if plan is not None:
        _check_round_trip(plan)


@given(data=st.data())
def test_any_batch_file_plans_or_is_one_usage_error(tmp_path_factory, data):
    tmp: Path = tmp_path_factory.mktemp("batch")
    body = data.draw(st.one_of(
        st.binary(max_size=300).map(lambda b: b),
        st.lists(st.one_of(TOKEN, st.just("--batch=self"), st.just("--batch=missing"),
                           st.just("#"), st.just("\\"), st.just("\n")), max_size=12)
        .map(lambda ts: " ".join(ts).encode())))
    (tmp / "self").write_bytes(body)
    plan = _read([data.draw(DRIVER_FLAG), f"--batch={tmp / 'self'}"])
    if plan is not None:
        _check_round_trip(plan)
