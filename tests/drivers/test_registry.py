"""The driver registry (drivers/__init__.py): every driver by name, each loaded only when
a run names it."""

import subprocess
import sys

from benchdnn_py.drivers import DRIVERS


def test_every_driver_is_registered_under_its_own_name():
    assert list(DRIVERS) == ["conv", "graph", "deconv", "eltwise", "pool", "reorder",
                             "softmax", "sum", "concat", "binary", "ip", "bnorm"]
    assert all(DRIVERS[name].name == name for name in DRIVERS)
    assert "nope" not in DRIVERS and len(DRIVERS) == 12


def test_a_run_loads_only_the_driver_it_names():
    """In a fresh interpreter: the command line's own modules and one case of --pool load
    no other driver's package."""
    code = ("import sys\n"
            "from benchdnn_py import cli\n"
            "try:\n"
            "    cli.cli(['--pool', 'mb1ic2ih4kh2'], prog_name='benchdnn-py')\n"
            "except SystemExit as e:\n"
            "    assert e.code == 0, e.code\n"
            "print(sorted({m.split('.')[2] for m in sys.modules\n"
            "              if m.startswith('benchdnn_py.drivers.') and m.count('.') >= 2}))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines()[-1] == "['base', 'pool']"
