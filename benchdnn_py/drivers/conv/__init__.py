"""--conv: convolution (files: desc.py grammar, cfg.py per-type numbers, ref.py reference
and op count, driver.py options and case flow)."""

from ...perf_report import COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="conv",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="convolution, all directions, f32, 1D/2D/3D",
)
