"""Execution backends: what runs the timed operation of a --conv or --deconv case.

The drivers own everything else (problem, fill, reference, compare, timing loop); a
backend turns a problem into an Executor, the one object the case flow talks to:

    unsupported(prb)        why this backend cannot run the problem, or None (may import
                            the backend's library; never raises for a missing one)
    create(prb, res)        an Executor, or None with res.status/res.reason set
    Executor.name           the implementation name (result line, perf line, statistics)
    Executor.info           a note for --verbose=5, or ""
    Executor.layouts        the layout (layout.Layout) of the primitive's src, wei and dst
                            memories: the requested ones, `any` resolved to its choice
    Executor.bind(inputs, outs) -> (run, collect)
                            inputs and outs: the primitive's memories, in its layouts;
                            run: the timed callable, nothing else in it; collect: untimed,
                            after a run, puts the results into the drivers' output buffers
    Executor.close()

The registry below is the only place a backend is named. Each backend module is imported
on first use, so a backend whose library is absent (torch) costs nothing until asked for.
"""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Protocol

from ..errors import UsageError
from ..status import Status

if TYPE_CHECKING:   # pragma: no cover
    import numpy as np

    from ..drivers.base import CaseResult
    from ..memory import Guarded

Run = Callable[[], None]


class Executor(Protocol):
    name: str
    info: str            # a note for --verbose=5 (the threads it runs on), or ""
    layouts: dict        # tensor name -> layout.Layout of its memory (src, wei, dst)

    def bind(self, inputs: dict[str, "np.ndarray"],
             outs: dict[str, "Guarded"]) -> tuple[Run, Run]: ...

    def close(self) -> None: ...


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str
    module: str          # implements unsupported(prb) and create(prb, res)
    description: str     # for --help


NATIVE = "native"
BACKENDS: dict[str, Backend] = {
    NATIVE: Backend(NATIVE, "benchdnn_py.backends.native", "this project's C kernels"),
    "torch": Backend("torch", "benchdnn_py.backends.torch",
                     "PyTorch's CPU operators, an optional extra: "
                     "pip install \"benchdnn-py[torch]\""),
}


def parse(text: str) -> str:
    """--backend= value: a registered name (the library behind it is checked per case)."""
    name = text.strip()
    if name not in BACKENDS:
        raise UsageError(f"--backend={text}: unknown backend `{name}`; expected one of "
                         f"{', '.join(BACKENDS)}")
    return name


def _module(name: str) -> ModuleType:
    return importlib.import_module(BACKENDS[name].module)


def unsupported(prb) -> tuple[Status, str] | None:
    """Why prb.backend cannot run this problem (its own limits, or its library missing)."""
    return _module(prb.backend).unsupported(prb)


def create(prb, res: "CaseResult") -> Executor | None:
    return _module(prb.backend).create(prb, res)


def describe(name: str) -> dict:
    """What a results file records about a backend (version, threads); {} for native,
    whose build the environment block already describes."""
    describe_fn = getattr(_module(name), "describe", None)
    return describe_fn() if describe_fn else {}


def used_by(cases) -> list[str]:
    """The backends a plan's cases use, in first-use order (for the results header)."""
    return list(dict.fromkeys(c.values.get("backend", NATIVE) for c in cases))
