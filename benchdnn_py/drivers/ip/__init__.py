"""--ip: inner product (fully connected layer) on the convolution kernels (files: desc.py
grammar, cfg.py per-type numbers, ref.py reference and op count, driver.py problem and
the case's steps, backend_native.py the product on the kernels). It declares its use of
the conv driver: conv's options, problem fields, numbers, steps and oneDNN executor,
which runs oneDNN's inner product for it."""

from ...reports.perf_report import COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="ip",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    sampled_checks=True,
    description="inner product: every direction; f32, bf16, f16, int8; 0D to 3D sources",
)
