"""--sum: dst = the sum of scaled sources, each of its own type and layout (files: desc.py
dims and the per-source options, cfg.py per-type numbers and fill, ref.py reference,
driver.py options and case flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="sum",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="sum of scaled sources; f32, bf16, f16, s32, s8, u8",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
