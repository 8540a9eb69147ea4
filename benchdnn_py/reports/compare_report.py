"""Renderings of a Comparison: a rich table (terminal), Markdown, CSV, JSON and standalone
HTML with an inline SVG chart of every case's speedup and its interval.

The chart is SVG written here rather than a matplotlib figure: the report stays one text
file that needs no image encoding or plotting dependency, renders in any browser, and is
the same bytes every time it is made from the same files.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .compare import MARK_MEANING, MARKS, CaseComparison, Comparison

FORMATS = ("table", "md", "csv", "json", "html")
SPEEDUP_LABEL = "speedup, >1 = faster"
_MARK_STYLE = {"+": "bold red", "-": "bold green", "~": "dim", "!": "bold red reverse",
               "*": "bold green reverse", "x": "yellow", "?": "yellow"}
_MARK_COLOUR = {"+": "#c62828", "-": "#2e7d32", "~": "#9e9e9e", "?": "#ef8f00"}
_LEGEND = {"+": "slower", "-": "faster", "~": "within noise", "?": "cannot tell"}
# Most important first: a tick is left out when its label would overlap an earlier one.
_TICKS = ((1.0, "1"), (0.5, "0.5"), (2, "2"), (1 / 4, "1/4"), (4, "4"), (1 / 8, "1/8"),
          (8, "8"), (0.8, "0.8"), (1.25, "1.25"), (2 / 3, "2/3"), (1.5, "1.5"),
          (1 / 3, "1/3"), (3, "3"), (0.9, "0.9"), (1.1, "1.1"))


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def _x(value: float | None) -> str:
    """Three decimals where speedups usually are; three significant digits beyond (a
    100x change must not print as 0.000)."""
    if value is None:
        return ""
    return f"{value:.3f}" if 0.1 <= value < 100 else f"{value:.3g}"


def _ci(case: CaseComparison) -> str:
    return "" if case.ci is None else f"[{_x(case.ci[0])}, {_x(case.ci[1])}]"


def _note(case: CaseComparison) -> str:
    parts = [case.note] if case.note else []
    if case.impl_changed:
        parts.append(f"impl {case.impl_base} -> {case.impl_new}")
    if case.remeasured:
        parts.append("remeasured")
    return "; ".join(parts)


def _cases(n: int) -> str:
    return f"{n} case" if n == 1 else f"{n} cases"


def _run_line(f) -> str:
    git = (f.header.get("environment", {}).get("git") or {})
    commit = git.get("commit", "")[:10] + ("+dirty" if git.get("dirty") else "") \
        if git.get("commit") else "no commit"
    return (f"{f.path} ({_cases(len(f.cases))}; {f.header.get('backend', '?')}; {commit}; "
            f"{f.header.get('started', '?')})")


def _geomean_text(c: Comparison) -> str:
    if c.geomean is None or c.geomean_ci is None:
        return f"geometric mean {SPEEDUP_LABEL}: no timed case on both sides"
    return (f"geometric mean {SPEEDUP_LABEL}: {_x(c.geomean)} "
            f"[{c.options.confidence:.0%} CI {_x(c.geomean_ci[0])}, {_x(c.geomean_ci[1])}] "
            f"over {_cases(c.geomean_cases)}")


def summary_lines(c: Comparison) -> list[str]:
    """The summary as plain lines: runs, counts per mark, geomean, top regressions with
    their rerun commands, warnings, and the verdict."""
    counts = c.counts
    lines = [f"base: {_run_line(c.base)}", f"new:  {_run_line(c.new)}"]
    lines += [f"refused unless --force: {r}" for r in c.refusals]
    lines += [f"warning: {w}" for w in c.warnings]
    lines.append("marks: " + ", ".join(f"{m} {MARK_MEANING[m]} {counts[m]}" for m in MARKS))
    lines.append(_geomean_text(c))
    if c.impl_changes:
        example = next(x for x in c.cases if x.impl_changed)
        lines.append(f"implementation differs in {_cases(c.impl_changes)} (e.g. "
                     f"{example.impl_base} -> {example.impl_new})")
    if c.rerun_note:
        lines.append(f"rerun: {c.rerun_note}")
    top = c.regressions[:c.options.top]
    if top:
        lines.append(f"top regressions ({len(top)} of {len(c.regressions)}), slowest first:")
        for case in top:
            lines.append(f"  {_x(case.speedup)}x {_ci(case)} {case.label}")
            lines.append(f"      rerun: {case.rerun}")
    lines.append(f"verdict: {c.verdict()}")
    return lines


def shown_cases(c: Comparison, only_changed: bool) -> list[CaseComparison]:
    return [x for x in c.cases if not (only_changed and x.mark == "~")]


# --------------------------------------------------------------------------------------
# Terminal
# --------------------------------------------------------------------------------------

def render_terminal(console: Console, c: Comparison, only_changed: bool = False) -> None:
    """The per-case table, then the summary, for a person (standard error)."""
    table = Table(title="benchdnn-py compare")
    table.add_column("", no_wrap=True, min_width=1)
    table.add_column("case", overflow="fold", ratio=3, min_width=24)
    for name in ("base\nmedian ms", "new\nmedian ms", "base\nmin ms", "new\nmin ms",
                 "speedup,\n>1 = faster", f"{c.options.confidence:.0%} CI"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", ratio=1)
    for case in shown_cases(c, only_changed):
        table.add_row(Text(case.mark, style=_MARK_STYLE[case.mark]), case.label,
                      _ms(case.base_median), _ms(case.new_median), _ms(case.base_min),
                      _ms(case.new_min), _x(case.speedup), _ci(case), _note(case))
    console.print(table)
    render_summary(console, c)


def render_summary(console: Console, c: Comparison) -> None:
    for line in summary_lines(c):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------------------
# Markdown (a pull-request comment)
# --------------------------------------------------------------------------------------

def _md_cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "&#124;").replace("\n", " ")


def _short(case: CaseComparison) -> str:
    """The key with a named descriptor shown by its name only (the full line is in the
    folded part)."""
    tokens = case.label.split(" ")
    for i, token in enumerate(tokens):
        if 'n"' in token and token.endswith('"'):
            tokens[i] = token[token.index('n"') + 1:]
    return " ".join(tokens)


# A pull-request comment holds 65536 characters; a row is a few hundred.
MD_MAX_ROWS = 100
# Markdown lists the worst news first.
_MD_ORDER = {"!": 0, "+": 1, "?": 2, "x": 3, "*": 4, "-": 5, "~": 6}


def to_markdown(c: Comparison, only_changed: bool = True) -> str:
    """Markdown for a pull-request comment: verdict, counts, geomean, then the cases that
    are not `~` (only_changed=False lists those too), worst first (newly failing, then the
    slowest), at most MD_MAX_ROWS of them, each problem folded in <details> around the
    command that reruns it."""
    counts = c.counts
    out = ["## benchdnn-py compare", "",
           f"- base: `{_run_line(c.base)}`", f"- new: `{_run_line(c.new)}`", "",
           f"**Verdict:** {c.verdict()}", "",
           f"**{_geomean_text(c)[0].upper()}{_geomean_text(c)[1:]}**", "",
           "| mark | meaning | cases |", "|:-:|---|--:|"]
    out += [f"| `{m}` | {MARK_MEANING[m]} | {counts[m]} |" for m in MARKS]
    notes = [f"refused unless --force: {r}" for r in c.refusals] + c.warnings
    if c.impl_changes:
        notes.append(f"implementation differs in {_cases(c.impl_changes)}")
    if c.rerun_note:
        notes.append(f"rerun: {c.rerun_note}")
    if notes:
        out += ["", *[f"- {_md_cell(n)}" for n in notes]]
    rows = sorted(shown_cases(c, only_changed),
                  key=lambda x: (_MD_ORDER[x.mark], x.speedup if x.mark == "+" else 0.0))
    hidden = len(c.cases) - len(rows)
    cut = rows[MD_MAX_ROWS:]
    rows = rows[:MD_MAX_ROWS]
    out += ["", f"### Cases ({len(rows)} shown" +
            (f"; {hidden} within noise not listed)" if hidden else ")"), ""]
    if rows:
        out += [(f"| mark | problem | base median ms | new median ms | base min ms | "
                 f"new min ms | {SPEEDUP_LABEL} | {c.options.confidence:.0%} CI | note |"),
                "|:-:|---|--:|--:|--:|--:|--:|--:|---|"]
        for case in rows:
            problem = (f"<details><summary>{_md_cell(_short(case))}</summary>"
                       f"<code>{_md_cell(case.rerun)}</code></details>")
            out.append(f"| `{case.mark}` | {problem} | {_ms(case.base_median)} | "
                       f"{_ms(case.new_median)} | {_ms(case.base_min)} | {_ms(case.new_min)} "
                       f"| {_x(case.speedup)} | {_ci(case)} | {_md_cell(_note(case))} |")
    if cut:
        out += ["", f"... and {len(cut)} more cases not shown "
                    f"({', '.join(f'{m} {n}' for m, n in _mark_counts(cut))}); "
                    f"`--format=csv` lists every case."]
    return "\n".join(out) + "\n"


def _mark_counts(cases: list[CaseComparison]) -> list[tuple[str, int]]:
    counts = {m: 0 for m in MARKS}
    for x in cases:
        counts[x.mark] += 1
    return [(m, n) for m, n in counts.items() if n]


# --------------------------------------------------------------------------------------
# CSV and JSON (machines)
# --------------------------------------------------------------------------------------

CSV_COLUMNS = ("mark", "meaning", "key", "occurrence", "base_status", "new_status",
               "base_impl", "new_impl", "base_samples", "new_samples", "base_median_ms",
               "new_median_ms", "base_min_ms", "new_min_ms", "speedup", "ci_low", "ci_high",
               "p_value", "q_value", "note", "rerun")


def _case_dict(case: CaseComparison) -> dict[str, Any]:
    return {
        "mark": case.mark, "meaning": MARK_MEANING[case.mark], "key": case.key,
        "occurrence": case.occurrence,
        "base_status": case.base["status"] if case.base else None,
        "new_status": case.new["status"] if case.new else None,
        "base_impl": case.impl_base if case.base else None,
        "new_impl": case.impl_new if case.new else None,
        "base_samples": case.n_base, "new_samples": case.n_new,
        "base_median_ms": case.base_median, "new_median_ms": case.new_median,
        "base_min_ms": case.base_min, "new_min_ms": case.new_min,
        "speedup": case.speedup,
        "ci_low": case.ci[0] if case.ci else None, "ci_high": case.ci[1] if case.ci else None,
        "p_value": case.p_value, "q_value": case.q_value, "note": _note(case),
        "rerun": case.rerun,
    }


def to_csv(c: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for case in c.cases:
        writer.writerow({k: ("" if v is None else v) for k, v in _case_dict(case).items()})
    return buf.getvalue()


def _run_json(f) -> dict[str, Any]:
    env = f.header.get("environment", {})
    return {"path": f.path, "cases": len(f.cases), "started": f.header.get("started"),
            "backend": f.header.get("backend"), "command": f.header.get("command"),
            "git": env.get("git"), "complete": f.complete}


def to_json(c: Comparison) -> str:
    o = c.options
    doc = {
        "schema": "benchdnn-py-compare", "version": 1,
        "base": _run_json(c.base), "new": _run_json(c.new),
        "options": {"threshold": o.threshold, "floor_us": o.floor_us, "alpha": o.alpha,
                    "min_samples": o.min_samples, "confidence": o.confidence,
                    "fail_on": list(o.fail_on), "force": o.force},
        "refusals": c.refusals, "warnings": c.warnings,
        "summary": {"counts": c.counts, "geomean": c.geomean,
                    "geomean_ci": list(c.geomean_ci) if c.geomean_ci else None,
                    "geomean_cases": c.geomean_cases, "impl_changes": c.impl_changes,
                    "conditions": c.conditions, "gated": dict(c.gated),
                    "exit_code": c.exit_code, "verdict": c.verdict(),
                    "rerun": c.rerun_note or None},
        "top_regressions": [{"key": x.label, "speedup": x.speedup, "rerun": x.rerun}
                            for x in c.regressions[:o.top]],
        "cases": [_case_dict(x) for x in c.cases],
    }
    return json.dumps(doc, indent=1) + "\n"


# --------------------------------------------------------------------------------------
# HTML with an SVG chart
# --------------------------------------------------------------------------------------

# The chart names each point under the axis when it has at most this many; beyond, it
# numbers every few points and the case table's # column holds the names.
CHART_NAMED_CASES = 40
CHART_LABEL_CHARS = 32


def charted(c: Comparison) -> list[CaseComparison]:
    """The cases the chart plots (those timed on both sides), in run order: a case's
    number on the chart and in the HTML table's # column is its place here, from 1."""
    return [x for x in c.cases if x.speedup is not None]


def speedup_svg(c: Comparison) -> str:
    """Every timed case in run order (x) against its speedup on a log scale (y), with its
    confidence interval as a vertical bar; the band is the threshold; colours follow the
    marks. Each point carries its case as a tooltip and its number (the case table's #)
    under the axis, with its name when there are few; a speedup beyond the scale is a
    triangle on the edge, pointing off it."""
    cases = charted(c)
    named = len(cases) <= CHART_NAMED_CASES
    width = max(480, min(1200, 60 + (14 if named else 8) * len(cases) + 20))
    height, left, right, top = 360, 60, 20, 30
    bottom = 60 + (6 * CHART_LABEL_CHARS if named and cases else 0)
    height += bottom - 60
    plot_w, plot_h = width - left - right, height - top - bottom
    band_hi = 1.0 + c.options.threshold
    values = [band_hi, 1.0 / band_hi]
    for x in cases:
        values += [x.speedup, *(x.ci or ())]
    lo = max(min(values) / 1.05, 1 / 16)
    hi = min(max(values) * 1.05, 16)
    span = math.log(hi) - math.log(lo)

    def y_of(v: float) -> float:
        v = min(max(v, lo), hi)
        return top + plot_h * (1 - (math.log(v) - math.log(lo)) / span)

    def x_of(i: int) -> float:
        return left + plot_w * (i + 0.5) / max(len(cases), 1)

    e = html.escape
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="per-case {SPEEDUP_LABEL}, with {c.options.confidence:.0%} '
            f'confidence intervals">'),
           (f'<rect x="{left}" y="{y_of(band_hi):.1f}" width="{plot_w}" '
            f'height="{y_of(1 / band_hi) - y_of(band_hi):.1f}" fill="#eeeeee"/>')]
    drawn: list[float] = []
    for t, label in _TICKS:
        y = y_of(t)
        if not lo <= t <= hi or any(abs(y - d) < 12 for d in drawn):
            continue   # out of range, or its label would overlap a more important one
        drawn.append(y)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                   f'stroke="{"#000000" if t == 1.0 else "#d0d0d0"}" stroke-width="1"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="11">{label}</text>')
    lx = left
    for mark, colour in _MARK_COLOUR.items():
        label = f"{mark} {_LEGEND[mark]}"
        out.append(f'<circle cx="{lx + 4}" cy="14" r="4" fill="{colour}"/>'
                   f'<text x="{lx + 12}" y="18" font-size="12">{e(label)}</text>')
        lx += 24 + 7 * len(label)
    step = 1 if named else max(1, math.ceil(len(cases) / 25))
    axis_y = top + plot_h
    off_scale = 0
    for i, x in enumerate(cases):
        cx = x_of(i)
        colour = _MARK_COLOUR.get(x.mark, "#555555")
        beyond = "above" if x.speedup > hi else "below" if x.speedup < lo else ""
        off_scale += bool(beyond)
        note = f" (off the scale, drawn at its {'top' if beyond == 'above' else 'bottom'})" \
            if beyond else ""
        out.append(f'<g class="case"><title>#{i + 1} {e(x.mark)} {e(x.label)}: '
                   f'{_x(x.speedup)}x {_ci(x)}{note}</title>')
        if x.ci:
            out.append(f'<line x1="{cx:.1f}" y1="{y_of(x.ci[0]):.1f}" x2="{cx:.1f}" '
                       f'y2="{y_of(x.ci[1]):.1f}" stroke="{colour}" stroke-width="1"/>')
        y = y_of(x.speedup)
        if beyond:   # a triangle on the edge, pointing the way the value lies
            tip = -6 if beyond == "above" else 6
            out.append(f'<polygon class="off-scale" points="{cx - 4:.1f},{y:.1f} '
                       f'{cx + 4:.1f},{y:.1f} {cx:.1f},{y + tip:.1f}" fill="{colour}"/></g>')
        else:
            out.append(f'<circle cx="{cx:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/></g>')
        if i % step == 0:
            text = f"{i + 1}"
            if named:   # (without the driver flag the key starts with)
                name = _short(x).split(" ", 1)[-1]
                if len(name) > CHART_LABEL_CHARS:
                    name = name[:CHART_LABEL_CHARS - 1] + "\u2026"
                text = f"{i + 1} {name}"
            out.append(f'<text class="label" x="{cx:.1f}" y="{axis_y + 12:.1f}" '
                       f'font-size="10" text-anchor="end" transform="rotate(-60 {cx:.1f} '
                       f'{axis_y + 12:.1f})">{e(text)}</text>')
    caption = (f"cases in run order ({len(cases)}); bars: {c.options.confidence:.0%} CI; "
               f"band: threshold ±{c.options.threshold:.0%}")
    if off_scale:
        caption += f"; {off_scale} off the scale (triangles at its edge)"
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle" '
               f'font-size="12">{e(caption)}</text>')
    out.append(f'<text x="14" y="{top + plot_h / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + plot_h / 2})">{SPEEDUP_LABEL} '
               f'(log scale)</text>')
    out.append("</svg>")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}
td.n{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
.m-plus,.m-bang{color:#c62828;font-weight:bold}.m-minus,.m-star{color:#2e7d32;font-weight:bold}
.m-q,.m-x{color:#ef8f00}.verdict{font-size:1.1em;font-weight:bold}"""
_MARK_CLASS = {"+": "m-plus", "-": "m-minus", "~": "m-tilde", "!": "m-bang", "*": "m-star",
               "x": "m-x", "?": "m-q"}


def to_html(c: Comparison, only_changed: bool = False) -> str:
    """One standalone HTML file: summary, the chart, and the case table."""
    e = html.escape
    counts = c.counts
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             "<title>benchdnn-py compare</title>", f"<style>{_CSS}</style>", "</head>",
             "<body>", "<h1>benchdnn-py compare</h1>",
             (f"<p>base: <code>{e(_run_line(c.base))}</code><br>"
              f"new: <code>{e(_run_line(c.new))}</code></p>"),
             f'<p class="verdict">{e(c.verdict())}</p>',
             f"<p>{e(_geomean_text(c))}</p>",
             "<table><tr><th>mark</th><th>meaning</th><th>cases</th></tr>"]
    parts += [f'<tr><td class="{_MARK_CLASS[m]}">{e(m)}</td><td>{MARK_MEANING[m]}</td>'
              f'<td class="n">{counts[m]}</td></tr>' for m in MARKS]
    parts.append("</table>")
    notes = [f"refused unless --force: {r}" for r in c.refusals] + c.warnings
    if c.rerun_note:
        notes.append(f"rerun: {c.rerun_note}")
    if notes:
        parts.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    parts += ["<h2>Speedup per case</h2>", speedup_svg(c)]
    top = c.regressions[:c.options.top]
    if top:
        parts.append("<h2>Top regressions</h2><ol>")
        parts += [f"<li>{_x(x.speedup)}x {e(_ci(x))} <code>{e(x.rerun)}</code></li>"
                  for x in top]
        parts.append("</ol>")
    chart_number = {id(x): n for n, x in enumerate(charted(c), 1)}
    header = "".join(f"<th>{h}</th>" for h in (
        "#", "mark", "problem", "base median ms", "new median ms", "base min ms", "new min ms",
        SPEEDUP_LABEL, f"{c.options.confidence:.0%} CI", "note"))
    parts += ["<h2>Cases</h2>", "<table>", f"<tr>{header}</tr>"]
    for x in shown_cases(c, only_changed):
        parts.append(
            f'<tr><td class="n">{chart_number.get(id(x), "")}</td>'
            f'<td class="{_MARK_CLASS[x.mark]}">{e(x.mark)}</td>'
            f"<td><details><summary>{e(_short(x))}</summary><code>{e(x.rerun)}</code>"
            f"</details></td>"
            + "".join(f'<td class="n">{v}</td>' for v in (
                _ms(x.base_median), _ms(x.new_median), _ms(x.base_min), _ms(x.new_min),
                _x(x.speedup), e(_ci(x))))
            + f"<td>{e(_note(x))}</td></tr>")
    parts += ["</table>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def render(c: Comparison, fmt: str, only_changed: bool = False) -> str:
    """A machine or document format as text (the terminal table is render_terminal)."""
    if fmt == "md":
        return to_markdown(c, only_changed=True)
    if fmt == "csv":
        return to_csv(c)
    if fmt == "json":
        return to_json(c)
    if fmt == "html":
        return to_html(c, only_changed)
    raise ValueError(fmt)
