"""The convolution table's rows by kernel family and ISA (the name before `:route`), for
kernel tests that run a family on problems of every route: a group creates its primitive
on the first of its route rows that accepts the problem, in the table's order, as the
drivers do (kernels/conv/README.md, "Rows and routes")."""

from __future__ import annotations

import dataclasses

from benchdnn_py import core


@dataclasses.dataclass(frozen=True)
class RowGroup:
    name: str                               # family:isa, e.g. gemm_conv:avx2
    rows: tuple[core.ImplInfo, ...]         # its route rows, in the table's order

    @property
    def isa(self) -> core.Isa:
        return self.rows[0].isa

    @property
    def operands(self) -> core.Operands:
        return self.rows[0].operands

    @property
    def index(self) -> int:
        return self.rows[0].index


def group_name(row_name: str) -> str:
    """family:isa of a row name family:isa or family:isa:route."""
    return ":".join(row_name.split(":")[:2])


def groups(rows=None) -> list[RowGroup]:
    """The rows (default: the whole table) grouped by family:isa, in the table's order."""
    found: dict[str, list[core.ImplInfo]] = {}
    for row in core.conv_impls() if rows is None else rows:
        found.setdefault(group_name(row.name), []).append(row)
    return [RowGroup(name, tuple(rs)) for name, rs in found.items()]


def create(impl, *args, **kwargs) -> core.ConvPrimitive:
    """core.ConvPrimitive on a row, or on the first row of a group that accepts the
    problem (core.Unimplemented when none does)."""
    if isinstance(impl, core.ImplInfo):
        return core.ConvPrimitive(impl, *args, **kwargs)
    error = None
    for row in impl.rows:
        try:
            return core.ConvPrimitive(row, *args, **kwargs)
        except core.Unimplemented as exc:
            error = exc
    raise error


def create_past(impl, route: str, *args, **kwargs) -> core.ConvPrimitive:
    """As create, on a group's rows after its `route` row: the route the group takes where
    that one refuses (so a test reaches a route that an earlier one would take first)."""
    names = [r.name.split(":")[-1] for r in impl.rows]
    return create(dataclasses.replace(impl, rows=impl.rows[names.index(route) + 1:]), *args,
                  **kwargs)


def bwd_weights_routes(impl, shape: core.ConvShape, attr: core.ConvAttr):
    """The primitives a backward-weights kernel test checks (each to be closed by the
    caller before the next is made): the group's route for the problem, and where that is
    the direct or the pointwise route, the one behind it too (those take their shapes
    first)."""
    prim = create(impl, shape, core.Direction.BWD_WEIGHTS, True, attr=attr)
    route = prim.name.split("@")[0].split(":")[-1]   # (without the variant after @)
    yield prim
    if route in ("direct", "pointwise"):
        yield create_past(impl, route, shape, core.Direction.BWD_WEIGHTS, True, attr=attr)
