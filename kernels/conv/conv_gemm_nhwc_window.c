/* gemm_conv_nhwc's window route (rows gemm_conv_nhwc:<isa>:window): backward weights on
 * channels last with few input channels per group (a first layer's 3), where the taps
 * route's columns (input channels) would leave most of each tile empty.
 *
 * For one output row (n, od, oh), copy the KD * KH input rows its taps read, one group's
 * channels, interleaved point by point into a zero-padded row: point x holds, for every
 * (kd, kh), the ICG channels of input column x - pw (zeros outside the input). Without
 * dilation along w, output point ow's taps are then the KW consecutive points from
 * ow * sw on: its window, Mw = KW * KD * KH * ICG consecutive floats, (kw, kd, kh, ic) in
 * order, and the next point's window starts sw * KD * KH * ICG floats on. So the weight
 * gradient is one GEMM per output row with the roles of the taps route swapped:
 *
 *   C[(kw, kd, kh, ic)][oc] += sum over ow of window(ow)[(kw, kd, kh, ic)] * diff_dst(ow)[oc]
 *
 * A (the micro-kernel's MR broadcast rows) is the windows read in place, k steps
 * sw * KD * KH * ICG floats apart (overlapping where sw < KW); B (its NR-wide vectors) is
 * the output row of diff_dst read in place, k steps a point's OC channels apart; K is the
 * row's OW points. ResNet-50's first layer: 147 window rows (12 tiles of 12 and one of 3)
 * on two whole 32-wide panels of output channels, where the plain route packs its 147
 * (ic, kh, kw) columns into five 32-wide panels per k block. The taps outside the input
 * in d and h multiply zeros (a first layer's few border rows).
 *
 * In 1D and 2D with one group and no dilation along h, the rows form a ring (struct
 * bdnn_win_plan): each output row copies only the input rows the row before did not.
 *
 * Loops, outermost first:
 *   thread     a contiguous range of output rows (n, od, oh), its own C (every group, and
 *              in a ring every rotation), zeroed first
 *   group      the interleaved copy of the row's input rows (a ring: the rows it adds)
 *   panel      NR output channels (its slice of the diff_dst row stays in L1) ...
 *   tile       ... MR window rows, K = OW (UKR_ACCUMULATE)
 * then every thread's C (and rotation's) is added, row by row in a fixed order (the same
 * sums on every run with the same threads), into thread 0's, which goes into the user's
 * [g][oc][ic][kd][kh][kw]; diff_bias by bdnn_nhwc_bias_sums.
 *
 * Domain (bdnn_nhwc_win_init): channels last, no dilation along w, whole NR panels of
 * output channels per group (B is read in place: a short panel would read past the
 * group), no negative left padding along w, at most WIN_MAX_KDH tap rows. */
#include "conv_gemm_nhwc.h"

/* tap rows (kd, kh) a window interleaves, at most (a first layer's 7; 3D 7 x 7 x 7: 49) */
enum { WIN_MAX_KDH = 128 };

struct bdnn_win_plan {
    int64_t P;           /* floats per point of the interleaved row: KD * KH * ICG */
    int64_t Mw;          /* window rows: KW * P */
    int64_t Wp;          /* points of the interleaved row: (OW - 1) * sw + KW */
    int64_t row_floats;  /* the row (Wp * P) and the rows a short tile reads past it */
    int64_t c_floats;    /* a thread's C: n_rot * G * Mw * OCG */
    /* A ring of rows (one group, 1D or 2D, no dilation along h): input row ih lives in slot
     * ih mod KH of every point, so the next output row copies only the rows it adds (2 of
     * conv1's 7 at stride 2); output row oh's tap kh is then in slot (kh + rot) mod KH,
     * rot = (oh * sh - ph) mod KH, and each rotation sums into a C of its own (n_rot = KH),
     * added in order at the end. Else every row copies all its tap rows (rotation 0). */
    int ring;
    int64_t n_rot;
    float **row, **cs;   /* per thread */
    float *zeros;        /* not a ring: a row of the input's width (IW * IC), zero, which
                            rows outside the input read (a ring zeroes their slots) */
};

void bdnn_nhwc_win_fini(win_plan_t *w, int nthr) {
    if (!w) return;
    for (int t = 0; t < nthr; ++t) {
        if (w->row) free(w->row[t]);
        if (w->cs) free(w->cs[t]);
    }
    free(w->row), free(w->cs), free(w->zeros);
    free(w);
}

int bdnn_nhwc_win_init(struct bdnn_conv *c, win_plan_t **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    if (c->attr.layout != BDNN_LAYOUT_NHWC || d->dw != 0 || d->pw < 0 || !u->pf_fn
            || OCG % u->nr || d->kd * d->kh > WIN_MAX_KDH)
        return BDNN_STATUS_UNIMPLEMENTED;
    win_plan_t *w = calloc(1, sizeof(*w));
    if (!w) return BDNN_STATUS_OUT_OF_MEMORY;
    *out = w;
    w->P = d->kd * d->kh * ICG;
    w->Mw = d->kw * w->P;
    w->Wp = d->ow > 0 ? (d->ow - 1) * d->sw + d->kw : 0;
    /* a short tile computes up to MR rows from its first (row_step rounding), the last
     * window's from its start on: MR floats past the row stay zero */
    w->row_floats = w->Wp * w->P + u->mr;
    w->ring = G == 1 && d->id == 1 && d->od == 1 && d->kd == 1 && d->pd == 0 && d->dh == 0
              && d->kh > 1;
    w->n_rot = w->ring ? d->kh : 1;
    w->c_floats = w->n_rot * G * w->Mw * OCG;
    w->row = calloc((size_t)c->nthr, sizeof(float *));
    w->cs = calloc((size_t)c->nthr, sizeof(float *));
    if (!w->row || !w->cs) return BDNN_STATUS_OUT_OF_MEMORY;
    if (!w->ring && conv_scratch((void **)&w->zeros, sizeof(float) * (size_t)(d->iw * d->ic)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t)
        if (conv_scratch((void **)&w->row[t], sizeof(float) * (size_t)w->row_floats)
                || conv_scratch((void **)&w->cs[t], sizeof(float) * (size_t)w->c_floats))
            return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

/* F(NC), the copy of NC channels a point, with NC a constant for 1 to 4 (first layers):
 * the copies then move fixed lengths. */
#define WIN_BY_CHANNELS(F, n)                                                               \
    switch (n) {                                                                            \
    case 1: F(1) break;                                                                     \
    case 2: F(2) break;                                                                     \
    case 3: F(3) break;                                                                     \
    case 4: F(4) break;                                                                     \
    default: F(n) break;                                                                    \
    }

/* Output row (n, od, oh)'s input rows of group g interleaved into row (see above): point
 * by point, so each point's P floats are written in order; a row outside the input reads
 * zero (a row of zeros the width of the input). ICG 1 to 4 (first layers) copy by fixed
 * lengths: a library call per point of 3 channels took 7% of ResNet-50's first layer. */
static void win_fill(const bdnn_conv_desc_t *d, const win_plan_t *w, const float *src,
                     const float *zeros, int64_t n, int64_t od, int64_t oh, int64_t g,
                     float *restrict row) {
    const int64_t ICG = d->ic / d->g, P = w->P, Wp = w->Wp, KDH = d->kd * d->kh, IC = d->ic;
    const int64_t x0 = d->pw < Wp ? d->pw : Wp, x1 = d->pw + d->iw < Wp ? d->pw + d->iw : Wp;
    const float *in[WIN_MAX_KDH];   /* per (kd, kh): input column 0 of its row */
    for (int64_t t = 0; t < KDH; ++t) {
        const int64_t id = od * d->sd - d->pd + t / d->kh * (d->dd + 1);
        const int64_t ih = oh * d->sh - d->ph + t % d->kh * (d->dh + 1);
        in[t] = id >= 0 && id < d->id && ih >= 0 && ih < d->ih
                    ? src + ((n * d->id + id) * d->ih + ih) * d->iw * IC + g * ICG
                    : zeros;
    }
    memset(row, 0, sizeof(float) * (size_t)(x0 * P));
    memset(row + x1 * P, 0, sizeof(float) * (size_t)((Wp - x1) * P));
#define WIN_FILL(NC)                                                                        \
    for (int64_t x = x0; x < x1; ++x) {                                                     \
        float *restrict o = row + x * P;                                                    \
        const int64_t at = (x - d->pw) * IC;                                                \
        for (int64_t t = 0; t < KDH; ++t)                                                   \
            for (int64_t i = 0; i < (NC); ++i) o[t * (NC) + i] = in[t][at + i];             \
    }
    WIN_BY_CHANNELS(WIN_FILL, ICG)
#undef WIN_FILL
}

/* Ring slot s of row (every point) from input row ih of image n, or zeros (ih outside the
 * input); the padding columns stay as zeroed once. One group (ICG = IC). */
static void win_fill_slot(const bdnn_conv_desc_t *d, const win_plan_t *w, const float *src,
                          int64_t n, int64_t ih, int64_t s, float *restrict row) {
    const int64_t IC = d->ic, P = w->P, Wp = w->Wp;
    const int64_t x0 = d->pw < Wp ? d->pw : Wp, x1 = d->pw + d->iw < Wp ? d->pw + d->iw : Wp;
    float *restrict o = row + s * IC;
    if (ih < 0 || ih >= d->ih) {
        for (int64_t x = x0; x < x1; ++x) memset(o + x * P, 0, sizeof(float) * (size_t)IC);
        return;
    }
    const float *in = src + (n * d->ih + ih) * d->iw * IC - d->pw * IC;   /* point x */
#define WIN_SLOT(NC) \
    for (int64_t x = x0; x < x1; ++x) \
        for (int64_t i = 0; i < (NC); ++i) o[x * P + i] = in[x * (NC) + i];
    WIN_BY_CHANNELS(WIN_SLOT, IC)
#undef WIN_SLOT
}

void bdnn_nhwc_run_win(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                       float *diff_wei, float *diff_bias) {
    const win_plan_t *w = ((const nhwc_plan_t *)c->plan)->win;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, G = d->g, ICG = d->ic / G, OCG = d->oc / G;
    const int64_t Mw = w->Mw, lda = d->sw * w->P, out_rows = d->mb * d->od * d->oh;
    const int nthr = c->nthr;
    /* an output row of diff_dst in lines, and its share per tile of a row */
    const int64_t next_lines = bdnn_div_up(d->ow * d->oc * (int64_t)sizeof(float), 64);
    const int64_t per_tile = bdnn_div_up(next_lines, G * (OCG / NR) * bdnn_div_up(Mw, MR));
    if (!w->ring) memset(w->zeros, 0, sizeof(float) * (size_t)(d->iw * d->ic));
#pragma omp parallel num_threads(nthr)
    {
        /* parts: one per planned thread, whatever team OpenMP gives */
        for (int tid = omp_get_thread_num(); tid < nthr; tid += omp_get_num_threads()) {
            float *cs = w->cs[tid], *row = w->row[tid];
            memset(cs, 0, sizeof(float) * (size_t)w->c_floats);
            memset(row + w->Wp * w->P, 0, sizeof(float) * (size_t)MR);
            /* ring: every slot zero, holding "outside" (-1); else the row by row copy */
            int64_t held[WIN_MAX_KDH];
            if (w->ring) {
                memset(row, 0, sizeof(float) * (size_t)(w->Wp * w->P));
                for (int64_t s = 0; s < d->kh; ++s) held[s] = -1;
            }
            const int64_t r0 = out_rows * tid / nthr, r1 = out_rows * (tid + 1) / nthr;
            for (int64_t r = r0; r < r1; ++r) {   /* output row (n, od, oh) */
                const int64_t n = r / (d->od * d->oh), od = r / d->oh % d->od, oh = r % d->oh;
                const float *b = diff_dst + r * d->ow * d->oc;
                /* the tiles read the thread's next output row of diff_dst ahead, a slice
                 * each (at mb16 each row's first tiles waited on memory for it) */
                bdnn_pf_slice_t pf = {(const char *)(b + d->ow * d->oc), 0, next_lines, 0, 0};
                int64_t rot = 0;
                if (w->ring) {   /* the slots this row's taps read that hold other rows */
                    const int64_t base = oh * d->sh - d->ph;
                    rot = (base % d->kh + d->kh) % d->kh;
                    for (int64_t kh = 0; kh < d->kh; ++kh) {
                        const int64_t ih = base + kh, s = (kh + rot) % d->kh;
                        const int64_t key = ih >= 0 && ih < d->ih ? n * d->ih + ih : -1;
                        if (held[s] != key) win_fill_slot(d, w, src, n, ih, s, row);
                        held[s] = key;
                    }
                }
                for (int64_t g = 0; g < G; ++g) {
                    if (!w->ring) win_fill(d, w, src, w->zeros, n, od, oh, g, row);
                    float *cg = cs + (rot * G + g) * Mw * OCG;
                    for (int64_t j = g * OCG; j < (g + 1) * OCG; j += NR)   /* panels */
                        for (int64_t m0 = 0; m0 < Mw; m0 += MR) {           /* tiles */
                            pf.lines = r + 1 < r1 ? min64(per_tile, next_lines - pf.col) : 0;
                            u->pf_fn(d->ow, row + m0, lda, b + j, d->oc,
                                     cg + m0 * OCG + (j - g * OCG), OCG, min64(MR, Mw - m0),
                                     NR, UKR_ACCUMULATE, pf.lines > 0 ? &pf : NULL);
                            pf.col += pf.lines;
                        }
                }
            }
        }
#pragma omp barrier
        /* every thread's C (and every rotation's) into thread 0's first, row by row: C row
         * (kw, slot, ic) of rotation rot holds tap (kw, kd, kh, ic) with slot (kd, kh), or
         * in a ring slot (kh + rot) mod KH */
        const int64_t KDH = d->kd * d->kh, KW = d->kw, taps = KDH * KW, n_rot = w->n_rot;
        float *c0 = w->cs[0];
        if (nthr > 1 || n_rot > 1) {
#pragma omp for schedule(static)
            for (int64_t gm = 0; gm < G * Mw; ++gm) {
                const int64_t g = gm / Mw, m = gm % Mw;
                const int64_t kw = m / (KDH * ICG), kdh = m / ICG % KDH, ic = m % ICG;
                float *restrict to = c0 + gm * OCG;
                for (int t = 0; t < nthr; ++t)
                    for (int64_t rot = t == 0; rot < n_rot; ++rot) {
                        const int64_t slot = (kdh + rot) % KDH;
                        const float *restrict from = w->cs[t]
                            + ((rot * G + g) * Mw + (kw * KDH + slot) * ICG + ic) * OCG;
                        for (int64_t oc = 0; oc < OCG; ++oc) to[oc] += from[oc];
                    }
            }
        }
        /* then the user's rows (g, oc): [ic][kd][kh][kw] */
#pragma omp for schedule(static)
        for (int64_t go = 0; go < G * OCG; ++go) {
            const int64_t g = go / OCG, oc = go % OCG;
            float *o = diff_wei + go * ICG * taps;
            for (int64_t ic = 0; ic < ICG; ++ic)
                for (int64_t kdh = 0; kdh < KDH; ++kdh)
                    for (int64_t kw = 0; kw < KW; ++kw)
                        o[(ic * KDH + kdh) * KW + kw] =
                            c0[(g * Mw + (kw * KDH + kdh) * ICG + ic) * OCG + oc];
        }
        if (diff_bias) bdnn_nhwc_bias_sums(c, diff_dst, diff_bias);
    }
}

int bdnn_nhwc_window_applies(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_WEIGHTS;
}

static int window_init(struct bdnn_conv *c) {
    nhwc_plan_t *p;
    const int st = bdnn_nhwc_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : bdnn_nhwc_win_init(c, &p->win);
}

const conv_impl_ops_t bdnn_conv_nhwc_window_ops = {
    window_init, bdnn_nhwc_weights_bytes, bdnn_nhwc_pack_weights, bdnn_nhwc_execute,
    bdnn_nhwc_fini, NULL,
};
