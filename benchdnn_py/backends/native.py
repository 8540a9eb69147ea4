"""The native backend: this project's C kernels (through core.py, the only module that
calls C). Implementation selection, kernel routing and weight packing stay with the
drivers that define them (conv.create, the KERNEL_DIR tables, deconv's swap rule); this
module adapts them to the Executor contract of backends/__init__.py."""

from __future__ import annotations

import numpy as np

from .. import core
from ..drivers.base import CaseResult
from ..drivers.conv import driver as conv
from ..drivers.deconv import driver as deconv
from ..drivers.deconv import ref as deconv_ref
from ..memory import Guarded
from ..status import Status


def _nothing() -> None:
    pass


class _ConvExecutor:
    def __init__(self, prim: core.ConvPrimitive, prb) -> None:
        self.prim, self.prb, self.name, self.info = prim, prb, prim.name, ""

    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        # The weights reorder into the kernel's layout happens here, untimed, as in oneDNN.
        packed = None if self.prb.dir in (conv.Dir.BWD_W, conv.Dir.BWD_WB) else \
            self.prim.pack_weights(inputs["wei"])
        return conv.bind(self.prim, self.prb.dir, inputs, packed, outs), _nothing

    def close(self) -> None:
        self.prim.close()


class _DeconvExecutor(_ConvExecutor):
    def bind(self, inputs: dict[str, np.ndarray], outs: dict[str, Guarded]):
        return deconv.bind(self.prim, self.prb, inputs, outs)


def _create_conv(prb, res: CaseResult):
    prim = conv.create(prb.shape, conv.KERNEL_DIR[prb.dir], prb.dir.with_bias,
                       prb.impl_filter, res, prb.post_ops,
                       attr=conv.kernel_attr(prb, conv.quant_of(prb, prb.shape.oc)))
    return None if prim is None else _ConvExecutor(prim, prb)


def _create_deconv(prb, res: CaseResult):
    # Bias: added by the backward-data kernel in the forward pass; summed separately when
    # computing diff_bias (the swapped problem's bias would be the wrong tensor's sum).
    prim = conv.create(deconv_ref.swapped_shape(prb.desc), deconv.KERNEL_DIR[prb.dir],
                       prb.dir.forward and prb.dir.with_bias, prb.impl_filter, res,
                       prb.post_ops, attr=deconv.kernel_attr(prb))
    return None if prim is None else _DeconvExecutor(prim, prb)


# Problem kind (ConvDesc.kind) -> executor factory.
_CREATE = {"conv": _create_conv, "deconv": _create_deconv}


def unsupported(prb) -> tuple[Status, str] | None:
    """The kernels' post-op support: the spec's chains per type, no depthwise fusion yet."""
    return conv.native_post_ops_unsupported(prb.post_ops, prb.dt)


def create(prb, res: CaseResult):
    return _CREATE[prb.desc.kind](prb, res)
