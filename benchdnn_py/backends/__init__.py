"""Execution backends: what runs the timed operation of a case.

A backend is a name here (--backend=NAME), a library loader (backends/torch.py for the
optional PyTorch, backends/onednn.py for the optional oneDNN; the native C kernels are
the core package) and, in each driver that runs on it, an executor module
(drivers/conv/backend_native.py, backend_torch.py, backend_onednn.py, and deconv's own
native one). The drivers own everything else (problem, fill, reference,
compare, timing loop); an executor module provides

    unsupported(prb)        why this backend cannot run the problem, or None (may load
                            the backend's library; never raises for a missing one)
    create(prb, res)        an Executor, or None with res.status/res.reason set

and the Executor is the one object the case flow talks to:

    Executor.name           the implementation name (result line, perf line, statistics)
    Executor.info           a note for --verbose=5, or ""
    Executor.layouts        the layout (layout.Layout) of the primitive's src, wei and dst
                            memories: the requested ones, `any` resolved to its choice
    Executor.bind(inputs, outs) -> (run, collect)
                            inputs and outs: the primitive's memories, in its layouts;
                            run: the timed callable, nothing else in it; collect: untimed,
                            after a run, puts the results into the drivers' output buffers
    Executor.close()
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..errors import UsageError
from . import onednn as onednn_loader
from . import torch as torch_loader

if TYPE_CHECKING:   # pragma: no cover
    import numpy as np

    from ..engine.memory import Guarded

Run = Callable[[], None]


class Executor(Protocol):
    name: str
    info: str            # a note for --verbose=5 (the threads it runs on), or ""
    layouts: dict        # tensor name -> layout.Layout of its memory (src, wei, dst)

    def bind(self, inputs: dict[str, "np.ndarray"],
             outs: dict[str, "Guarded"]) -> tuple[Run, Run]: ...

    def close(self) -> None: ...


def _nothing_to_describe() -> dict[str, Any]:
    """The native kernels: the results file's environment block already describes them."""
    return {}


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str
    description: str                          # for --help
    describe: Callable[[], dict[str, Any]]    # what a results file records (version...)
    drivers: tuple[str, ...] = ()             # the drivers with an executor for it


NATIVE = "native"
BACKENDS: dict[str, Backend] = {
    NATIVE: Backend(NATIVE, "this project's C kernels", _nothing_to_describe),
    "torch": Backend("torch", "PyTorch's CPU operators, an optional extra: "
                     f"{torch_loader.INSTALL_HINT}", torch_loader.describe,
                     ("conv", "deconv", "softmax", "sum", "concat", "binary", "ip", "bnorm")),
    "onednn": Backend("onednn", "oneDNN's CPU primitives, an optional extra: "
                      f"{onednn_loader.INSTALL_HINT} (or {onednn_loader.LIB_ENV}=PATH)",
                      onednn_loader.describe,
                      ("conv", "deconv", "eltwise", "pool", "reorder", "softmax", "binary",
                       "ip", "bnorm")),
}


def parse(text: str) -> str:
    """--backend= value: a registered name (the library behind it is checked per case)."""
    name = text.strip()
    if name not in BACKENDS:
        raise UsageError(f"--backend={text}: unknown backend `{name}`; expected one of "
                         f"{', '.join(BACKENDS)}")
    return name


def drivers_of(name: str) -> tuple[str, ...]:
    return BACKENDS[name].drivers


def describe(name: str) -> dict:
    """What a results file records about a backend (version, threads)."""
    return BACKENDS[name].describe()


def used_by(cases) -> list[str]:
    """The backends a plan's cases use, in first-use order (for the results header)."""
    return list(dict.fromkeys(c.values.get("backend", NATIVE) for c in cases))
