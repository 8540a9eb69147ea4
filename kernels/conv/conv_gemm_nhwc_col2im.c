/* gemm_conv_nhwc's col2im route (rows gemm_conv_nhwc:<isa>:col2im): backward data on
 * channels last, strided or with few input channels per group (2 * ICG <= NR), without
 * post-ops, by output rows: C[o][(tap, ic)] = diff_dst[o][:] x W^T added into diff_src.
 * Preconditions: the row's applies (bdnn_nhwc_col2im_applies). */
#include "conv_gemm_nhwc.h"

int bdnn_nhwc_col2im_applies(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t ICG = d->ic / d->g, NR = ukr_of(c)->nr;
    /* Backward data by input points wastes products in two cases: few input channels
     * per group (ResNet's first layer: 3 live columns in an NR-wide C tile), and any
     * stride, where an input point's A row is zero for every tap the stride does not
     * divide (1x1 stride 2: half the rows of the live panels; 3x3 stride 2: three
     * quarters of each row). Those run the other way round: one GEMM row per output
     * point, C[o][(tap, ic)] = diff_dst[o][:] x W^T, added into diff_src (col2im), which
     * multiplies no zero; the adds are 1/OCG of the products. */
    /* Channels last only (B == C): bdnn_nhwc_run_col2im's A rows and col2im address
     * diff_dst and diff_src as [point][C]. The blocked rows keep the input-point path
     * (run_rows), with its waste: generalizing the col2im to blocks is not done yet. */
    const int strided = d->sd > 1 || d->sh > 1 || d->sw > 1;
    return c->attr.layout == BDNN_LAYOUT_NHWC && c->dir == BDNN_DIR_BWD_DATA
        && (2 * ICG <= NR || strided) && c->n_post_ops == 0;
}

static int col2im_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t ICG = d->ic / d->g, OCG = d->oc / d->g, MR = u->mr, NR = u->nr;
    const int64_t nthr = c->nthr;
    nhwc_plan_t *p;
    const int st = bdnn_nhwc_plan_new(c, &p);
    if (st != BDNN_STATUS_OK) return st;
    bdnn_nhwc_plan_gemm(c, p);
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
        if (conv_scratch((void **)&p->ap[t], sizeof(float) * (size_t)(rows * NKC + u->vlen)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&p->cs[t], sizeof(float) * (size_t)(rows * p->Np)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
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

void bdnn_nhwc_run_col2im(const struct bdnn_conv *c, const float *diff_dst, const float *wp,
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

const conv_impl_ops_t bdnn_conv_nhwc_col2im_ops = {
    col2im_init, bdnn_nhwc_weights_bytes, bdnn_nhwc_pack_weights, bdnn_nhwc_execute, bdnn_nhwc_fini,
    NULL,
};
