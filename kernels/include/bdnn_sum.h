/*
 * bdnn_sum.h -- the sum primitive of the kernel core: dst = sum over i of scale_i src_i.
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * Tensors are dense arrays of n elements in one memory order (any layout, as long as all
 * share it), each source of its own type and dst of another (BDNN_DT_*: f32, bf16, f16,
 * s32, s8, u8). Sources widen exactly to f32 (s32 beyond 2^24 rounds, as oneDNN's f32
 * computation does); the sum runs in f32 in the sources' order, each term scale_i src_i;
 * the store rounds to nearest even, integers saturated first. dst may be src 0 (in place,
 * same type); any other overlap is not allowed.
 */
#ifndef BDNN_SUM_H
#define BDNN_SUM_H

#include "bdnn.h"

/* CDEF BEGIN */
/* Deliberate defects of these kernels (tests only), numbered apart from the others'. */
enum {
    BDNN_SUM_FAULT_LAST_DROPPED = 601   /* the last source is left out of the sum */
};

/* A fixed table, in order of preference; an entry is usable when its ISA is supported. */
int bdnn_sum_impl_count(void);
const char *bdnn_sum_impl_name(int impl);
int bdnn_sum_impl_isa(int impl);
int bdnn_sum_impl_operands(int impl);

/* BDNN_STATUS_OK when the row runs these types here; _UNIMPLEMENTED for an ISA this CPU
 * lacks or a type without sum (f64, the 8- and 4-bit floats, the 4-bit integers);
 * _INVALID for no such type or fewer than one source. */
int bdnn_sum_status(int impl, int n_src, const int *src_dts, int dst_dt);

/* Executes on all OpenMP threads, each owning one contiguous chunk of the elements.
 * fault: 0, BDNN_SUM_FAULT_LAST_DROPPED, or bdnn.h's BDNN_FAULT_TRUNCATE_DST (tests
 * only). */
int bdnn_sum(int impl, int n_src, const int *src_dts, const void *const *srcs,
             const float *scales, int dst_dt, void *dst, int64_t n, int fault);
/* CDEF END */

#endif /* BDNN_SUM_H */
