"""Performance targets, one list per kind (shares of the peak and ratios to PyTorch and
oneDNN, post-op overhead, fusion, Winograd, thread scaling, reorders), read from a targets
file (batches/perf_targets.json and perf_targets_onednn.json hold this project's), and the
case record (a results file's perf record, paired across backends) they judge."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..common.window import ConvDesc
from ..errors import UsageError
from .stats import geometric_mean

FORWARD = frozenset({"FWD_B", "FWD_D", "FWD_I"})
BWD_DATA = frozenset({"BWD_D"})
BWD_WEIGHTS = frozenset({"BWD_W", "BWD_WB"})
OPERAND_CLASS = {"f32:f32": "f32", "bf16:bf16": "bf16", "f16:f16": "f16",
                 "u8:s8": "int8", "s8:s8": "int8"}


@dataclasses.dataclass(frozen=True)
class Case:
    """One problem as each backend measured it: ours, and PyTorch's and oneDNN's when the
    run has them."""

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
    onednn: dict[str, Any] | None = None    # the same problem on --backend=onednn
    isa: str = ""                           # the run's --isa cap, "" for none

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
    def vs_onednn(self) -> float | None:
        """oneDNN's median over ours: above 1 when ours is faster."""
        return self.onednn["median_ms"] / self.ours["median_ms"] if self.onednn else None

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
    """A group of cases and the bars they must clear: shares of the measured peak, and
    speedups over PyTorch and over oneDNN (each None: no such bar)."""

    label: str
    network: str
    directions: tuple[str, ...]
    operands: str
    mb: int
    min_eff_geomean: float | None = None   # % of the measured peak, geomean of the group
    min_eff_each: float | None = None      # % of the measured peak, every case
    min_vs_torch: float | None = None      # geomean of torch median / ours
    min_vs_onednn: float | None = None     # geomean of oneDNN median / ours
    min_each_vs_onednn: float | None = None    # oneDNN median / ours, every case
    depthwise_only: bool = False           # only the group's depthwise layers
    no_depthwise: bool = False             # only the group's other layers
    isa: str = ""                          # cases of runs capped by this --isa ("": none)
    # memory-bound cases: also read as GB/s against the copy bandwidth (bandwidth_lines)
    memory_bound: bool = False
    why: str = ""

    def matches(self, case: Case) -> bool:
        return (case.network == self.network and case.direction in self.directions
                and case.operands == self.operands and case.desc.mb == self.mb
                and not case.post_ops and not case.alg and not case.threads
                and case.isa == self.isa
                and (case.depthwise or not self.depthwise_only)
                and not (case.depthwise and self.no_depthwise))


@dataclasses.dataclass(frozen=True)
class OverheadTarget:
    """A fused post-op chain's cost: its time over the convolution alone."""

    label: str
    networks: tuple[str, ...]
    post_ops: str
    max_ratio: float        # geomean over the group's cases
    why: str = ""

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


@dataclasses.dataclass(frozen=True)
class FusionTarget:
    """Depthwise fusion: a 1x1 convolution with its dw post-op against the two
    convolutions run separately, per pair (batches/perf_conv names the three cases of a
    pair alike: network:pw_layer+dw_layer)."""

    label: str
    network: str
    mb: int
    max_ratio: float        # geomean of fused / (1x1 + depthwise) over the pairs
    why: str = ""

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


def judge_every_layer(ratios: list[float], floor: float) -> tuple[str, str, bool]:
    """A speedup bar on the geomean and on every layer: (summary, bar text, met)."""
    mean, low = geometric_mean(ratios), min(ratios)
    return (f"{mean:.2f}, {low:.2f}", f"geomean and every layer >= {floor:g}",
            mean >= floor and low >= floor)


@dataclasses.dataclass(frozen=True)
class WinoTarget:
    """Winograd: --alg=wino against --alg=direct on the same layers, per layer
    (batches/perf_wino runs the two in turns)."""

    label: str
    networks: tuple[str, ...]
    mb: int
    min_ratio: float        # direct median / wino median: geomean and every layer
    why: str = ""

    def matches(self, case: Case) -> bool:
        return (case.network in self.networks and case.alg == "wino" and not case.post_ops
                and case.operands == "f32" and case.direction in FORWARD
                and case.desc.mb == self.mb)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.wino_speedup

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        return judge_every_layer(ratios, self.min_ratio)


@dataclasses.dataclass(frozen=True)
class ThreadsTarget:
    """Two threads against one on the large layers: those of at least min_ops operations
    (the convolutions whose work can keep both cores busy). The one-thread medians come
    from each layer's --threads=1 twin in the same run (perf_conv runs `--threads=2,1`
    in turns), or from a second results file, a run with OMP_NUM_THREADS=1 (minutes
    apart: the machine's drift between the runs enters the ratio)."""

    label: str
    networks: tuple[str, ...]
    mb: int
    min_ops: float
    min_ratio: float        # one-thread median / two-thread median: geomean and every layer
    why: str = ""

    def matches(self, case: Case) -> bool:
        return (case.network in self.networks and case.direction in FORWARD
                and case.operands == "f32" and case.desc.mb == self.mb and not case.post_ops
                and not case.alg and case.ours["ops"] >= self.min_ops)

    @staticmethod
    def ratio(case: Case) -> float | None:
        return case.thread_speedup

    def judge(self, ratios: list[float]) -> tuple[str, str, bool]:
        return judge_every_layer(ratios, self.min_ratio)


@dataclasses.dataclass(frozen=True)
class ReorderTarget:
    """A reorder takes at most max_over_copy times what the run's same-layout copies take
    for the same bytes (a copy's bandwidth is the physical limit)."""

    max_over_copy: float
    why: str = ""


@dataclasses.dataclass(frozen=True)
class Targets:
    """A targets file (batches/perf_targets.json): one list per kind of target. A batch
    names it with --perf-targets, and the run's results file carries it to perf-table."""

    file: str = ""
    peak: tuple[Target, ...] = ()
    overhead: tuple[OverheadTarget, ...] = ()
    fusion: tuple[FusionTarget, ...] = ()
    wino: tuple[WinoTarget, ...] = ()
    threads: tuple[ThreadsTarget, ...] = ()
    reorder: ReorderTarget | None = None


_KINDS = {"peak": Target, "overhead": OverheadTarget, "fusion": FusionTarget,
          "wino": WinoTarget, "threads": ThreadsTarget}
DIRECTIONS = ("FWD_B", "FWD_D", "FWD_I", "BWD_D", "BWD_W", "BWD_WB")


def _value(where: str, kind: str, value: Any) -> Any:
    """VALUE checked against a field's annotation (KIND), as the dataclass holds it."""
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    if value is None and optional:
        return None
    if base == "str" and isinstance(value, str):
        return value
    if base == "bool" and isinstance(value, bool):
        return value
    if base == "int" and isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if base == "float" and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and 0 < value < float("inf"):
        return float(value)
    if base == "tuple[str, ...]" and isinstance(value, list) and value \
            and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    expected = {"str": "a string", "bool": "true or false", "int": "a positive integer",
                "float": "a positive number", "tuple[str, ...]": "a list of strings"}[base]
    raise UsageError(f"{where}: expected {expected}{' or null' if optional else ''}, "
                     f"not {json.dumps(value)}")


def _entry(cls: type, where: str, obj: Any) -> Any:
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(obj) - set(fields))
    if unknown:
        raise UsageError(f"{where}: unknown key `{unknown[0]}`; expected "
                         f"{', '.join(fields)}")
    missing = [n for n, f in fields.items()
               if n not in obj and f.default is dataclasses.MISSING]
    if missing:
        raise UsageError(f"{where}: missing key `{missing[0]}`")
    values = {n: _value(f"{where}.{n}", fields[n].type, v) for n, v in obj.items()}
    bad = [d for d in values.get("directions", ()) if d not in DIRECTIONS]
    if bad:
        raise UsageError(f"{where}.directions: unknown direction `{bad[0]}`; expected "
                         f"{', '.join(DIRECTIONS)}")
    from ..engine.settings import ISA_LEVELS   # here: settings imports this module
    if values.get("isa") and values["isa"] not in ISA_LEVELS:
        raise UsageError(f"{where}.isa: unknown instruction set `{values['isa']}`; expected "
                         f"{', '.join(ISA_LEVELS)}")
    if values.get("depthwise_only") and values.get("no_depthwise"):
        raise UsageError(f"{where}: depthwise_only and no_depthwise select no case together")
    return cls(**values)


def from_json(obj: Any, where: str) -> Targets:
    """The targets in OBJ (a targets file's content); WHERE names it in errors."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected a JSON object of target lists")
    unknown = sorted(set(obj) - {"file", "description", "reorder", *_KINDS})
    if unknown:
        raise UsageError(f"{where}: unknown key `{unknown[0]}`; expected "
                         f"{', '.join(['reorder', *_KINDS])}")
    kinds = {}
    for kind, cls in _KINDS.items():
        entries = obj.get(kind, [])
        if not isinstance(entries, list):
            raise UsageError(f"{where}: {kind}: expected a list")
        kinds[kind] = tuple(_entry(cls, f"{where}: {kind}[{i}]", e)
                            for i, e in enumerate(entries))
    reorder = obj.get("reorder")
    return Targets(file=_value(f"{where}: file", "str", obj.get("file", "")), **kinds,
                   reorder=None if reorder is None
                   else _entry(ReorderTarget, f"{where}: reorder", reorder))


def to_json(targets: Targets) -> dict[str, Any]:
    """The inverse of from_json: what a results file's header keeps."""
    def entry(value: Any) -> dict[str, Any]:
        return {f.name: (list(v) if isinstance(v := getattr(value, f.name), tuple) else v)
                for f in dataclasses.fields(value)}
    out: dict[str, Any] = {"file": targets.file}
    for kind in _KINDS:
        out[kind] = [entry(t) for t in getattr(targets, kind)]
    out["reorder"] = entry(targets.reorder) if targets.reorder else None
    return out


def load(path: Path) -> Targets:
    """A targets file, checked whole: one line naming the file and entry if it is not."""
    try:
        obj = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the targets file ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise UsageError(f"{path}{where}: not a JSON targets file ({exc})") from None
    targets = from_json(obj, str(path))
    return dataclasses.replace(targets, file=path.name)
