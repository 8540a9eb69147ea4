"""Ours against PyTorch and against the machine's measured peak, from results files.

`benchdnn-py perf-table RESULTS...` reads the records of a perf run over both backends
(batches/perf_conv runs every case on `--backend=native,torch`) and checks them against
the performance targets, one row per target. Reorder records (batches/perf_reorder) get
their own table: each case against the same-layout copies of the same run. Every figure comes from medians: a case's
speed is its op count over its median time, its efficiency that speed over the limit
measured (the highest ``limit_g_per_s`` any of the files' runs measured for that class and
thread count: see best_limits), its speedup the torch median over ours.
Groups summarise by geometric means, the mean that fits ratios.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable

from .compare import pair_key
from .drivers.conv.desc import ConvDesc, parse_desc
from .errors import UsageError
from .results import read
from .stats import geometric_mean
from .timing import GuardTally

FORWARD = frozenset({"FWD_B", "FWD_D", "FWD_I"})
BWD_DATA = frozenset({"BWD_D"})
BWD_WEIGHTS = frozenset({"BWD_W", "BWD_WB"})
OPERAND_CLASS = {"f32:f32": "f32", "bf16:bf16": "bf16", "f16:f16": "f16",
                 "u8:s8": "int8", "s8:s8": "int8"}


@dataclasses.dataclass(frozen=True)
class Case:
    """One problem as both backends measured it."""

    desc: ConvDesc
    network: str
    layer: str
    direction: str
    operands: str
    ours: dict[str, Any]
    torch: dict[str, Any] | None
    post_ops: str = ""                      # the --attr-post-ops text, "" for none
    plain: dict[str, Any] | None = None     # with post-ops: the same case without them
    # with a dw post-op: the depthwise layer it fuses, run alone (same name, no post-ops)
    separate_dw: dict[str, Any] | None = None
    alg: str = ""                           # the --alg text, "" for direct
    # --alg=wino: the same case with the direct algorithm
    direct: dict[str, Any] | None = None
    # the same case on one thread: its --threads=1 twin in the same run, or the case from
    # a run on one thread (a results file whose run had one), when this one ran on two
    one_thread: dict[str, Any] | None = None
    threads: int = 0                        # --threads as given, 0 for none
    # its limit and copy bandwidth, G/s (best_limits; None: the record's own)
    limit_g: float | None = None
    copy_g: float | None = None

    @property
    def depthwise(self) -> bool:
        return self.desc.g > 1 and self.desc.g == self.desc.ic == self.desc.oc

    @staticmethod
    def gflops(record: dict[str, Any]) -> float:
        return record["ops"] / record["median_ms"] / 1e6

    @property
    def eff_pct(self) -> float | None:
        limit = self.limit_g or self.ours.get("limit_g_per_s")
        return 100.0 * self.gflops(self.ours) / limit if limit else None

    @staticmethod
    def gbps(record: dict[str, Any] | None) -> float | None:
        """Bytes read and written over the median time (None: a file without bytes)."""
        return record["bytes"] / record["median_ms"] / 1e6 \
            if record and record.get("bytes") else None

    @property
    def copy_pct(self) -> float | None:
        """GB/s as a share of the copy bandwidth its run measured (memory-bound cases)."""
        own = self.ours.get("copy_g_per_s")   # only memory-bound cases have one
        copy, gbps = (self.copy_g or own) if own else None, self.gbps(self.ours)
        return 100.0 * gbps / copy if copy and gbps else None

    @property
    def vs_torch(self) -> float | None:
        return self.torch["median_ms"] / self.ours["median_ms"] if self.torch else None

    @property
    def over_plain(self) -> float | None:
        """Time with the post-ops over the time without (native, medians)."""
        return self.ours["median_ms"] / self.plain["median_ms"] if self.plain else None

    @property
    def wino_speedup(self) -> float | None:
        """--alg=wino: the direct median over this one (native)."""
        return self.direct["median_ms"] / self.ours["median_ms"] if self.direct else None

    @property
    def thread_speedup(self) -> float | None:
        """One thread's median over this (two-thread) one's (native)."""
        return self.one_thread["median_ms"] / self.ours["median_ms"] if self.one_thread \
            else None

    @property
    def over_separate(self) -> float | None:
        """Depthwise fusion: the fused time over the 1x1 and the depthwise convolutions'
        times run separately (native, medians)."""
        if not (self.plain and self.separate_dw):
            return None
        return self.ours["median_ms"] / (self.plain["median_ms"]
                                         + self.separate_dw["median_ms"])


@dataclasses.dataclass(frozen=True)
class Target:
    """A performance target (issue 10): which cases, and the bars they must clear."""

    label: str
    network: str
    directions: frozenset[str]
    operands: str
    mb: int
    min_eff_geomean: float | None = None   # % of the measured peak, geomean of the group
    min_eff_each: float | None = None      # % of the measured peak, every case
    min_vs_torch: float | None = None      # geomean of torch median / ours
    select: Callable[[Case], bool] = lambda case: True
    # memory-bound cases: also read as GB/s against the copy bandwidth (bandwidth_lines)
    memory_bound: bool = False

    def matches(self, case: Case) -> bool:
        return (case.network == self.network and case.direction in self.directions
                and case.operands == self.operands and case.desc.mb == self.mb
                and not case.post_ops and not case.alg and not case.threads
                and self.select(case))


TARGETS: tuple[Target, ...] = (
    Target("ResNet-50 f32 forward, mb1", "resnet_50", FORWARD, "f32", 1, 80, 60, 1.3),
    Target("ResNet-50 f32 backward data, mb1", "resnet_50", BWD_DATA, "f32", 1, 70, None, 1.3),
    Target("ResNet-50 f32 backward data, mb16", "resnet_50", BWD_DATA, "f32", 16, 70, None,
           1.3),
    Target("ResNet-50 f32 backward weights, mb1", "resnet_50", BWD_WEIGHTS, "f32", 1, 70,
           None, 1.3),
    Target("ResNet-50 f32 backward weights, mb16", "resnet_50", BWD_WEIGHTS, "f32", 16, 70,
           None, 1.3),
    Target("MobileNet v1 f32 forward, mb1", "mobilenet_v1", FORWARD, "f32", 1, None, None,
           1.3),
    Target("MobileNet v1 depthwise layers, f32 forward, mb1", "mobilenet_v1", FORWARD, "f32",
           1, None, None, 2.0, select=lambda case: case.depthwise, memory_bound=True),
    Target("ResNet-50 bf16 forward, mb1", "resnet_50", FORWARD, "bf16", 1, 75),
    Target("ResNet-50 int8 (u8:s8) forward, mb1", "resnet_50", FORWARD, "int8", 1, 70),
)

@dataclasses.dataclass(frozen=True)
class OverheadTarget:
    """A fused post-op chain's cost (issue 6): its time over the convolution alone."""

    label: str
    networks: tuple[str, ...]   # perf_conv's own section, and older files' network
    post_ops: str
    max_ratio: float        # geomean over the group's cases

    def matches(self, case: Case) -> bool:
        return (case.network in self.networks and case.post_ops == self.post_ops
                and case.operands == "f32" and case.direction in FORWARD and case.desc.mb == 1)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.over_plain

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        mean = geometric_mean(ratios)
        return (f"{mean:.3f}, {max(ratios):.3f}", f"geomean <= {self.max_ratio:g}",
                mean <= self.max_ratio)


OVERHEAD_TARGETS: tuple[OverheadTarget, ...] = (
    OverheadTarget("ResNet-50 f32 forward + relu, mb1", ("resnet_50_post_ops", "resnet_50"),
                   "relu", 1.05),
    OverheadTarget("ResNet-50 f32 forward + sum, mb1", ("resnet_50_post_ops", "resnet_50"),
                   "sum", 1.05),
)


@dataclasses.dataclass(frozen=True)
class FusionTarget:
    """Depthwise fusion (issue 6): a 1x1 convolution with its dw post-op against the two
    convolutions run separately, per pair (batches/perf_conv names the three cases of a
    pair alike: network:pw_layer+dw_layer)."""

    label: str
    network: str
    mb: int
    max_ratio: float        # geomean of fused / (1x1 + depthwise) over the pairs

    def matches(self, case: Case) -> bool:
        return (case.network == self.network and case.post_ops.startswith("dw")
                and case.operands == "f32" and case.direction in FORWARD
                and case.desc.mb == self.mb)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.over_separate

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        mean = geometric_mean(ratios)
        return (f"{mean:.3f}, {max(ratios):.3f}", f"geomean < {self.max_ratio:g}",
                mean < self.max_ratio)


# Both batch sizes carry the bar. At mb1 the 1x1 output of every pair (at most 3.2 MB)
# stays in this machine's caches when the two convolutions run apart, so fusion saves
# almost no traffic there; at mb16 (up to 51 MB) it goes to memory and back.
FUSION_TARGETS: tuple[FusionTarget, ...] = (
    FusionTarget("MobileNet v1 f32 1x1 + depthwise fused, mb1", "mobilenet_v1_fusion", 1, 1.0),
    FusionTarget("MobileNet v1 f32 1x1 + depthwise fused, mb16", "mobilenet_v1_fusion", 16,
                 1.0),
)

def judge_every_layer(ratios: list[float], floor: float) -> tuple[str, str, bool]:
    """A speedup bar on the geomean and on every layer: (summary, bar text, met)."""
    mean, low = geometric_mean(ratios), min(ratios)
    return (f"{mean:.2f}, {low:.2f}", f"geomean and every layer >= {floor:g}",
            mean >= floor and low >= floor)


@dataclasses.dataclass(frozen=True)
class WinoTarget:
    """Winograd (issue 10): --alg=wino against --alg=direct on the same layers, per layer
    (batches/perf_wino runs the two one after the other)."""

    label: str
    networks: tuple[str, ...]
    mb: int
    min_ratio: float        # direct median / wino median: geomean and every layer

    def matches(self, case: Case) -> bool:
        return (case.network in self.networks and case.alg == "wino" and not case.post_ops
                and case.operands == "f32" and case.direction in FORWARD
                and case.desc.mb == self.mb)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.wino_speedup

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        return judge_every_layer(ratios, self.min_ratio)


WINO_TARGETS: tuple[WinoTarget, ...] = (
    WinoTarget("Winograd over direct, ResNet-50 and VGG-19 3x3 s1 f32 forward, mb16",
               ("resnet_50", "vgg_19"), 16, 1.4),
)


@dataclasses.dataclass(frozen=True)
class ThreadsTarget:
    """Two threads against one (issue 10) on the large layers: those of at least min_ops
    operations (the convolutions whose work can keep both cores busy). The one-thread
    medians come from each layer's --threads=1 twin in the same run (perf_conv runs
    `--threads=2,1`: the two back to back), or from a second results file, a run with
    OMP_NUM_THREADS=1 (minutes apart: the machine's drift between the runs enters the
    ratio)."""

    label: str
    networks: tuple[str, ...]   # perf_conv's own section, and older files' network
    mb: int
    min_ops: float
    min_ratio: float        # one-thread median / two-thread median: geomean and every layer

    def matches(self, case: Case) -> bool:
        return (case.network in self.networks and case.direction in FORWARD
                and case.operands == "f32" and case.desc.mb == self.mb and not case.post_ops
                and not case.alg and case.ours["ops"] >= self.min_ops)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.thread_speedup

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        return judge_every_layer(ratios, self.min_ratio)


THREADS_TARGETS: tuple[ThreadsTarget, ...] = (
    ThreadsTarget("2 threads over 1, ResNet-50 f32 forward mb1, layers of 150 M ops or more",
                  ("resnet_50_threads", "resnet_50"), 1, 150e6, 1.85),
)


_NAME = re.compile(r'n"([^"]*)"')
_POST_OPS = re.compile(r"\s--attr-post-ops=(\S+)")
_ALG = re.compile(r"\s--alg=(\S+)")
_THREADS = re.compile(r"\s--threads=(\d+)")


def _operands(record: dict[str, Any]) -> str:
    src, wei, dst = record["settings"]["driver"]["dt"]
    direction = record["settings"]["driver"]["dir"]
    pair = (dst, wei) if direction in BWD_DATA else (src, dst) if direction in BWD_WEIGHTS \
        else (src, wei)
    return OPERAND_CLASS.get(":".join(pair), ":".join(pair))


def _threads(record: dict[str, Any]) -> int:
    """The record's --threads (0: the run's own count)."""
    return record["settings"]["driver"].get("threads") or 0


def _limit_key(record: dict[str, Any], limit: str) -> tuple[str, int]:
    """A limit of a record's run, told apart by class and thread count."""
    return limit, _threads(record)


def best_limits(records: Iterable[dict[str, Any]]) -> dict[tuple[str, int], float]:
    """The highest each limit read in any of the records' runs, per class ("f32", "bf16",
    "int8"; "bw": the copy bandwidth) and thread count. A run measures its limits once,
    best of a few repeats of a register loop (or a copy), so another job can only make
    them read low: a run whose first perf case fell in a spell of half the FMA rate
    measured f32 at 303 G/s against 505-541 in the runs around it, and its cases read up
    to 144% of that. The highest reading is the machine's."""
    best: dict[tuple[str, int], float] = {}
    for record in records:
        for limit, rate in ((record.get("limit"), record.get("limit_g_per_s")),
                            ("bw", record.get("copy_g_per_s"))):
            if limit and rate:
                key = _limit_key(record, limit)
                best[key] = max(best.get(key, 0.0), rate)
    return best


def cases_of(records: Iterable[dict[str, Any]],
             one_thread: Iterable[dict[str, Any]] = ()) -> list[Case]:
    """Native cases with timings, each with its torch twin if the run has one, and its
    one-thread twin from one_thread (the records of one-thread runs)."""
    records, one_thread = list(records), list(one_thread)
    best = best_limits(records + one_thread)
    single = {pair_key(r["key"]): r for r in one_thread
              if r.get("driver") == "conv" and r.get("median_ms")
              and r.get("backend", "native") == "native"}
    by_key: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        if record.get("driver") == "conv" and record.get("median_ms"):
            by_key[pair_key(record["key"])][record.get("backend", "native")] = record
    # A --threads=1 case whose problem also ran on another count (or with none) in this run
    # is that case's one-thread twin, not a case of its own.
    problem = {key: _THREADS.sub("", key) for key in by_key}
    counts = Counter(problem.values())
    for key in [k for k in by_key if (t := _THREADS.search(k)) and t.group(1) == "1"]:
        if counts[problem[key]] > 1:
            sides = by_key.pop(key)
            if "native" in sides:
                single[problem[key]] = sides["native"]
    out = []
    # (name, mb) -> its depthwise case, no post-ops (perf_conv runs the pairs at two mb)
    depthwise: dict[tuple[str, int], dict[str, Any]] = {}
    for key, sides in by_key.items():
        ours = sides.get("native")
        if ours is None:
            continue
        name = _NAME.search(key)
        desc = parse_desc(_NAME.sub("", key).rsplit(" ", 1)[-1])
        network, _, layer = name.group(1).partition(":") if name else ("", "", "")
        post_ops = _POST_OPS.search(key)
        plain = by_key.get(_POST_OPS.sub("", key), {}).get("native") if post_ops else None
        alg = _ALG.search(key)
        direct = by_key.get(_ALG.sub("", key), {}).get("native") if alg else None
        threads = _THREADS.search(key)
        out.append(Case(desc, network, layer, ours["settings"]["driver"]["dir"],
                        _operands(ours), ours, sides.get("torch"),
                        post_ops.group(1) if post_ops else "", plain,
                        alg=alg.group(1) if alg else "", direct=direct,
                        one_thread=single.get(_THREADS.sub("", key)),
                        threads=int(threads.group(1)) if threads else 0,
                        limit_g=best.get(_limit_key(ours, ours["limit"]))
                        if ours.get("limit") else None,
                        copy_g=best.get(_limit_key(ours, "bw"))))
        if name and not post_ops and desc.g > 1 and desc.g == desc.ic == desc.oc:
            depthwise[(name.group(1), desc.mb)] = ours
    return [dataclasses.replace(c, separate_dw=depthwise.get((f"{c.network}:{c.layer}",
                                                              c.desc.mb)))
            if c.post_ops.startswith("dw") else c for c in out]


@dataclasses.dataclass(frozen=True)
class Row:
    target: Target
    cases: list[Case]

    def _geomean(self, values: list[float | None]) -> float | None:
        known = [v for v in values if v]
        return geometric_mean(known) if known and len(known) == len(values) else None

    @property
    def ours_gflops(self) -> float | None:
        return self._geomean([Case.gflops(c.ours) for c in self.cases])

    @property
    def torch_gflops(self) -> float | None:
        return self._geomean([Case.gflops(c.torch) if c.torch else None for c in self.cases])

    @property
    def eff(self) -> float | None:
        return self._geomean([c.eff_pct for c in self.cases])

    @staticmethod
    def _lowest(values: list[float | None]) -> float | None:
        return min(values) if values and None not in values else None  # type: ignore[type-var]

    @property
    def eff_min(self) -> float | None:
        return self._lowest([c.eff_pct for c in self.cases])

    @property
    def vs_torch(self) -> float | None:
        return self._geomean([c.vs_torch for c in self.cases])

    @property
    def ours_gbps(self) -> float | None:
        return self._geomean([Case.gbps(c.ours) for c in self.cases])

    @property
    def torch_gbps(self) -> float | None:
        return self._geomean([Case.gbps(c.torch) for c in self.cases])

    @property
    def copy_pct(self) -> float | None:
        return self._geomean([c.copy_pct for c in self.cases])

    @property
    def copy_pct_min(self) -> float | None:
        return self._lowest([c.copy_pct for c in self.cases])

    def verdicts(self) -> list[tuple[str, bool | None]]:
        """Each bar of the target with whether it is met (None: not measured)."""
        t = self.target
        bars = [(t.min_eff_geomean, self.eff, f"geomean >= {t.min_eff_geomean:g}% of peak"
                 if t.min_eff_geomean else ""),
                (t.min_eff_each, self.eff_min, f"every case >= {t.min_eff_each:g}%"
                 if t.min_eff_each else ""),
                (t.min_vs_torch, self.vs_torch, f">= {t.min_vs_torch:g}x PyTorch"
                 if t.min_vs_torch else "")]
        return [(text, None if value is None else value >= bar)
                for bar, value, text in bars if bar is not None]


def rows_of(cases: list[Case]) -> list[Row]:
    return [Row(t, [c for c in cases if t.matches(c)]) for t in TARGETS]


def ratio_lines(cases: list[Case], header: str, targets) -> list[str]:
    """A table of ratio targets (post-op overhead, fusion, Winograd): per target, the
    matching cases' ratios summarized and judged by the target (ratio, judge)."""
    lines = [header, "|---|---|---|---|"]
    for t in targets:
        ratios = [r for c in cases if t.matches(c) and (r := t.ratio(c))]
        if not ratios:
            lines.append(f"| {t.label} | 0 | - | not measured |")
            continue
        summary, bar, met = t.judge(ratios)
        lines.append(f"| {t.label} | {len(ratios)} | {summary} | "
                     f"{bar}: {'met' if met else 'missed'} |")
    return lines


def overhead_lines(cases: list[Case]) -> list[str]:
    return ratio_lines(cases, "| post-op target | cases | time over conv alone (geomean, max) "
                       "| bar |", OVERHEAD_TARGETS)


def fusion_lines(cases: list[Case]) -> list[str]:
    return ratio_lines(cases, "| fusion target | pairs | fused over separate (geomean, max) "
                       "| bar |", FUSION_TARGETS)


def wino_lines(cases: list[Case]) -> list[str]:
    return ratio_lines(cases, "| Winograd target | layers | direct time / wino time "
                       "(geomean, min) | bar |", WINO_TARGETS)


def threads_lines(cases: list[Case]) -> list[str]:
    return ratio_lines(cases, "| threads target | layers | one-thread time / two-thread time "
                       "(geomean, min) | bar |", THREADS_TARGETS)


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, fmt)


def _verdict_text(row: Row) -> str:
    marks = {True: "met", False: "missed", None: "not measured"}
    return "; ".join(f"{text}: {marks[ok]}" for text, ok in row.verdicts())


def markdown(rows: list[Row]) -> list[str]:
    lines = ["| target group | cases | ours GFLOPS | % of peak (geomean, min) | PyTorch GFLOPS "
             "| ours / PyTorch | bars |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row.target.label} | {len(row.cases)} | {_num(row.ours_gflops, '.0f')} | "
            f"{_num(row.eff, '.0f')}, {_num(row.eff_min, '.0f')} | "
            f"{_num(row.torch_gflops, '.0f')} | {_num(row.vs_torch, '.2f')}x | "
            f"{_verdict_text(row) if row.cases else 'not measured'} |")
    return lines


def bandwidth_lines(rows: list[Row]) -> list[str]:
    """The memory-bound targets' bytes per second (issue 10: depthwise layers against the
    machine's measured memory bandwidth): bytes read and written over median times, and
    their share of the copy bandwidth each run measured (`benchdnn-py info`)."""
    lines = ["| memory-bound group | cases | ours GB/s | % of copy bandwidth (geomean, min) "
             "| PyTorch GB/s | copy bandwidth GB/s |", "|---|---|---|---|---|---|"]
    for row in (r for r in rows if r.target.memory_bound):
        copies = sorted({c.ours["copy_g_per_s"] for c in row.cases
                         if c.ours.get("copy_g_per_s")})
        lines.append(
            f"| {row.target.label} | {len(row.cases)} | {_num(row.ours_gbps, '.1f')} | "
            f"{_num(row.copy_pct, '.0f')}, {_num(row.copy_pct_min, '.0f')} | "
            f"{_num(row.torch_gbps, '.1f')} | "
            f"{', '.join(f'{c:.1f}' for c in copies) if copies else '-'} |")
    return lines


def layer_lines(cases: list[Case]) -> list[str]:
    lines = ["| network | layer | dir | types | mb | ours GFLOPS | % of peak | PyTorch GFLOPS "
             "| ours / PyTorch | impl |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in sorted(cases, key=lambda c: (c.network, c.operands, c.direction, c.desc.mb)):
        lines.append(
            f"| {c.network} | {c.layer}{' +' + c.post_ops if c.post_ops else ''}"
            f"{' --alg=' + c.alg if c.alg else ''}"
            f"{f' ({c.wino_speedup:.2f}x direct)' if c.wino_speedup else ''}"
            f"{f' ({c.thread_speedup:.2f}x one thread)' if c.thread_speedup else ''}"
            f"{f' ({Case.gbps(c.ours):.1f} GB/s, {c.copy_pct:.0f}% of copy)' if c.copy_pct else ''}"
            f" | "
            f"{c.direction} | {c.operands} "
            f"| {c.desc.mb} | {Case.gflops(c.ours):.0f} | {_num(c.eff_pct, '.0f')} | "
            f"{_num(Case.gflops(c.torch) if c.torch else None, '.0f')} | "
            f"{_num(c.vs_torch, '.2f')} | {c.ours['impl']} |")
    return lines


def limits_line(cases: list[Case]) -> str:
    """The limits the cases are judged against (on the runs' threads), and any run's lower
    reading of one, which that run's own %eff% figures divide by."""
    runs = [c for c in cases if c.ours.get("limit") and not _threads(c.ours)]
    judged = {c.ours["limit"]: c.limit_g or c.ours["limit_g_per_s"] for c in runs}
    low: dict[str, float] = {}
    for c in runs:
        limit, own = c.ours["limit"], c.ours.get("limit_g_per_s")
        if own and own < 0.99 * judged[limit]:
            low[limit] = min(low.get(limit, own), own)
    line = "measured limits: " + ", ".join(f"{k} {v:.0f} G/s" for k, v in sorted(judged.items()))
    if low:
        line += " (each the highest any run read; " + ", ".join(
            f"a run read {k} at {v:.0f}" for k, v in sorted(low.items())) + ")"
    return line


def guard_line(records: list[dict[str, Any]]) -> str:
    """What the perf guard (timing.MachineGuard) saw over the timed cases: how many it
    timed again, and which stayed degraded (their times are the machine's)."""
    tally = GuardTally.of_records(records)
    if not tally.cases:
        return "perf guard: none (runs without --perf-guard, or older files)"
    text = (f"perf guard: {tally.cases} cases timed between probes, "
            f"{tally.retimed} timed again after a degraded probe, {tally.degraded} still "
            f"degraded")
    if tally.degraded:
        text += (f" (lowest compute probe {tally.lowest:.0%} of the peak, lowest cache "
                 f"probe {tally.lowest_cache:.0%} of its best)")
    return text


# Issue 5: a reorder takes at most this many times what a memory copy of the same bytes
# takes (memcpy bandwidth is the physical limit).
REORDER_MAX_OVER_COPY = 1.5


@dataclasses.dataclass(frozen=True)
class ReorderCase:
    """One timed reorder record."""

    record: dict[str, Any]

    @property
    def label(self) -> str:
        return self.record["key"].removeprefix("--reorder ")

    @property
    def gbps(self) -> float:
        """Bytes moved over the median time, in GB/s. The record's %eff% is the bandwidth
        at the best time as a share of its limit, so the bytes need not be recounted."""
        r = self.record
        return r["eff_pct"] / 100.0 * r["limit_g_per_s"] * r["min_ms"] / r["median_ms"]

    @property
    def is_copy(self) -> bool:
        """A same-layout, same-type reorder with nothing else: a plain memory copy."""
        d = self.record["settings"]["driver"]
        return (d["sdt"] == d["ddt"] and d["stag"]["pattern"] == d["dtag"]["pattern"]
                and not d["attr-scales"]["entries"] and not d["attr-post-ops"]["entries"]
                and d["strides"] == [None, None])


def reorder_cases_of(records: Iterable[dict[str, Any]]) -> list[ReorderCase]:
    return [ReorderCase(r) for r in records
            if r.get("driver") == "reorder" and r.get("median_ms") and r.get("eff_pct")]


def reorder_lines(cases: list[ReorderCase]) -> list[str]:
    """Each reorder's median bandwidth and its time over what the copies of the same run
    (their geometric mean bandwidth) would take for the same bytes = the copies' GB/s over
    the case's; judged against REORDER_MAX_OVER_COPY."""
    copies = [c.gbps for c in cases if c.is_copy]
    if not copies:
        return ["reorder: no same-layout copy in the run to compare with "
                "(batches/perf_reorder has one first and last)"]
    copy = geometric_mean(copies)
    bar = REORDER_MAX_OVER_COPY
    lines = [f"reorder yardstick: the same-layout copies (runs: {len(copies)}), "
             f"{copy:.1f} GB/s (geomean of medians)", "",
             "| reorder | impl | GB/s (median) | time over a copy of the same bytes "
             f"| <= {bar:g}x |", "|---|---|---|---|---|"]
    missed, judged = 0, 0
    for c in cases:
        ratio = copy / c.gbps
        if c.is_copy:       # the yardstick itself, shown for its spread
            verdict = "copy"
        else:
            judged += 1
            missed += ratio > bar
            verdict = "missed" if ratio > bar else "met"
        lines.append(f"| {c.label} | {c.record['impl']} | {c.gbps:.1f} | {ratio:.2f}x | "
                     f"{verdict} |")
    lines += ["", f"reorder bar (every case <= {bar:g}x a copy of the same bytes): "
              + (f"missed by {missed} of {judged} cases" if missed
                 else f"met by all {judged} cases")]
    return lines


def table(paths: list[str], layers: bool = False) -> list[str]:
    records: list[dict[str, Any]] = []
    one_thread: list[dict[str, Any]] = []   # runs on one thread: the threads row's baseline
    all_two = True                          # every other run on two threads
    for path in paths:
        results = read(path)
        threads = results.environment.get("threads", {}).get("max")
        if threads == 1:
            one_thread += results.cases
        else:
            records += results.cases
            all_two = all_two and threads == 2
    if one_thread and not records:
        raise UsageError(f"{', '.join(paths)}: only runs on one thread; the targets are for a "
                         f"run on two, which a one-thread run joins for the threads row")
    cases = cases_of(records, one_thread if all_two else ())
    reorders = reorder_cases_of(records)
    if not cases and not reorders:
        raise UsageError(f"{', '.join(paths)}: no timed conv or reorder case (run with "
                         f"--mode=P and --results=FILE)")
    lines: list[str] = []
    if cases:
        rows = rows_of(cases)
        lines = [limits_line(cases), guard_line(records), "", *markdown(rows), "",
                 *bandwidth_lines(rows), "",
                 *overhead_lines(cases), "", *fusion_lines(cases), "", *wino_lines(cases),
                 "", *threads_lines(cases)]
        if layers:
            lines += ["", *layer_lines(cases)]
    if reorders:
        lines += ["", *reorder_lines(reorders)] if lines else reorder_lines(reorders)
    return lines
