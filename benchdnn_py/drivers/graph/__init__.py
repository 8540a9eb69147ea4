"""--graph: oneDNN Graph JSON convolutions, run on the conv machinery (files: desc.py
JSON reading, checks and conversions to conv problems; driver.py options and case flow).
The conv driver's cfg and reference apply unchanged, so this driver has no cfg.py or
ref.py of its own."""

from ...perf_report import COMMON_FIELDS
from ..base import Driver
from . import driver

DRIVER = Driver(
    name="graph",
    options=driver.OPTIONS,
    make_problem=driver.make_problem,
    run=driver.run,
    csv_perf_fields=driver.CSV_PERF_FIELDS,
    perf_fields=frozenset(COMMON_FIELDS | driver.PERF_FIELDS),
    description="oneDNN Graph JSON convolutions (--case=FILE.json), run as conv problems",
    case_option=driver.CASE_OPTION,
)
