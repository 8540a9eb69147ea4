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

/* Channels-inner layouts (NXC, NCX8C, NCX16C): the geometry both directions address with.
 * Element (n, c, spatial point sp) lives at ((n*nblk + c/blk)*SP + sp)*blk + c%blk, with
 * blk = c for NXC (one block) and 8 or 16 for the blocked layouts. A work item is one
 * output row (forward) or input row (backward) of one chunk of channels [c0, c0 + chunk)
 * of one block: chunk = blk for the blocked layouts, at most 64 channels for NXC. */
typedef struct {
    int64_t blk, nblk, chunk, nchunk;
} pool_cx_t;

/* Per spatial axis (d, h, w), precomputed by pool_api.c for one descriptor.
 * Output o's in-bounds taps are k in [klo[o], khi[o]) (contiguous: the input index grows
 * with k); the forward pass reads them, the backward scatter adds into them. */
typedef struct {
    const int64_t *klo, *khi;
} pool_axis_t;

/* The whole channels-inner pass over one descriptor (threads inside): forward writes
 * dst (and ws when non-NULL, one int32 tap index per dst element, padded tail 0);
 * backward overwrites diff_src from diff_dst (max: the tap ws names; a wrong or unwritten
 * entry adds nothing), accumulating in acc: f32 elements as many as diff_src has (diff_src
 * itself when dt is f32), overwritten. Both zero the padded channel tail of their output. truncate: typed
 * stores truncate (a defect, tests only); ws_ignored: backward max sends each gradient
 * to its window's first in-bounds tap (a defect, tests only). */
typedef void (*pool_cx_fwd_fn)(const bdnn_pool_desc_t *d, const pool_cx_t *g,
                               const pool_axis_t ax[3], int alg, int dt, const void *src,
                               void *dst, int32_t *ws, int truncate);
typedef void (*pool_cx_bwd_fn)(const bdnn_pool_desc_t *d, const pool_cx_t *g,
                               const pool_axis_t ax[3], int alg, int dt, const void *diff_dst,
                               const int32_t *ws, void *diff_src, float *acc, int truncate,
                               int ws_ignored);

typedef struct {
    pool_fwd_row_fn fwd_row;
    pool_cx_fwd_fn cx_fwd;
    pool_cx_bwd_fn cx_bwd;
    /* The ISA's bulk conversions (common/dt_vec.inc): n elements of dt <-> f32. */
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n, int truncate);
} pool_ker_t;

extern const pool_ker_t bdnn_pool_ker_scalar, bdnn_pool_ker_avx2, bdnn_pool_ker_avx512;

#endif /* BDNN_POOL_IMPL_H */
