"""The C boundary: the only package that talks to the C kernel core (benchdnn_py._core).

Modules by role: ``capi`` loads the library and marshals arrays, statuses, data types,
instruction sets and threads; one module per primitive family (``conv``, ``eltwise``,
``pool``, ``reorder``, ``softmax``, ``sum``, ``concat``, ``binary``, ``bnorm``);
``probes`` measures the machine; ``faults`` holds the test-only kernel defects; ``fill`` the C fill
generators. Callers use
the names below (``core.X``); no C enum or pointer leaves this package.
"""

from .capi import (ALIGN, DATA_TYPES, DOUBLE_DTS, PACKED_DTS, PAGE, ImplInfo, InvalidProblem,
                   Isa, Operands, Unimplemented, aligned_array, aligned_empty, build_info,
                   cap_isa, dt_convert, elements, is_aligned, isa_cap, isa_supported,
                   max_threads, numpy_dtype, parallel_fill, set_threads, splits_512, threads)
from .binary import MAX_NDIMS as MAX_BINARY_NDIMS
from .binary import BINARY_PRIMITIVE_ALGS, BinaryPrimitive, binary_impls
from .bnorm import BNORM_FLAGS, BnormPrimitive, bnorm_impls
from .concat import ConcatPrimitive, concat_impls
from .conv import (BINARY_ALGS, BWT_CACHED_MAX_BYTES, GATHER_AHEAD_MIN_BYTES, STREAM_MIN_BYTES,
                   WINO_BLOCKED_MAX_U_BYTES, ActLayout,
                   ConvAttr, ConvPrimitive, ConvShape, Direction, PostChain, PostKind, PostOp,
                   Scales,
                   bias_grad, bwt_src_in_place, conv_dot_shape, conv_impls, eltwise_fwd,
                   ref_conv_bwd_bias_at, ref_conv_bwd_data,
                   ref_conv_bwd_weights, ref_conv_bwd_weights_at, ref_conv_fwd, scratchpad_buffer,
                   wino_f43_matrices)
from .eltwise import DropoutArgs, EltAlg, EltwisePrimitive, eltwise_impls, eltwise_supported
from .faults import FAULT_ENV, Fault, OpFault, active_fault, active_op_fault, conv_fault
from .fill import fill_choice, fill_int, fill_real
from .pool import (PoolAlg, PoolLayout, PoolPrimitive, PoolShape, Prop, Workspace,
                   pool_impl_layouts, pool_impls, pool_workspace, ref_pool_bwd, ref_pool_fwd)
from .probes import (BANDWIDTH_BYTES, CACHE_PROBE_BYTES, CACHE_PROBE_PASSES, CACHE_PROBE_REPEATS,
                     CORE_TRIP_SECONDS, PEAK_REPEATS, PEAK_ROUTES, PEAK_SECONDS, PROBE_REPEATS,
                     PROBE_SECONDS, Peak, PeakKind, core_round_trip, implausible_limits,
                     measured_copy_bandwidth, measured_peak, parallel_memcpy, probe_cache,
                     probe_peak, remeasure_limits)
from .reorder import REORDER_ARGS, ReorderAttr, ReorderPrimitive, reorder_impls
from .softmax import SOFTMAX_ALGS, Lines, SoftmaxPrimitive, softmax_impls
from .sum import SumPrimitive, sum_impls

__all__ = [name for name in dir() if not name.startswith("_")]
