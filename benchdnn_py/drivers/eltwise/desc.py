"""Eltwise problem descriptors: dims joined by `x`, optionally named (common/dims.py,
shared with the other drivers whose problem is a tensor's shape). Memory tags (--tag) are
layout.py's, as for every driver."""

from ...common.dims import Dims, parse_dims

__all__ = ["Dims", "parse_dims"]
