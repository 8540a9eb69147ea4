"""--softmax: softmax and log-softmax over one axis, forward and backward data (files:
desc.py dims and the axis, cfg.py per-type numbers and fill, ref.py reference, driver.py
options and case flow, backend_onednn.py oneDNN's primitives)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="softmax",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="softmax and log-softmax, FWD_D/FWD_I/BWD_D; f32, bf16, f16, f64 "
                "(s8, u8, f8 forward)",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
