"""--concat: sources joined along one axis, each scaled (files: desc.py the sources' dims
and the axis, cfg.py per-type fill ranges, ref.py reference, driver.py options and case
flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="concat",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="sources joined along an axis; f32, bf16, f16, s32, s8, u8, f8",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
