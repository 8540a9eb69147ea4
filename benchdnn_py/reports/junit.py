"""JUnit XML, the report every CI system reads (the xunit2 layout pytest writes).

One ``<testcase>`` per case: ``classname`` is the driver and the batch file
(``conv.conv_ci``; ``conv.command_line`` for problems given as arguments), ``name`` the
case's repro line, ``time`` in seconds. FAILED, UNTESTED_FAILED and INVALID_ARGUMENTS carry
a ``<failure>`` whose message is the reason and whose text is the first mismatching points
and the result line; SKIPPED, UNIMPLEMENTED and LISTED a ``<skipped>`` with the reason;
MISTRUSTED passes with a ``<system-out>`` note. ``type`` is the status, so ``merge`` can
count a merged file the way the run counted it. Suite properties: CPU, instruction sets,
threads.

The file is rewritten whole, through a temporary file and a rename, at most every
FLUSH_EVERY_S seconds and at the end: whenever the run is stopped, even by SIGKILL, the
file on disk is a complete, valid report of the cases it lists.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from .. import __version__, core
from ..errors import UsageError
from ..status import Status
from .results import cpu_model_and_flags

FLUSH_EVERY_S = 2.0
MAX_DETAIL_LINES = 20
_FAILURES = (Status.FAILED, Status.UNTESTED, Status.INVALID_ARGUMENTS)
_SKIPS = (Status.SKIPPED, Status.UNIMPLEMENTED, Status.LISTED)


def classname(driver: str, batch: str) -> str:
    return f"{driver}.{batch or 'command_line'}"


def testcase(record: Mapping[str, Any], batch: str, line: str = "") -> ET.Element:
    """A case's element, from its results-file record (and its result line)."""
    status = Status(record["status"])
    reason = record.get("reason") or ""
    case = ET.Element("testcase", classname=classname(record["driver"], batch),
                      name=record["repro"], time=f"{(record.get('wall_ms') or 0) / 1e3:.3f}")
    if status in _FAILURES:
        message = reason or (f"errors:{record.get('errors', 0)} total:{record.get('total', 0)}"
                             if record.get("errors") else status.value)
        failure = ET.SubElement(case, "failure", message=message, type=status.value)
        details = list(record.get("diagnostics") or [])[:MAX_DETAIL_LINES]
        failure.text = "\n".join(details + ([line] if line else []))
    elif status in _SKIPS:
        ET.SubElement(case, "skipped", message=reason or status.value, type=status.value)
    elif status is Status.MISTRUSTED:
        out = ET.SubElement(case, "system-out")
        out.text = f"MISTRUSTED: {reason or 'passed, but the output is mostly exact zeros'}"
    return case


def status_of(case: ET.Element) -> Status:
    """How a testcase counts (the status benchdnn-py wrote in ``type``; for JUnit from
    elsewhere, failure: FAILED, skipped: SKIPPED, neither: PASSED)."""
    for tag, default in (("failure", Status.FAILED), ("error", Status.FAILED),
                         ("skipped", Status.SKIPPED)):
        child = case.find(tag)
        if child is not None:
            try:
                return Status(child.get("type", ""))
            except ValueError:
                return default
    out = case.find("system-out")
    if out is not None and (out.text or "").startswith("MISTRUSTED"):
        return Status.MISTRUSTED
    return Status.PASSED


def suite(name: str, cases: Sequence[ET.Element], properties: Mapping[str, str],
          seconds: float, timestamp: str, hostname: str) -> ET.ElementTree:
    statuses = [status_of(c) for c in cases]
    root = ET.Element("testsuites", name="benchdnn-py")
    ts = ET.SubElement(root, "testsuite", name=name, tests=str(len(cases)),
                       failures=str(sum(s in _FAILURES for s in statuses)), errors="0",
                       skipped=str(sum(s in _SKIPS for s in statuses)),
                       time=f"{seconds:.3f}", timestamp=timestamp, hostname=hostname)
    props = ET.SubElement(ts, "properties")
    for key, value in properties.items():
        ET.SubElement(props, "property", name=key, value=str(value))
    ts.extend(cases)
    ET.indent(root, space=" ")
    return ET.ElementTree(root)


def write_atomically(tree: ET.ElementTree, path: str) -> None:
    tmp = f"{path}.tmp"
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)


def run_properties(settings, jobs: int, threads: int, executor: str) -> dict[str, str]:
    return {
        "cpu": cpu_model_and_flags()[0],
        "isa": ",".join(isa.name.lower() for isa in core.Isa if core.isa_supported(isa)),
        "threads": str(threads),
        "jobs": str(jobs),
        "executor": executor,
        "shard": str(settings.shard) if settings.shard else "",
        "benchdnn-py": __version__,
    }


class JUnitWriter:
    """Collects testcases and keeps FILE a valid report of those collected so far."""

    def __init__(self, path: str, name: str, properties: Mapping[str, str]) -> None:
        self.path, self.name, self.properties = path, name, dict(properties)
        self.cases: list[ET.Element] = []
        self.timestamp = datetime.datetime.now().isoformat(timespec="seconds")
        self.hostname = platform.node()
        self._start = time.monotonic()
        self._last = 0.0
        try:
            self.flush()
        except OSError as exc:
            raise UsageError(f"--junit={path}: cannot write: {exc.strerror}") from None

    def add(self, record: Mapping[str, Any], batch: str, line: str = "") -> None:
        self.cases.append(testcase(record, batch, line))
        if time.monotonic() - self._last >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        write_atomically(suite(self.name, self.cases, self.properties,
                               time.monotonic() - self._start, self.timestamp,
                               self.hostname), self.path)
        self._last = time.monotonic()

    def close(self) -> None:
        self.flush()


def read_cases(path: str) -> tuple[list[ET.Element], dict[str, str], str]:
    """(testcases, properties of the first suite, the first suite's name) of a JUnit
    file; raises ValueError naming the file and the fault."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{path}: not JUnit XML ({exc})") from None
    except LookupError as exc:   # an XML declaration naming an encoding Python lacks
        raise ValueError(f"{path}: not JUnit XML ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror}") from None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        raise ValueError(f"{path}: not JUnit XML (the root is <{root.tag}>, expected "
                         f"<testsuites> or <testsuite>)")
    cases = [c for s in suites for c in s.findall("testcase")]
    for case in cases:   # a time that is not a count of seconds would be summed later
        seconds = case.get("time") or "0"
        try:
            ok = math.isfinite(float(seconds)) and float(seconds) >= 0
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{path}: testcase `{case.get('name', '')}`: time `{seconds}` "
                             f"is not a number of seconds")
    props = {}
    name = "benchdnn-py"
    if suites:
        name = suites[0].get("name", name)
        props = {p.get("name", ""): p.get("value", "")
                 for p in suites[0].findall("properties/property")}
    return cases, props, name
