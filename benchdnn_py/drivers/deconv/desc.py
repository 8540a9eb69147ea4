"""Deconvolution descriptors: the conv grammar and printer (one parser for both), with
deconvolution's output-size and padding formulas (reference 2.3):
    o = (i - 1) * s + (k - 1) * (d + 1) - 2p + 1."""

from __future__ import annotations

from ...common.window import ConvDesc, parse_desc


def parse_deconv(text: str) -> ConvDesc:
    return parse_desc(text, "deconv")
