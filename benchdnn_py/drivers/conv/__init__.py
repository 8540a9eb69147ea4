"""--conv: convolution (files by role: desc.py grammar; cfg.py per-type numbers; ref.py
reference, epilogue and op count; driver.py the case's steps; problem.py options and the
problem; attrs.py post-ops, scales and zero points; prim.py the C primitive's tensors,
creation and binding; policy.py what auto and any resolve to; formats.py memory-format
options; dt.py data-type options; backend_native.py and backend_torch.py the executors
of each --backend)."""

from ...reports.perf_report import COMMON_FIELDS
from ..base import Driver
from . import driver, problem

DRIVER = Driver(
    name="conv",
    options=problem.OPTIONS,
    make_problem=problem.make_problem,
    run=driver.run,
    csv_perf_fields=problem.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | problem.PERF_FIELDS),
    sampled_checks=True,
    description="convolution: every direction; f32, bf16, f16, int8; 1D/2D/3D",
)
