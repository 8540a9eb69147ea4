"""The one module that imports PyTorch (an optional extra): loading it with its thread
count matched to the native kernels', what a results file records about it, its
implementation name, zero-copy array views between numpy and torch (bf16 included), and
post-op chains as torch operators. The operators each driver runs through torch live with
that driver (conv: the conv driver's backend_torch module)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import ml_dtypes
import numpy as np

from .. import core
from ..common import layout as layouts
from ..common.attr import Binary, PostOps, Prelu, Sum
from ..common.post_ops import src1_name
from ..status import Reason, Status

INSTALL_HINT = 'pip install "benchdnn-py[torch]"'


def to_torch(torch, a: np.ndarray):
    """A zero-copy torch view of an array (bf16 through its bits: from_numpy does not know
    ml_dtypes' bfloat16)."""
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


# The data types the memory-bound drivers' torch backends take, as torch dtype names.
FLOAT_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def float_verdict(dts, primitive: str) -> tuple[Status, str] | None:
    """UNIMPLEMENTED without torch, or for a type of dts outside FLOAT_DTYPES (the
    arithmetic drivers: torch's integer arithmetic wraps where oneDNN's saturates)."""
    torch, why = load()
    if torch is None:
        return Status.UNIMPLEMENTED, why
    for dt in dts:
        if dt not in FLOAT_DTYPES:
            return (Status.UNIMPLEMENTED, f"{dt}: the torch backend runs {primitive} on "
                    f"{', '.join(FLOAT_DTYPES)} (torch's integer arithmetic wraps where "
                    "oneDNN's saturates)")
    return None


def one_dense_order(lays) -> tuple[int, ...] | None:
    """The dense memory order (layout.dense_order) that every layout of lays has, or
    None: for operators whose `out=` writes a contiguous output (memory_order_view)."""
    orders = {layouts.dense_order(lay) for lay in lays}
    return orders.pop() if len(orders) == 1 else None


def view(torch, memory: np.ndarray, lay) -> Any:
    """A zero-copy torch tensor of a plain layout's logical dims over its memory (a flat
    array of the layout's size): its strides and offset, as torch.as_strided takes them."""
    flat = to_torch(torch, memory.reshape(-1))
    return torch.as_strided(flat, lay.dims, lay.strides, lay.offset0)


def memory_order_view(torch, memory: np.ndarray, order: tuple[int, ...], dims) -> Any:
    """A contiguous torch tensor over a dense layout's memory, its dims in memory order
    (order: layout.dense_order's, outermost first): for operators whose `out=` assumes a
    contiguous output."""
    return to_torch(torch, memory.reshape(-1)).view(tuple(dims[d] for d in order))


def to_numpy(torch, t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def run_and_collect(torch, program: Callable[[], dict[str, Any]], outs,
                    convert: Callable[[str, np.ndarray], np.ndarray] | None = None):
    """(run, collect) of a program that returns its results by output name, allocated by
    torch: run (timed) keeps the latest, collect (untimed) copies each into its output
    buffer (outs: name -> Guarded) in the buffer's type, through convert(name, array)
    where the output's layout is not torch's."""
    last: dict[str, Any] = {}

    def run() -> None:
        last.update(program())

    def collect() -> None:
        for name, result in last.items():
            arr = to_numpy(torch, result).astype(outs[name].array.dtype)
            if convert is not None:
                arr = convert(name, arr)
            np.copyto(outs[name].array.reshape(arr.shape), arr)
    return run, collect


# --------------------------------------------------------------------------------------
# Post-ops
# --------------------------------------------------------------------------------------

def eltwise_ops(torch) -> dict[str, Callable[[Any, float, float], Any]]:
    """Eltwise algorithm -> torch expression of eltwise.ALGS's formula, x -> f(x; a, b).
    Where torch's own function has fixed parameters (hardsigmoid, hardswish, silu), the
    formula is written with torch operators instead, so every alpha/beta works."""
    F = torch.nn.functional

    def clip(x, a, b):
        return x.clamp_(a, b)

    def elu(x, a, b):
        return F.elu_(x, a)

    def exp(x, a, b):
        return x.exp_()

    def logistic(x, a, b):
        return x.sigmoid_()

    def relu(x, a, b):
        return F.relu_(x) if a == 0 else F.leaky_relu_(x, a)

    def sqrt(x, a, b):
        return x.sqrt_()

    def tanh(x, a, b):
        return x.tanh_()

    return {
        "abs": lambda x, a, b: x.abs_(),
        "clip": clip, "clip_v2": clip, "clip_v2_dst": clip,
        "elu": elu, "elu_dst": elu,
        "exp": exp, "exp_dst": exp,
        "gelu_erf": lambda x, a, b: F.gelu(x),
        "gelu_tanh": lambda x, a, b: F.gelu(x, approximate="tanh"),
        "hardsigmoid": lambda x, a, b: x.mul_(a).add_(b).clamp_(0.0, 1.0),
        "hardswish": lambda x, a, b: x.mul_((x * a).add_(b).clamp_(0.0, 1.0)),
        "linear": lambda x, a, b: x.mul_(a).add_(b),
        "log": lambda x, a, b: x.log_(),
        "logistic": logistic, "logistic_dst": logistic,
        "mish": lambda x, a, b: F.mish(x, inplace=True),
        "pow": lambda x, a, b: x.pow_(b).mul_(a),
        "relu": relu, "relu_dst": relu,
        "round": lambda x, a, b: x.round_(),   # half to even, as the reference
        # softplus(a x) / a; past torch's threshold (a x > 20) it returns x, which differs
        # from the formula by log1p(e^-20) / a, far below the tolerance.
        "soft_relu": lambda x, a, b: F.softplus(x, beta=a),
        "sqrt": sqrt, "sqrt_dst": sqrt,
        "square": lambda x, a, b: x.square_(),
        "swish": lambda x, a, b: x.mul_(torch.sigmoid(x * a)),
        "tanh": tanh, "tanh_dst": tanh,
    }


def _comparison(name: str) -> Callable[[Any, Any, Any], Any]:
    return lambda t, y, b: getattr(t, name)(y, b).to(t.promote_types(y.dtype, b.dtype))


# Binary post-op algorithms as torch expressions of (y, src1), oneDNN's definitions: max
# and min as x > b ? x : b (a NaN x gives b), comparisons 1 or 0 in the promoted type.
BINARY_OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda t, y, b: t.add(y, b), "sub": lambda t, y, b: t.sub(y, b),
    "mul": lambda t, y, b: t.mul(y, b), "div": lambda t, y, b: t.div(y, b),
    "max": lambda t, y, b: t.where(y > b, y, b),
    "min": lambda t, y, b: t.where(y < b, y, b),
    **{name: _comparison(name) for name in ("ge", "gt", "le", "lt", "eq", "ne")},
}


def post_op_steps(torch, post_ops: PostOps,
                  src1: dict[str, Any] | None = None) -> list[Callable[[Any, Any], Any]]:
    """One (y, prior) -> y step per entry, in the chain's order. src1: the binary and
    prelu entries' inputs as torch tensors by name (post_ops.src1_name), logical (dst's
    dims, 1 where broadcast); torch's type promotion computes a binary entry in the wider
    of y's and src1's types."""
    table = eltwise_ops(torch)
    steps = []
    for i, e in enumerate(post_ops.entries):
        if isinstance(e, Sum):
            steps.append(lambda y, prior, s=e.scale: y.add_(prior, alpha=s))
        elif isinstance(e, Binary):
            steps.append(lambda y, prior, f=BINARY_OPS[e.alg], b=src1[src1_name(i)]:
                         f(torch, y, b))
        elif isinstance(e, Prelu):
            steps.append(lambda y, prior, w=src1[src1_name(i)]:
                         torch.where(y > 0, y, y * w))
        else:
            steps.append(lambda y, prior, f=table[e.name], a=e.alpha, b=e.beta, s=e.scale:
                         f(y, a, b) if s == 1.0 else f(y, a, b).mul_(s))
    return steps


@functools.lru_cache(maxsize=None)
def load() -> tuple[Any, str]:
    """(torch, "") with its thread count set to the native kernels' (OpenMP's), so both
    backends run on the same number of threads; or (None, why torch cannot be used)."""
    try:
        import torch
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            return None, f"PyTorch cannot be imported ({exc}); reinstall it: {INSTALL_HINT}"
        return None, f"PyTorch is not installed; get it with: {INSTALL_HINT}"
    except (ImportError, OSError) as exc:   # a broken install (a missing shared library)
        return None, f"PyTorch cannot be imported ({exc}); reinstall it: {INSTALL_HINT}"
    torch.set_num_threads(core.max_threads())
    # torch registers its shape functions on first use (about a second); do it here,
    # untimed, rather than in the first case's creation time.
    meta = torch.empty((1, 1, 1), device="meta")
    torch.nn.functional.conv1d(meta, meta)
    return torch, ""


def describe() -> dict[str, Any]:
    """What a results file records about this backend."""
    torch, why = load()
    if torch is None:
        return {"available": False, "reason": why}
    return {"available": True, "version": torch.__version__, "threads": torch.get_num_threads(),
            "mkldnn": bool(torch.backends.mkldnn.is_available())}


def create_in_case(res, impl_filter, make: Callable[[Any], Any]):
    """A driver's torch primitive, created as a case creates it: torch at the case's thread
    count, the implementation name checked against impl_filter under create_pd, then
    make(torch) under create_prim. None with res's status set: UNIMPLEMENTED without torch,
    SKIPPED when the filter leaves it out."""
    torch, why = load()
    if torch is None:
        res.status, res.reason = Status.UNIMPLEMENTED, why
        return None
    # the threads the case runs on (its --threads, set around it for OpenMP): ours and
    # torch's stay equal case by case
    torch.set_num_threads(core.max_threads())
    with res.timers("create_pd"):
        if not impl_filter.allows(impl_name(torch)):
            res.status, res.reason = Status.SKIPPED, Reason.SKIP_IMPL_HIT.value
            return None
    with res.timers("create_prim"):
        return make(torch)


def impl_name(torch) -> str:
    return f"torch:{torch.__version__}"

