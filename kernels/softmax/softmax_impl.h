/* Internal contract between the softmax entry points (softmax_api.c: table, threading)
 * and the per-ISA kernels (softmax_ker.inc instantiated by softmax_ker_<isa>.c). */
#ifndef BDNN_SOFTMAX_IMPL_H
#define BDNN_SOFTMAX_IMPL_H

#include "bdnn_softmax.h"

/* One call's operands, as bdnn_smx_fwd/bwd took them (checked there). Forward: src is the
 * source, out the destination. Backward: src is dst, diff_dst its gradient, out diff_src
 * (src_dt); dst and diff_dst are of dst_dt. */
typedef struct {
    int alg, src_dt, dst_dt;
    float src_scale, dst_scale;
    const bdnn_dropout_t *dropout;     /* NULL: none (f32 rows only) */
    const bdnn_post_chain_t *po;       /* NULL: none (f32 rows only) */
    const void *src, *diff_dst;
    void *out;
    int64_t outer, axis, inner;
    int fault;
    int stream;    /* the f32 output is too large to stay in cache: stream it */
} smx_job_t;

/* Lines are the job's work items. With inner == 1 each line is contiguous: item o is the
 * line at o * axis (rows). Otherwise item w is a tile of SMX_COLS neighbouring lines, the
 * columns [c0, c0 + SMX_COLS) of block o = w / tiles, tiles = ceil(inner / SMX_COLS)
 * (columns): every step along the axis reads a contiguous run. A kernel runs items
 * [w0, w1), in f32 (_f32) or in double (_f64). */
enum { SMX_COLS = 64 };

typedef void (*smx_run_t)(const smx_job_t *job, int64_t w0, int64_t w1);

typedef struct {
    smx_run_t fwd_f32, bwd_f32, fwd_f64, bwd_f64;
} smx_ker_t;

extern const smx_ker_t bdnn_smx_ker_scalar, bdnn_smx_ker_avx2, bdnn_smx_ker_avx512;

#endif /* BDNN_SOFTMAX_IMPL_H */
