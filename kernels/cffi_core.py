"""The cffi description of the C kernel core, and the generator of its wrapper source.

CMakeLists.txt runs this file at build time: ``python kernels/cffi_core.py OUT.c`` writes
the wrapper that cffi's out-of-line API mode generates for ``benchdnn_py._core``. CMake
then compiles that wrapper together with every C file under kernels/ into one extension.
The declarations come from the CDEF sections of the headers in kernels/include/ (bdnn.h,
then one per operation), so the headers stay the single source of the API.

The output is rewritten only when its text changes: an unchanged wrapper keeps its
timestamp, so an incremental build recompiles nothing for it.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from cffi import FFI

INCLUDE = Path(__file__).resolve().parent / "include"


def headers() -> list[Path]:
    """bdnn.h first (the shared types), then each operation's header in name order."""
    rest = sorted(p for p in INCLUDE.glob("*.h") if p.name != "bdnn.h")
    return [INCLUDE / "bdnn.h", *rest]


def cdef_text() -> str:
    parts = []
    for header in headers():
        match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", header.read_text(), re.S)
        if not match:
            raise SystemExit(f"{header}: CDEF BEGIN/END markers not found")
        parts.append(match.group(1))
    return "\n".join(parts)


def builder() -> FFI:
    ffi = FFI()
    ffi.cdef(cdef_text())
    ffi.set_source("benchdnn_py._core", "".join(f'#include "{h.name}"\n' for h in headers()))
    return ffi


def write_wrapper(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / out.name
        builder().emit_c_code(str(fresh))
        text = fresh.read_bytes()
    if not out.exists() or out.read_bytes() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python kernels/cffi_core.py OUT.c")
    write_wrapper(Path(sys.argv[1]))
