"""Ours against PyTorch and against the machine's measured peak, from results files.

`benchdnn-py perf-table RESULTS...` reads the records of a perf run. A run of any batch
gets one row per case (case_lines): each backend's median time and speed, the share of
the measured limit, and the speedup between backends. A run that carries a targets file
(a batch's --perf-targets, or perf-table's --targets) is checked against its targets
instead, one row per target; its reorder records get their own table: each case against
the same-layout copies of the same run. Every figure comes from medians: a case's
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
from typing import Any, Iterable

from ..common.window import parse_desc
from ..engine.timing import GuardTally
from ..errors import UsageError
from .compare import pair_key
from .perf_targets import BWD_DATA, BWD_WEIGHTS, OPERAND_CLASS, Case, Target, Targets, from_json
from .results import read
from .stats import geometric_mean

_NAME = re.compile(r'n"([^"]*)"')
_POST_OPS = re.compile(r"\s--attr-post-ops=(\S+)")
_ALG = re.compile(r"\s--alg=(\S+)")
_THREADS = re.compile(r"\s--threads=([0-9]+)")


def _operands(record: dict[str, Any]) -> str:
    src, wei, dst = record["settings"]["driver"]["dt"]
    direction = record["settings"]["driver"]["dir"]
    pair = (dst, wei) if direction in BWD_DATA else (src, dst) if direction in BWD_WEIGHTS \
        else (src, wei)
    return OPERAND_CLASS.get(":".join(pair), ":".join(pair))


def _threads(record: dict[str, Any]) -> int:
    """The record's --threads (0: the run's own count)."""
    return record["settings"]["driver"].get("threads") or 0


def _isa(record: dict[str, Any]) -> str:
    """The --isa cap of the record's run ("" for none)."""
    return record["settings"].get("global", {}).get("isa", "")


def _case_key(record: dict[str, Any]) -> str:
    """What pairs a case across backends: its key without the backend, and the run's
    --isa cap (a global option, not in the key), so that capped runs keep cases apart."""
    isa = _isa(record)
    return (f"--isa={isa} " if isa else "") + pair_key(record["key"])


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
    single = {_case_key(r): r for r in one_thread
              if r.get("driver") == "conv" and r.get("median_ms")
              and r.get("backend", "native") == "native"}
    by_key: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        if record.get("driver") == "conv" and record.get("median_ms"):
            by_key[_case_key(record)][record.get("backend", "native")] = record
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
                        copy_g=best.get(_limit_key(ours, "bw")),
                        onednn=sides.get("onednn"), isa=_isa(ours)))
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
    def onednn_gflops(self) -> float | None:
        return self._geomean([Case.gflops(c.onednn) if c.onednn else None
                              for c in self.cases])

    @property
    def vs_onednn(self) -> float | None:
        return self._geomean([c.vs_onednn for c in self.cases])

    @property
    def vs_onednn_min(self) -> float | None:
        return self._lowest([c.vs_onednn for c in self.cases])

    def weakest(self, count: int = 3) -> list[Case]:
        """Up to COUNT cases slower than oneDNN, slowest first."""
        behind = [c for c in self.cases if c.vs_onednn and c.vs_onednn < 1.0]
        return sorted(behind, key=lambda c: c.vs_onednn)[:count]

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
                 if t.min_vs_torch else ""),
                (t.min_vs_onednn, self.vs_onednn, f">= {t.min_vs_onednn:g}x oneDNN"
                 if t.min_vs_onednn else ""),
                (t.min_each_vs_onednn, self.vs_onednn_min,
                 f"every case >= {t.min_each_vs_onednn:g}x oneDNN"
                 if t.min_each_vs_onednn else "")]
        return [(text, None if value is None else value >= bar)
                for bar, value, text in bars if bar is not None]


def rows_of(cases: list[Case], targets: Targets) -> list[Row]:
    return [Row(t, [c for c in cases if t.matches(c)]) for t in targets.peak]


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


RATIO_HEADERS = {   # the ratio kinds of a targets file, in the order they print
    "overhead": "| post-op target | cases | time over conv alone (geomean, max) | bar |",
    "fusion": "| fusion target | pairs | fused over separate (geomean, max) | bar |",
    "wino": "| Winograd target | layers | direct time / wino time (geomean, min) | bar |",
    "threads": "| threads target | layers | one-thread time / two-thread time "
               "(geomean, min) | bar |",
}


def kind_lines(kind: str, cases: list[Case], targets: Targets) -> list[str]:
    """The table of one ratio kind ("overhead", "fusion", "wino", "threads")."""
    return ratio_lines(cases, RATIO_HEADERS[kind], getattr(targets, kind))


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, fmt)


def _verdict_text(row: Row) -> str:
    marks = {True: "met", False: "missed", None: "not measured"}
    return "; ".join(f"{text}: {marks[ok]}" for text, ok in row.verdicts())


def _weakest_text(row: Row) -> str:
    return ", ".join(f"{c.layer} {c.vs_onednn:.2f}" for c in row.weakest()) or "-"


def markdown(rows: list[Row]) -> list[str]:
    """One line per target. The PyTorch and oneDNN columns appear when a row has cases
    of that backend or a bar against it."""
    torch = any(r.target.min_vs_torch or any(c.torch for c in r.cases) for r in rows)
    onednn = any(r.target.min_vs_onednn or r.target.min_each_vs_onednn
                 or any(c.onednn for c in r.cases) for r in rows)
    head = ["target group", "cases", "ours GFLOPS", "% of peak (geomean, min)"]
    head += ["PyTorch GFLOPS", "ours / PyTorch"] if torch else []
    head += ["oneDNN GFLOPS", "ours / oneDNN (geomean, min)",
             "weakest layers (ours / oneDNN)"] if onednn else []
    head.append("bars")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.target.label, str(len(row.cases)), _num(row.ours_gflops, ".0f"),
                 f"{_num(row.eff, '.0f')}, {_num(row.eff_min, '.0f')}"]
        if torch:
            cells += [_num(row.torch_gflops, ".0f"), f"{_num(row.vs_torch, '.2f')}x"]
        if onednn:
            cells += [_num(row.onednn_gflops, ".0f"),
                      f"{_num(row.vs_onednn, '.2f')}x, {_num(row.vs_onednn_min, '.2f')}x",
                      _weakest_text(row)]
        cells.append(_verdict_text(row) if row.cases else "not measured")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def bandwidth_lines(rows: list[Row]) -> list[str]:
    """The memory-bound targets' bytes per second (depthwise layers against the
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
    """A row per case; oneDNN's columns when any case has a oneDNN twin."""
    onednn = any(c.onednn for c in cases)
    head = ["network", "layer", "dir", "types", "mb", "ours GFLOPS", "% of peak",
            "PyTorch GFLOPS", "ours / PyTorch"]
    head += ["oneDNN GFLOPS", "ours / oneDNN", "oneDNN impl"] if onednn else []
    head.append("impl")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in sorted(cases, key=lambda c: (c.isa, c.network, c.operands, c.direction,
                                          c.desc.mb)):
        line = (
            f"| {c.network} | {c.layer}{' +' + c.post_ops if c.post_ops else ''}"
            f"{' --alg=' + c.alg if c.alg else ''}"
            f"{' --isa=' + c.isa if c.isa else ''}"
            f"{f' ({c.wino_speedup:.2f}x direct)' if c.wino_speedup else ''}"
            f"{f' ({c.thread_speedup:.2f}x one thread)' if c.thread_speedup else ''}"
            f"{f' ({Case.gbps(c.ours):.1f} GB/s, {c.copy_pct:.0f}% of copy)' if c.copy_pct else ''}"
            f" | "
            f"{c.direction} | {c.operands} "
            f"| {c.desc.mb} | {Case.gflops(c.ours):.0f} | {_num(c.eff_pct, '.0f')} | "
            f"{_num(Case.gflops(c.torch) if c.torch else None, '.0f')} | "
            f"{_num(c.vs_torch, '.2f')} |")
        if onednn:
            line += (f" {_num(Case.gflops(c.onednn) if c.onednn else None, '.0f')} | "
                     f"{_num(c.vs_onednn, '.2f')} | "
                     f"{c.onednn['impl'] if c.onednn else '-'} |")
        lines.append(line + f" {c.ours['impl']} |")
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


def reorder_lines(cases: list[ReorderCase], bar: float) -> list[str]:
    """Each reorder's median bandwidth and its time over what the copies of the same run
    (their geometric mean bandwidth) would take for the same bytes = the copies' GB/s over
    the case's; judged against BAR (a targets file's reorder.max_over_copy)."""
    copies = [c.gbps for c in cases if c.is_copy]
    if not copies:
        return ["reorder: no same-layout copy in the run to compare with "
                "(batches/perf_reorder has one first and last)"]
    copy = geometric_mean(copies)
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


def _rate(record: dict[str, Any]) -> tuple[float | None, str]:
    """The record's speed over its median time: GB/s for a bandwidth-limited case (its
    limit is the copy bandwidth), GFLOPS otherwise."""
    if record.get("limit") == "bw":
        return Case.gbps(record), "GB/s"
    return (Case.gflops(record) if record.get("ops") else None), "GFLOPS"


def case_lines(records: list[dict[str, Any]]) -> list[str]:
    """Any run's timed cases, of any driver, one row each: per backend the median time and
    speed, the share of the measured limit on the first backend, and, when the run holds
    more than one backend, the first one's speedup over each other (their median times'
    ratio), with geometric means at the end. The first backend is `native` when present."""
    timed = [r for r in records if r.get("median_ms")]
    by_case: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in timed:
        by_case[pair_key(record["key"])].setdefault(record.get("backend", "native"), record)
    seen = list(dict.fromkeys(r.get("backend", "native") for r in timed))
    backends = sorted(seen, key=lambda b: (b != "native", seen.index(b)))
    first, others = backends[0], backends[1:]
    best = best_limits(timed)
    head = ["case"] + [f"{b} ms" for b in backends] + [f"{b} speed" for b in backends] \
        + [f"{first} % of limit"] + [f"{first} / {b}" for b in others] + [f"{first} impl"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    effs: list[float] = []
    speedups: dict[str, list[float]] = {b: [] for b in others}
    for key, sides in by_case.items():
        cells = [key]
        cells += [_num(sides[b]["median_ms"], ".4g") if b in sides else "-" for b in backends]
        for b in backends:
            rate, unit = _rate(sides[b]) if b in sides else (None, "")
            cells.append(f"{rate:.1f} {unit}" if rate else "-")
        ours = sides.get(first)
        eff = None
        if ours and ours.get("limit"):
            rate, _ = _rate(ours)
            limit = best.get(_limit_key(ours, ours["limit"]))
            eff = 100.0 * rate / limit if rate and limit else None
        if eff:
            effs.append(eff)
        cells.append(_num(eff, ".0f"))
        for b in others:
            ratio = sides[b]["median_ms"] / ours["median_ms"] if ours and b in sides else None
            if ratio:
                speedups[b].append(ratio)
            cells.append(f"{ratio:.2f}x" if ratio else "-")
        cells.append(ours["impl"] if ours else "-")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    summary = [f"{len(by_case)} cases"]
    if effs:
        summary.append(f"{first} at {geometric_mean(effs):.0f}% of the measured limit "
                       f"(geomean of {len(effs)}; lowest {min(effs):.0f}%)")
    for b, ratios in speedups.items():
        if ratios:
            summary.append(f"{first} / {b}: {geometric_mean(ratios):.2f}x (geomean of "
                           f"{len(ratios)} cases; range {min(ratios):.2f}x to "
                           f"{max(ratios):.2f}x)")
    lines.append("; ".join(summary))
    return lines


def table(paths: list[str], layers: bool = False, targets: Targets | None = None) -> list[str]:
    """The table of PATHS: judged against TARGETS, or against the targets file the run
    carries; without one, a row per case."""
    records: list[dict[str, Any]] = []
    one_thread: list[dict[str, Any]] = []   # runs on one thread: the threads row's baseline
    all_two = True                          # every other run on two threads
    for path in paths:
        results = read(path)
        # the targets the first file that carries one was run with (a batch's --perf-targets)
        carried = results.header.get("run", {}).get("perf_targets")
        if targets is None and carried is not None:
            targets = from_json(carried, f"{path}: header run.perf_targets")
        threads = results.environment.get("threads", {}).get("max")
        if threads == 1:
            one_thread += results.cases
        else:
            records += results.cases
            all_two = all_two and threads == 2
    if one_thread and not records:
        raise UsageError(f"{', '.join(paths)}: only runs on one thread; the targets are for a "
                         f"run on two, which a one-thread run joins for the threads row")
    if not any(r.get("median_ms") for r in records):
        raise UsageError(f"{', '.join(paths)}: no timed case (run with --mode=P and "
                         f"--results=FILE)")
    cases = cases_of(records, one_thread if all_two else ())
    reorders = reorder_cases_of(records)
    if targets is None:
        # a run without targets: every case as it ran
        head = [limits_line(cases)] if cases else []
        return [*head, guard_line(records), "", *case_lines(records)]
    rows = rows_of(cases, targets)
    kinds = [k for k in RATIO_HEADERS if getattr(targets, k)]
    lines: list[str] = [f"targets: {targets.file or 'given'}"]
    if cases:
        lines += [limits_line(cases), guard_line(records)]
        if rows:
            lines += ["", *markdown(rows)]
        if any(r.target.memory_bound for r in rows):
            lines += ["", *bandwidth_lines(rows)]
        for kind in kinds:
            lines += ["", *kind_lines(kind, cases, targets)]
        if layers:
            lines += ["", *layer_lines(cases)]
        # the target tables compare with torch and oneDNN only: a run holding another
        # backend gets every case against it too
        if {r.get("backend", "native") for r in records} - {"native", "torch", "onednn"}:
            lines += ["", *case_lines(records)]
    if reorders and targets.reorder:
        lines += ["", *reorder_lines(reorders, targets.reorder.max_over_copy)]
    return lines
