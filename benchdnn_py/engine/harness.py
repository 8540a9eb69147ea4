"""The argument stream: benchdnn's sticky-option state machine (reference sections 1, 4).

``plan()`` walks the command line and every batch file it names, left to right. Options
change the current state and stay in effect (inside and after batch files) until changed
or ``--reset``; each problem descriptor expands, right where it stands, into one case per
combination of the list options, in the driver's order. The whole stream is read before
anything runs, so a usage error stops the run before any time is spent.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

from ..drivers import DRIVERS
from ..drivers.base import Driver
from ..errors import UsageError
from ..reports.perf_report import check_fields, with_driver_default
from . import batch
from .options import closest, parse_list, parse_option_arg
from .settings import (EMPTY_IS_DEFAULT, GLOBAL_OPTIONS, KNOBS, RUN_FIELDS, GlobalSettings,
                       knob_warning, parse_perf_targets)

MAX_BATCH_DEPTH = 64
_VERBOSE_SHORT = re.compile(r"-v([0-9]+)$")
# Options read once for the whole run, from the end of the stream: after the last problem
# they still apply, so they draw no "No problem found" warning.
_WHOLE_RUN = {GLOBAL_OPTIONS[f].name for f in RUN_FIELDS | {"results"}}


@dataclasses.dataclass(frozen=True)
class PlannedCase:
    driver: Driver
    values: dict[str, Any]        # one value per driver option slot
    desc_text: str
    settings: GlobalSettings
    source: str                   # where the descriptor came from (batch file or argv)
    batch: str = ""               # the command line's --batch= it came through ("": argv)
    # The problem's options as the user typed them (`--dir=BWD_D`), in the driver's order:
    # the repro of a case whose descriptor does not parse, so it still reruns the case.
    given: tuple[str, ...] = ()
    # The descriptor this case was expanded from, numbered through the run: the cases
    # of one descriptor (its list options' combinations) share it (--perf-interleave).
    group: int = 0

    @property
    def unparsed_repro(self) -> str:
        return " ".join([*self.given, self.desc_text])


# Slots that select cases rather than describe a problem: repro lines never carry them
# (the line names the implementation that ran; results.selection_options keys on it).
SELECTION_SLOTS = ("impl_filter", "match")


@dataclasses.dataclass
class Plan:
    driver: Driver
    cases: list[PlannedCase]
    settings: GlobalSettings       # the global state at the end of the stream
    warnings: list[str]


class HelpRequested(Exception):
    def __init__(self, driver: Driver | None) -> None:
        super().__init__()
        self.driver = driver


class _Walker:
    def __init__(self) -> None:
        self.settings = GlobalSettings()
        self.driver: Driver | None = None
        self.values: dict[str, tuple[Any, ...] | Any] = {}
        # slot -> (option name, its text; for a list option, the text of each item)
        self.texts: dict[str, tuple[str, tuple[str, ...] | str]] = {}
        self.cases: list[PlannedCase] = []
        self.seen_dirs: list[Path] = []
        self.batch_depth = 0
        self.last_was_option = False
        self.top_batch = ""
        self.descriptors = 0
        self.knob_warnings: dict[str, None] = {}   # in order, each once

    # -- options --------------------------------------------------------------------
    def _global(self, name: str, value: str, source: Path | None = None) -> bool:
        for field, opt in GLOBAL_OPTIONS.items():
            if opt.name == name:
                if value == "" and field in EMPTY_IS_DEFAULT:
                    parsed = opt.default   # benchdnn's options: as there
                elif field == "perf_targets":
                    # a file a batch names is found next to that batch first, as --batch's
                    parsed = parse_perf_targets(value, source.parent if source else None,
                                                self.seen_dirs)
                else:
                    parsed = opt.parse(value)
                self.settings = dataclasses.replace(self.settings, **{field: parsed})
                return True
        if name in KNOBS:   # benchdnn's, accepted anywhere as its global options are
            warning = knob_warning(name, value)
            if warning:
                self.knob_warnings[warning] = None
            return True
        return False

    def _reset(self) -> None:
        assert self.driver is not None
        self.values = {o.slot: (o.default,) if o.is_list else o.default
                       for o in self.driver.options}
        self.texts = {}

    def _is_case_option(self, name: str) -> bool:
        return bool(self.driver and self.driver.case_option) and name == self.driver.case_option

    def _known_names(self) -> list[str]:
        names = [o.name for o in GLOBAL_OPTIONS.values()] + ["batch", "reset", "help", *KNOBS]
        if self.driver:
            names += [o.name for o in self.driver.options]
            if self.driver.case_option:
                names.append(self.driver.case_option)
        return names

    def _unknown(self, arg: str) -> UsageError:
        name, _ = parse_option_arg(arg)
        hints = closest(name, self._known_names())
        where = f"the {self.driver.name} driver" if self.driver else "benchdnn-py"
        hint = f"; did you mean {' or '.join('--' + h for h in hints)}?" if hints else ""
        return UsageError(f"unknown option `{arg}` for {where}{hint}")

    def _option(self, arg: str, source: Path | None, line: int = 0) -> None:
        name, value = parse_option_arg(arg)
        if name == "reset" and value is None:
            self._reset()
            return
        if name == "help":
            raise HelpRequested(self.driver)
        if name in DRIVERS and value is None:
            if DRIVERS[name] is not self.driver:
                raise UsageError(f"`{arg}`: one driver per run; this run is "
                                 f"--{self.driver.name if self.driver else '?'}")
            return
        if value is None:
            if name in self._known_names():
                raise UsageError(f"`{arg}`: expected `--{name}=VALUE`")
            raise self._unknown(arg)
        if name == "batch":
            self._batch(value, source)
            return
        if self._is_case_option(name):
            if value == "":
                raise UsageError(f"`{arg}`: expected `--{name}=VALUE`")
            self._descriptor(value, source, line)
            return
        if self._global(name, value, source):
            return
        opt = self.driver.option(name) if self.driver else None
        if opt is None:
            raise self._unknown(arg)
        self.values[opt.slot] = parse_list(opt, value) if opt.is_list else (
            opt.default if value == "" else opt.parse(value))
        if value == "":
            self.texts.pop(opt.slot, None)
        else:
            self.texts[opt.slot] = (name, tuple(value.split(",")) if opt.is_list else value)

    def _batch(self, name: str, including: Path | None) -> None:
        if self.batch_depth >= MAX_BATCH_DEPTH:
            raise UsageError(f"--batch={name}: batch files nest more than {MAX_BATCH_DEPTH} "
                             f"deep (does one include itself?)")
        path = batch.find(name, including.parent if including else None, self.seen_dirs)
        if path.parent not in self.seen_dirs:
            self.seen_dirs.append(path.parent)
        if self.batch_depth == 0:
            self.top_batch = path.name
        self.batch_depth += 1
        try:
            for token, line in batch.read(path):
                try:
                    self.feed(token, path, line)
                except _InBatchFile:
                    raise   # the innermost file named its place; an including one adds none
                except UsageError as exc:
                    raise _InBatchFile(f"{path}:{line}: {exc}") from None
        finally:
            self.batch_depth -= 1
            if self.batch_depth == 0:
                self.top_batch = ""

    # -- descriptors ----------------------------------------------------------------
    def _descriptor(self, text: str, source: Path | None, line: int = 0) -> None:
        assert self.driver is not None
        # One axis per slot: options sharing a slot (--dt and --cfg) expand once.
        lists = list({o.slot: (o.slot, self.values[o.slot])
                      for o in self.driver.options if o.is_list}.values())
        scalars = {o.slot: self.values[o.slot] for o in self.driver.options if not o.is_list}
        where = (f"{source}:{line}" if line else str(source)) if source else "command line"
        settings = _driver_settings(self.settings, self.driver)
        self.descriptors += 1
        for combo in itertools.product(*(range(len(vals)) for _, vals in lists)):
            values = dict(scalars)
            values.update({name: vals[i] for (name, vals), i in zip(lists, combo)})
            picked = dict(zip((name for name, _ in lists), combo))
            self.cases.append(PlannedCase(self.driver, values, text, settings, where,
                                          self.top_batch, self._given(picked),
                                          self.descriptors))

    def _given(self, picked: dict[str, int]) -> tuple[str, ...]:
        """The options a case was given, as typed: one item of each list option."""
        out = []
        for slot in dict.fromkeys(o.slot for o in self.driver.options):
            if slot in SELECTION_SLOTS or slot not in self.texts:
                continue
            name, text = self.texts[slot]
            out.append(f"--{name}={text[picked[slot]] if isinstance(text, tuple) else text}")
        return tuple(out)

    # -- the loop -------------------------------------------------------------------
    def feed(self, token: str, source: Path | None = None, line: int = 0) -> None:
        if not token.strip():   # (only a command line has one: `benchdnn-py --conv ''`)
            raise UsageError(f"an empty argument ({token!r}): expected an option or a problem")
        if token.startswith("--"):
            if self.driver is None:
                name, value = parse_option_arg(token)
                if name in DRIVERS and value is None:
                    self.driver = DRIVERS[name]
                    self._reset()
                    self.last_was_option = False
                    return
                if name == "help":
                    raise HelpRequested(None)
                if value is None or not self._global(name, value, source):
                    raise UsageError(
                        f"`{token}`: expected a driver first ({', '.join('--' + d for d in DRIVERS)})"
                        f", optionally after global options")
                return
            self._option(token, source, line)
            name, _ = parse_option_arg(token)
            if self._is_case_option(name):   # it named a problem, as a descriptor does
                self.last_was_option = False
            elif name != "batch" and name not in _WHOLE_RUN:
                # (a batch leaves its own last token's state; a whole-run option applies
                # wherever it stands)
                self.last_was_option = True
            return
        if token.startswith("-") and len(token) > 1:
            m = _VERBOSE_SHORT.match(token)
            if not m:
                raise UsageError(f"`{token}`: options take the `--` prefix (the only short "
                                 f"one is -vN)")
            self.settings = dataclasses.replace(self.settings, verbose=int(m.group(1)))
            self.last_was_option = True
            return
        if self.driver is None:
            raise UsageError(f"`{token}`: expected a driver ({', '.join('--' + d for d in DRIVERS)}) "
                             f"before the first problem")
        self._descriptor(token, source, line)
        self.last_was_option = False


class _InBatchFile(UsageError):
    """A usage error already prefixed with the batch file and line it stands on."""


def _driver_settings(settings: GlobalSettings, driver: Driver) -> GlobalSettings:
    """The settings a case of DRIVER runs with: `def` resolves to the driver's template."""
    template = with_driver_default(settings.perf_template, driver.default_perf_template)
    if template is settings.perf_template:
        return settings
    return dataclasses.replace(settings, perf_template=template)


def plan(args: list[str]) -> Plan:
    """Reads the whole argument stream; raises UsageError or HelpRequested."""
    walker = _Walker()
    for arg in args:
        walker.feed(arg)
    if walker.driver is None:
        raise UsageError(f"no driver given: expected one of "
                         f"{', '.join('--' + d for d in DRIVERS)}")
    driver = walker.driver
    walker.settings = _driver_settings(walker.settings, driver)
    for case_settings in {id(c.settings): c.settings for c in walker.cases}.values():
        template = case_settings.perf_template.resolve(driver.csv_perf_fields)
        check_fields(template, set(driver.perf_fields), driver.name)
    check_fields(walker.settings.perf_template.resolve(driver.csv_perf_fields),
                 set(driver.perf_fields), driver.name)
    if not driver.sampled_checks and any(c.settings.check.sampled for c in walker.cases):
        raise UsageError(f"--check=sampled: the {driver.name} driver checks every output "
                         f"point (--conv and --deconv sample)")
    warnings = list(walker.knob_warnings)
    if walker.last_was_option:
        warnings.append(f"{driver.name} driver: WARNING: No problem found for a given option!")
    return Plan(driver, walker.cases, walker.settings, warnings)
