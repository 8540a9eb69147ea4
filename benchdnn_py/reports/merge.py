"""``benchdnn-py merge OUT IN...``: the shards of one run (--shard=K/N) back into one
results file, or one JUnit file, with one summary.

The kind of every input is read from its content (JUnit XML starts with ``<``; a results
file is JSON Lines, plain or gzip). Results records are put back in the unsharded run's
order by their case index, which every shard numbers the same way; the same case in two
inputs (one shard given twice) is an error. JUnit testcases are concatenated in input
order, and the suite's counts recomputed.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import os
import platform
from typing import Any

from ..errors import BenchError
from ..status import Counts, Status
from . import junit, results


class MergeError(BenchError):
    """An input that cannot be merged; str() names the file and the fault."""


@dataclasses.dataclass
class Merged:
    kind: str                     # "results" or "junit"
    counts: Counts
    failed: list[str]             # one line per failed case, in order
    warnings: list[str]


def kind_of(path: str) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError as exc:
        raise MergeError(f"{path}: cannot read: {exc.strerror}") from None
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(256)
        except (OSError, EOFError):
            return "results"   # results.read reports what is wrong with it
    return "junit" if head.lstrip().startswith(b"<") else "results"


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (another spelling, a link), existing or not."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.abspath(a) == os.path.abspath(b)


def merge(out: str, inputs: list[str], replace: bool = False) -> Merged:
    """The inputs joined into OUT. OUT is written from scratch: never over an input (a
    forgotten OUT argument makes the first shard OUT), over an existing file only with
    replace."""
    if any(_same_file(out, p) for p in inputs):
        raise MergeError(f"OUT `{out}` is also an input; name a new file")
    if os.path.exists(out) and not replace:
        raise MergeError(f"OUT `{out}` exists (did you forget the output file?); name a new "
                         f"file, or pass --replace to overwrite it")
    kinds = {path: kind_of(path) for path in inputs}
    if len(set(kinds.values())) > 1:
        listing = ", ".join(f"{p} ({k})" for p, k in kinds.items())
        raise MergeError(f"the inputs mix results files and JUnit files: {listing}")
    if next(iter(kinds.values())) == "junit":
        return _merge_junit(out, inputs)
    return _merge_results(out, inputs)


def _merge_results(out: str, inputs: list[str]) -> Merged:
    files = []
    for path in inputs:
        try:
            files.append(results.read(path))
        except results.ResultsError as exc:
            raise MergeError(str(exc)) from None
    first = files[0]
    warnings = [w for f in files for w in f.warnings]
    for f in files[1:]:
        if f.header.get("driver") != first.header.get("driver"):
            raise MergeError(f"{f.path}: a --{f.header.get('driver')} run; {first.path} is "
                             f"--{first.header.get('driver')}")
    seen: dict[tuple[Any, str], str] = {}
    cases = []
    for f in files:
        for record in f.cases:
            ident = (record.get("idx"), record["key"])
            if ident in seen:
                raise MergeError(f"{f.path}: case {ident[0]} `{ident[1]}` is also in "
                                 f"{seen[ident]} (the same shard twice?)")
            seen[ident] = f.path
            cases.append(record)
    cases.sort(key=lambda r: r.get("idx", 0))
    counts = Counts()
    failed = []
    for record in cases:
        status = Status(record["status"])
        counts.add(status)
        if status.is_failure:
            reason = f" ({record['reason']})" if record.get("reason") else ""
            failed.append(f"{record.get('idx')}:{status.value}{reason} __REPRO: "
                          f"{record.get('repro', record['key'])}")
    header = dict(first.header)
    header["merged_from"] = [f.path for f in files]
    interrupted = any(not f.complete for f in files)
    footer = {"type": "footer", "cases": len(cases), "counts": counts.values,
              "interrupted": interrupted, "others_cpus": None,
              "wall_seconds": _sum_or_none(f.footer and f.footer.get("wall_seconds")
                                           for f in files),
              "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds")}
    try:
        results.write(out, header, cases, footer)
    except OSError as exc:
        raise MergeError(f"{out}: cannot write: {exc.strerror}") from None
    return Merged("results", counts, failed, warnings)


def _sum_or_none(values) -> float | None:
    values = list(values)
    return None if any(v is None for v in values) else round(sum(values), 3)


def _merge_junit(out: str, inputs: list[str]) -> Merged:
    cases, props, name = [], {}, "benchdnn-py"
    warnings = []
    seconds = 0.0
    for i, path in enumerate(inputs):
        try:
            got, p, n = junit.read_cases(path)
        except ValueError as exc:
            raise MergeError(str(exc)) from None
        if i == 0:
            props, name = p, n
        elif {k: v for k, v in p.items() if k != "shard"} != {
                k: v for k, v in props.items() if k != "shard"}:
            warnings.append(f"{path}: its suite properties differ from {inputs[0]}'s; the "
                            f"merged file keeps {inputs[0]}'s")
        cases.extend(got)
        seconds += sum(float(c.get("time", 0) or 0) for c in got)
    props = dict(props, shard="merged")
    counts = Counts()
    failed = []
    for case in cases:
        status = junit.status_of(case)
        counts.add(status)
        if status.is_failure:
            failed.append(f"{status.value} {case.get('name', '')}")
    tree = junit.suite(name, cases, props, seconds,
                       datetime.datetime.now().isoformat(timespec="seconds"), platform.node())
    try:
        junit.write_atomically(tree, out)
    except OSError as exc:
        raise MergeError(f"{out}: cannot write: {exc.strerror}") from None
    return Merged("junit", counts, failed, warnings)
