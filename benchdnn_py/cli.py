"""Command line: parse, call the library, render. No logic of its own.

``benchdnn-py --conv [options] problems...`` runs the benchdnn argument stream (the
default command, ``run``); ``benchdnn-py info`` describes the machine and the kernels.
Result lines and perf lines go to standard output exactly as benchdnn prints them; errors,
warnings and the rich tables go to standard error.
"""

from __future__ import annotations

import os
import signal
import sys

# numpy's OpenBLAS starts its threads when numpy is first imported (by the modules below),
# and they spin after each call: nothing here needs BLAS threads, and spinning ones take
# cores from the kernels' OpenMP team while a case is timed. So the count is set first.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click

from . import __version__, backends, completion, core
from .drivers import DRIVERS
from .engine import harness, progress, runner, shipped
from .engine.settings import COLOR_CHOICES, GLOBAL_OPTIONS, parse_perf_targets
from .engine.workers import WorkerError
from .errors import UsageError
from .reports import compare as cmp
from .reports import compare_report
from .reports import rerun as rerun_cases
from .reports import text as report
from .reports.compare import FAIL_CONDITIONS, parse_threshold
from .reports.merge import MergeError
from .reports.merge import merge as merge_files
from .reports.perf_table import table
from .reports.results import ResultsError, cpu_model_and_flags
from .status import EXIT_USAGE

EXIT_INTERRUPTED = 130


class _BenchdnnGroup(click.Group):
    """Anything that is not a subcommand is the benchdnn argument stream of `run`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "--version"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_BenchdnnGroup)
@click.version_option(__version__, prog_name="benchdnn-py")
def cli() -> None:
    """Convolution correctness and performance driver (benchdnn's command line).

    \b
    benchdnn-py --conv mb1ic64ih56oc64kh3ph1
    benchdnn-py --conv --mode=P --mb=1 --batch=problems/shapes_resnet_50
    benchdnn-py --conv --help        (the driver's options)
    """


@cli.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(args: tuple[str, ...]) -> None:
    """Run a benchdnn argument stream: --DRIVER, options, problems, --batch=FILE."""

    try:
        argv = expand_short_options(list(args))
        plan = harness.plan(argv)
    except harness.HelpRequested as req:
        click.echo(_driver_help(req.driver))
        sys.exit(0)
    except UsageError as exc:
        click.echo(f"benchdnn-py: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("benchdnn-py: interrupted while reading the arguments", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for warning in plan.warnings:
        click.echo(warning, err=True)
    err_console = report.stderr_console(plan.settings.color)
    try:
        session = runner.Session(plan, list(args))
    except (UsageError, WorkerError) as exc:
        click.echo(f"benchdnn-py: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("benchdnn-py: interrupted before the first case", err=True)
        sys.exit(EXIT_INTERRUPTED)
    # A CI job that is cancelled or times out gets SIGTERM: stop as Ctrl-C stops, keeping
    # the partial summary and whole files. (During the run itself the runner takes both
    # signals, so that none splits a case's report; this one covers what comes after.)
    signal.signal(signal.SIGTERM, _interrupt)
    summary = session.run(sys.stdout, sys.stderr, progress.for_stream(sys.stderr, err_console))
    for line in report.end_of_run(summary, plan.settings):
        click.echo(line)
    if err_console.is_terminal and not os.environ.get("BENCHDNN_PY_NO_TABLES"):
        report.rich_summary(err_console, summary)
    if summary.error:
        click.echo(f"benchdnn-py: error: {summary.error}; the summary above covers the "
                   f"cases that ran", err=True)
        sys.exit(EXIT_USAGE)
    if summary.interrupted:
        click.echo("benchdnn-py: interrupted; the summary above covers the cases that ran",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    for warning in runner.selection_warnings(plan, summary):
        click.echo(f"benchdnn-py: warning: {warning}", err=True)
    sys.exit(summary.counts.exit_status())


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def expand_short_options(args: list[str]) -> list[str]:
    """``-j N`` and ``-jN`` (make's and pytest-xdist's spelling) become ``--jobs=N``."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "-j" or (arg.startswith("-j") and not arg.startswith("--")):
            value = arg[2:] or next(it, "")
            token = f"{arg} {value}" if arg == "-j" else arg
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                raise UsageError(f"`{token.strip()}`: expected -j N with N a positive number "
                                 f"of worker processes, e.g. -j 2")
            out.append(f"--jobs={int(value)}")
        else:
            out.append(arg)
    return out


class _OneLineUsageError(click.ClickException):
    """A usage error as one line naming the token (click's default is a usage block)."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"benchdnn-py compare: error: {self.format_message()}", err=True)


class _OneLineErrors(click.Command):
    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _OneLineUsageError(exc.format_message()) from None


def _threshold(ctx, param, value: str) -> float:
    try:
        return parse_threshold(value)
    except ValueError:
        raise click.BadParameter(f"`{value}`: expected a percentage such as 5 or 5%") from None


def _fail_on(ctx, param, value: str) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if items == ("none",):
        return ()
    for item in items:
        if item not in FAIL_CONDITIONS:
            raise click.BadParameter(f"unknown condition `{item}`; expected none or a comma "
                                     f"list of {', '.join(FAIL_CONDITIONS)}")
    return items


@cli.command(cls=_OneLineErrors)
@click.argument("base")
@click.argument("new")
@click.option("--threshold", default="5%", show_default=True, callback=_threshold,
              help="Relative change below which a case is within noise.")
@click.option("--floor-us", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Absolute floor: a change of median time below this many microseconds "
                   "is within noise, whatever its percentage.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True,
              help="False discovery rate (Benjamini-Hochberg) for the Mann-Whitney tests.")
@click.option("--min-samples", type=click.IntRange(min=2), default=5, show_default=True,
              help="Fewer timed runs than this on a side: mark ? (too few samples).")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "csv", "json", "html"]),
              default="table", show_default=True,
              help="table: rich table on standard error; the others on standard output.")
@click.option("--fail-on", default="flip,regression", show_default=True, callback=_fail_on,
              help="Conditions that set the exit status: flip, failure, missing (exit 1); "
                   "regression, improvement, noisy (exit 3); or none.")
@click.option("--force", is_flag=True,
              help="Compare runs from different CPUs, instruction sets or thread counts.")
@click.option("--only-changed", is_flag=True, help="Leave out the ~ cases (table, html).")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colours in the table and summary on standard error: auto (a terminal, "
                   "unless NO_COLOR is set), always, never.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Regressions listed in the summary with their rerun command.")
@click.option("--rerun", is_flag=True,
              help="Before failing, remeasure the flagged cases, alternating the builds.")
@click.option("--rerun-rounds", type=click.IntRange(min=2), default=5, show_default=True,
              help="Rounds of --rerun; each times base then new.")
@click.option("--base-backend", default=None, metavar="NAME",
              help="Take only BASE's cases run on this backend (native, torch, onednn): "
                   "with --new-backend, two backends of one run compare (BASE and NEW "
                   "may be the same file).")
@click.option("--new-backend", default=None, metavar="NAME",
              help="Take only NEW's cases run on this backend.")
@click.option("--base-python", default=None,
              help="Interpreter with the base build installed (--rerun; default: this one).")
@click.option("--new-python", default=None,
              help="Interpreter with the new build installed (--rerun; default: this one).")
def compare(base: str, new: str, threshold: float, floor_us: float, alpha: float,
            min_samples: int, fmt: str, fail_on: tuple[str, ...], force: bool,
            only_changed: bool, color: str, top: int, rerun: bool, rerun_rounds: int,
            base_backend: str | None, new_backend: str | None,
            base_python: str | None, new_python: str | None) -> None:
    """Compare two results files (--results=FILE runs; .gz and - for stdin accepted).

    \b
    Marks: + slower, - faster, ~ within noise, ! newly failing, * fixed,
           x not comparable, ? too few samples or too noisy.
    Exit status: 0 nothing gated, 1 correctness (flip, failure, missing),
    2 usage error, runs not comparable or no case in common, 3 performance
    (regression, ...), 4 performance gated but inconclusive (a run timed on a
    disturbed machine; --rerun or a quiet rerun decides).
    """

    def fail(message: str) -> None:
        click.echo(f"benchdnn-py compare: error: {message}", err=True)
        sys.exit(EXIT_USAGE)

    if base == "-" and new == "-":
        fail("only one of BASE and NEW can be `-` (standard input)")
    if rerun and (base_backend or new_backend):
        fail("--rerun remeasures two builds; --base-backend/--new-backend compare two "
             "backends of one build: rerun their cases with --perf-interleave instead")
    if (base_python or new_python) and not rerun:
        fail("--base-python/--new-python are for --rerun")
    err_console = report.stderr_console(color)
    if not err_console.is_terminal and "COLUMNS" not in os.environ:
        err_console.width = 200   # a log has no width to fit; keep rows on one line
    opt = cmp.Options(threshold=threshold, floor_us=floor_us, alpha=alpha,
                      min_samples=min_samples, fail_on=fail_on, force=force, top=top,
                      base_backend=base_backend, new_backend=new_backend)
    try:
        pythons = [rerun_cases.check_python(p or sys.executable, name) for p, name in
                   ((base_python, "--base-python"), (new_python, "--new-python"))]
        result = cmp.compare(base, new, opt)
        if result.refusals and not force:
            fail("the runs are not comparable (--force compares them anyway): "
                 + "; ".join(result.refusals))
        if rerun:
            result = rerun_cases.rerun(result, *pythons, rounds=rerun_rounds,
                                      log=lambda line: click.echo(line, err=True))
    except (ResultsError, cmp.CompareError, rerun_cases.RerunError) as exc:
        fail(str(exc))
    if fmt == "table":
        compare_report.render_terminal(err_console, result, only_changed)
    else:
        sys.stdout.write(compare_report.render(result, fmt, only_changed))
        sys.stdout.flush()
        compare_report.render_summary(err_console, result)
    sys.exit(result.exit_code)


class _MergeErrors(_OneLineErrors):
    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _OneLineUsageError as exc:
            click.echo(f"benchdnn-py merge: error: {exc.format_message()}", err=True)
            sys.exit(EXIT_USAGE)


@cli.command(cls=_MergeErrors)
@click.argument("out")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--replace", is_flag=True, help="Replace OUT if it exists (never an input).")
def merge(out: str, inputs: tuple[str, ...], replace: bool) -> None:
    """Join the results files (or the JUnit files) of a run's shards into OUT, a new file
    (--replace: or an existing one that is not an input).

    \b
    benchdnn-py merge all.jsonl shard0.jsonl shard1.jsonl
    benchdnn-py merge all.xml shard0.xml shard1.xml
    Prints one summary; exit status 0 no failures, 1 failures, 2 usage error.
    """
    try:
        merged = merge_files(out, list(inputs), replace)
    except MergeError as exc:
        click.echo(f"benchdnn-py merge: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for warning in merged.warnings:
        click.echo(f"benchdnn-py merge: warning: {warning}", err=True)
    for line in report.failures_block(merged.failed):
        click.echo(line)
    click.echo(merged.counts.line())
    click.echo(f"merged {len(inputs)} {merged.kind} files into {out}", err=True)
    sys.exit(merged.counts.exit_status())


@cli.command("perf-table")
@click.argument("results", nargs=-1, required=True)
@click.option("--layers", is_flag=True, help="Also one row per case.")
@click.option("--targets", "targets_file", metavar="FILE",
              help="Judge the cases by this targets file (JSON) instead of the one the run "
                   "carries (a batch's --perf-targets).")
def perf_table(results: tuple[str, ...], layers: bool, targets_file: str | None) -> None:
    """Per case: median time, speed, share of the measured limit and the speedup between
    backends (Markdown). A run whose batch named a targets file (--perf-targets), or
    given --targets: one row per target, reorders against the memory copies of their run.

    \b
    benchdnn-py --conv --mode=P --backend=native,torch --results=r.jsonl --batch=FILE
    benchdnn-py perf-table r.jsonl
    benchdnn-py --conv --mode=P --results=perf.jsonl --batch=batches/perf_conv
    benchdnn-py perf-table perf.jsonl
    benchdnn-py perf-table --targets=batches/perf_targets.json old_perf.jsonl
    """

    try:
        targets = parse_perf_targets(targets_file) if targets_file is not None else None
        lines = table(list(results), layers, targets)
    except (UsageError, ResultsError) as exc:
        click.echo(f"benchdnn-py perf-table: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for line in lines:
        click.echo(line)


@cli.command()
def files() -> None:
    """The shipped shape and batch files, one line each: what --batch= and --case= find
    from any directory.

    \b
    benchdnn-py files
    benchdnn-py --conv --mb=1 --batch=problems/shapes_resnet_50
    """

    top = shipped.root()
    if top is None:
        click.echo("benchdnn-py files: error: this installation has no shipped problems/ "
                   "and batches/ (reinstall the package)", err=True)
        sys.exit(EXIT_USAGE)
    listing = shipped.listing()
    width = max((len(f.name) for f in listing), default=0)
    for f in listing:
        click.echo(f"{f.name:<{width}}  {f.description}".rstrip())
    click.echo(f"({len(listing)} files in {top})", err=True)


@cli.command()
def info() -> None:
    """The CPU, the instruction sets the kernels can use, threads, and the kernel table."""

    click.echo(f"benchdnn-py {__version__}")
    click.echo(f"cpu: {_cpu_model()}")
    isas = [isa.name.lower() for isa in core.Isa if core.isa_supported(isa)]
    click.echo(f"instruction sets usable: {', '.join(isas)}")
    if core.isa_supported(core.Isa.AVX512):   # (the kernel tables order some rows by it)
        width = "two 256-bit halves" if core.splits_512() else "full width"
        click.echo(f"512-bit operations: {width}")
    click.echo(f"threads: {core.max_threads()}")
    click.echo(f"kernel core: {core.build_info()}")
    click.echo(f"measured limits ({core.max_threads()} threads, best of "
               f"{core.PEAK_REPEATS} runs; %eff% in perf templates divides by these):")
    peaks = {operands: core.measured_peak(operands) for operands in ("f32", "bf16", "int8")}
    for operands, what in (("f32", "f32 FMA"), ("bf16", "bf16 dot products"),
                           ("int8", "int8 dot products")):
        click.echo(f"  {what:<20} {_peak_text(operands, peaks[operands])}")
    click.echo(f"  {'memory copy':<20} {core.measured_copy_bandwidth() / 1e9:.1f} GB/s "
               f"(read + written, {core.BANDWIDTH_BYTES >> 20} MiB buffers)")
    trip = core.core_round_trip()
    if trip > 0:
        click.echo(f"  {'core to core':<20} {trip * 1e9:.0f} ns (a cache line's round trip "
                   f"between threads 0 and 1, now)")
    for warning in core.implausible_limits(peaks):
        click.echo(f"benchdnn-py info: warning: {warning}", err=True)
    click.echo("backends (--backend=):")
    for name in backends.BACKENDS:
        click.echo(f"  {name:<8} {_backend_text(name)}")
    tables = {"conv, deconv and ip": core.conv_impls, "eltwise": core.eltwise_impls,
              "pool": core.pool_impls, "reorder": core.reorder_impls,
              "softmax": core.softmax_impls, "sum": core.sum_impls,
              "concat": core.concat_impls, "binary": core.binary_impls,
              "bnorm": core.bnorm_impls}
    for what, table in tables.items():
        click.echo(f"{what} implementations (in order of preference):")
        for impl in table():
            state = "usable" if core.isa_supported(impl.isa) else "needs " + impl.isa.name.lower()
            click.echo(f"  {impl.name:<28} {state}")


@cli.command("completion")
@click.argument("shell", type=click.Choice(completion.SHELLS), metavar="SHELL")
def completion_script(shell: str) -> None:
    """Print the Tab completion script for SHELL (bash or zsh).

    Subcommands, drivers, options, their values and --batch= files complete
    (docs/completion.md).

    \b
    eval "$(benchdnn-py completion bash)"      (in ~/.bashrc)
    benchdnn-py completion bash > ~/.local/share/bash-completion/completions/benchdnn-py
    eval "$(benchdnn-py completion zsh)"       (in ~/.zshrc, after compinit)
    """
    click.echo(completion.script(shell), nl=False)


# What the completion scripts run when the Python that printed them is gone (the scripts
# call benchdnn_py.completion directly, which answers without loading the kernels).
@cli.command("__complete", hidden=True,
             context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def complete(args: tuple[str, ...]) -> None:
    sys.exit(completion.main(["--", *args]))


def _backend_text(name: str) -> str:
    """What `info` says about a backend: its version and where it runs, or why not."""
    if name == backends.NATIVE:
        return "this project's kernels (the table below)"
    d = backends.describe(name)
    if not d.get("available"):
        return f"not available: {d.get('reason', '')}"
    details = ", ".join(f"{k} {v}" for k, v in d.items() if k not in ("available", "version"))
    return f"{d['version']} ({details})"


def _peak_text(operands: str, peak) -> str:
    if peak is None:
        return "no vector route"
    unit = "GOPS" if operands == "int8" else "GFLOPS"
    route = "" if peak.kind.name.lower() == operands else ", as f32 FMA"
    return f"{peak.ops_per_s / 1e9:.0f} {unit} ({peak.isa.name.lower()}{route})"


def _cpu_model() -> str:
    return cpu_model_and_flags()[0]


def _driver_help(driver) -> str:

    lines = ["usage: benchdnn-py [global options] --DRIVER [options] PROBLEM... "
             "[--batch=FILE]...", "", "drivers:"]
    lines += [f"  --{name:<22} {d.description}" for name, d in DRIVERS.items()]
    lines += ["", "global options (sticky, never reset):"]
    lines += [f"  --{o.name + '=':<22} {o.help}" for o in GLOBAL_OPTIONS.values()]
    lines += ["  -vN                     same as --verbose=N"]
    if driver is not None:
        lines += ["", f"{driver.name} options (sticky until --reset; lists give one case each):"]
        lines += [f"  --{o.name + '=':<22} {o.help}" for o in driver.options]
    lines += ["  --batch=FILE            read more arguments from FILE",
              "  --reset                 restore the driver options' defaults",
              "  -j N                    same as --jobs=N",
              "", "exit status: 0 no failures, 1 failures, 2 usage error, 130 interrupted"]
    return "\n".join(lines)


def main() -> None:
    cli(prog_name="benchdnn-py")
