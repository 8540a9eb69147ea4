/* Internal contract between the sum entry points (sum_api.c: table, threading) and the
 * per-ISA kernels (sum_ker.inc instantiated by sum_ker_<isa>.c). */
#ifndef BDNN_SUM_IMPL_H
#define BDNN_SUM_IMPL_H

#include "bdnn_sum.h"

/* Elements [lo, hi) of dst: the terms of sources [0, n_src) added in order, in f32, a
 * tile at a time. truncate: BDNN_FAULT_TRUNCATE_DST's store; stream: an f32 dst stored
 * past the caches (fenced before the run returns). */
typedef struct {
    void (*run)(int n_src, const int *src_dts, const void *const *srcs, const float *scales,
                int dst_dt, void *dst, int64_t lo, int64_t hi, int truncate, int stream);
} sum_ker_t;

extern const sum_ker_t bdnn_sum_ker_scalar, bdnn_sum_ker_avx2, bdnn_sum_ker_avx512;

#endif /* BDNN_SUM_IMPL_H */
