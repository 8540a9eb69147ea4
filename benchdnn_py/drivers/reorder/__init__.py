"""--reorder: copy a tensor between memory layouts and data types, with scales and a sum
post-op (files: desc.py dims, tags and strides, cfg.py per-type numbers and fill, ref.py
reference, driver.py options and case flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="reorder",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="layout and data-type reorders: plain, strided and blocked tags, "
                "f32/bf16/f16/s32/s8/u8, src/dst scales, sum",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
