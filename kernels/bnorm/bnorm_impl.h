/* Internal contract between the batch normalization entry points (bnorm_api.c: table,
 * threading, per-channel coefficients) and the per-ISA loops (bnorm_ker.inc instantiated
 * by bnorm_ker_<isa>.c). */
#ifndef BDNN_BNORM_IMPL_H
#define BDNN_BNORM_IMPL_H

#include "bdnn_bnorm.h"

/* One call's operands (checked by bdnn_bnorm_fwd/bwd). The per-channel arrays mean, k1,
 * k2, k3 are the entry point's, set between the reduction and the elementwise pass:
 *   forward   y = (x - mean) k1 + k2                     (k1 = g r, k2 = b)
 *   backward  diff_src = (dd' - k2 - (x - mean) k3) k1    (k1 = g r, k2 = diff_shift / N,
 *                                                          k3 = r diff_scale / N) */
typedef struct {
    int dt;
    unsigned flags;
    int64_t outer, C, inner;
    const bdnn_post_chain_t *po;
    const void *src, *src1, *diff_dst;   /* src1: ADD_RELU forward */
    void *out, *out1;                    /* dst or diff_src; diff_src1 backward */
    const uint8_t *ws_in;                /* backward: the relu's decisions */
    uint8_t *ws_out;                     /* forward training with a relu */
    const float *mean, *k1, *k2, *k3;
    int fault;
} bn_job_t;

/* Two walks, each a family of loops:
 *   cf (inner > 1): a run of `inner` contiguous points per (o, c). Reductions own whole
 *     channels [c0, c1), walked in memory order (for each o, the runs of c0 to c1); the
 *     elementwise pass owns runs w = o * C + c in [w0, w1).
 *   cl (inner == 1): rows of C channels. Reductions and the elementwise pass own row
 *     tiles of bn_rows(C) rows, [t0, t1); a reduction returns per-channel partials that
 *     the entry point combines in thread order.
 * Reduction blocks: BN_BLOCK points of a run, or BN_JOIN row tiles; a block's statistics
 * are its sum and its sum of squared deviations from its own mean, two passes over the
 * block in cache, all in double. */
enum { BN_BLOCK = 4096, BN_COLS = 1024, BN_TILE = 4096 };
/* Row tiles per block of the channels-last statistics: the block (128 KiB of f32) stays
 * in L2 between its two passes, and the join's divisions come once per block. */
enum { BN_JOIN = 8 };

/* Rows per tile of a channels-last walk: even (so that a tile's pairs of points stay
 * whole: README, fill), at least 2, about BN_TILE elements of min(C, BN_COLS) columns. */
static inline int64_t bn_rows(int64_t C) {
    const int64_t cols = C < BN_COLS ? C : BN_COLS;
    int64_t r = (BN_TILE / (cols > 0 ? cols : 1)) & ~(int64_t)1;
    return r < 2 ? 2 : r;
}

/* Running statistics of a set of points, per channel: count n, sum s, the mean of the
 * blocks so far mu and the sum of squared deviations q (Chan, Golub and LeVeque). */
typedef struct {
    double n;
    double *s, *mu, *q;
} bn_stats_t;

/* The block of nb points with sum sb and squared deviations qb joins st at channel c
 * (st->n: the points joined before; the caller adds nb once every channel has joined). */
static inline void bn_stats_join(bn_stats_t *st, int64_t c, double nb, double sb,
                                 double qb) {
    const double mb = sb / nb;
    if (st->n == 0) {
        st->s[c] = sb, st->mu[c] = mb, st->q[c] = qb;
        return;
    }
    const double n = st->n + nb, delta = mb - st->mu[c];
    st->s[c] += sb;
    st->mu[c] += delta * (nb / n);
    st->q[c] += qb + delta * delta * (st->n * nb / n);
}

typedef struct {
    /* forward statistics: cf completes channels [c0, c1) into st; cl adds tiles [t0, t1)
     * into st (st->n counts the points of a channel so far) */
    void (*stats_cf)(const bn_job_t *j, int64_t c0, int64_t c1, bn_stats_t *st);
    void (*stats_cl)(const bn_job_t *j, int64_t t0, int64_t t1, bn_stats_t *st);
    /* backward reductions: sum dd' into db and dd' (x - mean) into dg, per channel */
    void (*red_cf)(const bn_job_t *j, int64_t c0, int64_t c1, double *db, double *dg);
    void (*red_cl)(const bn_job_t *j, int64_t t0, int64_t t1, double *db, double *dg);
    /* elementwise passes */
    void (*fwd_cf)(const bn_job_t *j, int64_t w0, int64_t w1);
    void (*fwd_cl)(const bn_job_t *j, int64_t t0, int64_t t1);
    void (*bwd_cf)(const bn_job_t *j, int64_t w0, int64_t w1);
    void (*bwd_cl)(const bn_job_t *j, int64_t t0, int64_t t1);
} bn_ker_t;

extern const bn_ker_t bdnn_bn_ker_scalar, bdnn_bn_ker_avx2, bdnn_bn_ker_avx512;

#endif /* BDNN_BNORM_IMPL_H */
