"""Per-data-type numbers of the inner product driver: the convolution table applies. An
inner product is the convolution whose kernel covers its input (desc.py): the same
products, sums and post-op math, so the same ranges, density rule (exact sums of the
sparse operand's chain, K = ic x spatial long) and thresholds (0 for the exact sums, the
output type's rounding otherwise), as benchdnn's ip and conv cfgs share their method."""

from ..conv.cfg import CFG  # noqa: F401
