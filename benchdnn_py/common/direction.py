"""Propagation directions (benchdnn --dir), shared by the drivers whose problems have
weights: conv, deconv and the graph cases built on them."""

from __future__ import annotations

import enum


class Dir(enum.Enum):
    """Propagation directions (benchdnn --dir)."""

    FWD_B = "FWD_B"     # forward training, with bias
    FWD_D = "FWD_D"     # forward training, no bias
    FWD_I = "FWD_I"     # forward inference, no bias (the spec: same math as training)
    BWD_D = "BWD_D"
    BWD_W = "BWD_W"
    BWD_WB = "BWD_WB"
    BWD_DW = "BWD_DW"   # parsed like benchdnn, but not a convolution direction

    @property
    def forward(self) -> bool:
        return self.name.startswith("FWD")

    @property
    def with_bias(self) -> bool:
        return self in (Dir.FWD_B, Dir.BWD_WB)

    @property
    def prop_kind(self) -> str:
        return {Dir.FWD_B: "forward_training", Dir.FWD_D: "forward_training",
                Dir.FWD_I: "forward_inference", Dir.BWD_D: "backward_data"}.get(
                    self, "backward_weights")
