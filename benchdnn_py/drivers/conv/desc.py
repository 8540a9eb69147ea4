"""Convolution descriptors (``mb1ic64ih56oc64kh3ph1``): the sliding-window grammar of
common/window.py with convolution's output-size and padding formulas (reference 2.2)."""

from __future__ import annotations

from ...common.window import ConvDesc, format_desc, parse_desc

__all__ = ["ConvDesc", "format_desc", "parse_conv", "parse_desc"]


def parse_conv(text: str) -> ConvDesc:
    return parse_desc(text, "conv")
