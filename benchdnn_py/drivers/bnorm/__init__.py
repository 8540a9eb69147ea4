"""--bnorm: batch normalization, forward (training, inference) and backward (files:
desc.py the descriptor grammar, cfg.py per-type numbers and fill, ref.py reference,
driver.py options and case flow, backend_onednn.py oneDNN's primitives, backend_torch.py
PyTorch's operators)."""

from ...reports.perf_report import BANDWIDTH_TEMPLATE, COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="bnorm",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="batch normalization, FWD_D/FWD_I/BWD_D/BWD_DW, flags G C H R A; f32, "
                "bf16, f16 (s8 inference with global stats)",
    default_perf_template=BANDWIDTH_TEMPLATE,
)
