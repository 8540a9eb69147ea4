/* gemm_conv_nhwc / gemm_conv_blocked's shared part and gather route (rows
 * <family>:<isa>:gather), and the blocked rows' direct route (<family>:<isa>:direct, its
 * kernels in conv_dblk.c): conv_gemm_nhwc.h has the method. The gather route takes every
 * problem of the family's domain the other routes leave: forward and backward data by
 * rows of points (run_rows), backward weights by (tap, ic) columns (run_bww). */
#include "conv_gemm_nhwc.h"

void bdnn_nhwc_fini(struct bdnn_conv *c) {
    nhwc_plan_t *p = c->plan;
    if (!p) return;
    bdnn_dc_fini(p->dc);
    bdnn_nhwc_bwt_fini(p->bwt, c->nthr);
    bdnn_nhwc_win_fini(p->win, c->nthr);
    bdnn_nhwc_dbw_fini(p->dbw, c->nthr);
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

int bdnn_nhwc_plan_new(struct bdnn_conv *c, nhwc_plan_t **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    if (c->lp || c->operands != OPERANDS_F32 || u->pack || u->mr > MAX_MR)
        return BDNN_STATUS_UNIMPLEMENTED;
    if (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SUM_SCALE_DROPPED
            && c->fault != BDNN_FAULT_CRASH && c->fault != BDNN_FAULT_PADDING_GARBAGE)
        return BDNN_STATUS_UNIMPLEMENTED;
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, NR = u->nr;
    if (c->attr.layout != BDNN_LAYOUT_NHWC) {
        /* Blocked: a tile's columns inside one block; a group's channels whole blocks. */
        const int64_t B = act_of(c, d->ic, 1).B;
        if (B % NR) return BDNN_STATUS_UNIMPLEMENTED;
        if (G > 1 && (ICG % B || OCG % B)) return BDNN_STATUS_UNIMPLEMENTED;
    }
    nhwc_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    *out = p;
    return BDNN_STATUS_OK;
}

/* The GEMM of each instance, by direction (the col2im route then redefines N and K). */
void bdnn_nhwc_plan_gemm(const struct bdnn_conv *c, nhwc_plan_t *p) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    p->taps = taps_of(d);
    p->k_splits = 1;
    switch (c->dir) {
    case BDNN_DIR_FWD:
        p->M = out_points(d), p->N = OCG, p->ch = ICG, p->n_inst = d->mb * G;
        break;
    case BDNN_DIR_BWD_DATA:
        p->M = in_points(d), p->N = ICG, p->ch = OCG, p->n_inst = d->mb * G;
        break;
    default:
        p->M = OCG, p->N = p->taps * ICG, p->ch = ICG, p->n_inst = G;
    }
}

/* The direct route: on channel blocks forward and backward data at unit stride, where the
 * row's ISA has a direct kernel (conv_dblk.c: the read tensor used in place, no im2col),
 * and on both layouts backward weights (conv_gemm_nhwc_dbw.c). */
int bdnn_nhwc_direct_applies(const struct bdnn_conv *c) {
    return c->attr.layout != BDNN_LAYOUT_NHWC || c->dir == BDNN_DIR_BWD_WEIGHTS;
}

static int direct_init(struct bdnn_conv *c) {
    nhwc_plan_t *p;
    const int st = bdnn_nhwc_plan_new(c, &p);
    if (st != BDNN_STATUS_OK) return st;
    return c->dir == BDNN_DIR_BWD_WEIGHTS ? bdnn_nhwc_dbw_init(c, &p->dbw)
                                          : bdnn_dc_init(c, ukr_of(c), &p->dc);
}

static int gather_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t G = d->g, MR = u->mr, NR = u->nr;
    const int64_t nthr = c->nthr;
    nhwc_plan_t *p;
    const int st = bdnn_nhwc_plan_new(c, &p);
    if (st != BDNN_STATUS_OK) return st;
    bdnn_nhwc_plan_gemm(c, p);
    const int64_t nc_panels = c->dir == BDNN_DIR_BWD_WEIGHTS ? BWW_NC_PANELS : NC_PANELS;
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
        if (conv_scratch((void **)&p->ap[t], sizeof(float) * (size_t)(p->mc * NKC)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
            if (conv_scratch((void **)&p->bp[t], sizeof(float) * (size_t)(p->nc * (NKC + 1))))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && p->k_splits > 1) {
        if (conv_scratch((void **)&p->partials,
                         sizeof(float) * (size_t)(p->k_splits * G * p->M * p->N)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    } else if (c->dir == BDNN_DIR_BWD_WEIGHTS) {   /* one C block per thread */
        p->cs = calloc((size_t)nthr, sizeof(float *));
        if (!p->cs) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < nthr; ++t) {
            if (conv_scratch((void **)&p->cs[t], sizeof(float) * (size_t)(p->mc * p->nc)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

size_t bdnn_nhwc_weights_bytes(const struct bdnn_conv *c) {
    const nhwc_plan_t *p = c->plan;
    if (p->dc) return bdnn_dc_weights_bytes(c, p->dc);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return 0;
    return sizeof(float) * (size_t)(c->d.g * p->K * p->Np);
}

/* Packed weights: per group, per k block, per NR panel of columns, a kc x NR micro-panel
 * (element (k, j) at [k*NR + j], columns past N zero). Block b of group g starts at
 * (g * K + k0) * Np; its panel q at that + q * kc * NR. B element (k = tap*ch + c, j) is
 * W[oc][ic][tap] with (oc, ic) = (j, c) forward and (c, j) backward data. */
void bdnn_nhwc_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
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
    const int64_t step = ukr_of(c)->row_step ? ukr_of(c)->row_step : MR;
    for (int64_t m = m0; m < m1; m += MR) {
        float *panel = ap + (m - m0) * blk.kc;
        /* the rows the micro-kernel reads: a short panel's live ones rounded up to its
         * row step (an inner product of 2 images packed 12 rows, 10 of them zeros) */
        const int64_t rows = min64(MR, bdnn_div_up(m1 - m, step) * step);
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
            for (int64_t r = 0; r < rows; ++r) {
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
                    for (int64_t s = 1;
                         s < p->k_splits - (c->fault == BDNN_FAULT_SPLIT_DROPPED); ++s)
                        v += p->partials[(s * rows + row) * N + j];
                    w[ic * taps + tap] = v;
                }
        }
        if (diff_bias) bdnn_nhwc_bias_sums(c, diff_dst, diff_bias);
    }
}

/* diff_bias: per channel, the sum over every (n, point) of diff_dst. An orphaned omp for,
 * called by every thread of the caller's parallel region: threads own ranges of up to 16
 * channels inside one block, the inner loop runs along a point's channels. */
void bdnn_nhwc_bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias) {
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

void bdnn_nhwc_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
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
            bdnn_nhwc_run_col2im(c, a->diff_dst, a->wei, a->bias, a->diff_src);
        else
            run_rows(c, a->diff_dst, a->wei, a->bias, a->diff_src);
        break;
    default:
        if (((const nhwc_plan_t *)c->plan)->dbw)
            bdnn_nhwc_run_dbw(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
        else if (((const nhwc_plan_t *)c->plan)->bwt)
            bdnn_nhwc_run_bwt(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
        else if (((const nhwc_plan_t *)c->plan)->win)
            bdnn_nhwc_run_win(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
        else
            run_bww(c, a->src, a->diff_dst, a->diff_wei, (float *)a->bias);
    }
}

const conv_impl_ops_t bdnn_conv_nhwc_direct_ops = {
    direct_init, bdnn_nhwc_weights_bytes, bdnn_nhwc_pack_weights, bdnn_nhwc_execute, bdnn_nhwc_fini,
    NULL,
};

const conv_impl_ops_t bdnn_conv_nhwc_gather_ops = {
    gather_init, bdnn_nhwc_weights_bytes, bdnn_nhwc_pack_weights, bdnn_nhwc_execute, bdnn_nhwc_fini,
    NULL,
};

const void *bdnn_blocked_dc_plan(const struct bdnn_conv *c) {
    if (!(c->impl->flags & CONV_ROW_BLOCKED_DC) || c->dir != BDNN_DIR_FWD) return NULL;
    return ((const nhwc_plan_t *)c->plan)->dc;
}
