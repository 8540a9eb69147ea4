"""--pool: max and average pooling, forward training/inference and backward data, with the
max-pooling workspace (files: desc.py grammar, cfg.py per-type numbers, ref.py reference
and op count, driver.py options and case flow)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="pool",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="pooling (max, avg_np, avg_p), FWD_D/FWD_I/BWD_D with workspace; f32, bf16, f16 (s8, u8, s32 forward); 1D/2D/3D",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
