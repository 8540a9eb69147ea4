"""--graph: oneDNN Graph JSON convolutions, run on the conv driver (files: desc.py JSON
reading, checks and conversions to convolutions; driver.py options and case flow). The
conv driver, handed in by the registry, makes and runs each convolution with its own cfg
and reference, so this driver has no cfg.py or ref.py of its own."""

import functools

from ...reports.perf_report import COMMON_FIELDS
from ..base import Driver
from . import driver


def make_driver(conv: Driver) -> Driver:
    """The graph driver on top of the conv driver ``conv`` (through its public contract:
    options, make_problem, run and its perf fields)."""
    return Driver(
        name="graph",
        options=tuple(o for o in conv.options if o.name in driver.CONV_OPTIONS),
        make_problem=functools.partial(driver.make_problem, conv=conv),
        run=functools.partial(driver.run, conv=conv),
        csv_perf_fields=conv.csv_perf_fields,
        perf_fields=frozenset(COMMON_FIELDS | conv.perf_fields),
        description="oneDNN Graph JSON convolutions (--case=FILE.json), run as conv problems",
        case_option=driver.CASE_OPTION,
    )
