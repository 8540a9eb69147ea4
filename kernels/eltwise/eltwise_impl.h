/* Internal contract between the eltwise driver (eltwise_api.c: table, threading) and the
 * per-ISA kernels (eltwise_ker.inc instantiated by eltwise_ker_<isa>.c). */
#ifndef BDNN_ELTWISE_IMPL_H
#define BDNN_ELTWISE_IMPL_H

#include "bdnn_eltwise.h"

/* One contiguous chunk: dst[0:n] = f(src[0:n]) / diff_src[0:n] = diff_dst * f'(x), in
 * f32 or (the _f64 pair) in double. In-place is allowed (each element is read before it is
 * written). */
typedef struct {
    void (*fwd)(int alg, float alpha, float beta, const float *src, float *dst, int64_t n);
    void (*bwd)(int alg, int from_dst, float alpha, float beta, const float *x,
                const float *diff_dst, float *diff_src, int64_t n);
    void (*fwd_f64)(int alg, float alpha, float beta, const double *src, double *dst,
                    int64_t n);
    void (*bwd_f64)(int alg, int from_dst, float alpha, float beta, const double *x,
                    const double *diff_dst, double *diff_src, int64_t n);
    /* The ISA's bulk conversions (common/dt_vec.inc): n elements of dt <-> f32. */
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n, int truncate);
} elt_ker_t;

extern const elt_ker_t bdnn_elt_ker_scalar, bdnn_elt_ker_avx2, bdnn_elt_ker_avx512;

#endif /* BDNN_ELTWISE_IMPL_H */
