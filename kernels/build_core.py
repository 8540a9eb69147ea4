"""cffi build script for the C kernel core (out-of-line API mode).

setup.py names this file in ``cffi_modules``; building the package compiles every C file
under kernels/ into the extension ``benchdnn_py._core``. The declarations come from the
CDEF section of kernels/include/bdnn.h, so the header stays the single source of the API.

Flags: -O3 and OpenMP, never -march=native (each ISA variant carries its own target pragma
and is chosen at run time) and never -ffast-math (results must follow IEEE rules exactly).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from cffi import FFI

KERNELS = Path(__file__).resolve().parent
HEADER = KERNELS / "include" / "bdnn.h"
COMPILE_ARGS = ["-O3", "-std=gnu11", "-fopenmp", "-fno-strict-aliasing", "-Wall", "-Wextra",
                "-Wno-unused-parameter"]
LINK_ARGS = ["-fopenmp"]


def _cdef_text() -> str:
    text = HEADER.read_text()
    match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", text, re.S)
    if not match:
        raise RuntimeError(f"{HEADER}: CDEF BEGIN/END markers not found")
    return match.group(1)


def _sources() -> list[str]:
    root = KERNELS.parent
    # Relative paths keep the build reproducible from the project root (setuptools' cwd).
    return sorted(os.path.relpath(p, root) for p in KERNELS.rglob("*.c"))


ffibuilder = FFI()
ffibuilder.cdef(_cdef_text())
_flags = " ".join(COMPILE_ARGS)
ffibuilder.set_source(
    "benchdnn_py._core",
    '#include "bdnn.h"',
    sources=_sources(),
    include_dirs=[os.path.relpath(KERNELS / "include", KERNELS.parent),
                  os.path.relpath(KERNELS / "conv", KERNELS.parent)],
    define_macros=[("BDNN_BUILD_FLAGS", '"' + _flags.replace('"', '') + '"')],
    extra_compile_args=COMPILE_ARGS,
    extra_link_args=LINK_ARGS,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
    print(shlex.join(COMPILE_ARGS))
