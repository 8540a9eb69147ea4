"""cffi build script for the C kernel core (out-of-line API mode).

setup.py names this file in ``cffi_modules``; building the package compiles every C file
under kernels/ into the extension ``benchdnn_py._core``. The declarations come from the
CDEF sections of the headers in kernels/include/ (bdnn.h, then one per operation), so the
headers stay the single source of the API.

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
INCLUDE = KERNELS / "include"
COMPILE_ARGS = ["-O3", "-std=gnu11", "-fopenmp", "-fno-strict-aliasing", "-Wall", "-Wextra",
                "-Wno-unused-parameter"]
LINK_ARGS = ["-fopenmp"]


def _headers() -> list[Path]:
    """bdnn.h first (the shared types), then each operation's header in name order."""
    rest = sorted(p for p in INCLUDE.glob("*.h") if p.name != "bdnn.h")
    return [INCLUDE / "bdnn.h", *rest]


def _cdef_text() -> str:
    parts = []
    for header in _headers():
        match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", header.read_text(), re.S)
        if not match:
            raise RuntimeError(f"{header}: CDEF BEGIN/END markers not found")
        parts.append(match.group(1))
    return "\n".join(parts)


def _sources() -> list[str]:
    root = KERNELS.parent
    # Relative paths keep the build reproducible from the project root (setuptools' cwd).
    return sorted(os.path.relpath(p, root) for p in KERNELS.rglob("*.c"))


def _depends() -> list[str]:
    """Headers and included templates (*.inc): the extension is rebuilt when one changes
    (setuptools only compares the timestamps of sources and depends)."""
    root = KERNELS.parent
    return sorted(os.path.relpath(p, root) for pattern in ("*.h", "*.inc")
                  for p in KERNELS.rglob(pattern))


ffibuilder = FFI()
ffibuilder.cdef(_cdef_text())
_flags = " ".join(COMPILE_ARGS)
ffibuilder.set_source(
    "benchdnn_py._core",
    "".join(f'#include "{h.name}"\n' for h in _headers()),
    sources=_sources(),
    depends=_depends(),
    include_dirs=[os.path.relpath(KERNELS / "include", KERNELS.parent),
                  os.path.relpath(KERNELS / "conv", KERNELS.parent),
                  os.path.relpath(KERNELS / "common", KERNELS.parent)],
    define_macros=[("BDNN_BUILD_FLAGS", '"' + _flags.replace('"', '') + '"')],
    extra_compile_args=COMPILE_ARGS,
    extra_link_args=LINK_ARGS,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
    print(shlex.join(COMPILE_ARGS))
