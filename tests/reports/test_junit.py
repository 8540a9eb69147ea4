"""--junit=FILE: one testcase per case with the statuses CI systems understand, suite
properties, and a file that stays valid whatever stops the run."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import run_cli

from benchdnn_py.reports import junit
from benchdnn_py.status import Status


def suite_of(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


def test_every_status_becomes_what_ci_reads(tmp_path):
    xml = tmp_path / "run.xml"
    batch = tmp_path / "mixed"
    # passed, failed (with points), skipped (filter), unimplemented, invalid, from a batch
    batch.write_text("ic8ih6oc8kh3ph1\n--impl=no_such_impl ic4ih4oc4kh1\n--reset\n"
                     "--dir=BWD_W --attr-post-ops=relu ic4ih4oc4kh1\n--reset\nic16ih-4oc16kh3\n"
                     "ic4ih5oc4kh1\n")
    res = run_cli("--conv", f"--junit={xml}", f"--batch={batch}",
                  env={"BENCHDNN_PY_TEST_FAULT": "skip_last_ic"})
    assert res.code == 1
    suite = suite_of(xml)
    assert suite.get("name") == "benchdnn-py --conv"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"),
            suite.get("errors")) == ("5", "3", "2", "0")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["cpu"] and "scalar" in props["isa"].split(",")
    assert int(props["threads"]) >= 1 and props["jobs"] == "1"
    cases = suite.findall("testcase")
    assert {c.get("classname") for c in cases} == {"conv.mixed"}
    assert [c.get("name") for c in cases] == [
        "--conv ic8ih6oc8oh6kh3ph1", "--conv --impl=no_such_impl ic4ih4oc4oh4kh1ph0",
        "--conv --dir=BWD_W --attr-post-ops=relu ic4ih4oc4oh4kh1ph0", "--conv ic16ih-4oc16kh3",
        "--conv ic4ih5oc4oh5kh1ph0"]
    assert all(float(c.get("time")) >= 0 for c in cases)
    failure = cases[0].find("failure")
    assert failure.get("type") == "FAILED" and failure.get("message").startswith("errors:")
    assert "[COMPARE_STATS][DST]" in failure.text and "exp_f32:" in failure.text
    assert failure.text.splitlines()[-1].startswith("0:FAILED (errors:")
    assert cases[1].find("skipped").attrib == {"message": "Skip-impl option hit",
                                               "type": "SKIPPED"}
    assert cases[2].find("skipped").get("type") == "UNIMPLEMENTED"
    assert "forward propagation only" in cases[2].find("skipped").get("message")
    assert cases[3].find("failure").get("type") == "INVALID_ARGUMENTS"
    assert cases[4].find("failure").get("type") == "FAILED"


def test_counts_read_back_from_a_file():
    cases = [junit.testcase({"driver": "conv", "repro": f"--conv x{i}", "status": s.value,
                             "wall_ms": 1.0, "reason": ""}, "b")
             for i, s in enumerate([Status.PASSED, Status.MISTRUSTED, Status.FAILED,
                                    Status.UNIMPLEMENTED, Status.SKIPPED, Status.UNTESTED])]
    assert [junit.status_of(c) for c in cases] == [
        Status.PASSED, Status.MISTRUSTED, Status.FAILED, Status.UNIMPLEMENTED, Status.SKIPPED,
        Status.UNTESTED]
    assert cases[1].find("system-out").text.startswith("MISTRUSTED: ")
    # JUnit from another tool: no type attribute
    foreign = ET.fromstring('<testcase name="t"><failure message="m"/></testcase>')
    assert junit.status_of(foreign) is Status.FAILED


def test_the_file_is_valid_at_every_moment(tmp_path, monkeypatch):
    path = tmp_path / "j.xml"
    writer = junit.JUnitWriter(str(path), "s", {"cpu": "x"})
    assert suite_of(path).get("tests") == "0"          # valid before the first case
    monkeypatch.setattr(junit, "FLUSH_EVERY_S", 3600.0)
    record = {"driver": "conv", "repro": "--conv a", "status": "PASSED", "wall_ms": 2.0}
    writer._last -= 2 * junit.FLUSH_EVERY_S            # the last flush long ago (not 0.0:
    writer.add(record, "b")                            # a machine up < 1 h) -> flushes
    writer.add(dict(record, repro="--conv b"), "b")    # held back by the throttle
    assert suite_of(path).get("tests") == "1"
    assert not (tmp_path / "j.xml.tmp").exists()
    writer.close()
    assert suite_of(path).get("tests") == "2"


def test_an_unwritable_file_is_a_usage_error(tmp_path):
    res = run_cli("--conv", f"--junit={tmp_path / 'no' / 'such' / 'dir.xml'}", "ic4ih4oc4kh1")
    assert res.code == 2
    assert res.err.startswith(f"benchdnn-py: error: --junit={tmp_path}/no/such/dir.xml: "
                              f"cannot write: No such file or directory")
