"""Deliberate kernel defects, for the tests that prove the checks catch them. Selected by
$BENCHDNN_PY_TEST_FAULT and handed to the C core through one setter per family at create
time; production runs never set it.
"""

from __future__ import annotations

import enum
import os
from typing import TYPE_CHECKING

from ..errors import BenchError
from .capi import lib

if TYPE_CHECKING:   # pragma: no cover
    from .conv import ActLayout


@enum.unique   # (a value two defects shared would make one an alias of the other)
class Fault(enum.IntEnum):
    """Deliberate kernel defects, for tests that prove the checks catch them."""

    NONE = lib.BDNN_FAULT_NONE
    SKIP_LAST_IC = lib.BDNN_FAULT_SKIP_LAST_IC
    RIGHT_PAD_EDGE = lib.BDNN_FAULT_RIGHT_PAD_EDGE
    SKIP_LAST_TAP = lib.BDNN_FAULT_SKIP_LAST_TAP
    STRIDE_TRUNC = lib.BDNN_FAULT_STRIDE_TRUNC
    SLOW_GEMM = lib.BDNN_FAULT_SLOW_GEMM
    POST_OPS_SWAPPED = lib.BDNN_FAULT_POST_OPS_SWAPPED
    SUM_SCALE_DROPPED = lib.BDNN_FAULT_SUM_SCALE_DROPPED
    TRUNCATE_DST = lib.BDNN_FAULT_TRUNCATE_DST
    WRAP_DST = lib.BDNN_FAULT_WRAP_DST
    CRASH = lib.BDNN_FAULT_CRASH
    DW_PRE_POST_SWAPPED = lib.BDNN_FAULT_DW_PRE_POST_SWAPPED
    WINO_COEF = lib.BDNN_FAULT_WINO_COEF
    PADDING_GARBAGE = lib.BDNN_FAULT_PADDING_GARBAGE   # only as conv_fault() gives it
    SPLIT_DROPPED = lib.BDNN_FAULT_SPLIT_DROPPED
    SRC1_CHANNEL0 = lib.BDNN_FAULT_SRC1_CHANNEL0
    BORDER_KEPT = lib.BDNN_FAULT_BORDER_KEPT


FAULT_ENV = "BENCHDNN_PY_TEST_FAULT"


@enum.unique
class OpFault(enum.IntEnum):
    """Deliberate defects of the eltwise, pooling, reorder, softmax, sum, concat, binary and
    bnorm kernels (tests only), selected by the same $BENCHDNN_PY_TEST_FAULT as Fault; the
    values live in these kernels' headers."""

    NONE = 0
    ELT_TAIL_DROPPED = lib.BDNN_ELT_FAULT_TAIL_DROPPED
    ELT_DROPOUT_WORD0 = lib.BDNN_ELT_FAULT_DROPOUT_WORD0
    POOL_WS_IGNORED = lib.BDNN_POOL_FAULT_WS_IGNORED
    POOL_WS_UNWRITTEN = lib.BDNN_POOL_FAULT_WS_UNWRITTEN
    TRUNCATE_DST = lib.BDNN_FAULT_TRUNCATE_DST   # shared with the convolutions: the same
                                                 # defect of a low-precision store
    SRC1_CHANNEL0 = lib.BDNN_FAULT_SRC1_CHANNEL0  # and of the post-ops' extra input
    REORDER_PADDING_GARBAGE = lib.BDNN_REORDER_FAULT_PADDING_GARBAGE
    REORDER_DENSE_DST = lib.BDNN_REORDER_FAULT_DENSE_DST
    SMX_NO_MAX = lib.BDNN_SMX_FAULT_NO_MAX
    SMX_SUM_SHORT = lib.BDNN_SMX_FAULT_SUM_SHORT
    SUM_LAST_DROPPED = lib.BDNN_SUM_FAULT_LAST_DROPPED
    CONCAT_LAST_SHIFTED = lib.BDNN_CONCAT_FAULT_LAST_SHIFTED
    BINARY_SRC1_INNER_FIXED = lib.BDNN_BINARY_FAULT_SRC1_INNER_FIXED
    BNORM_LAST_CHANNEL = lib.BDNN_BNORM_FAULT_LAST_CHANNEL
    BNORM_SUM_SHORT = lib.BDNN_BNORM_FAULT_SUM_SHORT


def _fault(own: type[enum.IntEnum]):
    """The member of ``own`` that $BENCHDNN_PY_TEST_FAULT names (lower-case), if any. A
    defect of other kernels (a name of the other enum) leaves these correct: none."""
    name = os.environ.get(FAULT_ENV, "").strip()
    if name.upper() in own.__members__:
        return own[name.upper()]
    if not name or any(name.upper() in e.__members__ for e in (Fault, OpFault)):
        return own(0)
    known = dict.fromkeys(f.name.lower() for e in (Fault, OpFault) for f in e if f)
    raise BenchError(f"{FAULT_ENV}={name}: unknown fault; expected one of "
                     f"{', '.join(known)}")


def active_fault() -> Fault:
    """The convolution defect $BENCHDNN_PY_TEST_FAULT names, if any."""
    return _fault(Fault)


def active_op_fault() -> OpFault:
    """The eltwise/pooling defect $BENCHDNN_PY_TEST_FAULT names, if any."""
    return _fault(OpFault)


def conv_fault(layout: "ActLayout") -> Fault:
    """The defect of a convolution primitive on activations in layout: the named one, or,
    for the rows that write a blocked output themselves, the reorders' padded-tail defect
    (reorder_padding_garbage is one defect of every writer of a blocked layout)."""
    fault = active_fault()
    if not fault and layout.block > 1 and active_op_fault() is OpFault.REORDER_PADDING_GARBAGE:
        return Fault.PADDING_GARBAGE
    return fault


def _with_fault(name: str, fault: enum.IntEnum) -> str:
    return name + (f"+fault:{fault.name.lower()}" if fault else "")
