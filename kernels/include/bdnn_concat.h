/*
 * bdnn_concat.h -- the concat primitive of the kernel core: sources joined along one axis,
 * each scaled.
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * Tensors are dense and share one memory order, described as outer x axis x inner: source
 * s is outer x axis_s x inner, dst outer x (sum of axis_s) x inner, so that source s's
 * block o is a contiguous run of axis_s * inner elements of dst's block o, after those of
 * the sources before it. Sources share one type, dst has its own (BDNN_DT_*: f32, bf16,
 * f16, s32, s8, u8, f8_e5m2, f8_e4m3); each element widens exactly to f32, is multiplied
 * by its source's scale, and rounds to nearest even on the store (integers saturated
 * first).
 */
#ifndef BDNN_CONCAT_H
#define BDNN_CONCAT_H

#include "bdnn.h"

/* CDEF BEGIN */
/* Deliberate defects of these kernels (tests only), numbered apart from the others'. */
enum {
    BDNN_CONCAT_FAULT_LAST_SHIFTED = 701   /* the last source lands one element early */
};

/* A fixed table, in order of preference; an entry is usable when its ISA is supported. */
int bdnn_concat_impl_count(void);
const char *bdnn_concat_impl_name(int impl);
int bdnn_concat_impl_isa(int impl);
int bdnn_concat_impl_operands(int impl);

/* BDNN_STATUS_OK when the row runs these types here; _UNIMPLEMENTED for an ISA this CPU
 * lacks or a type without concat (f64, s4, u4, f4_e2m1); _INVALID for no such type. */
int bdnn_concat_status(int impl, int src_dt, int dst_dt);

/* Executes on all OpenMP threads, each owning whole blocks of the outer dimension.
 * fault: 0, BDNN_CONCAT_FAULT_LAST_SHIFTED, or bdnn.h's BDNN_FAULT_TRUNCATE_DST (tests
 * only). */
int bdnn_concat(int impl, int n_src, int src_dt, const void *const *srcs,
                const int64_t *axis_sizes, const float *scales, int dst_dt, void *dst,
                int64_t outer, int64_t inner, int fault);
/* CDEF END */

#endif /* BDNN_CONCAT_H */
