"""--eltwise: element-wise algorithms, forward and backward (files: desc.py dims and tags,
cfg.py per-type numbers and fill, ref.py reference and cancellation check, driver.py
options and case flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="eltwise",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="element-wise algorithms, FWD_D/FWD_I/BWD_D; f32, bf16, f16 (s8, u8, s32 forward)",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
