"""Performance report lines (benchdnn reference 5.4).

A template is text with ``%[mod][unit]name%`` fields. ``mod`` picks the statistic of a
time-based field: ``-`` minimum (the default for most), ``0`` average, ``+`` maximum;
``unit`` divides by 1e3 (K), 1e6 (M) or 1e9 (G). Numbers print like C's %g.

``%eff%`` (not benchdnn's) is the percentage of this machine's measured limit that the
case reached: the compute peak of its operand class (f32 FMA, bf16 or int8 dot products;
f16 computes as f32) for a compute-bound driver, the copy bandwidth for a memory-bound one.
The limits are measured once per process, on the same threads (kernels/common/peak.c).
"""

from __future__ import annotations

import dataclasses
import re
import statistics

from .. import core
from ..errors import UsageError

DEFAULT_TEMPLATE = ("perf,%engine%,%impl%,%name%,%prb%,%Gops%,%+ctime%,%-time%,%-Gflops%,"
                    "%0time%,%0Gflops%")
# Memory-bound drivers (eltwise, pool) report bandwidth instead of GFLOPS by default.
BANDWIDTH_TEMPLATE = ("perf,%engine%,%impl%,%name%,%prb%,%Gops%,%+ctime%,%-time%,%-Gbw%,"
                      "%0time%,%0Gbw%")
CSV_HEAD = "perf,%engine%,%impl%,%name%,"
CSV_TAIL = ",%attr%,%desc%,%Gops%,%+ctime%,%-time%,%-Gflops%,%0time%,%0Gflops%"

_FIELD = re.compile(r"%([-0+=]?)([KMG]?)([a-z][a-z_-]*)%")
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
# benchdnn's statistics, and (ours) `=` for the median, which one slow run cannot move.
_MOD_PREFIX = {"-": "min_", "0": "avg_", "+": "max_", "=": "med_", "": ""}

# Fields whose value is a statistic over the timed runs, and their default statistic.
TIME_FIELDS = {"time": "-", "flops": "-", "bw": "-", "eff": "-", "ctime": "+", "cptime": "+",
               "cpdtime": "+"}
NUMBER_FIELDS = {"ops", "ibytes", "obytes", "iobytes", "idx", "mb", "clocks", "freq", "iqr"}


@dataclasses.dataclass(frozen=True)
class PerfTemplate:
    kind: str   # "def", "csv" or "custom"
    text: str   # the custom text; for def, the driver's default (empty: DEFAULT_TEMPLATE)

    def resolve(self, csv_fields: str) -> str:
        if self.kind == "def":
            return self.text or DEFAULT_TEMPLATE
        if self.kind == "csv":
            return CSV_HEAD + csv_fields + CSV_TAIL
        return self.text

    def __str__(self) -> str:
        return self.kind if self.kind != "custom" else self.text


def parse_template(text: str) -> PerfTemplate:
    if text in ("", "def"):
        return PerfTemplate("def", "")
    if text == "csv":
        return PerfTemplate("csv", "")
    if not _FIELD.search(text):
        raise UsageError(f"--perf-template={text}: expected def, csv, or text with "
                         f"%field% entries such as %-time%")
    return PerfTemplate("custom", text)


def with_driver_default(template: PerfTemplate, driver_default: str) -> PerfTemplate:
    """`def` as the driver defines it (still printed and recorded as `def`)."""
    if template.kind == "def" and driver_default != DEFAULT_TEMPLATE:
        return PerfTemplate("def", driver_default)
    return template


def fields_of(template: str) -> list[str]:
    return [m.group(3) for m in _FIELD.finditer(template)]


def check_fields(template: str, supported: set[str], driver: str) -> None:
    unknown = [f for f in fields_of(template) if f not in supported]
    if unknown:
        raise UsageError(f"--perf-template: field `%{unknown[0]}%` is not supported by the "
                         f"{driver} driver; expected one of "
                         f"{', '.join('%' + s + '%' for s in sorted(supported))}")


def header(template: str) -> str:
    return _FIELD.sub(lambda m: _MOD_PREFIX[m.group(1)] + m.group(2) + m.group(3), template)


@dataclasses.dataclass
class PerfRecord:
    """What a case measured, as the template fields see it."""

    text: dict[str, str]          # string fields: engine, impl, name, prb, desc, dir, ...
    ops: float
    ibytes: int
    obytes: int
    times_ms: list[float]         # one entry per timed run
    create_ms: tuple[float, float]  # (implementation selection, primitive creation)
    idx: int
    mb: int
    # What %eff% measures against: an operand class ("f32", "bf16", "f16", "int8") for a
    # compute-bound case, BANDWIDTH for a memory-bound one.
    limit: str = "f32"
    # A case of a compute operand class whose speed memory bounds (a depthwise
    # convolution: 9 multiply-adds per value loaded): its results record carries the copy
    # bandwidth too, so its bytes per second can be read against it.
    memory_bound: bool = False
    # The OpenMP threads the case ran on (--threads; 0: the process's): its limits are
    # those measured on as many.
    threads: int = 0

    @property
    def bandwidth_bound(self) -> bool:
        return self.memory_bound or self.limit == BANDWIDTH

    def time_stat(self, mod: str) -> float:
        if not self.times_ms:
            return 0.0
        if mod == "0":
            return statistics.fmean(self.times_ms)
        if mod == "=":
            return statistics.median(self.times_ms)
        return max(self.times_ms) if mod == "+" else min(self.times_ms)

    def iqr_ms(self) -> float:
        """The interquartile range of the timed runs (0 with fewer than two): the spread
        of their middle half, which the odd run disturbed by another process leaves be."""
        if len(self.times_ms) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.times_ms, n=4, method="inclusive")
        return q3 - q1

    def value(self, name: str, mod: str, unit: str) -> str:
        scale = _UNITS[unit]
        if name in self.text:
            return self.text[name]
        mod = mod or TIME_FIELDS.get(name, "-")
        if name == "time":
            number = self.time_stat(mod)
        elif name in ("flops", "bw"):
            number = self._rate(name, mod)
        elif name == "eff":
            basis = "bw" if self.limit == BANDWIDTH else "flops"
            limit = machine_limit(self.limit, self.threads)
            number = 100.0 * self._rate(basis, mod) / limit if limit else 0.0
        elif name == "iqr":
            number = self.iqr_ms()
        elif name == "ctime":
            number = sum(self.create_ms)
        elif name == "cpdtime":
            number = self.create_ms[0]
        elif name == "cptime":
            number = self.create_ms[1]
        elif name == "ops":
            number = self.ops
        elif name == "iobytes":
            number = self.ibytes + self.obytes
        elif name in ("ibytes", "obytes"):
            number = getattr(self, name)
        elif name in ("idx", "mb"):
            return str(getattr(self, name))
        elif name in ("clocks", "freq"):
            number = 0.0   # no cycle counter is read (benchdnn prints 0 without RDPMC)
        else:
            raise KeyError(name)
        return f"{number / scale:g}"


    def _rate(self, name: str, mod: str) -> float:
        seconds = self.time_stat(mod) / 1e3
        work = self.ops if name == "flops" else self.ibytes + self.obytes
        return work / seconds if seconds > 0 else 0.0


BANDWIDTH = "bw"


def machine_limit(limit: str, threads: int = 0) -> float:
    """Operations (or bytes) per second this machine can do at most on that many threads
    (0: the process's), as measured."""

    with core.threads(threads):
        if limit == BANDWIDTH:
            return core.measured_copy_bandwidth()
        peak = core.measured_peak(limit)
    return peak.ops_per_s if peak else 0.0


def render(template: str, record: PerfRecord) -> str:
    return _FIELD.sub(lambda m: record.value(m.group(3), m.group(1), m.group(2)), template)


COMMON_FIELDS = set(TIME_FIELDS) | NUMBER_FIELDS | {"engine", "impl", "name", "prb", "desc",
                                                    "driver", "attr"}
