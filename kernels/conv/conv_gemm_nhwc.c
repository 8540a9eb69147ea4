/* gemm_conv_nhwc and gemm_conv_blocked: f32 convolution on channels-last activations
 * (src and dst [mb][d][h][w][c], the axb tags nwc / nhwc / ndhwc) and on channel-blocked
 * ones ([mb][c/B][d][h][w][B], B = 8 or 16: nChw8c, nChw16c and their 1D/3D forms), all
 * three directions, on the GEMM micro-kernels of gemm_conv (conv_ukr.inc) with the roles
 * of the operands swapped.
 *
 * Both are one code: channels last is the blocked layout with a single block as wide as
 * all the channels (B = C). A tensor's geometry (act_t) gives channel c of point p of an
 * image at (c / B) * points * B + p * B + c % B; a run of contiguous channels ends at a
 * block boundary. Along the points, one channel block is a row-major [points][B] matrix,
 * so a C tile whose columns stay inside one block is written with ldc = B: the blocked
 * rows use micro-kernels whose width NR divides B (conv_ukr_blk_*.c, NR = B), and, with
 * groups, need each group's channels to be whole blocks. The padded channel tail of an
 * output (C up to a multiple of B) is written as zeros; that of an input is never read.
 *
 * With channels innermost, a point's channels are one contiguous row, so the GEMM puts
 * points on C's rows and channels on its columns:
 *
 *   direction  instance  C rows (M)      C columns (N)  K (reduction)    A (packed per block)           B
 *   forward    (n, g)    output points   OC/G           (tap, ic)        src rows at o*s - p + k*(d+1)  weights, packed once
 *   bwd data   (n, g)    input points    IC/G           (tap, oc)        diff_dst rows at (i+p-k*(d+1))/s  weights^T, packed once
 *   bwd wei    g         OC/G            (tap, ic)      (n, out point)   diff_dst^T (a row copy)      src rows at o*s - p + k*(d+1)
 *
 * Backward data with a stride or few input channels per group (2 * ICG <= NR) would
 * multiply zeros that way; it runs by output rows instead (run_bwd_col): C rows are
 * output points, columns (tap, ic), K = OC/G, and C is added into diff_src (col2im).
 * That path addresses both tensors as [point][C]: channels last only; the blocked rows
 * run such cases by input points.
 *
 * Backward weights with at least NR/2 input channels per group runs by taps instead
 * (run_bwt, below: per tap a GEMM over shifted windows of the input's stride phases, no
 * im2col); the table's row (run_bww) keeps the groups with fewer (ResNet's first layer).
 *
 * Forward and backward data write C straight into dst / diff_src (row stride OC / IC: a
 * group is a column range of the rows). run_bww computes C as [g][oc][(tap, ic)]
 * (B's rows are then contiguous channel runs) and transposes it into the user's
 * [g][oc][ic][tap]: each work item's block as soon as it is done, or, with K split
 * among the threads, the summed partials at the end.
 *
 * Loops, outermost first:
 *   work item  (n, g, row block of MC rows, column block of NC columns)  -- across threads;
 *              backward weights: (k split, g, row block, column block)
 *   pc loop    k blocks (kblk_t): forward/backward data, whole taps when the reduction
 *              channels are fewer than KC, else KC-sized parts of one tap; backward weights
 *              KC points at a time.  Pack A[rows, k block] as MR-row micro-panels (and, in
 *              backward weights, B[k block, columns] as NR-column micro-panels).
 *   jr loop    NR-wide micro-panels of B (the prepacked weights' panel stays in L1) ...
 *   ir loop    ... MR-high micro-panels of A (from L2)
 *   micro-kernel (conv_gemm_ukr_fn, MR x NR in registers).
 * Forward and backward data first initialize their C block (bias per column, the sum
 * post-op's scaled prior, or 0) and then only accumulate: a micro-panel of A whose rows all
 * fall outside the input (padding) or, in backward data, whose taps the stride does not
 * divide, is skipped. The eltwise post-ops run on each finished block while it is in L2.
 * Work items write disjoint parts of C, so threads never synchronize inside an execution.
 *
 * Only f32 without scales or zero points (the f32 fast path); other problems, and the
 * test defects other than the sum-scale and padding-garbage ones, are UNIMPLEMENTED here. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_dblk.h"
#include "conv_impl.h"

enum { NKC = 256, MC_PANELS = 8, NC_PANELS = 8, BWW_NC_PANELS = 4, MAX_MR = 32 };
/* backward data by output rows: the largest C block of one GEMM (it stays in L2) */
enum { COL_C_BYTES = 512 * 1024 };

/* A k block: K positions [k0, k0 + kc). */
typedef struct { int64_t k0, kc; } kblk_t;

typedef struct {
    int64_t M, N, K;        /* per instance */
    int64_t ch, taps;       /* forward/backward data: K = taps * ch (k = tap * ch + c) */
    int64_t mc, nc;         /* rows and columns of a work item (multiples of MR, NR) */
    int64_t n_rb, n_cb, n_inst, n_items;
    int64_t Np;             /* N rounded up to NR: packed weights' columns per k */
    int64_t k_splits;       /* backward weights: ranges of K reduced into partials */
    int64_t n_blk;
    kblk_t *blk;
    float **ap, **bp;       /* per thread: the A block (mc x KC), B block (KC x nc) */
    float *partials;        /* backward weights: k_splits x G x M x N */
    int col;                /* backward data through output rows (see run_bwd_col) */
    int64_t col_rows;       /* col: output rows (od, oh) per GEMM (M = col_rows * ow) */
    float **cs;             /* per thread: col, C of one GEMM (col_rows * ow x Np);
                               backward weights without a K split, its C block (mc x nc) */
    void *dc;               /* blocked forward: the direct convolution's plan (conv_dblk.c) */
    void *bwt;              /* backward weights by taps: its plan (bwt_plan_t, run_bwt) */
} nhwc_plan_t;

/* An activation tensor's geometry: C channels of `points` points per image in blocks of
 * B channels (B = C: channels last); img: an image's elements, padded tail included. */
typedef struct { int64_t C, points, B, img; } act_t;

static act_t act_of(const struct bdnn_conv *c, int64_t C, int64_t points) {
    const int layout = c->attr.layout;
    const int64_t B = bdnn_layout_block(layout) ? bdnn_layout_block(layout) : (C > 0 ? C : 1);
    return (act_t){C, points, B, bdnn_div_up(C, B) * B * points};
}
/* Channel ch of point pt, from the image's first element. One block (channels last): no
 * division, the packing loops call these per tap and point. */
static inline int64_t at(const act_t *t, int64_t ch, int64_t pt) {
    if (t->B == t->C) return pt * t->B + ch;
    return (ch / t->B) * t->points * t->B + pt * t->B + ch % t->B;
}
/* Channels contiguous from ch on (to the end of its block). */
static inline int64_t run_from(const act_t *t, int64_t ch) {
    return t->B == t->C ? t->C - ch : t->B - ch % t->B;
}

static const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}
static int64_t taps_of(const bdnn_conv_desc_t *d) { return d->kd * d->kh * d->kw; }
static int64_t in_points(const bdnn_conv_desc_t *d) { return d->id * d->ih * d->iw; }
static int64_t out_points(const bdnn_conv_desc_t *d) { return d->od * d->oh * d->ow; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Backward weights by taps (run_bwt): no im2col. For each tap, the columns of its im2col
 * are the input points o*s - p + tap*(dil+1) over the output points o, and along o those
 * points are a strided walk of the padded input. Split the padded input by the stride's
 * phase (the remainder of each coordinate modulo s), and a tap's points become a plain
 * shifted walk of one phase image: phase (r_d, r_h, r_w) holds the padded input point
 * (z*sd + r_d, y*sh + r_h, x*sw + r_w) at z*plane + y*X + x, and tap t = (kd, kh, kw),
 * with kd*(dd+1) = sd*q_d + r_d (so for h and w), reads output point o = (od, oh, ow) at
 * ext(o) + off(t), off(t) = q_d*plane + q_h*X + q_w, ext(o) = od*plane + oh*X + ow. Rows
 * of X >= ow + max q_w points (and, in 3D, planes of oh + max q_h rows) make that one
 * formula for every o: the columns (and rows) past the output are junk points whose
 * diff_dst is zero, so they add nothing (finite inputs assumed, as the zero padding of
 * any im2col does).
 *
 * So C[oc][(tap, ic)] = sum over k = (n, ext point) of A[oc][k] * B_t[k][ic], A = diff_dst
 * (zero at junk points), B_t[k][ic] = phase(t)[k + off(t)][ic]. Per k block of kc points
 * the packing copies the thread's rows of diff_dst into MR-row panels ([panel][k][MR])
 * and the block's window of src points (k0 .. k0 + kc + max_off) once per phase into
 * NR-column panels of the group's channels ([phase][panel][point][NR]); tap t's B is that
 * window from point off(t) on, read in place by the micro-kernels (a channels-last 1x1 at
 * stride 1 without padding and with short points reads src itself: its ext points are
 * src's points). kc keeps A and the window within PACK_BYTES (L2). The micro-kernel is the row ISA's full-width
 * one (bwt_ukr), whatever the layout: the packing absorbs the blocks.
 *
 * Threads own ranges of C's MR-row panels ((g, oc panel) pairs) and stream every k block
 * once, each packing only its rows of A but the whole window; where C's rows (x taps) are
 * at most half the k points, or the panels do not share out evenly, they split k instead,
 * each a partial C of every row, summed at the end. C is [oc][tap][ic] in a thread's
 * scratch and goes into the user's [g][oc][ic][tap] row by row at the end (1x1 without a
 * k split: the micro-kernels write the user's rows directly). Used where a group has at
 * least NR/2 input channels (fewer would waste most columns of every tile: ResNet's first
 * layer, 3 channels, keeps run_bww). */
enum {
    BWT_PACK_BYTES = 512 * 1024, BWT_MIN_KC = 32, BWT_IN_PLACE_MAX_ROW = 1024,
    BWT_AHEAD_PACK_BYTES = 256 * 1024, BWT_AHEAD_MAX_C_BYTES = 512 * 1024
};
/* src is read in place only while the whole tensor stays in cache between runs. Past that
 * each run brings it from memory, where the in-place walk (one NR-wide slice of every
 * point per panel, a point apart) stalls and the copy streams. ResNet-50 res2b_branch2a
 * (IC 256, 56x56) channels last, 2 threads, Zen 4 (32 MB L3), copied over in place, min
 * of 3 alternating runs, by the size of src: mb1 3.2 MB 1.14x, mb2 6.4 MB 1.12x, mb4
 * 12.8 MB 0.93x, mb8 0.81x, mb16 51 MB 0.82x; res3a_branch2c (IC 128, 28x28) at mb16,
 * 6.4 MB, 1.03x. The bound is BDNN_BWT_CACHED_MAX_BYTES (bdnn.h), which the driver's
 * choice of layout for `any` reads too. */

typedef struct {
    int64_t X, plane, rows;     /* phase image: row length, plane size; rows per plane
                                   (3D; 2D: one plane, rows unbounded) */
    int64_t kext, kc, kblocks;  /* ext points per image; k block; k blocks per image */
    int64_t n_phase, max_off, span;   /* span: window points per k block, kc + max_off */
    int64_t (*phase)[3];        /* the phases some tap reads: (r_d, r_h, r_w) */
    int64_t phase_max[3];       /* the largest phase per axis (bwt_ahead's window end) */
    int64_t *tap_phase, *tap_off;
    const conv_gemm_ukr_t *u;   /* the micro-kernel (bwt_ukr) */
    int64_t Mp, Np;             /* OC/G up to whole MR panels, IC/G up to whole NR panels */
    int64_t panels, k_splits;   /* G * Mp / MR; k ranges (1: threads own panel ranges) */
    float **ab, **bb, **cs;     /* per thread: A panels, B window, C rows ([oc][tap][Np]) */
    float **rowbuf;             /* per thread: one point's diff_dst channels (blocked) */
    int src_in_place;           /* B read from src itself: channels last, the ext points
                                   are src's points (1x1, stride 1, no padding), whole
                                   NR panels per group */
    int read_ahead;             /* each k block's tiles fetch the next block (bwt_ahead) */
} bwt_plan_t;

static void bwt_fini(bwt_plan_t *q, int nthr) {
    if (!q) return;
    for (int t = 0; t < nthr; ++t) {
        if (q->ab) free(q->ab[t]);
        if (q->bb) free(q->bb[t]);
        if (q->cs) free(q->cs[t]);
        if (q->rowbuf) free(q->rowbuf[t]);
    }
    free(q->ab), free(q->bb), free(q->cs), free(q->rowbuf);
    free(q->phase), free(q->tap_phase), free(q->tap_off);
    free(q);
}

/* A tap's offsets (kd, kh, kw) * (dilation + 1). */
static void tap_extent(const bdnn_conv_desc_t *d, int64_t t, int64_t e[3]) {
    e[0] = t / (d->kw * d->kh) * (d->dd + 1);
    e[1] = t / d->kw % d->kh * (d->dh + 1);
    e[2] = t % d->kw * (d->dw + 1);
}

/* The (g, oc panel) range [p0, p1) of thread tid: all of them when k is split. */
static void bwt_panels_of(const bwt_plan_t *q, int nthr, int tid, int64_t *p0, int64_t *p1) {
    if (q->k_splits > 1) { *p0 = 0, *p1 = q->panels; return; }
    *p0 = q->panels * tid / nthr, *p1 = q->panels * (tid + 1) / nthr;
}

/* The packing copies each layout into the micro-kernels' panels, so a blocked row runs
 * its ISA's full-width tile (12 x 32 on AVX-512) rather than its one-block tile: C's rows
 * and columns here are channels, not points, and never straddle a block in memory. */
static const conv_gemm_ukr_t *bwt_ukr(const conv_gemm_ukr_t *u) {
    if (u == &bdnn_gemm_ukr_blk_avx512) return &bdnn_gemm_ukr_avx512;
    if (u == &bdnn_gemm_ukr_blk_avx2) return &bdnn_gemm_ukr_avx2;
    return u;
}

static int bwt_init(struct bdnn_conv *c, const conv_gemm_ukr_t *row_ukr, void **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = bwt_ukr(row_ukr);
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, MR = u->mr, NR = u->nr;
    const int64_t taps = taps_of(d), nthr = c->nthr, s[3] = {d->sd, d->sh, d->sw};
    if (2 * ICG < NR) return BDNN_STATUS_UNIMPLEMENTED;
    bwt_plan_t *q = calloc(1, sizeof(*q));
    if (!q) return BDNN_STATUS_OUT_OF_MEMORY;
    *out = q;
    q->u = u;
    q->phase = calloc((size_t)taps, sizeof(*q->phase));
    q->tap_phase = calloc((size_t)taps, sizeof(int64_t));
    q->tap_off = calloc((size_t)taps, sizeof(int64_t));
    if (!q->phase || !q->tap_phase || !q->tap_off) return BDNN_STATUS_OUT_OF_MEMORY;
    int64_t qmax[3] = {0, 0, 0}, e[3];
    for (int64_t t = 0; t < taps; ++t) {
        tap_extent(d, t, e);
        for (int i = 0; i < 3; ++i) qmax[i] = e[i] / s[i] > qmax[i] ? e[i] / s[i] : qmax[i];
    }
    /* Planes of their own (3D) where a tap steps in depth or there are several output
     * planes; else one plane whose rows run on (a tap's q_h rows past the output). */
    const int planes = d->od > 1 || qmax[0] > 0;
    q->X = d->ow + qmax[2];
    q->rows = planes ? d->oh + qmax[1] : INT64_MAX;
    q->plane = (planes ? d->oh + qmax[1] : d->oh) * q->X;
    q->kext = d->od * q->plane;
    for (int64_t t = 0; t < taps; ++t) {
        tap_extent(d, t, e);
        const int64_t r[3] = {e[0] % s[0], e[1] % s[1], e[2] % s[2]};
        int64_t ph = 0;
        while (ph < q->n_phase && memcmp(q->phase[ph], r, sizeof(r))) ++ph;
        if (ph == q->n_phase) memcpy(q->phase[q->n_phase++], r, sizeof(r));
        for (int i = 0; i < 3; ++i)
            if (r[i] > q->phase_max[i]) q->phase_max[i] = r[i];
        q->tap_phase[t] = ph;
        q->tap_off[t] = e[0] / s[0] * q->plane + e[1] / s[1] * q->X + e[2] / s[2];
        if (q->tap_off[t] > q->max_off) q->max_off = q->tap_off[t];
    }
    q->Mp = bdnn_div_up(OCG, MR) * MR;
    q->Np = bdnn_div_up(ICG, NR) * NR;
    /* B read in place walks src a point (IC floats) per k step; from 4 KiB per point every
     * step is a new page, which the hardware prefetchers do not cross, and the copy wins
     * (alternating runs, 2 AVX2 threads, ResNet-50 1x1 at mb1, in place over copied: IC
     * 1024 at 14x14 1.22x the time; IC 512 at 28x28 1.02x; IC 256 at 56x56 0.84x, at
     * 14x14 1.05x; IC 128 at 28x28 0.85x). Up to BWT_IN_PLACE_MAX_ROW bytes per point,
     * a page holds four or more. */
    q->src_in_place = c->attr.layout == BDNN_LAYOUT_NHWC && taps == 1 && ICG % NR == 0
        && d->ic * (int64_t)sizeof(float) <= BWT_IN_PLACE_MAX_ROW && q->max_off == 0
        && d->mb * in_points(d) * d->ic * (int64_t)sizeof(float)
               <= BDNN_BWT_CACHED_MAX_BYTES
        && q->X == d->iw && q->plane == d->ih * d->iw && d->id == d->od
        && d->sd == 1 && d->sh == 1 && d->sw == 1 && !d->pd && !d->ph && !d->pw;
    /* Read ahead where the tensors come from memory on every run (bwt_ahead). */
    q->read_ahead = u->pf_fn && c->attr.layout == BDNN_LAYOUT_NHWC && bdnn_bwt_from_memory(d);
    q->panels = G * (q->Mp / MR);
    /* Panel ranges make every thread pack the whole src window; a k split makes each
     * pack its share of both tensors but sum nthr partial C at the end. Measured on
     * ResNet-50 (2 threads, mb1 and mb16), the split is the faster one while C's rows
     * (x taps) are at most half the k points, and where the panels do not share out evenly
     * (fewer than 4 per thread, not a multiple of the threads). */
    const int64_t c_rows = G * q->Mp * taps, k_all = d->mb * q->kext;
    q->k_splits = nthr > 1 && (2 * c_rows <= k_all
                               || (q->panels % nthr && q->panels < 4 * nthr)) ? nthr : 1;
    const int64_t rows_t = MR * (q->k_splits > 1 ? q->panels : bdnn_div_up(q->panels, nthr));
    /* Reading ahead, the next block shares L2 with this one's panels and C: blocks of half
     * the size, but only while C is under half of L2 (from there on, the shorter blocks
     * reloaded C more often than the read-ahead saved). */
    const int64_t c_bytes = rows_t * taps * q->Np * (int64_t)sizeof(float);
    const int64_t pack_floats = (q->read_ahead && c_bytes <= BWT_AHEAD_MAX_C_BYTES
                                 ? BWT_AHEAD_PACK_BYTES : BWT_PACK_BYTES)
                              / (int64_t)sizeof(float);
    const int64_t win = q->Np * q->n_phase;
    q->kc = (pack_floats - q->max_off * win) / (win + min64(rows_t, q->Mp));
    q->kc = q->kc < BWT_MIN_KC ? BWT_MIN_KC : q->kc > NKC ? NKC : q->kc;
    q->kblocks = bdnn_div_up(q->kext, q->kc);
    q->kc = bdnn_div_up(q->kext, q->kblocks);   /* even blocks: no short tail */
    q->span = q->kc + q->max_off;
    const int direct = q->k_splits == 1 && taps == 1;
    q->ab = calloc((size_t)nthr, sizeof(float *));
    q->bb = calloc((size_t)nthr, sizeof(float *));
    q->cs = calloc((size_t)nthr, sizeof(float *));
    q->rowbuf = calloc((size_t)nthr, sizeof(float *));
    if (!q->ab || !q->bb || !q->cs || !q->rowbuf) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < nthr; ++t) {
        q->ab[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(min64(rows_t, q->Mp) * q->kc));
        q->bb[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(q->span * win));
        q->rowbuf[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)q->Mp);
        if (!q->ab[t] || !q->bb[t] || !q->rowbuf[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        if (!direct) {
            q->cs[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(rows_t * taps * q->Np));
            if (!q->cs[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

/* n channels of a point from ch on (runs inside blocks), then zeros up to `width`. */
static inline void copy_channels(const act_t *t, const float *img, int64_t ch, int64_t n,
                                 int64_t pt, float *out, int64_t width) {
    for (int64_t i = 0, w; i < n; i += w) {
        w = min64(n - i, run_from(t, ch + i));
        memcpy(out + i, img + at(t, ch + i, pt), sizeof(float) * (size_t)w);
    }
    if (width > n) memset(out + n, 0, sizeof(float) * (size_t)(width - n));
}

/* One point's MR channels into a panel row: a fixed-length copy per micro-kernel height
 * (the packing runs this once per point and panel). */
static inline void copy_mr(float *restrict out, const float *restrict x, int64_t MR) {
    switch (MR) {
    case 24: memcpy(out, x, 24 * sizeof(float)); break;
    case 12: memcpy(out, x, 12 * sizeof(float)); break;
    case 6: memcpy(out, x, 6 * sizeof(float)); break;
    case 4: memcpy(out, x, 4 * sizeof(float)); break;
    default: memcpy(out, x, (size_t)MR * sizeof(float));
    }
}

/* A: diff_dst channels [m0, m0 + mc) of group g at the ext points [k0, k0 + kc) of one
 * image, as MR-row panels (panel i at ab + i * kc * MR, element (k, r) at [k*MR + r]);
 * zero at junk points and past the group's channels. */
static void bwt_pack_dd(const struct bdnn_conv *c, const bwt_plan_t *q, const act_t *t,
                        const float *img, int64_t g, int64_t m0, int64_t mc, int64_t k0,
                        int64_t kc, float *ab, float *rowbuf) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = q->u->mr, OCG = d->oc / d->g;
    int64_t z = k0 / q->plane, y = k0 % q->plane / q->X, x = k0 % q->X;
    /* A point's channels [m0, m0 + whole) as one run, cut into whole panels: channels
     * last in place, channel blocks gathered into rowbuf first (one copy per block) */
    const int64_t whole = min64(mc, (OCG - m0) / MR * MR);
    for (int64_t k = 0; k < kc; ++k) {
        const int live = y < d->oh && x < d->ow;
        const int64_t pt = (z * d->oh + y) * d->ow + x;
        int64_t m = 0;
        if (live) {
            const float *row = img + pt * t->B + g * OCG + m0;
            if (t->B != t->C) {
                copy_channels(t, img, g * OCG + m0, whole, pt, rowbuf, whole);
                row = rowbuf;
            }
            for (; m < whole; m += MR) copy_mr(ab + m * kc + k * MR, row + m, MR);
        }
        for (; m < mc; m += MR) {
            const int64_t n = live ? min64(MR, OCG - m0 - m) : 0;
            copy_channels(t, img, g * OCG + m0 + m, n > 0 ? n : 0, pt, ab + m * kc + k * MR,
                          MR);
        }
        if (++x == q->X) { x = 0; if (++y * q->X == q->plane) { y = 0; ++z; } }
    }
}

/* B: every src channel of group g at the window points [k0, k0 + kc + max_off) of one
 * image, per phase, in NR-column panels ([phase][panel][point][NR]: a micro-kernel's B
 * is contiguous), zero outside the input and past the group's channels. */
static void bwt_pack_src(const struct bdnn_conv *c, const bwt_plan_t *q, const act_t *t,
                         const float *img, int64_t g, int64_t k0, int64_t kc, float *bb) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = q->u->nr, ICG = d->ic / d->g, n = kc + q->max_off;
    const int64_t npan = q->Np / NR;
    for (int64_t ph = 0; ph < q->n_phase; ++ph) {
        const int64_t *r = q->phase[ph];
        int64_t z = k0 / q->plane, y = k0 % q->plane / q->X, x = k0 % q->X;
        if (q->rows == INT64_MAX) z = 0, y = k0 / q->X;
        float *out = bb + ph * npan * q->span * NR;
        for (int64_t p = 0; p < n; ++p) {
            const int64_t id = z * d->sd + r[0] - d->pd, ih = y * d->sh + r[1] - d->ph,
                          iw = x * d->sw + r[2] - d->pw;
            const int inside = id >= 0 && id < d->id && ih >= 0 && ih < d->ih
                            && iw >= 0 && iw < d->iw;
            const int64_t pt = (id * d->ih + ih) * d->iw + iw;
            for (int64_t j = 0; j < npan; ++j)
                copy_channels(t, img, g * ICG + j * NR, inside ? min64(NR, ICG - j * NR) : 0,
                              pt, out + (j * q->span + p) * NR, NR);
            if (++x == q->X) { x = 0; if (++y == q->rows) { y = 0; ++z; } }
        }
    }
}

/* C row (g, oc) ([tap][Np]), summed over the n_parts scratch blocks given (into the
 * first), into the user's row ([ic][tap]) by the transposing copy: its spill past the
 * row's last ic is kept inside the row by writing the last ics' taps after it, one by one.
 * (Scalar, this store took as long as a quarter of the products on ResNet-50's 3x3 layers
 * at mb1.) */
static void bwt_store_row(const conv_gemm_ukr_t *u, float *const *parts, int n_parts,
                          int64_t at_row, int64_t taps, int64_t Np, int64_t ICG, float *w) {
    float *restrict row = parts[0] + at_row;
    for (int t = 1; t < n_parts; ++t) {
        const float *restrict part = parts[t] + at_row;
        for (int64_t i = 0; i < taps * Np; ++i) row[i] += part[i];
    }
    if (taps == 1) {
        memcpy(w, row, sizeof(float) * (size_t)ICG);
        return;
    }
    const int64_t spilled = bdnn_div_up(bdnn_transpose_spill(u->vlen, taps), taps);
    const int64_t whole = ICG > spilled ? ICG - spilled : 0;
    if (whole) u->tr_fn(row, Np, taps, whole, w, taps);
    for (int64_t ic = whole; ic < ICG; ++ic)
        for (int64_t tap = 0; tap < taps; ++tap) w[ic * taps + tap] = row[tap * Np + ic];
}

/* Read-ahead of a thread's next k block while it computes this one (channels last, where
 * both tensors' points are contiguous runs of bytes): its src window's input points and
 * its diff_dst points, one run each, a slice asked for by each tile's micro-kernel
 * (pf_fn), so that the packing copies from the caches instead of waiting on memory.
 * ResNet-50 res2b_branch2a (IC 256, 56x56) at mb16, 2 threads, Zen 5: the copies from
 * memory were 48% of the time, the products 52%; reading ahead, 1.65x faster (the 20
 * layers at mb16: 1.10x geomean, three alternating runs). */

/* Ext point k's (z, y, x) (as bwt_pack_src walks them). */
static void ext_coords(const bwt_plan_t *q, int64_t k, int64_t e[3]) {
    if (q->rows == INT64_MAX) e[0] = 0, e[1] = k / q->X;
    else e[0] = k / q->plane, e[1] = k % q->plane / q->X;
    e[2] = k % q->X;
}

/* The runs of block (n, k0, kc), spread over `tiles` micro-kernel calls. */
static bdnn_ahead_t bwt_ahead(const struct bdnn_conv *c, const bwt_plan_t *q,
                              const float *src, const float *diff_dst, int64_t n, int64_t k0,
                              int64_t kc, int64_t tiles) {
    const bdnn_conv_desc_t *d = &c->d;
    int64_t a[3], b[3], s0, s1;
    ext_coords(q, k0, a);
    ext_coords(q, k0 + kc + q->max_off - 1, b);   /* the window's last ext point */
    bdnn_input_window(d, a, b, q->phase_max, &s0, &s1);
    ext_coords(q, k0 + kc - 1, b);
    const int64_t d0 = bdnn_clamped_point(a[0], a[1], a[2], d->od, d->oh, d->ow);
    const int64_t d1 = bdnn_clamped_point(b[0], b[1], b[2], d->od, d->oh, d->ow);
    const int64_t fsz = (int64_t)sizeof(float);
    bdnn_ahead_t h = {0};
    bdnn_ahead_add(&h, src + (n * in_points(d) + s0) * d->ic, (s1 + 1 - s0) * d->ic * fsz, 0,
                   1);
    bdnn_ahead_add(&h, diff_dst + (n * out_points(d) + d0) * d->oc,
                   (d1 + 1 - d0) * d->oc * fsz, 0, 1);
    bdnn_ahead_share(&h, tiles);
    return h;
}

static void bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias);

static void run_bwt(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                    float *diff_wei, float *diff_bias) {
    const bwt_plan_t *q = ((const nhwc_plan_t *)c->plan)->bwt;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = q->u;
    const int64_t MR = u->mr, NR = u->nr, taps = taps_of(d), Np = q->Np;
    const int64_t ICG = d->ic / d->g, OCG = d->oc / d->g, ppg = q->Mp / MR;
    const act_t ts = act_of(c, d->ic, in_points(d)), td = act_of(c, d->oc, out_points(d));
    const int64_t blocks = d->mb * q->kblocks, per_split = bdnn_div_up(blocks, q->k_splits);
    const int direct = q->k_splits == 1 && taps == 1;
    const int64_t ldc = direct ? ICG : taps * Np;   /* C rows: the user's, or [tap][Np] */

#pragma omp parallel num_threads(c->nthr)
    {
        /* parts: one per planned thread (panel range or k split, its own buffers),
         * whatever team OpenMP gives */
        for (int tid = omp_get_thread_num(); tid < c->nthr; tid += omp_get_num_threads()) {
            int64_t p0, p1;
            bwt_panels_of(q, c->nthr, tid, &p0, &p1);
            const int64_t bs = q->k_splits > 1 ? min64(tid * per_split, blocks) : 0;
            const int64_t be = q->k_splits > 1 ? min64(bs + per_split, blocks) : blocks;
            float *ab = q->ab[tid], *bb = q->bb[tid];
            /* C row r of panel p (of this thread's range) */
#define BWT_C(p, r) (direct ? diff_wei + ((p) / ppg * OCG + (p) % ppg * MR + (r)) * ICG \
                                : q->cs[tid] + (((p) - p0) * MR + (r)) * ldc)
            if (bs >= be)   /* nothing to add (mb 0, or fewer blocks than splits): zeros */
                for (int64_t pn = p0; pn < p1; ++pn)
                    for (int64_t r = 0; r < MR; ++r)
                        if (!direct || (pn % ppg) * MR + r < OCG)
                            memset(BWT_C(pn, r), 0,
                                   sizeof(float) * (size_t)(direct ? ICG : ldc));
            for (int64_t blk = bs; blk < be; ++blk) {
                const int64_t n = blk / q->kblocks, k0 = blk % q->kblocks * q->kc;
                const int64_t kc = min64(q->kc, q->kext - k0);
                const int mode = blk == bs ? UKR_WRITE : UKR_ACCUMULATE;
                bdnn_ahead_t next = {0}, *reading = NULL;
                if (q->read_ahead && blk + 1 < be) {
                    const int64_t nn = (blk + 1) / q->kblocks;
                    const int64_t nk0 = (blk + 1) % q->kblocks * q->kc;
                    next = bwt_ahead(c, q, src, diff_dst, nn, nk0, min64(q->kc, q->kext - nk0),
                                     (p1 - p0) * taps * (Np / NR));
                    reading = &next;
                }
                for (int64_t g = p0 / ppg; g * ppg < p1; ++g) {
                    const int64_t g0 = g * ppg > p0 ? g * ppg : p0;
                    const int64_t g1 = min64(p1, (g + 1) * ppg);
                    bwt_pack_dd(c, q, &td, diff_dst + n * td.img, g, (g0 - g * ppg) * MR,
                                (g1 - g0) * MR, k0, kc, ab, q->rowbuf[tid]);
                    if (!q->src_in_place)
                        bwt_pack_src(c, q, &ts, src + n * ts.img, g, k0, kc, bb);
                    for (int64_t tap = 0; tap < taps; ++tap)
                        for (int64_t j = 0; j < Np; j += NR) {
                            const float *bt = q->src_in_place
                                ? src + n * ts.img + k0 * ts.B + g * ICG + j
                                : bb + ((q->tap_phase[tap] * (Np / NR) + j / NR) * q->span
                                        + q->tap_off[tap]) * NR;
                            const int64_t ldb = q->src_in_place ? ts.B : NR;
                            for (int64_t pn = g0; pn < g1; ++pn) {
                                const int64_t oc0 = (pn - g * ppg) * MR;
                                bdnn_ukr_reading_ahead(
                                    u, reading, kc, ab + (pn - g0) * MR * kc, bt, ldb,
                                    BWT_C(pn, 0) + (direct ? j : tap * Np + j), ldc,
                                    min64(MR, OCG - oc0), direct ? min64(NR, ICG - j) : NR,
                                    mode);
                            }
                        }
                }
            }
            if (q->k_splits == 1 && !direct)
                for (int64_t pn = p0; pn < p1; ++pn)
                    for (int64_t r = 0; r < MR && (pn % ppg) * MR + r < OCG; ++r)
                        bwt_store_row(u, q->cs + tid, 1, ((pn - p0) * MR + r) * ldc, taps,
                                      Np, ICG, diff_wei + (pn / ppg * OCG + pn % ppg * MR + r)
                                                      * ICG * taps);
#undef BWT_C
        }
        if (q->k_splits > 1) {
#pragma omp barrier
            /* every thread's partial rows are in its cs; sum them into the user's rows */
#pragma omp for schedule(static)
            for (int64_t row = 0; row < d->g * OCG; ++row)
                bwt_store_row(u, q->cs, c->nthr, (row / OCG * q->Mp + row % OCG) * ldc, taps,
                              Np, ICG, diff_wei + row * ICG * taps);
        }
        if (diff_bias) bias_sums(c, diff_dst, diff_bias);
    }
}

static void nhwc_fini(struct bdnn_conv *c) {
    nhwc_plan_t *p = c->plan;
    if (!p) return;
    bdnn_dc_fini(p->dc);
    bwt_fini(p->bwt, c->nthr);
    for (int t = 0; t < c->nthr; ++t) {
        if (p->ap) free(p->ap[t]);
        if (p->bp) free(p->bp[t]);
    }
    for (int t = 0; t < c->nthr && p->cs; ++t) free(p->cs[t]);
    free(p->cs);
    free(p->ap);
    free(p->bp);
    free(p->blk);
    free(p->partials);
    free(p);
    c->plan = NULL;
}

static int nhwc_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    if (c->lp || c->operands != OPERANDS_F32 || u->pack || u->mr > MAX_MR)
        return BDNN_STATUS_UNIMPLEMENTED;
    if (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SUM_SCALE_DROPPED
            && c->fault != BDNN_FAULT_CRASH && c->fault != BDNN_FAULT_PADDING_GARBAGE)
        return BDNN_STATUS_UNIMPLEMENTED;
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, MR = u->mr, NR = u->nr;
    if (c->attr.layout != BDNN_LAYOUT_NHWC) {
        /* Blocked: a tile's columns inside one block; a group's channels whole blocks. */
        const int64_t B = act_of(c, d->ic, 1).B;
        if (B % NR) return BDNN_STATUS_UNIMPLEMENTED;
        if (G > 1 && (ICG % B || OCG % B)) return BDNN_STATUS_UNIMPLEMENTED;
    }
    nhwc_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    /* Blocked forward (and backward data at unit stride): the direct convolution where
     * the row's ISA has one (conv_dblk.c: the read tensor used in place, no im2col; on
     * ResNet-50 forward it outran this GEMM path). */
    if (c->attr.layout != BDNN_LAYOUT_NHWC && c->dir != BDNN_DIR_BWD_WEIGHTS) {
        const int st = bdnn_dc_init(c, u, &p->dc);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
        const int st = bwt_init(c, u, &p->bwt);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    const int64_t nthr = c->nthr;
    p->taps = taps_of(d);
    p->k_splits = 1;
    int64_t nc_panels = NC_PANELS;
    switch (c->dir) {
    case BDNN_DIR_FWD:
        p->M = out_points(d), p->N = OCG, p->ch = ICG, p->n_inst = d->mb * G;
        break;
    case BDNN_DIR_BWD_DATA:
        p->M = in_points(d), p->N = ICG, p->ch = OCG, p->n_inst = d->mb * G;
        break;
    default:
        p->M = OCG, p->N = p->taps * ICG, p->ch = ICG, p->n_inst = G;
        nc_panels = BWW_NC_PANELS;
    }
    /* Backward data by input points wastes products in two cases: few input channels
     * per group (ResNet's first layer: 3 live columns in an NR-wide C tile), and any
     * stride, where an input point's A row is zero for every tap the stride does not
     * divide (1x1 stride 2: half the rows of the live panels; 3x3 stride 2: three
     * quarters of each row). Those run the other way round: one GEMM row per output
     * point, C[o][(tap, ic)] = diff_dst[o][:] x W^T, added into diff_src (col2im), which
     * multiplies no zero; the adds are 1/OCG of the products. */
    /* Channels last only (B == C): run_bwd_col's A rows and col2im address diff_dst and
     * diff_src as [point][C]. The blocked rows keep the input-point path (run_rows), with
     * its waste: generalizing the col2im to blocks is not done yet. */
    const int strided = d->sd > 1 || d->sh > 1 || d->sw > 1;
    if (c->attr.layout == BDNN_LAYOUT_NHWC && c->dir == BDNN_DIR_BWD_DATA
            && (2 * ICG <= NR || strided) && c->n_post_ops == 0) {
        p->col = 1;
        p->N = p->taps * ICG;
        p->K = OCG;
        p->Np = bdnn_div_up(p->N, NR) * NR;
        /* about MC_PANELS micro-panels of rows per GEMM, C within COL_C_BYTES */
        p->col_rows = bdnn_div_up(MC_PANELS * MR, d->ow);
        const int64_t fit = COL_C_BYTES / (int64_t)sizeof(float) / (d->ow * p->Np);
        if (p->col_rows > fit) p->col_rows = fit > 1 ? fit : 1;
        const int64_t parts = bdnn_div_up(OCG, NKC), part = bdnn_div_up(OCG, parts);
        p->blk = calloc((size_t)parts, sizeof(kblk_t));
        if (!p->blk) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int64_t c0 = 0; c0 < OCG; c0 += part)
            p->blk[p->n_blk++] = (kblk_t){c0, min64(part, OCG - c0)};
        const int64_t rows = bdnn_div_up(p->col_rows * d->ow, MR) * MR;
        p->ap = calloc((size_t)nthr, sizeof(float *));
        p->cs = calloc((size_t)nthr, sizeof(float *));
        if (!p->ap || !p->cs) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < nthr; ++t) {
            /* + a vector: the transposing pack stores whole vectors past the last panel */
            p->ap[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(rows * NKC + u->vlen));
            p->cs[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(rows * p->Np));
            if (!p->ap[t] || !p->cs[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        return BDNN_STATUS_OK;
    }
    if (c->dir != BDNN_DIR_BWD_WEIGHTS) p->K = p->taps * p->ch;
    else p->K = d->mb * out_points(d);
    p->Np = bdnn_div_up(p->N, NR) * NR;
    /* Blocks: as large as the micro-tiling allows, made smaller until every thread has at
     * least two work items (mb1 late layers: 49 points, a few column blocks). Backward
     * weights with points enough to split K among the threads keeps its blocks whole
     * instead: smaller column blocks would each pack all of A again (the first layer:
     * 64 x 12544 per block). */
    const int split_k = c->dir == BDNN_DIR_BWD_WEIGHTS && nthr > 1
        && p->K >= 2 * NKC * nthr;
    p->mc = min64(MC_PANELS * MR, bdnn_div_up(p->M, MR) * MR);
    p->nc = min64(nc_panels * NR, p->Np);
    for (;;) {
        p->n_rb = bdnn_div_up(p->M, p->mc);
        p->n_cb = bdnn_div_up(p->N, p->nc);
        p->n_items = p->n_inst * p->n_rb * p->n_cb;
        if (p->n_items >= 2 * nthr || split_k || (p->nc == NR && p->mc == MR)) break;
        if (p->nc > NR) p->nc = bdnn_div_up(p->nc / NR, 2) * NR;
        else p->mc = bdnn_div_up(p->mc / MR, 2) * MR;
    }
    /* k blocks. Forward / backward data: never a part of a channel run across a tap
     * boundary, so a block is either whole taps or one tap's channel range. */
    if (c->dir != BDNN_DIR_BWD_WEIGHTS) {
        int64_t per_tap = p->ch >= NKC ? bdnn_div_up(p->ch, NKC) : 1;
        int64_t taps_per = p->ch >= NKC ? 1 : NKC / p->ch;
        p->n_blk = p->ch >= NKC ? p->taps * per_tap : bdnn_div_up(p->taps, taps_per);
        p->blk = calloc((size_t)(p->n_blk ? p->n_blk : 1), sizeof(kblk_t));
        if (!p->blk) return BDNN_STATUS_OUT_OF_MEMORY;
        int64_t b = 0;
        if (p->ch >= NKC) {
            int64_t part = bdnn_div_up(p->ch, per_tap);
            for (int64_t t = 0; t < p->taps; ++t)
                for (int64_t c0 = 0; c0 < p->ch; c0 += part)
                    p->blk[b++] = (kblk_t){t * p->ch + c0, min64(part, p->ch - c0)};
        } else {
            for (int64_t t = 0; t < p->taps; t += taps_per)
                p->blk[b++] = (kblk_t){t * p->ch, min64(taps_per, p->taps - t) * p->ch};
        }
        p->n_blk = b;
    } else if (split_k && p->n_items < 2 * nthr) {
        /* Few (g, row, column) items: each thread reduces its own range of points into a
         * whole partial result instead. */
        p->k_splits = nthr;
    }
    p->ap = calloc((size_t)nthr, sizeof(float *));
    p->bp = calloc((size_t)nthr, sizeof(float *));
    if (!p->ap || !p->bp) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < nthr; ++t) {
        p->ap[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->mc * NKC));
        if (!p->ap[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
            p->bp[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->nc * (NKC + 1)));
            if (!p->bp[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && p->k_splits > 1) {
        p->partials = bdnn_aligned_alloc(sizeof(float)
                                         * (size_t)(p->k_splits * G * p->M * p->N));
        if (!p->partials) return BDNN_STATUS_OUT_OF_MEMORY;
    } else if (c->dir == BDNN_DIR_BWD_WEIGHTS) {   /* one C block per thread */
        p->cs = calloc((size_t)nthr, sizeof(float *));
        if (!p->cs) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < nthr; ++t) {
            p->cs[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->mc * p->nc));
            if (!p->cs[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

static size_t nhwc_weights_bytes(const struct bdnn_conv *c) {
    const nhwc_plan_t *p = c->plan;
    if (p->dc) return bdnn_dc_weights_bytes(c, p->dc);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return 0;
    return sizeof(float) * (size_t)(c->d.g * p->K * p->Np);
}

/* Packed weights: per group, per k block, per NR panel of columns, a kc x NR micro-panel
 * (element (k, j) at [k*NR + j], columns past N zero). Block b of group g starts at
 * (g * K + k0) * Np; its panel q at that + q * kc * NR. B element (k = tap*ch + c, j) is
 * W[oc][ic][tap] with (oc, ic) = (j, c) forward and (c, j) backward data. */
static void nhwc_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const nhwc_plan_t *p = c->plan;
    if (p->dc) {
        bdnn_dc_pack_weights(c, p->dc, wei, packed);
        return;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = ukr_of(c)->nr, G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    const int64_t taps = p->taps, fwd = c->dir == BDNN_DIR_FWD;
    const float *w = wei;
    float *out = packed;
    if (p->col) {   /* B(k = oc, j = tap * ICG + ic) = W[g][oc][ic][tap], same panels */
        for (int64_t g = 0; g < G; ++g)
            for (int64_t b = 0; b < p->n_blk; ++b) {
                const kblk_t blk = p->blk[b];
                float *base = out + (g * p->K + blk.k0) * p->Np;
                for (int64_t q = 0; q * NR < p->N; ++q)
                    for (int64_t k = 0; k < blk.kc; ++k)
                        for (int64_t j = 0; j < NR; ++j) {
                            const int64_t col = q * NR + j, oc = blk.k0 + k;
                            base[q * blk.kc * NR + k * NR + j] = col < p->N
                                ? w[((g * OCG + oc) * ICG + col % ICG) * taps + col / ICG]
                                : 0.0f;
                        }
            }
        return;
    }
    for (int64_t g = 0; g < G; ++g)
        for (int64_t b = 0; b < p->n_blk; ++b) {
            const kblk_t blk = p->blk[b];
            float *base = out + (g * p->K + blk.k0) * p->Np;
            for (int64_t q = 0; q * NR < p->N; ++q) {
                float *panel = base + q * blk.kc * NR;
                for (int64_t k = 0; k < blk.kc; ++k) {
                    const int64_t kk = blk.k0 + k, tap = kk / p->ch, ch = kk % p->ch;
                    for (int64_t j = 0; j < NR; ++j) {
                        const int64_t col = q * NR + j;
                        float v = 0.0f;
                        if (col < p->N) {
                            const int64_t oc = fwd ? col : ch, ic = fwd ? ch : col;
                            v = w[((g * OCG + oc) * ICG + ic) * taps + tap];
                        }
                        panel[k * NR + j] = v;
                    }
                }
            }
        }
}

/* The point of the read tensor (src forward, diff_dst backward data) that a C row (an
 * output / input point of an image) reads for a tap, or -1 when the tap falls outside
 * (padding) or, backward, the stride does not divide it: point_at(row_origin(row), off)
 * with off the tap's offsets (kd, kh, kw) * (dilation + 1). The origin (forward: the
 * input coordinates of tap 0, o*s - p; backward data: i + p) is found once per row and
 * micro-panel, the taps are stepped by the callers, so the packing loops do no division
 * but the strides'. */
typedef struct { int64_t d, h, w; } xyz_t;

static xyz_t row_origin(const struct bdnn_conv *c, int64_t row) {
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir == BDNN_DIR_FWD) {
        const int64_t ow = row % d->ow, oh = row / d->ow % d->oh, od = row / (d->ow * d->oh);
        return (xyz_t){od * d->sd - d->pd, oh * d->sh - d->ph, ow * d->sw - d->pw};
    }
    const int64_t iw = row % d->iw, ih = row / d->iw % d->ih, id = row / (d->iw * d->ih);
    return (xyz_t){id + d->pd, ih + d->ph, iw + d->pw};
}

/* One coordinate backward: (origin - offset) / s, or -1 if outside or not divisible. */
static inline int64_t back_coord(int64_t t, int64_t s, int64_t n) {
    if (t < 0) return -1;
    if (s > 1) {
        if (t % s) return -1;
        t /= s;
    }
    return t < n ? t : -1;
}

static inline int64_t point_at(const struct bdnn_conv *c, xyz_t o, xyz_t k) {
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir == BDNN_DIR_FWD) {
        const int64_t id = o.d + k.d, ih = o.h + k.h, iw = o.w + k.w;
        if (iw < 0 || iw >= d->iw || ih < 0 || ih >= d->ih || id < 0 || id >= d->id) return -1;
        return (id * d->ih + ih) * d->iw + iw;
    }
    const int64_t ow = back_coord(o.w - k.w, d->sw, d->ow), oh = back_coord(o.h - k.h, d->sh, d->oh),
                  od = back_coord(o.d - k.d, d->sd, d->od);
    if (ow < 0 || oh < 0 || od < 0) return -1;
    return (od * d->oh + oh) * d->ow + ow;
}

/* Forward / backward data: packs A rows [m0, m1) x k block blk of image `img` (its first
 * element; the read tensor's geometry t, the group's first channel ch0) into MR-row
 * micro-panels at ap (panel (m - m0) / MR at ap + (m - m0) * kc; element (k, r) at
 * [k*MR + r]). live[i]: whether micro-panel i has any row that reads the tensor. Each
 * row's origin is decoded once per panel and the taps stepped (kd, kh, kw) from it: a
 * division per (row, tap) costs more than the copy when a tap has few channels (3 on
 * ResNet's first layer). */
static void pack_a_rows(const struct bdnn_conv *c, const nhwc_plan_t *p, const act_t *t,
                        const float *img, int64_t ch0, int64_t m0, int64_t m1, kblk_t blk,
                        float *ap, unsigned char *live) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = ukr_of(c)->mr;
    const int fwd = c->dir == BDNN_DIR_FWD, one_block = t->B == t->C;
    /* point_at's bounds and strides in locals: this loop runs per (row, tap) */
    const int64_t RD = fwd ? d->id : d->od, RH = fwd ? d->ih : d->oh, RW = fwd ? d->iw : d->ow;
    const int64_t SD = fwd ? 1 : d->sd, SH = fwd ? 1 : d->sh, SW = fwd ? 1 : d->sw;
    const int64_t sgn = fwd ? 1 : -1, plane = t->points * t->B;
    for (int64_t m = m0; m < m1; m += MR) {
        float *panel = ap + (m - m0) * blk.kc;
        unsigned char any = 0;
        xyz_t origin[MAX_MR];
        for (int64_t r = 0; r < MR && m + r < m1; ++r) origin[r] = row_origin(c, m + r);
        int64_t tap = blk.k0 / p->ch;
        int64_t kw = tap % d->kw, kh = tap / d->kw % d->kh, kd = tap / (d->kw * d->kh);
        for (int64_t k = 0; k < blk.kc; ++tap) {
            /* one tap's channels [c0, c0 + run) of each row: its point found once, then
             * copied a block at a time (the next block is a block plane further on) */
            const int64_t c0 = k == 0 ? blk.k0 % p->ch : 0;
            const int64_t run = min64(p->ch - c0, blk.kc - k);
            const int64_t first = ch0 + c0;
            const int64_t o0 = t->B - run_from(t, first), base = at(t, first, 0);
            const int64_t oz = sgn * kd * (d->dd + 1), oy = sgn * kh * (d->dh + 1),
                          ox = sgn * kw * (d->dw + 1);
            for (int64_t r = 0; r < MR; ++r) {
                float *a = panel + k * MR + r;
                int64_t pt = -1;
                if (m + r < m1) {   /* point_at, inline */
                    int64_t z = origin[r].d + oz, y = origin[r].h + oy, x = origin[r].w + ox;
                    int ok = z >= 0 && y >= 0 && x >= 0;
                    if (ok && !fwd) {
                        ok = z % SD == 0 && y % SH == 0 && x % SW == 0;
                        z /= SD, y /= SH, x /= SW;
                    }
                    if (ok && z < RD && y < RH && x < RW) pt = (z * RH + y) * RW + x;
                }
                if (pt < 0) {
                    for (int64_t i = 0; i < run; ++i) a[i * MR] = 0.0f;
                    continue;
                }
                any = 1;
                const float *x = img + base + pt * t->B;   /* in block first / B */
                if (one_block) {
                    for (int64_t i = 0; i < run; ++i) a[i * MR] = x[i];
                    continue;
                }
                for (int64_t i = 0, o = o0, w; i < run; i += w, o = 0) {
                    w = min64(run - i, t->B - o);
                    for (int64_t j = 0; j < w; ++j) a[(i + j) * MR] = x[j];
                    x += plane - o;                            /* the next block's start */
                }
            }
            k += run;
            if (++kw == d->kw) { kw = 0; if (++kh == d->kh) { kh = 0; ++kd; } }
        }
        live[(m - m0) / MR] = any;
    }
}

/* The C block before any product: the bias per column, plus the sum post-op's scaled
 * prior value. cb: the block's first row (ldc apart), cols columns of one channel block. */
static void init_block(float *cb, int64_t ldc, int64_t rows, int64_t cols, const float *bias,
                       int has_sum, float sum_scale) {
    for (int64_t r = 0; r < rows; ++r) {
        float *row = cb + r * ldc;
        if (has_sum)
            for (int64_t j = 0; j < cols; ++j) row[j] = sum_scale * row[j] + (bias ? bias[j] : 0.0f);
        else if (bias)
            memcpy(row, bias, sizeof(float) * (size_t)cols);
        else
            memset(row, 0, sizeof(float) * (size_t)cols);
    }
}

/* The padded tail of the written tensor's last block, points [m0, m1): zeros (ones with
 * the padding-garbage defect). */
static void zero_tail(const struct bdnn_conv *c, const act_t *t, float *out_img, int64_t m0,
                      int64_t m1) {
    const int64_t pad = bdnn_div_up(t->C, t->B) * t->B - t->C;
    const float v = c->fault == BDNN_FAULT_PADDING_GARBAGE ? 1.0f : 0.0f;
    if (!pad) return;
    for (int64_t m = m0; m < m1; ++m) {
        float *x = out_img + at(t, t->C, m);
        for (int64_t i = 0; i < pad; ++i) x[i] = v;
    }
}

/* Forward and backward data. */
static void run_rows(const struct bdnn_conv *c, const float *in, const float *wp,
                     const float *bias, float *out) {
    const nhwc_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, G = d->g, M = p->M, N = p->N;
    const int fwd = c->dir == BDNN_DIR_FWD;
    /* the read tensor's and the written tensor's geometry */
    const act_t src = act_of(c, d->ic, in_points(d)), dst = act_of(c, d->oc, out_points(d));
    const act_t tin = fwd ? src : dst, tout = fwd ? dst : src;
    const int64_t ldc = tout.B;
    int has_sum = 0;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = c->n_post_ops > (has_sum ? 1 : 0);

#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        float *ap = p->ap[tid];
        unsigned char live[MC_PANELS];
        for (int64_t item = tid; item < p->n_items; item += c->nthr) {
            int64_t rest = item;
            const int64_t cb = rest % p->n_cb; rest /= p->n_cb;
            const int64_t rb = rest % p->n_rb; rest /= p->n_rb;
            const int64_t g = rest % G, n = rest / G;
            const int64_t m0 = rb * p->mc, m1 = min64(m0 + p->mc, M);
            const int64_t j0 = cb * p->nc, ncols = min64(p->nc, N - j0);
            const float *img = in + n * tin.img;
            float *oimg = out + n * tout.img;
            const int64_t ch0 = g * N + j0;   /* the block's first written channel */
            /* C's columns, in runs inside one block of the written tensor (one run,
             * channels last), its rows ldc apart */
            for (int64_t j = 0, w; j < ncols; j += w) {
                w = min64(ncols - j, run_from(&tout, ch0 + j));
                init_block(oimg + at(&tout, ch0 + j, m0), ldc, m1 - m0, w,
                           bias ? bias + ch0 + j : NULL, has_sum, sum_scale);
            }
            for (int64_t b = 0; b < p->n_blk; ++b) {
                const kblk_t blk = p->blk[b];
                pack_a_rows(c, p, &tin, img, g * p->ch, m0, m1, blk, ap, live);
                const float *wblk = wp + (g * p->K + blk.k0) * p->Np;
                for (int64_t j = j0; j < j0 + ncols; j += NR) {
                    const int64_t nr = min64(NR, j0 + ncols - j);
                    const float *bpanel = wblk + (j / NR) * blk.kc * NR;
                    float *cj = oimg + at(&tout, g * N + j, 0);
                    for (int64_t m = m0; m < m1; m += MR) {
                        if (!live[(m - m0) / MR]) continue;
                        u->fn(blk.kc, ap + (m - m0) * blk.kc, bpanel, NR, cj + m * ldc,
                              ldc, min64(MR, m1 - m), nr, UKR_ACCUMULATE, NULL, 0.0f, 0.0f);
                    }
                }
            }
            for (int64_t j = 0, w; has_eltwise && j < ncols; j += w) {
                w = min64(ncols - j, run_from(&tout, ch0 + j));
                bdnn_post_ops_eltwise(c, oimg + at(&tout, ch0 + j, m0), ldc, m1 - m0, w);
            }
            if (g == G - 1 && j0 + ncols == N) zero_tail(c, &tout, oimg, m0, m1);
        }
    }
}

/* Backward weights: A = diff_dst^T (rows: output channels of group g), B = src gathered
 * (columns: (tap, ic)), k = (n, output point); points [k0, k0 + kc). */
static void pack_a_bww(const struct bdnn_conv *c, const float *diff_dst, int64_t g,
                       int64_t m0, int64_t m1, int64_t k0, int64_t kc, float *ap) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = ukr_of(c)->mr, OCG = d->oc / d->g, OSP = out_points(d);
    const act_t t = act_of(c, d->oc, OSP);
    /* point by point: each diff_dst point is read once, along its channels, into every
     * panel (panel by panel would sweep all the points once per MR channels) */
    int64_t n = k0 / OSP, op = k0 % OSP;
    for (int64_t k = 0; k < kc; ++k) {
        const float *img = diff_dst + n * t.img;
        const float *row = img + op * t.B + g * OCG;   /* channels last: the point's row */
        for (int64_t m = m0; m < m1; m += MR) {
            const int64_t mr = min64(MR, m1 - m);
            float *a = ap + (m - m0) * kc + k * MR;
            if (t.B == t.C) {
                for (int64_t r = 0; r < mr; ++r) a[r] = row[m + r];
            } else {
                for (int64_t r = 0, w; r < mr; r += w) {   /* runs inside one block */
                    const int64_t ch = g * OCG + m + r;
                    w = min64(mr - r, run_from(&t, ch));
                    const float *x = img + at(&t, ch, op);
                    for (int64_t i = 0; i < w; ++i) a[r + i] = x[i];
                }
            }
            for (int64_t r = mr; r < MR; ++r) a[r] = 0.0f;
        }
        if (++op == OSP) { op = 0; ++n; }
    }
}

/* B[k][j] for the columns [j0, j0 + ncols) of this block: each point's row is built in
 * rowbuf (one run of channels per tap, the tap's input point found by stepping (kd, kh,
 * kw) from the point's origin, no division per tap: ResNet's first layer has 49 taps of 3
 * channels per point) and then cut into the NR-wide panels. */
static void pack_b_bww(const struct bdnn_conv *c, const nhwc_plan_t *p, const float *src,
                       int64_t g, int64_t j0, int64_t ncols, int64_t k0, int64_t kc,
                       float *bp, float *rowbuf) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = ukr_of(c)->nr, ICG = p->ch, OSP = out_points(d);
    const act_t t = act_of(c, d->ic, in_points(d));
    const int64_t npan = bdnn_div_up(ncols, NR);
    const int64_t tap0 = j0 / ICG, tap1 = (j0 + ncols - 1) / ICG;
    const struct bdnn_conv fwd_view = {.d = *d, .dir = BDNN_DIR_FWD};
    for (int64_t i = ncols; i < npan * NR; ++i) rowbuf[i] = 0.0f;   /* past the block */
    int64_t n = k0 / OSP, op = k0 % OSP;
    for (int64_t k = 0; k < kc; ++k) {
        const float *im = src + n * t.img;
        const xyz_t origin = row_origin(&fwd_view, op);
        int64_t kw = tap0 % d->kw, kh = tap0 / d->kw % d->kh, kd = tap0 / (d->kw * d->kh);
        for (int64_t tap = tap0; tap <= tap1; ++tap) {
            const int64_t lo = tap == tap0 ? j0 - tap * ICG : 0;
            const int64_t hi = tap == tap1 ? j0 + ncols - tap * ICG : ICG;
            float *out = rowbuf + tap * ICG + lo - j0;
            const xyz_t off = {kd * (d->dd + 1), kh * (d->dh + 1), kw * (d->dw + 1)};
            const int64_t pt = point_at(&fwd_view, origin, off);
            if (pt < 0) {
                for (int64_t i = 0; i < hi - lo; ++i) out[i] = 0.0f;
            } else {
                for (int64_t i = lo, w; i < hi; i += w) {   /* runs inside one block */
                    w = min64(hi - i, run_from(&t, g * ICG + i));
                    const float *x = im + at(&t, g * ICG + i, pt);
                    for (int64_t j = 0; j < w; ++j) out[i - lo + j] = x[j];
                }
            }
            if (++kw == d->kw) { kw = 0; if (++kh == d->kh) { kh = 0; ++kd; } }
        }
        for (int64_t q = 0; q < npan; ++q)
            memcpy(bp + q * kc * NR + k * NR, rowbuf + q * NR, sizeof(float) * (size_t)NR);
        if (++op == OSP) { op = 0; ++n; }
    }
}

static void run_bww(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                    float *diff_wei, float *diff_bias) {
    const nhwc_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, G = d->g, M = p->M, N = p->N, K = p->K;
    const int64_t per_split = bdnn_div_up(K, p->k_splits);
    const int64_t units = p->k_splits * p->n_items;

#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        float *ap = p->ap[tid], *bp = p->bp[tid];
        float *rowbuf = p->bp[tid] + p->nc * NKC;   /* one B row (nc columns) */
        for (int64_t unit = tid; unit < units; unit += c->nthr) {
            int64_t rest = unit;
            const int64_t cb = rest % p->n_cb; rest /= p->n_cb;
            const int64_t rb = rest % p->n_rb; rest /= p->n_rb;
            const int64_t g = rest % G, split = rest / G;
            const int64_t m0 = rb * p->mc, m1 = min64(m0 + p->mc, M);
            const int64_t j0 = cb * p->nc, ncols = min64(p->nc, N - j0);
            const int64_t ks = split * per_split, ke = min64(ks + per_split, K);
            /* split K: a whole partial result; else the thread's C block, written into
             * the weights as soon as it is done (in cache, no G x M x N scratch) */
            const int direct = p->k_splits == 1;
            const int64_t ldc = direct ? p->nc : N;
            float *cblk = direct ? p->cs[tid]
                                 : p->partials + ((split * G + g) * M + m0) * N + j0;
            if (ks >= ke)   /* an empty range (K short, or mb 0): zeros */
                for (int64_t r = 0; r < m1 - m0; ++r)
                    memset(cblk + r * ldc, 0, sizeof(float) * (size_t)ncols);
            for (int64_t pc = ks; pc < ke; pc += NKC) {
                const int64_t kc = min64(NKC, ke - pc);
                pack_a_bww(c, diff_dst, g, m0, m1, pc, kc, ap);
                pack_b_bww(c, p, src, g, j0, ncols, pc, kc, bp, rowbuf);
                for (int64_t j = j0; j < j0 + ncols; j += NR) {
                    const int64_t nr = min64(NR, j0 + ncols - j);
                    for (int64_t m = m0; m < m1; m += MR)
                        u->fn(kc, ap + (m - m0) * kc, bp + ((j - j0) / NR) * kc * NR, NR,
                              cblk + (m - m0) * ldc + (j - j0), ldc, min64(MR, m1 - m), nr,
                              pc == ks ? UKR_WRITE : UKR_ACCUMULATE, NULL, 0.0f, 0.0f);
                }
            }
            if (direct) {   /* (tap, ic) columns [j0, j0 + ncols) -> the user's (ic, tap) */
                const int64_t taps = p->taps, ICG = p->ch;
                for (int64_t r = 0; r < m1 - m0; ++r) {
                    float *w = diff_wei + (g * M + m0 + r) * N;
                    const float *v = cblk + r * ldc;
                    int64_t tap = j0 / ICG, ic = j0 % ICG;
                    for (int64_t j = 0; j < ncols; ++j) {
                        w[ic * taps + tap] = v[j];
                        if (++ic == ICG) { ic = 0; ++tap; }
                    }
                }
            }
        }
#pragma omp barrier
        /* Sum the partials and transpose (tap, ic) into the user's (ic, tap), one
         * (g, oc) row per iteration. */
        const int64_t taps = p->taps, ICG = p->ch, rows = G * M;
#pragma omp for schedule(static)
        for (int64_t row = 0; row < (p->k_splits > 1 ? rows : 0); ++row) {
            float *w = diff_wei + row * N;
            for (int64_t ic = 0; ic < ICG; ++ic)      /* writes along w, no division */
                for (int64_t tap = 0; tap < taps; ++tap) {
                    const int64_t j = tap * ICG + ic;
                    float v = p->partials[row * N + j];
                    for (int64_t s = 1; s < p->k_splits; ++s)
                        v += p->partials[(s * rows + row) * N + j];
                    w[ic * taps + tap] = v;
                }
        }
        if (diff_bias) bias_sums(c, diff_dst, diff_bias);
    }
}

/* diff_bias: per channel, the sum over every (n, point) of diff_dst. An orphaned omp for,
 * called by every thread of the caller's parallel region: threads own ranges of up to 16
 * channels inside one block, the inner loop runs along a point's channels. */
static void bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias) {
    const bdnn_conv_desc_t *d = &c->d;
    const act_t t = act_of(c, d->oc, out_points(d));
    const int64_t OC = d->oc, step = t.B % 16 ? min64(t.B, 16) : 16;
#pragma omp for schedule(static)
    for (int64_t c0 = 0; c0 < OC; c0 += step) {
        const int64_t cn = min64(step, OC - c0);
        float acc[16] = {0};
        for (int64_t n = 0; n < d->mb; ++n) {
            const float *img = diff_dst + n * t.img + at(&t, c0, 0);
            for (int64_t pt = 0; pt < t.points; ++pt)
                for (int64_t i = 0; i < cn; ++i) acc[i] += img[pt * t.B + i];
        }
        for (int64_t i = 0; i < cn; ++i) diff_bias[c0 + i] = acc[i];
    }
}

/* Backward data by output rows (p->col): per image and group, for up to col_rows
 * consecutive output rows (od, oh) at a time, C[(row, ow)][(tap, ic)] = diff_dst points
 * x W^T on the micro-kernels, then every C element is added to the diff_src point its tap
 * reaches. Threads own disjoint ranges of input rows (id, ih): a thread computes every
 * output row that reaches its range (a row near a boundary, when the kernel is taller
 * than the stride, is computed by both neighbours) and adds only into its own rows, so
 * no two threads write one point and no atomics are needed. */
static int reaches(const bdnn_conv_desc_t *d, int64_t orow, int64_t lo, int64_t hi) {
    const int64_t od = orow / d->oh, oh = orow % d->oh;
    for (int64_t kd = 0; kd < d->kd; ++kd)
        for (int64_t kh = 0; kh < d->kh; ++kh) {
            const int64_t id = od * d->sd - d->pd + kd * (d->dd + 1);
            const int64_t ih = oh * d->sh - d->ph + kh * (d->dh + 1);
            const int64_t r = id * d->ih + ih;
            if (id >= 0 && id < d->id && ih >= 0 && ih < d->ih && r >= lo && r < hi) return 1;
        }
    return 0;
}

static void run_bwd_col(const struct bdnn_conv *c, const float *diff_dst, const float *wp,
                        const float *bias, float *diff_src) {
    const nhwc_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    const int64_t in_rows = d->id * d->ih, out_rows = d->od * d->oh, ld = p->Np;
#pragma omp parallel num_threads(c->nthr)
    {
        const int64_t nt = omp_get_num_threads(), tid = omp_get_thread_num();
        const int64_t lo = in_rows * tid / nt, hi = in_rows * (tid + 1) / nt;
        float *ap = p->ap[tid], *cs = p->cs[tid];
        for (int64_t n = 0; n < d->mb; ++n) {
            float *img = diff_src + n * in_points(d) * d->ic;
            /* own rows start at the bias per channel (deconvolution's forward), else 0 */
            if (bias)
                for (int64_t pt = lo * d->iw; pt < hi * d->iw; ++pt)
                    memcpy(img + pt * d->ic, bias, sizeof(float) * (size_t)d->ic);
            else
                memset(img + lo * d->iw * d->ic, 0,
                       sizeof(float) * (size_t)((hi - lo) * d->iw * d->ic));
            for (int64_t row0 = 0; row0 < out_rows;) {
                if (!reaches(d, row0, lo, hi)) { ++row0; continue; }
                int64_t nrows = 1;   /* consecutive rows that reach the range */
                while (nrows < p->col_rows && row0 + nrows < out_rows
                       && reaches(d, row0 + nrows, lo, hi))
                    ++nrows;
                const int64_t M = nrows * d->ow;
                for (int64_t g = 0; g < G; ++g) {
                    const float *dd = diff_dst + (n * out_points(d) + row0 * d->ow) * d->oc
                        + g * OCG;
                    for (int64_t b = 0; b < p->n_blk; ++b) {
                        const kblk_t blk = p->blk[b];
                        for (int64_t m = 0; m < M; m += MR)   /* pack A: MR points */
                            u->tr_fn(dd + m * d->oc + blk.k0, d->oc, min64(MR, M - m),
                                     blk.kc, ap + m * blk.kc, MR);
                        const float *wblk = wp + (g * p->K + blk.k0) * p->Np;
                        for (int64_t j = 0; j < p->N; j += NR)
                            for (int64_t m = 0; m < M; m += MR)
                                u->fn(blk.kc, ap + m * blk.kc, wblk + (j / NR) * blk.kc * NR,
                                      NR, cs + m * ld + j, ld, min64(MR, M - m),
                                      min64(NR, p->N - j), b ? UKR_ACCUMULATE : UKR_WRITE,
                                      NULL, 0.0f, 0.0f);
                    }
                    for (int64_t q = 0; q < nrows; ++q) {   /* col2im into own rows */
                        const int64_t od = (row0 + q) / d->oh, oh = (row0 + q) % d->oh;
                        for (int64_t tap = 0; tap < p->taps; ++tap) {
                            const int64_t kw = tap % d->kw, kh = tap / d->kw % d->kh,
                                          kd = tap / (d->kw * d->kh);
                            const int64_t id = od * d->sd - d->pd + kd * (d->dd + 1);
                            const int64_t ih = oh * d->sh - d->ph + kh * (d->dh + 1);
                            const int64_t r = id * d->ih + ih;
                            if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih || r < lo
                                    || r >= hi)
                                continue;
                            for (int64_t ow = 0; ow < d->ow; ++ow) {
                                const int64_t iw = ow * d->sw - d->pw + kw * (d->dw + 1);
                                if (iw < 0 || iw >= d->iw) continue;
                                float *x = img + (r * d->iw + iw) * d->ic + g * ICG;
                                const float *v = cs + (q * d->ow + ow) * ld + tap * ICG;
                                for (int64_t i = 0; i < ICG; ++i) x[i] += v[i];
                            }
                        }
                    }
                }
                row0 += nrows;
            }
        }
    }
}

static void nhwc_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    switch (c->dir) {
    case BDNN_DIR_FWD:
        if (((const nhwc_plan_t *)c->plan)->dc)
            bdnn_dc_execute(c, ((const nhwc_plan_t *)c->plan)->dc, a);
        else
            run_rows(c, a->src, a->wei, a->bias, a->dst);
        break;
    case BDNN_DIR_BWD_DATA:
        if (((const nhwc_plan_t *)c->plan)->dc)
            bdnn_dc_execute(c, ((const nhwc_plan_t *)c->plan)->dc, a);
        else if (((const nhwc_plan_t *)c->plan)->col)
            run_bwd_col(c, a->diff_dst, a->wei, a->bias, a->diff_src);
        else
            run_rows(c, a->diff_dst, a->wei, a->bias, a->diff_src);
        break;
    default:
        if (((const nhwc_plan_t *)c->plan)->bwt)
            run_bwt(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
        else
            run_bww(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
    }
}

const conv_impl_ops_t bdnn_conv_gemm_nhwc_ops = {
    nhwc_init, nhwc_weights_bytes, nhwc_pack_weights, nhwc_execute, nhwc_fini, NULL,
};

/* The same functions; conv_api.c gives these rows the blocked layouts. */
const conv_impl_ops_t bdnn_conv_gemm_blocked_ops = {
    nhwc_init, nhwc_weights_bytes, nhwc_pack_weights, nhwc_execute, nhwc_fini, NULL,
};

const void *bdnn_blocked_dc_plan(const struct bdnn_conv *c) {
    if (c->impl->ops != &bdnn_conv_gemm_blocked_ops || c->dir != BDNN_DIR_FWD) return NULL;
    return ((const nhwc_plan_t *)c->plan)->dc;
}
