/* Internal contract between the pooling driver (pool_api.c: table, loops, threading) and
 * the per-ISA row kernels (pool_ker.inc instantiated by pool_ker_<isa>.c). */
#ifndef BDNN_POOL_IMPL_H
#define BDNN_POOL_IMPL_H

#include "bdnn_pool.h"

/* Forward row kernel: output row (od, oh) of one (n, c) plane.
 *
 * src: the input plane [ID][IH][IW]; dst_row: OW floats, overwritten. ow_lo/ow_hi: for
 * each kw, the output columns [lo, hi) whose tap lands inside the input row (precomputed
 * by the driver), so the inner loop has no bounds checks and, at unit stride, runs over
 * contiguous memory. cnt_w[ow]: how many kw taps of column ow are in bounds (avg_np).
 * ws_row: OW int32 tap indexes (kd*KH + kh)*KW + kw to write (max training), or NULL.
 * Taps are visited in (kd, kh, kw) order and replace the running maximum only when
 * strictly greater, so the first maximum wins. */
typedef void (*pool_fwd_row_fn)(const bdnn_pool_desc_t *d, int alg, const float *src,
                                int64_t od, int64_t oh, float *dst_row, int32_t *ws_row,
                                const int64_t *ow_lo, const int64_t *ow_hi,
                                const int64_t *cnt_w);

typedef struct {
    pool_fwd_row_fn fwd_row;
    /* The ISA's bulk conversions (common/dt_vec.inc): n elements of dt <-> f32. */
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n, int truncate);
} pool_ker_t;

extern const pool_ker_t bdnn_pool_ker_scalar, bdnn_pool_ker_avx2, bdnn_pool_ker_avx512;

#endif /* BDNN_POOL_IMPL_H */
