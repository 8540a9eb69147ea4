"""The project's own performance targets, one table per kind (ratios to PyTorch, framework
overhead, fusion, Winograd, thread scaling), and the case record (a results file's perf
record, paired across backends) they judge."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..common.window import ConvDesc
from .stats import geometric_mean

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


