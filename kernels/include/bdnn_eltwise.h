/*
 * bdnn_eltwise.h -- the eltwise primitive of the kernel core (forward and backward, f32).
 *
 * Called only through benchdnn_py (core.py). The CDEF section goes verbatim to cffi.
 * Algorithms are bdnn.h's BDNN_ELT_* codes (the post-op table); the formulas are
 * oneDNN's (kernels/eltwise/README.md lists them).
 *
 * Tensors are dense f32 arrays of n elements in any layout (element-wise: the layout does
 * not matter). Forward: dst = f(src). Backward data: diff_src = diff_dst * f'(x), where x
 * is src, or dst for the _dst variants (from_dst = 1). In-place (dst == src, diff_src ==
 * diff_dst) is allowed; any other overlap is not.
 */
#ifndef BDNN_ELTWISE_H
#define BDNN_ELTWISE_H

#include "bdnn.h"

/* CDEF BEGIN */
/* Deliberate defects of these kernels (tests only), numbered apart from bdnn.h's. */
enum {
    BDNN_ELT_FAULT_TAIL_DROPPED = 201  /* the last element of every thread's chunk is left
                                          unwritten */
};

/* A fixed table, in order of preference; an entry is usable when its ISA is supported. */
int bdnn_elt_impl_count(void);
const char *bdnn_elt_impl_name(int impl);
int bdnn_elt_impl_isa(int impl);

/* BDNN_STATUS_UNIMPLEMENTED for an algorithm without a formula in that direction
 * (round has no backward). */
int bdnn_elt_supported(int alg, int backward);

/* Executes on all OpenMP threads (each thread owns one contiguous chunk). */
int bdnn_elt_fwd(int impl, int alg, float alpha, float beta, const float *src, float *dst,
                 int64_t n, int fault);
int bdnn_elt_bwd(int impl, int alg, int from_dst, float alpha, float beta, const float *x,
                 const float *diff_dst, float *diff_src, int64_t n, int fault);
/* CDEF END */

#endif /* BDNN_ELTWISE_H */
