"""The one module that talks to oneDNN (an optional extra): finding and loading its
library, the C API it calls, the constants of the loaded version, memory descriptors to
and from this project's layouts, primitive creation with oneDNN's status as the reason,
and what a results file and `info` record about it. The primitives each driver builds
live with that driver (conv and deconv: the conv driver's backend_onednn module).

Loading. The library is libdnnl.so.3 from $BENCHDNN_PY_ONEDNN_LIB (a user's own build),
else the one the `onednn` extra installs under the interpreter's prefix (the PyPI wheels
onednn-cpu-gomp and onednn-devel-cpu-gomp put lib/libdnnl.so.3 and include/oneapi/dnnl/
there). It is opened with cffi in ABI mode (dlopen: no compiler needed). The constants
(enum values and DNNL_ARG_* macros) are read from the headers that come with it
($BENCHDNN_PY_ONEDNN_INCLUDE, else include/ beside lib/, else the prefix's): the values
are the loaded version's own, not copies that could drift from it.

Threads. The wheel's oneDNN runs on GNU OpenMP, the same libgomp as the native kernels:
the thread count a case sets (--threads, -j) applies to both.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import core
from ..common import layout as layouts
from ..status import Reason, Status

INSTALL_HINT = 'pip install "benchdnn-py[onednn]"'
LIB_ENV = "BENCHDNN_PY_ONEDNN_LIB"
INCLUDE_ENV = "BENCHDNN_PY_ONEDNN_INCLUDE"
LIB_NAME = "libdnnl.so.3"
HEADERS = ("dnnl_common_types.h", "dnnl_types.h")

# The C API this project calls (oneDNN 3.x, dnnl.h). Enumerations are passed as int, which
# is how the C ABI passes them; their values come from the headers (constants()).
CDEF = """
typedef int dnnl_status_t;
typedef int64_t dnnl_dim_t;
typedef dnnl_dim_t dnnl_dims_t[12];
typedef struct dnnl_engine *dnnl_engine_t;
typedef struct dnnl_stream *dnnl_stream_t;
typedef struct dnnl_memory_desc *dnnl_memory_desc_t;
typedef const struct dnnl_memory_desc *const_dnnl_memory_desc_t;
typedef struct dnnl_memory *dnnl_memory_t;
typedef struct dnnl_primitive_desc *dnnl_primitive_desc_t;
typedef const struct dnnl_primitive_desc *const_dnnl_primitive_desc_t;
typedef struct dnnl_primitive *dnnl_primitive_t;
typedef struct dnnl_primitive_attr *dnnl_primitive_attr_t;
typedef struct dnnl_post_ops *dnnl_post_ops_t;
typedef struct { int arg; dnnl_memory_t memory; } dnnl_exec_arg_t;
typedef struct {
    int major; int minor; int patch; const char *hash;
    unsigned cpu_runtime; unsigned gpu_runtime;
} dnnl_version_t;

const dnnl_version_t *dnnl_version(void);
int dnnl_get_effective_cpu_isa(void);
const char *dnnl_status2str(int v);
const char *dnnl_dt2str(int v);
const char *dnnl_fmt_tag2str(int v);
const char *dnnl_cpu_isa2str(int v);
const char *dnnl_runtime2str(unsigned v);
dnnl_status_t dnnl_set_max_cpu_isa(int isa);

dnnl_status_t dnnl_engine_create(dnnl_engine_t *engine, int kind, size_t index);
dnnl_status_t dnnl_engine_destroy(dnnl_engine_t engine);
dnnl_status_t dnnl_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags);
dnnl_status_t dnnl_stream_wait(dnnl_stream_t stream);

dnnl_status_t dnnl_memory_desc_create_with_strides(dnnl_memory_desc_t *md, int ndims,
    const dnnl_dims_t dims, int data_type, const dnnl_dims_t strides);
dnnl_status_t dnnl_memory_desc_create_with_tag(dnnl_memory_desc_t *md, int ndims,
    const dnnl_dims_t dims, int data_type, int tag);
dnnl_status_t dnnl_memory_desc_query(const_dnnl_memory_desc_t md, int what, void *result);
int dnnl_memory_desc_equal(const_dnnl_memory_desc_t lhs, const_dnnl_memory_desc_t rhs);
size_t dnnl_memory_desc_get_size(const_dnnl_memory_desc_t md);
dnnl_status_t dnnl_memory_desc_destroy(dnnl_memory_desc_t md);
dnnl_status_t dnnl_memory_create(dnnl_memory_t *memory, const_dnnl_memory_desc_t md,
    dnnl_engine_t engine, void *handle);
dnnl_status_t dnnl_memory_destroy(dnnl_memory_t memory);

dnnl_status_t dnnl_primitive_attr_create(dnnl_primitive_attr_t *attr);
dnnl_status_t dnnl_primitive_attr_destroy(dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_primitive_attr_set_scales_mask(dnnl_primitive_attr_t attr, int arg,
    int mask);
dnnl_status_t dnnl_primitive_attr_set_zero_points_mask(dnnl_primitive_attr_t attr, int arg,
    int mask);
dnnl_status_t dnnl_primitive_attr_set_post_ops(dnnl_primitive_attr_t attr,
    dnnl_post_ops_t post_ops);
dnnl_status_t dnnl_post_ops_create(dnnl_post_ops_t *post_ops);
dnnl_status_t dnnl_post_ops_destroy(dnnl_post_ops_t post_ops);
dnnl_status_t dnnl_post_ops_append_sum(dnnl_post_ops_t post_ops, float scale,
    int32_t zero_point, int data_type);
dnnl_status_t dnnl_post_ops_append_eltwise(dnnl_post_ops_t post_ops, int alg_kind,
    float alpha, float beta);
dnnl_status_t dnnl_post_ops_append_dw(dnnl_post_ops_t post_ops, int weights_data_type,
    int bias_data_type, int dst_data_type, dnnl_dim_t kernel_size, dnnl_dim_t stride_size,
    dnnl_dim_t padding_l_size);

dnnl_status_t dnnl_primitive_desc_query(const_dnnl_primitive_desc_t pd, int what, int index,
    void *result);
const_dnnl_memory_desc_t dnnl_primitive_desc_query_md(const_dnnl_primitive_desc_t pd,
    int what, int index);
dnnl_status_t dnnl_primitive_desc_destroy(dnnl_primitive_desc_t pd);
dnnl_status_t dnnl_primitive_create(dnnl_primitive_t *primitive,
    const_dnnl_primitive_desc_t pd);
dnnl_status_t dnnl_primitive_execute(dnnl_primitive_t primitive, dnnl_stream_t stream,
    int nargs, const dnnl_exec_arg_t *args);
dnnl_status_t dnnl_primitive_destroy(dnnl_primitive_t primitive);

dnnl_status_t dnnl_reorder_primitive_desc_create(dnnl_primitive_desc_t *pd,
    const_dnnl_memory_desc_t src_md, dnnl_engine_t src_engine,
    const_dnnl_memory_desc_t dst_md, dnnl_engine_t dst_engine,
    dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_eltwise_forward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int prop_kind, int alg_kind, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t dst_md, float alpha, float beta, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_eltwise_backward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int alg_kind, const_dnnl_memory_desc_t diff_src_md,
    const_dnnl_memory_desc_t diff_dst_md, const_dnnl_memory_desc_t data_md, float alpha,
    float beta, const_dnnl_primitive_desc_t hint_fwd_pd, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_softmax_forward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int prop_kind, int alg_kind, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t dst_md, int softmax_axis, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_softmax_backward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int alg_kind, const_dnnl_memory_desc_t diff_src_md,
    const_dnnl_memory_desc_t diff_dst_md, const_dnnl_memory_desc_t dst_md,
    int softmax_axis, const_dnnl_primitive_desc_t hint_fwd_pd, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_binary_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int alg_kind, const_dnnl_memory_desc_t src0_md,
    const_dnnl_memory_desc_t src1_md, const_dnnl_memory_desc_t dst_md,
    dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_batch_normalization_forward_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, int prop_kind,
    const_dnnl_memory_desc_t src_md, const_dnnl_memory_desc_t dst_md, float epsilon,
    unsigned flags, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_batch_normalization_backward_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, int prop_kind,
    const_dnnl_memory_desc_t diff_src_md, const_dnnl_memory_desc_t diff_dst_md,
    const_dnnl_memory_desc_t src_md, float epsilon, unsigned flags,
    const_dnnl_primitive_desc_t hint_fwd_pd, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_pooling_forward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int prop_kind, int alg_kind, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t dst_md, const dnnl_dims_t strides, const dnnl_dims_t kernel,
    const dnnl_dims_t dilation, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r,
    dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_pooling_backward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int alg_kind, const_dnnl_memory_desc_t diff_src_md,
    const_dnnl_memory_desc_t diff_dst_md, const dnnl_dims_t strides,
    const dnnl_dims_t kernel, const dnnl_dims_t dilation, const dnnl_dims_t padding_l,
    const dnnl_dims_t padding_r, const_dnnl_primitive_desc_t hint_fwd_pd,
    dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_inner_product_forward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int prop_kind, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t weights_md, const_dnnl_memory_desc_t bias_md,
    const_dnnl_memory_desc_t dst_md, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_inner_product_backward_data_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, const_dnnl_memory_desc_t diff_src_md,
    const_dnnl_memory_desc_t weights_md, const_dnnl_memory_desc_t diff_dst_md,
    const_dnnl_primitive_desc_t hint_fwd_pd, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_inner_product_backward_weights_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t diff_weights_md, const_dnnl_memory_desc_t diff_bias_md,
    const_dnnl_memory_desc_t diff_dst_md, const_dnnl_primitive_desc_t hint_fwd_pd,
    dnnl_primitive_attr_t attr);
"""


# Convolution and deconvolution take the same arguments in every direction.
CDEF += "".join("""
dnnl_status_t dnnl_{kind}_forward_primitive_desc_create(dnnl_primitive_desc_t *pd,
    dnnl_engine_t engine, int prop_kind, int alg_kind, const_dnnl_memory_desc_t src_md,
    const_dnnl_memory_desc_t weights_md, const_dnnl_memory_desc_t bias_md,
    const_dnnl_memory_desc_t dst_md, const dnnl_dims_t strides, const dnnl_dims_t dilates,
    const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_{kind}_backward_data_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, int alg_kind,
    const_dnnl_memory_desc_t diff_src_md, const_dnnl_memory_desc_t weights_md,
    const_dnnl_memory_desc_t diff_dst_md, const dnnl_dims_t strides,
    const dnnl_dims_t dilates, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r,
    const_dnnl_primitive_desc_t hint_fwd_pd, dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_{kind}_backward_weights_primitive_desc_create(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, int alg_kind,
    const_dnnl_memory_desc_t src_md, const_dnnl_memory_desc_t diff_weights_md,
    const_dnnl_memory_desc_t diff_bias_md, const_dnnl_memory_desc_t diff_dst_md,
    const dnnl_dims_t strides, const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
    const dnnl_dims_t padding_r, const_dnnl_primitive_desc_t hint_fwd_pd,
    dnnl_primitive_attr_t attr);
""".format(kind=kind) for kind in ("convolution", "deconvolution"))


class Unavailable(Exception):
    """oneDNN cannot be used here; the message says why and how to get it."""


class Failed(Exception):
    """A oneDNN call returned an error status; the message names the call and status."""


# --------------------------------------------------------------------------------------
# Locating the library and its headers
# --------------------------------------------------------------------------------------

def library_path() -> Path:
    """$BENCHDNN_PY_ONEDNN_LIB, else the extra's lib/libdnnl.so.3 under the prefix."""
    given = os.environ.get(LIB_ENV)
    if given:
        path = Path(given)
        if not path.is_file():
            raise Unavailable(f"{LIB_ENV}={given}: no such file")
        return path
    path = Path(sys.prefix) / "lib" / LIB_NAME
    if not path.is_file():
        raise Unavailable(f"oneDNN is not installed (no {path}); get it with: {INSTALL_HINT}")
    return path


def include_dir(lib: Path) -> Path:
    """The directory holding oneapi/dnnl/dnnl_types.h for that library."""
    candidates = []
    if os.environ.get(INCLUDE_ENV):
        candidates.append(Path(os.environ[INCLUDE_ENV]))
    candidates += [lib.resolve().parent.parent / "include", lib.parent.parent / "include",
                   Path(sys.prefix) / "include"]
    for base in candidates:
        if (base / "oneapi" / "dnnl" / "dnnl_types.h").is_file():
            return base / "oneapi" / "dnnl"
    raise Unavailable(f"oneDNN's headers (oneapi/dnnl/dnnl_types.h) are not beside {lib}; "
                      f"name their include directory with {INCLUDE_ENV}, or: {INSTALL_HINT}")


# --------------------------------------------------------------------------------------
# Constants from the headers
# --------------------------------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ENUM = re.compile(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
_DEFINE = re.compile(r"^#define\s+(DNNL_\w+)\s+(.+?)\s*$", re.M)
_INT = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b")


def _active_lines(text: str) -> str:
    """The text without the lines of disabled conditional blocks: `#if 0` and the
    `#ifdef` of options (DNNL_EXPERIMENTAL_*) that a default build leaves off."""
    out, stack = [], []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#ifdef") or s.startswith("#if "):
            stack.append(not (s.startswith("#ifdef") or s == "#if 0"))
            continue
        if s.startswith("#ifndef"):
            stack.append(True)
            continue
        if s.startswith("#else"):
            if stack:
                stack[-1] = not stack[-1]
            continue
        if s.startswith("#endif"):
            if stack:
                stack.pop()
            continue
        if all(stack):
            out.append(line)
    return "\n".join(out)


def _evaluate(expr: str, known: dict[str, int]) -> int | None:
    """An integer expression of literals, known names and | + - << ( ), or None."""
    expr = _INT.sub(lambda m: str(int(m.group(1), 0)), expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b",
                  lambda m: str(known[m.group(0)]) if m.group(0) in known else "?", expr)
    if "?" in expr:
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.BitOr, ast.Add,
               ast.Sub, ast.LShift, ast.USub)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)):
        return None
    return int(eval(compile(tree, "<dnnl>", "eval")))   # only integer arithmetic remains


def parse_constants(texts: list[str]) -> dict[str, int]:
    """Every enumerator and integer DNNL_* macro of the headers: name -> value."""
    known: dict[str, int] = {}
    for raw in texts:
        text = _active_lines(_COMMENT.sub("", raw))
        for body, _ in _ENUM.findall(text):
            value = -1
            for item in (x.strip() for x in body.split(",")):
                if not item:
                    continue
                name, _, expr = (p.strip() for p in item.partition("="))
                value = _evaluate(expr, known) if expr else value + 1
                if value is None:
                    raise ValueError(f"cannot evaluate `{item}`")
                known[name] = value
        for name, expr in _DEFINE.findall(text):
            v = _evaluate(expr, known)
            if v is not None:
                known[name] = v
    return known


class Constants:
    """The loaded version's constants as attributes: c.dnnl_f32, c.DNNL_ARG_SRC."""

    def __init__(self, values: dict[str, int]) -> None:
        self.values = values

    def __getattr__(self, name: str) -> int:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def has(self, name: str) -> bool:
        return name in self.values


# --------------------------------------------------------------------------------------
# The loaded library
# --------------------------------------------------------------------------------------

# This project's eltwise algorithm names (common/eltwise.py) whose oneDNN algorithm is not
# dnnl_eltwise_<name>.
ELTWISE_NAMES = {"clip_v2_dst": "clip_v2_use_dst_for_bwd", "elu_dst": "elu_use_dst_for_bwd",
                 "exp_dst": "exp_use_dst_for_bwd", "logistic_dst": "logistic_use_dst_for_bwd",
                 "relu_dst": "relu_use_dst_for_bwd", "sqrt_dst": "sqrt_use_dst_for_bwd",
                 "tanh_dst": "tanh_use_dst_for_bwd"}

# --isa levels -> oneDNN's max CPU ISA (dnnl_cpu_isa_t names); oneDNN has no scalar-only
# mode (its lowest is sse41), so --isa=scalar has no counterpart.
ISA_CAPS = {"avx2": "avx2", "avx512": "avx512_core", "avx512_vnni": "avx512_core_vnni",
            "avx512_bf16": "avx512_core_bf16", "avx512_amx": "avx512_core_amx"}


@dataclasses.dataclass
class Library:
    ffi: Any
    lib: Any
    c: Constants
    path: Path
    engine: Any
    stream: Any
    version: str
    runtime: str
    isa: str
    cap: str         # the --isa level set when it was loaded ("": none)

    def check(self, status: int, what: str) -> None:
        if status != self.c.dnnl_success:
            raise Failed(f"{what}: {self.status_name(status)}")

    def status_name(self, status: int) -> str:
        return self.ffi.string(self.lib.dnnl_status2str(status)).decode()

    # -- memory descriptors ---------------------------------------------------------------

    def _dims(self, values) -> Any:
        out = self.ffi.new("dnnl_dims_t")
        for i, v in enumerate(values):
            out[i] = int(v)
        return out

    def _owned(self, created: Any) -> Any:
        return self.ffi.gc(created[0], self.lib.dnnl_memory_desc_destroy)

    def eltwise_alg(self, name: str) -> int | None:
        """oneDNN's eltwise algorithm for one of ours, or None when it has none."""
        full = f"dnnl_eltwise_{ELTWISE_NAMES.get(name, name)}"
        return getattr(self.c, full) if self.c.has(full) else None

    def data_type(self, dt: str) -> int:
        name = f"dnnl_{dt}"
        if not self.c.has(name):
            raise Failed(f"oneDNN {self.version} has no data type {dt}")
        return getattr(self.c, name)

    def md_any(self, dims: tuple[int, ...], dt: str) -> Any:
        md = self.ffi.new("dnnl_memory_desc_t *")
        self.check(self.lib.dnnl_memory_desc_create_with_tag(
            md, len(dims), self._dims(dims), self.data_type(dt), self.c.dnnl_format_tag_any),
            "dnnl_memory_desc_create_with_tag(any)")
        return self._owned(md)

    def md_of(self, lay: layouts.Layout, dt: str) -> Any:
        """A memory descriptor of this layout (offset0 aside: the memory's handle points
        at the first element). Blocked layouts go through oneDNN's format tags; Failed
        when the loaded version has none for it."""
        md = self.ffi.new("dnnl_memory_desc_t *")
        if lay.is_plain:
            self.check(self.lib.dnnl_memory_desc_create_with_strides(
                md, lay.ndims, self._dims(lay.dims), self.data_type(dt),
                self._dims(lay.strides)), "dnnl_memory_desc_create_with_strides")
            return self._owned(md)
        tag = tag_of(lay)
        if tag is None or not self.c.has(f"dnnl_{tag}"):
            raise Failed(f"oneDNN {self.version} has no format tag for `{lay.describe()}`")
        self.check(self.lib.dnnl_memory_desc_create_with_tag(
            md, lay.ndims, self._dims(lay.dims), self.data_type(dt),
            getattr(self.c, f"dnnl_{tag}")), f"dnnl_memory_desc_create_with_tag({tag})")
        owned = self._owned(md)
        back = self.layout_of(owned)
        if back is None or not back.same_memory(lay):
            raise Failed(f"oneDNN's `{tag}` is not the memory of `{lay.describe()}`")
        return owned

    def _query_int(self, md: Any, what: str, ctype: str = "int") -> int:
        out = self.ffi.new(f"{ctype} *")
        self.check(self.lib.dnnl_memory_desc_query(md, getattr(self.c, what), out), what)
        return int(out[0])

    def _query_dims(self, md: Any, what: str, n: int) -> tuple[int, ...]:
        out = self.ffi.new("dnnl_dims_t **")
        self.check(self.lib.dnnl_memory_desc_query(md, getattr(self.c, what), out), what)
        return tuple(int(out[0][0][i]) for i in range(n))

    def dims_of(self, md: Any) -> tuple[int, ...]:
        return self._query_dims(md, "dnnl_query_dims",
                                self._query_int(md, "dnnl_query_ndims_s32"))

    def layout_of(self, md: Any) -> layouts.Layout | None:
        """The project's Layout of a blocked descriptor, offset0 0, or None when it has
        none: another format kind, extra data (int8 weights' compensation), padding
        other than up to each block, an offset."""
        c = self.c
        if self._query_int(md, "dnnl_query_format_kind") != c.dnnl_blocked:
            return None
        n = self._query_int(md, "dnnl_query_ndims_s32")
        dims = self._query_dims(md, "dnnl_query_dims", n)
        strides = self._query_dims(md, "dnnl_query_strides", n)
        nblks = self._query_int(md, "dnnl_query_inner_nblks_s32")
        blks = self._query_dims(md, "dnnl_query_inner_blks", nblks)
        idxs = self._query_dims(md, "dnnl_query_inner_idxs", nblks)
        offsets = self._query_dims(md, "dnnl_query_padded_offsets", n)
        padded = self._query_dims(md, "dnnl_query_padded_dims", n)
        offset0 = self._query_int(md, "dnnl_query_submemory_offset_s64", "int64_t")
        lay = layouts.Layout(dims, strides, tuple(zip(idxs, blks)), 0)
        item = self._query_itemsize(md)
        if (any(offsets) or offset0 or lay.padded_dims != padded
                or self.lib.dnnl_memory_desc_get_size(md) != item * lay.size):
            return None
        return lay

    def _query_itemsize(self, md: Any) -> int:
        dt = self._query_int(md, "dnnl_query_data_type")
        return core.numpy_dtype(self.ffi.string(self.lib.dnnl_dt2str(dt)).decode()).itemsize

    def md_size(self, md: Any) -> int:
        return int(self.lib.dnnl_memory_desc_get_size(md))

    # -- memories and primitives -----------------------------------------------------------

    def memory(self, md: Any, array: np.ndarray, offset_bytes: int = 0) -> Any:
        """A memory over an array's buffer (the array must outlive it)."""
        mem = self.ffi.new("dnnl_memory_t *")
        handle = self.ffi.cast("char *", array.ctypes.data) + offset_bytes
        self.check(self.lib.dnnl_memory_create(mem, md, self.engine, handle),
                   "dnnl_memory_create")
        return self.ffi.gc(mem[0], self.lib.dnnl_memory_destroy)

    def primitive(self, pd: Any) -> Any:
        prim = self.ffi.new("dnnl_primitive_t *")
        self.check(self.lib.dnnl_primitive_create(prim, pd), "dnnl_primitive_create")
        return self.ffi.gc(prim[0], self.lib.dnnl_primitive_destroy)

    def impl_info(self, pd: Any) -> str:
        out = self.ffi.new("const char **")
        self.check(self.lib.dnnl_primitive_desc_query(pd, self.c.dnnl_query_impl_info_str,
                                                      0, out), "impl_info_str")
        return self.ffi.string(out[0]).decode()

    def scratchpad_bytes(self, pd: Any) -> int:
        """The scratchpad a primitive of pd allocates for itself at execution."""
        md = self.lib.dnnl_primitive_desc_query_md(pd, self.c.dnnl_query_scratchpad_md, 0)
        return self.md_size(md) if md != self.ffi.NULL else 0

    def arg_md(self, pd: Any, arg: int) -> Any:
        """The descriptor the primitive chose for an execution argument (owned by pd:
        keep pd as long as it is used)."""
        return self.lib.dnnl_primitive_desc_query_md(pd, self.c.dnnl_query_exec_arg_md, arg)

    def exec_args(self, prim: Any, args: dict[int, Any]) -> tuple[Any, Any]:
        """(exec args array, its count) for dnnl_primitive_execute."""
        arr = self.ffi.new("dnnl_exec_arg_t[]", len(args))
        for i, (arg, mem) in enumerate(args.items()):
            arr[i].arg, arr[i].memory = arg, mem
        return arr, len(args)

    def md_of_vector(self, n: int, dt: str) -> Any:
        """A dense 1-D descriptor (bias, scales, zero points)."""
        return self.md_of(layouts.plain((n,)), dt)

    # -- attributes ------------------------------------------------------------------------

    def attr(self) -> Any:
        out = self.ffi.new("dnnl_primitive_attr_t *")
        self.check(self.lib.dnnl_primitive_attr_create(out), "dnnl_primitive_attr_create")
        return self.ffi.gc(out[0], self.lib.dnnl_primitive_attr_destroy)

    def set_scales_mask(self, attr: Any, arg: int, mask: int) -> None:
        self.check(self.lib.dnnl_primitive_attr_set_scales_mask(attr, arg, mask),
                   f"scales mask of argument {arg}")

    def set_zero_points_mask(self, attr: Any, arg: int, mask: int) -> None:
        self.check(self.lib.dnnl_primitive_attr_set_zero_points_mask(attr, arg, mask),
                   f"zero points mask of argument {arg}")

    def set_post_ops(self, attr: Any, entries: list[tuple]) -> Any:
        """Appends ("sum", scale, zero_point, dt), ("eltwise", alg, alpha, beta) and
        ("dw", wei_dt, bia_dt, dst_dt, k, s, p) entries (enum values given) and sets
        them; returns the post-ops object, to be kept as long as the attr."""
        out = self.ffi.new("dnnl_post_ops_t *")
        self.check(self.lib.dnnl_post_ops_create(out), "dnnl_post_ops_create")
        post_ops = self.ffi.gc(out[0], self.lib.dnnl_post_ops_destroy)
        for kind, *params in entries:
            if kind == "sum":
                scale, zero_point, dt = (list(params) + [0, self.c.dnnl_data_type_undef])[:3]
                status = self.lib.dnnl_post_ops_append_sum(post_ops, scale, zero_point, dt)
            elif kind == "eltwise":
                status = self.lib.dnnl_post_ops_append_eltwise(post_ops, *params)
            else:
                status = self.lib.dnnl_post_ops_append_dw(post_ops, *params)
            self.check(status, f"post-op {kind}")
        self.check(self.lib.dnnl_primitive_attr_set_post_ops(attr, post_ops), "post-ops")
        return post_ops

    def pd(self, function: str, *args: Any) -> Any:
        """dnnl_<function>_primitive_desc_create(&pd, engine, *args), owned; Failed with
        oneDNN's status when it cannot be created."""
        out = self.ffi.new("dnnl_primitive_desc_t *")
        self.check(getattr(self.lib, f"dnnl_{function}_primitive_desc_create")(
            out, self.engine, *args), f"dnnl_{function}")
        return self.ffi.gc(out[0], self.lib.dnnl_primitive_desc_destroy)

    def timed(self, prim: Any, args: dict[int, Any], keep: list) -> Any:
        """The timed callable of a primitive: execute and wait, nothing else (args' memories
        and their buffers kept alive with it)."""
        arr, n = self.exec_args(prim, args)
        L, stream, check = self.lib, self.stream, self.check

        def run() -> None:
            check(L.dnnl_primitive_execute(prim, stream, n, arr), "dnnl_primitive_execute")
            L.dnnl_stream_wait(stream)
        run.keep = (keep, arr, args)
        return run

    def reorder_pd(self, src_md: Any, dst_md: Any, attr: Any = None) -> Any:
        pd = self.ffi.new("dnnl_primitive_desc_t *")
        self.check(self.lib.dnnl_reorder_primitive_desc_create(
            pd, src_md, self.engine, dst_md, self.engine,
            self.ffi.NULL if attr is None else attr), "dnnl_reorder_primitive_desc_create")
        return self.ffi.gc(pd[0], self.lib.dnnl_primitive_desc_destroy)

    def reorder(self, src_md: Any, src_mem: Any, dst_md: Any, dst_mem: Any):
        """A callable running oneDNN's reorder from one memory into another."""
        pd = self.reorder_pd(src_md, dst_md)
        return self.timed(self.primitive(pd), {self.c.DNNL_ARG_FROM: src_mem,
                                               self.c.DNNL_ARG_TO: dst_mem}, [pd])


def tag_of(lay: layouts.Layout) -> str | None:
    """The canonical letter tag of a dense layout (`aBcd16b`), or None when no tag
    describes it: letters outermost first by stride (blocked ones uppercase), then the
    inner blocks."""
    if lay.offset0:
        return None
    order = sorted(range(lay.ndims), key=lambda d: (-lay.strides[d], d))
    blocked = {d for d, _ in lay.blocks}
    tag = "".join(layouts.LETTERS[d].upper() if d in blocked else layouts.LETTERS[d]
                  for d in order)
    tag += "".join(f"{s}{layouts.LETTERS[d]}" for d, s in lay.blocks)
    try:
        candidate = layouts.parse_tag(tag).layout(lay.dims)
    except Exception:   # not a tag the grammar knows
        return None
    return tag if candidate.same_memory(lay) else None


@functools.lru_cache(maxsize=None)
def load() -> tuple[Library | None, str]:
    """(the library, "") or (None, why oneDNN cannot be used): engine and stream
    created once per process."""
    try:
        path = library_path()
        headers = include_dir(path)
    except Unavailable as exc:
        return None, str(exc)
    try:
        import cffi
        ffi = cffi.FFI()
        ffi.cdef(CDEF)
        lib = ffi.dlopen(str(path))
    except (OSError, AttributeError) as exc:
        return None, f"oneDNN cannot be loaded from {path} ({exc}); reinstall it: {INSTALL_HINT}"
    try:
        c = Constants(parse_constants([(headers / h).read_text() for h in HEADERS]))
    except (OSError, ValueError) as exc:
        return None, f"oneDNN's headers in {headers} cannot be read ({exc})"
    v = lib.dnnl_version()
    if v.major != 3:
        return None, (f"{path} is oneDNN {v.major}.{v.minor}.{v.patch}; this backend "
                      "calls the 3.x API")
    engine = ffi.new("dnnl_engine_t *")
    stream = ffi.new("dnnl_stream_t *")
    if lib.dnnl_engine_create(engine, c.dnnl_cpu, 0) != c.dnnl_success or \
            lib.dnnl_stream_create(stream, engine[0], c.dnnl_stream_default_flags) \
            != c.dnnl_success:
        return None, f"oneDNN at {path} cannot create a CPU engine and stream"
    # oneDNN takes its ISA cap once, before its first primitive: --isa at load time
    # (a level it has no cap for loads it uncapped: its cases report cap_unmet)
    cap = core.isa_cap() if core.isa_cap() in ISA_CAPS else ""
    if cap and lib.dnnl_set_max_cpu_isa(getattr(c, f"dnnl_cpu_isa_{ISA_CAPS[cap]}")) \
            != c.dnnl_success:
        return None, f"oneDNN at {path} cannot be capped at --isa={cap}"
    version = f"{v.major}.{v.minor}.{v.patch}"
    runtime = ffi.string(lib.dnnl_runtime2str(v.cpu_runtime)).decode()
    isa = ffi.string(lib.dnnl_cpu_isa2str(lib.dnnl_get_effective_cpu_isa())).decode()
    isa = isa.removeprefix("cpu_isa_")
    return Library(ffi, lib, c, path, engine[0], stream[0], version, runtime, isa, cap), ""


def cap_unmet(lib: Library) -> str | None:
    """Why the loaded oneDNN cannot run under the --isa in force, or None."""
    cap = core.isa_cap()
    if cap == lib.cap:
        return None
    if cap and cap not in ISA_CAPS:
        return f"--isa={cap}: oneDNN has no such cap (its lowest is sse41)"
    return (f"--isa={cap or 'the CPU'}: oneDNN was capped at its first use in this process "
            f"({lib.cap or 'none'}); give that --isa a run of its own")


def cannot_run(dts) -> str | None:
    """Why no oneDNN case can run here (the library missing, the --isa cap, a data type of
    dts the loaded version lacks), or None: every driver's first check."""
    lib, why = load()
    if lib is None:
        return why
    unmet = cap_unmet(lib)
    if unmet:
        return unmet
    missing = [dt for dt in dict.fromkeys(dts) if not lib.c.has(f"dnnl_{dt}")]
    return f"oneDNN {lib.version} has no data type {missing[0]}" if missing else None


def create_in_case(res, impl_filter, make_pd: Callable[["Library"], Any],
                   make: Callable[["Library", Any, str], Any]):
    """A driver's executor, created as a case creates it: make_pd(lib) under the case's
    create_pd timer, the implementation name checked against impl_filter, then
    make(lib, pd, name) under create_prim. None with res's status set: UNIMPLEMENTED with
    oneDNN's reason (the library missing, or its status for the failing call), SKIPPED
    when the filter leaves the implementation out."""
    lib, why = load()
    if lib is None:
        res.status, res.reason = Status.UNIMPLEMENTED, why
        return None
    try:
        with res.timers("create_pd"):
            pd = make_pd(lib)
            name = impl_name(lib.impl_info(pd))
            if not impl_filter.allows(name):
                res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
                return None
        with res.timers("create_prim"):
            return make(lib, pd, name)
    except Failed as exc:
        res.status, res.reason = Status.UNIMPLEMENTED, f"oneDNN {lib.version}: {exc}"
        return None


def describe() -> dict[str, Any]:
    """What a results file and `info` record about this backend."""
    onednn, why = load()
    if onednn is None:
        return {"available": False, "reason": why}
    return {"available": True, "version": onednn.version, "runtime": onednn.runtime,
            "isa": onednn.isa, "library": str(onednn.path)}


def impl_name(info: str) -> str:
    """The implementation name of a oneDNN primitive: its own, prefixed with the backend."""
    return f"onednn:{info}"
