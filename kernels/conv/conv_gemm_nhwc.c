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
 * Forward and backward data write C straight into dst / diff_src (row stride OC / IC: a
 * group is a column range of the rows). Backward weights writes C into a scratch
 * [g][oc][(tap, ic)] and transposes it into the user's [g][oc][ic][tap] at the end (the
 * weights are small; the transposition lets B's rows be contiguous channel runs).
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

#include "conv_impl.h"

enum { NKC = 256, MC_PANELS = 8, NC_PANELS = 8, BWW_NC_PANELS = 4, MAX_MR = 32 };

/* A k block: K positions [k0, k0 + kc). */
typedef struct { int64_t k0, kc; } kblk_t;

typedef struct {
    int64_t M, N, K;        /* per instance */
    int64_t ch, taps;       /* forward/backward data: K = taps * ch (k = tap * ch + c) */
    int64_t mc, nc;         /* rows and columns of a work item (multiples of MR, NR) */
    int64_t n_rb, n_cb, n_inst, n_items;
    int64_t Np;             /* N rounded up to NR: packed weights' columns per k */
    int64_t k_splits;       /* backward weights: ranges of K reduced into partials */
    int direct;             /* forward / backward data: A read in place (direct_fn) */
    int64_t n_blk;
    kblk_t *blk;
    float **ap, **bp;       /* per thread: the A block (mc x KC), B block (KC x nc) */
    float *partials;        /* backward weights: k_splits x G x M x N */
} nhwc_plan_t;

/* An activation tensor's geometry: C channels of `points` points per image in blocks of
 * B channels (B = C: channels last); img: an image's elements, padded tail included. */
typedef struct { int64_t C, points, B, img; } act_t;

static act_t act_of(const struct bdnn_conv *c, int64_t C, int64_t points) {
    const int layout = c->attr.layout;
    const int64_t B = layout == BDNN_LAYOUT_BLOCKED16 ? 16
                    : layout == BDNN_LAYOUT_BLOCKED8 ? 8 : (C > 0 ? C : 1);
    return (act_t){C, points, B, bdnn_div_up(C, B) * B * points};
}
/* Channel ch of point pt, from the image's first element. */
static inline int64_t at(const act_t *t, int64_t ch, int64_t pt) {
    return (ch / t->B) * t->points * t->B + pt * t->B + ch % t->B;
}
/* Channels contiguous from ch on (to the end of its block). */
static inline int64_t run_from(const act_t *t, int64_t ch) { return t->B - ch % t->B; }

static const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}
static int64_t taps_of(const bdnn_conv_desc_t *d) { return d->kd * d->kh * d->kw; }
static int64_t in_points(const bdnn_conv_desc_t *d) { return d->id * d->ih * d->iw; }
static int64_t out_points(const bdnn_conv_desc_t *d) { return d->od * d->oh * d->ow; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void nhwc_fini(struct bdnn_conv *c) {
    nhwc_plan_t *p = c->plan;
    if (!p) return;
    for (int t = 0; t < c->nthr; ++t) {
        if (p->ap) free(p->ap[t]);
        if (p->bp) free(p->bp[t]);
    }
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
    if (c->dir != BDNN_DIR_BWD_WEIGHTS) p->K = p->taps * p->ch;
    else p->K = d->mb * out_points(d);
    /* A channel-blocked 1x1 convolution at stride 1 without padding reads, for C row m,
     * point m of the other tensor: with a block exactly the micro-kernel's width, A's
     * micro-panels are MR consecutive points of a block, read in place (direct_fn). */
    const int64_t B = act_of(c, d->ic, 1).B;
    p->direct = c->attr.layout != BDNN_LAYOUT_NHWC && c->dir != BDNN_DIR_BWD_WEIGHTS
             && u->direct_fn && B == NR && p->taps == 1 && d->sd == 1 && d->sh == 1
             && d->sw == 1 && d->pd == 0 && d->ph == 0 && d->pw == 0;
    p->Np = bdnn_div_up(p->N, NR) * NR;
    /* Blocks: as large as the micro-tiling allows, made smaller until every thread has at
     * least two work items (mb1 late layers: 49 points, a few column blocks). */
    p->mc = min64(MC_PANELS * MR, bdnn_div_up(p->M, MR) * MR);
    p->nc = min64(nc_panels * NR, p->Np);
    for (;;) {
        p->n_rb = bdnn_div_up(p->M, p->mc);
        p->n_cb = bdnn_div_up(p->N, p->nc);
        p->n_items = p->n_inst * p->n_rb * p->n_cb;
        if (p->n_items >= 2 * nthr || (p->nc == NR && p->mc == MR)) break;
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
            if (p->direct) part = bdnn_div_up(part, B) * B;   /* blocks start at a block */
            for (int64_t t = 0; t < p->taps; ++t)
                for (int64_t c0 = 0; c0 < p->ch; c0 += part)
                    p->blk[b++] = (kblk_t){t * p->ch + c0, min64(part, p->ch - c0)};
        } else {
            for (int64_t t = 0; t < p->taps; t += taps_per)
                p->blk[b++] = (kblk_t){t * p->ch, min64(taps_per, p->taps - t) * p->ch};
        }
        p->n_blk = b;
    } else if (nthr > 1 && p->n_items < 2 * nthr && p->K >= 2 * NKC * nthr) {
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
            p->bp[t] = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->nc * NKC));
            if (!p->bp[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
        p->partials = bdnn_aligned_alloc(sizeof(float)
                                         * (size_t)(p->k_splits * G * p->M * p->N));
        if (!p->partials) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static size_t nhwc_weights_bytes(const struct bdnn_conv *c) {
    const nhwc_plan_t *p = c->plan;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return 0;
    return sizeof(float) * (size_t)(c->d.g * p->K * p->Np);
}

/* Packed weights: per group, per k block, per NR panel of columns, a kc x NR micro-panel
 * (element (k, j) at [k*NR + j], columns past N zero). Block b of group g starts at
 * (g * K + k0) * Np; its panel q at that + q * kc * NR. B element (k = tap*ch + c, j) is
 * W[oc][ic][tap] with (oc, ic) = (j, c) forward and (c, j) backward data. */
static void nhwc_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const nhwc_plan_t *p = c->plan;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = ukr_of(c)->nr, G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    const int64_t taps = p->taps, fwd = c->dir == BDNN_DIR_FWD;
    const float *w = wei;
    float *out = packed;
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
 * (padding) or, backward, the stride does not divide it: point_at(row_origin(row),
 * tap_offset(tap)). The origin (forward: the input coordinates of tap 0, o*s - p;
 * backward data: i + p) is found once per row and micro-panel, a tap's offsets k*(d+1)
 * once per tap, so the packing loops do no division but the strides'. */
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

static xyz_t tap_offset(const bdnn_conv_desc_t *d, int64_t tap) {
    const int64_t kw = tap % d->kw, kh = tap / d->kw % d->kh, kd = tap / (d->kw * d->kh);
    return (xyz_t){kd * (d->dd + 1), kh * (d->dh + 1), kw * (d->dw + 1)};
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
 * [k*MR + r]). live[i]: whether micro-panel i has any row that reads the tensor. */
static void pack_a_rows(const struct bdnn_conv *c, const nhwc_plan_t *p, const act_t *t,
                        const float *img, int64_t ch0, int64_t m0, int64_t m1, kblk_t blk,
                        float *ap, unsigned char *live) {
    const int64_t MR = ukr_of(c)->mr;
    for (int64_t m = m0; m < m1; m += MR) {
        float *panel = ap + (m - m0) * blk.kc;
        unsigned char any = 0;
        xyz_t origin[MAX_MR];
        for (int64_t r = 0; r < MR && m + r < m1; ++r) origin[r] = row_origin(c, m + r);
        for (int64_t k = 0; k < blk.kc;) {
            /* one tap's channels [c0, c0 + run) of each row: its point found once, then
             * copied a block at a time (the next block is a block plane further on) */
            const int64_t kk = blk.k0 + k, tap = kk / p->ch, c0 = kk % p->ch;
            const int64_t run = min64(p->ch - c0, blk.kc - k);
            const int64_t first = ch0 + c0, plane = t->points * t->B;
            const int64_t o0 = first % t->B, base = at(t, first, 0);
            const xyz_t off = tap_offset(&c->d, tap);
            for (int64_t r = 0; r < MR; ++r) {
                const int64_t pt = m + r < m1 ? point_at(c, origin[r], off) : -1;
                float *a = panel + k * MR + r;
                if (pt < 0) {
                    for (int64_t i = 0; i < run; ++i) a[i * MR] = 0.0f;
                    continue;
                }
                any = 1;
                const float *x = img + base + pt * t->B;   /* in block first / B */
                for (int64_t i = 0, o = o0, w; i < run; i += w, o = 0) {
                    w = min64(run - i, t->B - o);
                    for (int64_t j = 0; j < w; ++j) a[(i + j) * MR] = x[j];
                    x += plane - o;                            /* the next block's start */
                }
            }
            k += run;
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
            /* direct: every panel read in place, none packed */
            const int64_t m_edge = p->direct ? m1 : m0;
            for (int64_t b = 0; b < p->n_blk; ++b) {
                const kblk_t blk = p->blk[b];
                if (m_edge < m1)
                    pack_a_rows(c, p, &tin, img, g * p->ch, m_edge, m1, blk, ap, live);
                const float *wblk = wp + (g * p->K + blk.k0) * p->Np;
                const float *adirect = img + at(&tin, g * p->ch + blk.k0, 0);
                for (int64_t j = j0; j < j0 + ncols; j += NR) {
                    const int64_t nr = min64(NR, j0 + ncols - j);
                    const float *bpanel = wblk + (j / NR) * blk.kc * NR;
                    float *cj = oimg + at(&tout, g * N + j, 0);
                    for (int64_t m = m0; m < m_edge; m += MR)
                        u->direct_fn(blk.kc, adirect + m * tin.B, tin.points * tin.B, bpanel,
                                     NR, cj + m * ldc, ldc, min64(MR, m1 - m), nr);
                    for (int64_t m = m_edge; m < m1; m += MR) {
                        if (!live[(m - m_edge) / MR]) continue;
                        u->fn(blk.kc, ap + (m - m_edge) * blk.kc, bpanel, NR, cj + m * ldc,
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
    for (int64_t m = m0; m < m1; m += MR) {
        const int64_t mr = min64(MR, m1 - m);
        float *panel = ap + (m - m0) * kc;
        for (int64_t k = 0; k < kc; ++k) {
            const int64_t n = (k0 + k) / OSP, op = (k0 + k) % OSP;
            const float *img = diff_dst + n * t.img;
            float *a = panel + k * MR;
            for (int64_t r = 0, w; r < mr; r += w) {   /* runs inside one block */
                const int64_t ch = g * OCG + m + r;
                w = min64(mr - r, run_from(&t, ch));
                const float *x = img + at(&t, ch, op);
                for (int64_t i = 0; i < w; ++i) a[r + i] = x[i];
            }
            for (int64_t r = mr; r < MR; ++r) a[r] = 0.0f;
        }
    }
}

static void pack_b_bww(const struct bdnn_conv *c, const nhwc_plan_t *p, const float *src,
                       int64_t g, int64_t j0, int64_t ncols, int64_t k0, int64_t kc,
                       float *bp) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = ukr_of(c)->nr, ICG = p->ch, OSP = out_points(d);
    const act_t t = act_of(c, d->ic, in_points(d));
    const struct bdnn_conv fwd_view = {.d = *d, .dir = BDNN_DIR_FWD};
    for (int64_t k = 0; k < kc; ++k) {
        const int64_t n = (k0 + k) / OSP, op = (k0 + k) % OSP;
        const float *im = src + n * t.img;
        const xyz_t origin = row_origin(&fwd_view, op);
        for (int64_t j = j0; j < j0 + bdnn_div_up(ncols, NR) * NR;) {
            const int64_t q = (j - j0) / NR, jj = (j - j0) % NR;
            float *b = bp + q * kc * NR + k * NR + jj;
            /* a run of one tap's channels, within this panel */
            int64_t run = min64(NR - jj, j0 + ncols - j);
            if (run <= 0) {   /* the last panel's columns past the block: zero */
                for (int64_t i = 0; i < NR - jj; ++i) b[i] = 0.0f;
                j += NR - jj;
                continue;
            }
            const int64_t tap = j / ICG, ic = j % ICG;
            run = min64(min64(run, ICG - ic), run_from(&t, g * ICG + ic));
            const int64_t pt = point_at(&fwd_view, origin, tap_offset(d, tap));
            if (pt < 0) for (int64_t i = 0; i < run; ++i) b[i] = 0.0f;
            else memcpy(b, im + at(&t, g * ICG + ic, pt), sizeof(float) * (size_t)run);
            j += run;
        }
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
        for (int64_t unit = tid; unit < units; unit += c->nthr) {
            int64_t rest = unit;
            const int64_t cb = rest % p->n_cb; rest /= p->n_cb;
            const int64_t rb = rest % p->n_rb; rest /= p->n_rb;
            const int64_t g = rest % G, split = rest / G;
            const int64_t m0 = rb * p->mc, m1 = min64(m0 + p->mc, M);
            const int64_t j0 = cb * p->nc, ncols = min64(p->nc, N - j0);
            const int64_t ks = split * per_split, ke = min64(ks + per_split, K);
            float *cblk = p->partials + ((split * G + g) * M + m0) * N + j0;
            if (ks >= ke) {   /* an empty range (K short, or mb 0): a zero partial */
                for (int64_t r = 0; r < m1 - m0; ++r)
                    memset(cblk + r * N, 0, sizeof(float) * (size_t)ncols);
                continue;
            }
            for (int64_t pc = ks; pc < ke; pc += NKC) {
                const int64_t kc = min64(NKC, ke - pc);
                pack_a_bww(c, diff_dst, g, m0, m1, pc, kc, ap);
                pack_b_bww(c, p, src, g, j0, ncols, pc, kc, bp);
                for (int64_t j = j0; j < j0 + ncols; j += NR) {
                    const int64_t nr = min64(NR, j0 + ncols - j);
                    for (int64_t m = m0; m < m1; m += MR)
                        u->fn(kc, ap + (m - m0) * kc, bp + ((j - j0) / NR) * kc * NR, NR,
                              cblk + (m - m0) * N + (j - j0), N, min64(MR, m1 - m), nr,
                              pc == ks ? UKR_WRITE : UKR_ACCUMULATE, NULL, 0.0f, 0.0f);
                }
            }
        }
#pragma omp barrier
        /* Sum the partials and transpose (tap, ic) into the user's (ic, tap), one
         * (g, oc) row per iteration. */
        const int64_t taps = p->taps, ICG = p->ch, rows = G * M;
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            float *w = diff_wei + row * N;
            for (int64_t j = 0; j < N; ++j) {
                float v = p->partials[row * N + j];
                for (int64_t s = 1; s < p->k_splits; ++s) v += p->partials[(s * rows + row) * N + j];
                w[(j % ICG) * taps + j / ICG] = v;
            }
        }
        /* diff_bias: per channel, the sum over every (n, point) of diff_dst; threads
         * own ranges of up to 16 channels inside one block, the inner loop runs along
         * a point's channels. */
        if (diff_bias) {
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
    }
}

static void nhwc_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    switch (c->dir) {
    case BDNN_DIR_FWD:
        run_rows(c, a->src, a->wei, a->bias, a->dst);
        break;
    case BDNN_DIR_BWD_DATA:
        run_rows(c, a->diff_dst, a->wei, a->bias, a->diff_src);
        break;
    default:
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
