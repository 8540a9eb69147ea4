"""--deconv: deconvolution (transposed convolution) on the convolution kernels (files:
desc.py grammar, cfg.py per-type numbers, ref.py swap-rule reference and op count,
driver.py problem and the case's steps, prim.py the swapped primitive's direction,
attributes and binding, backend_native.py its native executor). It declares its use of
the conv driver: conv's options, problem fields, numbers and steps, and conv's torch
executor, which runs both."""

from ...reports.perf_report import COMMON_FIELDS
from ..base import Driver
from ..conv import problem as conv_problem
from . import driver

DRIVER = Driver(
    name="deconv",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=conv_problem.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | conv_problem.PERF_FIELDS),
    sampled_checks=True,
    description="deconvolution: every direction; f32, bf16, f16, int8; 1D/2D/3D",
)
