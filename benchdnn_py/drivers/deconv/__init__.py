"""--deconv: deconvolution (transposed convolution) on the convolution kernels (files:
desc.py grammar, cfg.py per-type numbers, ref.py swap-rule reference and op count,
driver.py case flow)."""

from ...perf_report import COMMON_FIELDS
from ..base import Driver
from ..conv import driver as conv_driver
from . import driver

DRIVER = Driver(
    name="deconv",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=conv_driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | conv_driver.PERF_FIELDS),
    description="deconvolution, all directions, f32, 1D/2D/3D",
)
