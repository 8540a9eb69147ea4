"""Per-data-type numbers of the deconvolution driver: the convolution table applies (same
products and sums, only routed differently); benchdnn widens the bf16 weights range for
deconvolution, which will be a row here when bf16 lands."""

from ..conv.cfg import CFG  # noqa: F401
