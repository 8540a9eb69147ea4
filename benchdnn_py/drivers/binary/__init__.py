"""--binary: dst = OP(src0, src1) with broadcasting, scales and a post-op chain (files:
desc.py the two tensors' dims, cfg.py per-type numbers and fill, ref.py reference,
driver.py options and case flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="binary",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="elementwise OP of two broadcast sources; f32, bf16, f16, s32, s8, u8",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
