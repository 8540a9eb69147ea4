"""The graph file's ops and tensors as read from JSON: each field checked for its type and
range, with one error line naming the op, the field and the file."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ...errors import ProblemError

UNKNOWN = -1   # a dimension the file leaves to inference (allowed in output shapes only)

# -- JSON values ------------------------------------------------------------------------
def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


@dataclasses.dataclass(frozen=True)
class Tensor:
    id: int
    dtype: str
    shape: tuple[int, ...] | None   # None: not given (empty); UNKNOWN marks unknown dims


def tensor(obj: Any, where: str) -> Tensor:
    if not isinstance(obj, dict):
        raise ProblemError(f"{where}: expected a logical tensor object, got {show(obj)}")
    tid = obj.get("id")
    if not is_int(tid):
        raise ProblemError(f"{where}: expected an integer `id`, got {show(tid)}")
    where = f"{where} (tensor {tid})"
    dtype = obj.get("dtype")
    if not isinstance(dtype, str):
        raise ProblemError(f"{where}: expected a string `dtype`, got {show(dtype)}")
    shape = obj.get("shape", [])
    if not isinstance(shape, list) or not all(is_int(d) for d in shape):
        raise ProblemError(f"{where}: expected `shape` to be a list of integers, got "
                           f"{show(shape)}")
    if any(d < 1 and d != UNKNOWN for d in shape):
        raise ProblemError(f"{where}: shape {show(shape)} has a dimension below 1 "
                           f"(-1 marks an unknown one)")
    return Tensor(tid, dtype, tuple(shape) if shape else None)


class Op:
    """One op of the graph, with the error prefix that names it."""

    def __init__(self, obj: Any, index: int) -> None:
        if not isinstance(obj, dict):
            raise ProblemError(f"graph entry {index}: expected an op object, got {show(obj)}")
        self.id = obj.get("id")
        if not is_int(self.id):
            raise ProblemError(f"graph entry {index}: expected an integer op `id`, got "
                               f"{show(self.id)}")
        self.kind = obj.get("kind")
        if not isinstance(self.kind, str):
            raise ProblemError(f"op {self.id}: expected a string `kind`, got {show(self.kind)}")
        self.where = f"op {self.id} ({self.kind})"
        attrs = obj.get("attrs", {})
        if not isinstance(attrs, dict):
            raise self.error(f"expected `attrs` to be an object, got {show(attrs)}")
        self.attrs = attrs
        self.inputs = self._tensors(obj, "inputs")
        self.outputs = self._tensors(obj, "outputs")

    def error(self, message: str) -> ProblemError:
        return ProblemError(f"{self.where}: {message}")

    def _tensors(self, obj: dict, key: str) -> list[Tensor]:
        items = obj.get(key, [])
        if not isinstance(items, list):
            raise self.error(f"expected `{key}` to be a list of logical tensors, got "
                             f"{show(items)}")
        return [tensor(t, f"{self.where} {key}[{n}]") for n, t in enumerate(items)]

    def check_arity(self, n_inputs: tuple[int, ...], n_outputs: int) -> None:
        if len(self.inputs) not in n_inputs:
            raise self.error(f"has {len(self.inputs)} inputs; expected "
                             f"{' or '.join(map(str, n_inputs))}")
        if len(self.outputs) != n_outputs:
            raise self.error(f"has {len(self.outputs)} outputs; expected {n_outputs}")

    def attr(self, name: str, kind: str, default: Any = None, required: bool = False) -> Any:
        """The value of attribute ``name`` of graph type ``kind`` (s64, s64[], string)."""
        if name not in self.attrs:
            if required:
                raise self.error(f"missing required attribute `{name}` ({kind})")
            return default
        entry = self.attrs[name]
        if not isinstance(entry, dict) or "value" not in entry:
            raise self.error(f"attribute `{name}`: expected {{\"type\": \"{kind}\", "
                             f"\"value\": ...}}, got {show(entry)}")
        declared = entry.get("type", kind)
        if declared != kind:
            raise self.error(f"attribute `{name}` has type `{declared}`; expected `{kind}`")
        value = entry["value"]
        ok = (is_int(value) if kind == "s64" else isinstance(value, str) if kind == "string"
              else is_number(value) if kind == "f32"
              else isinstance(value, list) and all(is_int(v) for v in value))
        if not ok:
            raise self.error(f"attribute `{name}` = {show(value)}: expected a {kind} value")
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        """A string attribute from a fixed set, spelled in any case (dumps write "None")."""
        value = self.attr(name, "string", default)
        for choice in choices:
            if value.lower() == choice.lower():
                return choice
        raise self.error(f"attribute `{name}` = \"{value}\": expected one of "
                         f"{', '.join(choices)}")

    def spatial(self, name: str, rank: int, minimum: int, rule: str,
                required: bool = True, default: list[int] | None = None) -> tuple[int, ...]:
        """An s64[] attribute with one value per spatial axis, each >= ``minimum``."""
        value = self.attr(name, "s64[]", default, required)
        if len(value) != rank or any(v < minimum for v in value):
            raise self.error(f"attribute `{name}` = {show(value)}: expected {rank} "
                             f"{rule}, one per spatial axis")
        return tuple(value)


# -- one convolution op ----------------------------------------------------------------
def known(op: Op, t: Tensor, role: str) -> tuple[int, ...]:
    if t.shape is None or UNKNOWN in t.shape:
        raise op.error(f"`{role}` (tensor {t.id}) needs a fully known shape, got "
                       f"{show(list(t.shape or []))}")
    return t.shape


def check_rank(op: Op, shape: tuple[int, ...], rank: int, role: str, tid: int | str) -> None:
    if len(shape) != rank:
        raise op.error(f"`{role}` ({tid}) has shape {shape_text(shape)} of rank {len(shape)}; "
                       f"expected rank {rank} like the other tensors")


def agree(given: tuple[int, ...] | None, expected: tuple[int, ...]) -> bool:
    return given is None or (len(given) == len(expected) and all(
        g in (UNKNOWN, e) for g, e in zip(given, expected)))


def shape_attr_or_output(op: Op, attr: str, out: Tensor, role: str) -> tuple[int, ...]:
    """A shape the op gives by its output tensor, by an attribute, or both (then equal)."""
    from_attr = op.attr(attr, "s64[]")
    if from_attr is not None:
        from_attr = tuple(from_attr)
        if not from_attr or any(d < 1 for d in from_attr):
            raise op.error(f"attribute `{attr}` = {show(list(from_attr))}: expected "
                           f"positive sizes")
        if not agree(out.shape, from_attr):
            raise op.error(f"`{role}` (tensor {out.id}) has shape "
                           f"{shape_text(out.shape or ())}, but attribute `{attr}` says "
                           f"{shape_text(from_attr)}")
        return from_attr
    if out.shape is None or UNKNOWN in out.shape:
        raise op.error(f"the `{role}` shape is unknown: give it in the output tensor "
                       f"{out.id} or in attribute `{attr}`")
    return out.shape
