"""Command line: parse, call the library, render. No logic of its own.

``benchdnn-py --conv [options] problems...`` runs the benchdnn argument stream (the
default command, ``run``); ``benchdnn-py info`` describes the machine and the kernels.
Result lines and perf lines go to standard output exactly as benchdnn prints them; errors,
warnings and the rich tables go to standard error.
"""

from __future__ import annotations

import os
import sys

import click
from rich.console import Console

from . import __version__
from .errors import UsageError
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
    from . import harness, report, runner

    err_console = Console(stderr=True)
    try:
        plan = harness.plan(list(args))
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
    summary = runner.run_plan(plan, sys.stdout, sys.stderr)
    for line in report.end_of_run(summary, plan.settings):
        click.echo(line)
    if err_console.is_terminal and not os.environ.get("BENCHDNN_PY_NO_TABLES"):
        report.rich_summary(err_console, summary)
    if summary.interrupted:
        click.echo("benchdnn-py: interrupted; the summary above covers the cases that ran",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(summary.counts.exit_status())


@cli.command()
def info() -> None:
    """The CPU, the instruction sets the kernels can use, threads, and the kernel table."""
    from . import core

    click.echo(f"benchdnn-py {__version__}")
    click.echo(f"cpu: {_cpu_model()}")
    isas = [isa.name.lower() for isa in core.Isa if core.isa_supported(isa)]
    click.echo(f"instruction sets usable: {', '.join(isas)}")
    click.echo(f"threads: {core.max_threads()}")
    click.echo(f"kernel core: {core.build_info()}")
    click.echo("conv implementations (in order of preference):")
    for impl in core.conv_impls():
        state = "usable" if core.isa_supported(impl.isa) else "needs " + impl.isa.name.lower()
        click.echo(f"  {impl.name:<24} {state}")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def _driver_help(driver) -> str:
    from .drivers import DRIVERS
    from .settings import GLOBAL_OPTIONS

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
              "", "exit status: 0 no failures, 1 failures, 2 usage error, 130 interrupted"]
    return "\n".join(lines)


def main() -> None:
    cli(prog_name="benchdnn-py")
