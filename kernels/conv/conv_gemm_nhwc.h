/* The GEMM family on channels last and channel blocks (gemm_conv_nhwc, gemm_conv_blocked):
 * what its routes share. Each route is a row of the table (conv_api.c) with the predicate
 * of its domain:
 *   direct  (blocked) forward and unit-stride backward data: conv_dblk.c's kernels;
 *           (both) backward weights with taps along w: conv_gemm_nhwc_dbw.c
 *   taps    backward weights by taps, no im2col: conv_gemm_nhwc_taps.c
 *   window  (channels last) backward weights with few input channels, each output
 *           point's input window read in place: conv_gemm_nhwc_window.c
 *   col2im  (channels last) backward data by output rows: conv_gemm_nhwc_col2im.c
 *   gather  whatever the others leave: conv_gemm_nhwc.c (run_rows, run_bww)
 * conv_gemm_nhwc.c also holds the plan, the weights reorder and execution.
 *
 * gemm_conv_nhwc and gemm_conv_blocked: f32 convolution on channels-last activations
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
 * im2col); with fewer on channels last by windows (run_win: each output point's taps one
 * run of an interleaved copy of its input rows, ResNet's first layer); the gather row
 * (run_bww) keeps the rest.
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
#ifndef BDNN_CONV_GEMM_NHWC_H
#define BDNN_CONV_GEMM_NHWC_H

#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_dblk.h"
#include "conv_impl.h"

/* The helpers below are defined here once and compiled into each route's file that uses
 * them as the file-local functions they are. */
#define NHWC_HELPER static __attribute__((unused))

/* Column blocks of forward and backward data are up to NC_PANELS micro-panels wide: each
 * work item packs its A rows once per k block and reuses them across the block's panels,
 * so a wide block packs them fewer times (a GEMM thousands of columns wide, an inner
 * product's, repacked A once per 8 panels before); the C block it accumulates stays in
 * L2 at MC_PANELS rows. */
enum { NKC = 256, MC_PANELS = 8, NC_PANELS = 64, BWW_NC_PANELS = 4, MAX_MR = 32 };
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
    struct bdnn_win_plan *win;   /* ... by windows: its plan (run_win) */
    struct bdnn_dbw_plan *dbw;   /* ... by direct convolution: its plan (run_dbw) */
} nhwc_plan_t;
typedef struct bdnn_win_plan win_plan_t;

/* An activation tensor's geometry: C channels of `points` points per image in blocks of
 * B channels (B = C: channels last); img: an image's elements, padded tail included. */
typedef struct { int64_t C, points, B, img; } act_t;

NHWC_HELPER act_t act_of(const struct bdnn_conv *c, int64_t C, int64_t points) {
    const int layout = c->attr.layout;
    const int64_t B = bdnn_layout_block(layout) ? bdnn_layout_block(layout) : (C > 0 ? C : 1);
    return (act_t){C, points, B, bdnn_div_up(C, B) * B * points};
}
/* Channel ch of point pt, from the image's first element. One block (channels last): no
 * division, the packing loops call these per tap and point. */
NHWC_HELPER inline int64_t at(const act_t *t, int64_t ch, int64_t pt) {
    if (t->B == t->C) return pt * t->B + ch;
    return (ch / t->B) * t->points * t->B + pt * t->B + ch % t->B;
}
/* Channels contiguous from ch on (to the end of its block). */
NHWC_HELPER inline int64_t run_from(const act_t *t, int64_t ch) {
    return t->B == t->C ? t->C - ch : t->B - ch % t->B;
}
NHWC_HELPER const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}
NHWC_HELPER int64_t taps_of(const bdnn_conv_desc_t *d) { return d->kd * d->kh * d->kw; }
NHWC_HELPER int64_t in_points(const bdnn_conv_desc_t *d) { return d->id * d->ih * d->iw; }
NHWC_HELPER int64_t out_points(const bdnn_conv_desc_t *d) { return d->od * d->oh * d->ow; }
NHWC_HELPER int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Weights written in one pass (a 1x1's, an inner product's, from few points) from this
 * size on are stored past the caches: each store then reads no old line, where the
 * products per weight are too few to hide that read (an inner product of 16 images into
 * 2048 x 1000 weights). From BWT_STREAM_MIN_BYTES_SUMS on too where each weight sums at
 * least BWT_STREAM_MIN_POINTS points (16 images into 512 x 1000 weights): a thread's
 * half of them fills much of its L2, which plain stores then take from the operands its
 * next tiles read; from fewer points the weights come back in cache on the next
 * execution faster than from memory (an inner product at mb1).
 * Smaller ones stay in L2, where the plain store is the faster; weights accumulated over
 * several k blocks are never streamed (the last pass reads each line anyway). Backward
 * weights' routes written in one pass (taps, pointwise) follow it. */
enum { BWT_STREAM_MIN_BYTES = 4 * 1024 * 1024, BWT_STREAM_MIN_BYTES_SUMS = 1024 * 1024,
       BWT_STREAM_MIN_POINTS = 16 };
NHWC_HELPER int bdnn_bwt_streams_weights(int64_t bytes, int64_t points) {
    return bytes >= BWT_STREAM_MIN_BYTES
        || (bytes >= BWT_STREAM_MIN_BYTES_SUMS && points >= BWT_STREAM_MIN_POINTS);
}

/* conv_gemm_nhwc.c: a new plan (c->plan) after the checks every route makes (f32 fast
 * path, the defects the family carries, blocks its tiles fit), UNIMPLEMENTED otherwise;
 * the GEMM each instance is (M, N, ch, instances); the ops every route shares. */
int bdnn_nhwc_plan_new(struct bdnn_conv *c, nhwc_plan_t **out);
void bdnn_nhwc_plan_gemm(const struct bdnn_conv *c, nhwc_plan_t *p);
void bdnn_nhwc_fini(struct bdnn_conv *c);
size_t bdnn_nhwc_weights_bytes(const struct bdnn_conv *c);
void bdnn_nhwc_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed);
void bdnn_nhwc_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a);
/* diff_bias (an orphaned omp for: every thread of the caller's region calls it). */
void bdnn_nhwc_bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias);
/* The taps route (conv_gemm_nhwc_taps.c): its plan (UNIMPLEMENTED, nothing allocated,
 * for fewer than NR/2 input channels per group), teardown and loops. */
int bdnn_nhwc_bwt_init(struct bdnn_conv *c, const conv_gemm_ukr_t *row_ukr, void **out);
void bdnn_nhwc_bwt_fini(void *plan, int nthr);
void bdnn_nhwc_run_bwt(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                       float *diff_wei, float *diff_bias);
/* The window route (conv_gemm_nhwc_window.c): its plan (UNIMPLEMENTED, nothing
 * allocated, outside its domain), teardown and loops. */
int bdnn_nhwc_win_init(struct bdnn_conv *c, win_plan_t **out);
void bdnn_nhwc_win_fini(win_plan_t *w, int nthr);
void bdnn_nhwc_run_win(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                       float *diff_wei, float *diff_bias);
/* Backward weights on the direct route (conv_gemm_nhwc_dbw.c): its plan (UNIMPLEMENTED,
 * nothing allocated, outside its domain), teardown and loops. */
int bdnn_nhwc_dbw_init(struct bdnn_conv *c, struct bdnn_dbw_plan **out);
void bdnn_nhwc_dbw_fini(struct bdnn_dbw_plan *q, int nthr);
void bdnn_nhwc_run_dbw(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                       float *diff_wei, float *diff_bias);
/* The col2im route's loops (conv_gemm_nhwc_col2im.c). */
void bdnn_nhwc_run_col2im(const struct bdnn_conv *c, const float *diff_dst, const float *wp,
                          const float *bias, float *diff_src);

#endif /* BDNN_CONV_GEMM_NHWC_H */
