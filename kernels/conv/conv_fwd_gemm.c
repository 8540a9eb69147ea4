/* gemm_conv_fwd: forward convolution as a blocked GEMM over an implicit im2col.
 *
 * Per image n and group g the convolution is the product
 *     C[M x N] = A[M x K] * B[K x N] (+ bias per row)
 * with M = OC/G (rows: output channels), N = OD*OH*OW (columns: output points, the plain
 * dst layout, so C is dst itself with row stride N), K = IC/G*KD*KH*KW (k = (ic, kd, kh, kw)
 * in that order, which is exactly the plain weights layout, so A is the weights as given).
 * B[k][p] is the input value tap k of output point p reads, or 0 in the padding; it is never
 * materialized whole: each thread packs the kc x nc block it is about to use.
 *
 * Loops, outermost first (BLIS names):
 *   work item   (n, g, column block jc of nc, row range [m0, m1))   -- split across threads
 *   pc loop     k blocks of at most KC          -- pack B[pc:pc+kc, jc:jc+nc] once
 *   jr loop     NR-wide micro-panels of B       -- stays in L1 while...
 *   ir loop     MR-high micro-panels of A       -- ...A streams from L2 (packed at creation)
 *   micro-kernel                                -- the MR x NR tile in registers
 * The first k block writes C (with bias); later ones accumulate into it.
 *
 * Weights layout (bdnn_conv_pack_weights): per group, per k block, per MR panel, a kc x MR
 * column-major micro-panel; rows past M are zero. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"

enum { KC = 256, NC_PANELS_MAX = 8 };

/* A run of consecutive output points of one output row inside one micro-panel: output
 * columns [col, col + len) of the panel read input columns iw0 + t*SW (t < len), in input
 * row (id0 + tap depth, ih0 + tap height). */
typedef struct {
    int64_t col, len, id0, ih0, iw0;
} segment_t;

typedef struct {
    int64_t M, K, N, a_panels;
    int64_t nc;          /* columns per work item (a multiple of NR) */
    int64_t m_rows;      /* rows per work item (a multiple of MR) */
    int64_t n_col_blocks, n_row_blocks, n_items;
    float **bpack;       /* per thread: KC x nc packed B block */
    segment_t **segs;    /* per thread: segments of the current column block */
    int64_t **seg_start; /* per thread: first segment of each micro-panel (+1 sentinel) */
} gemm_plan_t;

static const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}

static void gemm_fini(struct bdnn_conv *c) {
    gemm_plan_t *p = c->plan;
    if (!p) return;
    for (int t = 0; t < c->nthr; ++t) {
        if (p->bpack) free(p->bpack[t]);
        if (p->segs) free(p->segs[t]);
        if (p->seg_start) free(p->seg_start[t]);
    }
    free(p->bpack);
    free(p->segs);
    free(p->seg_start);
    free(p);
    c->plan = NULL;
}

static int gemm_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    gemm_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->M = d->oc / d->g;
    p->K = d->ic / d->g * d->kd * d->kh * d->kw;
    p->N = d->od * d->oh * d->ow;
    p->a_panels = bdnn_div_up(p->M, u->mr);

    /* Work split: enough items for every thread to get several (load balance), column
     * blocks no wider than NC_PANELS_MAX micro-panels (B block stays in L2), and rows split
     * only when columns alone do not give enough items (small outputs, few images). */
    const int64_t want = 4 * (int64_t)c->nthr;
    const int64_t panels = bdnn_div_up(p->N, u->nr);
    const int64_t images = d->mb * d->g;
    int64_t per_block = panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX;
    while (per_block > 1 && images * bdnn_div_up(panels, per_block) < want)
        per_block = bdnn_div_up(per_block, 2);
    if (per_block < 1) per_block = 1;
    p->nc = per_block * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    int64_t row_blocks = 1;
    const int64_t items = images * p->n_col_blocks;
    if (items < want) {
        row_blocks = bdnn_div_up(want, items > 0 ? items : 1);
        if (row_blocks > p->a_panels) row_blocks = p->a_panels;
    }
    p->m_rows = bdnn_div_up(p->a_panels, row_blocks) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = images * p->n_col_blocks * p->n_row_blocks;

    p->bpack = calloc(c->nthr, sizeof(float *));
    p->segs = calloc(c->nthr, sizeof(segment_t *));
    p->seg_start = calloc(c->nthr, sizeof(int64_t *));
    if (!p->bpack || !p->segs || !p->seg_start) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        p->bpack[t] = bdnn_aligned_alloc(sizeof(float) * KC * p->nc);
        p->segs[t] = malloc(sizeof(segment_t) * p->nc);
        p->seg_start[t] = malloc(sizeof(int64_t) * (per_block + 1));
        if (!p->bpack[t] || !p->segs[t] || !p->seg_start[t]) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static size_t gemm_weights_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return sizeof(float) * (size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->K);
}

static void gemm_pack_weights(const struct bdnn_conv *c, const float *wei, float *packed) {
    const gemm_plan_t *p = c->plan;
    const int64_t MR = ukr_of(c)->mr, M = p->M, K = p->K;
    const int64_t taps = c->d.kd * c->d.kh * c->d.kw, icg = c->d.ic / c->d.g;
    for (int64_t g = 0; g < c->d.g; ++g) {
        const float *wg = wei + g * M * K;
        float *ag = packed + g * p->a_panels * MR * K;
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = K - pc < KC ? K - pc : KC;
            for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                float *panel = ag + pc * p->a_panels * MR + ip * kc * MR;
                for (int64_t kk = 0; kk < kc; ++kk)
                    for (int64_t r = 0; r < MR; ++r) {
                        const int64_t m = ip * MR + r, k = pc + kk;
                        float v = m < M ? wg[m * K + k] : 0.0f;
                        if (c->fault == BDNN_FAULT_SKIP_LAST_IC && k / taps == icg - 1) v = 0.0f;
                        panel[kk * MR + r] = v;
                    }
            }
        }
    }
}

/* Splits the columns [j0, j0 + ncols) into per-micro-panel runs of one output row. */
static void build_segments(const bdnn_conv_desc_t *d, int64_t j0, int64_t ncols, int64_t NR,
                           segment_t *segs, int64_t *seg_start) {
    int64_t ns = 0, q = 0;
    for (int64_t j = 0; j < ncols; ++q) {
        seg_start[q] = ns;
        const int64_t panel_end = j + NR < ncols ? j + NR : ncols;
        while (j < panel_end) {
            const int64_t pnt = j0 + j;
            const int64_t ow = pnt % d->ow, rest = pnt / d->ow;
            const int64_t oh = rest % d->oh, od = rest / d->oh;
            int64_t len = d->ow - ow;
            if (len > panel_end - j) len = panel_end - j;
            segs[ns++] = (segment_t){j - (q * NR), len, od * d->sd - d->pd, oh * d->sh - d->ph,
                                     ow * d->sw - d->pw};
            j += len;
        }
    }
    seg_start[q] = ns;
}

/* Packs B[pc:pc+kc, block] (block described by its segments) into NR-wide micro-panels. */
static void pack_b(const struct bdnn_conv *c, const float *src_ng, int64_t pc, int64_t kc,
                   int64_t npanels, const segment_t *segs, const int64_t *seg_start,
                   float *bp) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = ukr_of(c)->nr;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, SW = d->sw;
    const int replicate_edge = c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    /* Decompose k = pc into (ic, kd, kh, kw); advanced like an odometer below. */
    int64_t kw = pc % d->kw, t = pc / d->kw;
    int64_t kh = t % d->kh;
    t /= d->kh;
    int64_t kd = t % d->kd, ic = t / d->kd;
    for (int64_t kk = 0; kk < kc; ++kk) {
        const float *plane = src_ng + ic * ID * IH * IW;
        const int64_t dz = kd * (d->dd + 1), dy = kh * (d->dh + 1), dx = kw * (d->dw + 1);
        for (int64_t q = 0; q < npanels; ++q) {
            float *row = bp + (q * kc + kk) * NR;
            int64_t filled = 0;
            for (int64_t s = seg_start[q]; s < seg_start[q + 1]; ++s) {
                const segment_t *sg = &segs[s];
                float *out = row + sg->col;
                const int64_t iz = sg->id0 + dz, iy = sg->ih0 + dy, ix0 = sg->iw0 + dx;
                int64_t lo = 0, hi = 0;
                if (iz >= 0 && iz < ID && iy >= 0 && iy < IH) {
                    lo = ix0 >= 0 ? 0 : bdnn_div_up(-ix0, SW);
                    hi = bdnn_floor_div(IW - 1 - ix0, SW) + 1;
                    if (hi > sg->len) hi = sg->len;
                    if (hi < 0) hi = 0;   /* the whole run lies past the right edge */
                    if (lo > hi) lo = hi;
                }
                const float *in = plane + (iz * IH + iy) * IW + ix0;
                for (int64_t j = 0; j < lo; ++j) out[j] = 0.0f;
                if (SW == 1)
                    memcpy(out + lo, in + lo, sizeof(float) * (size_t)(hi - lo));
                else
                    for (int64_t j = lo; j < hi; ++j) out[j] = in[j * SW];
                if (replicate_edge && hi > lo && hi < sg->len)
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = in[(IW - 1) - ix0];
                else
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = 0.0f;
                filled = sg->col + sg->len;
            }
            for (int64_t j = filled; j < NR; ++j) row[j] = 0.0f;
        }
        if (++kw == d->kw) {
            kw = 0;
            if (++kh == d->kh) {
                kh = 0;
                if (++kd == d->kd) { kd = 0; ++ic; }
            }
        }
    }
}

static void gemm_execute(const struct bdnn_conv *c, const float *src, const float *wei,
                         const float *bias, float *dst) {
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = c->plan;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, N = p->N;
    const int64_t in_image = d->ic * d->id * d->ih * d->iw;

#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        float *bp = p->bpack[tid];
        segment_t *segs = p->segs[tid];
        int64_t *seg_start = p->seg_start[tid];
        for (int64_t item = tid; item < p->n_items; item += c->nthr) {
            int64_t rest = item;
            const int64_t rb = rest % p->n_row_blocks; rest /= p->n_row_blocks;
            const int64_t cb = rest % p->n_col_blocks; rest /= p->n_col_blocks;
            const int64_t g = rest % d->g, n = rest / d->g;
            const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
            const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
            const int64_t npanels = bdnn_div_up(ncols, NR);
            const float *src_ng = src + n * in_image + g * (d->ic / d->g) * d->id * d->ih * d->iw;
            float *c_ng = dst + (n * d->oc + g * M) * N;
            const float *a_g = wei + g * p->a_panels * MR * K;
            const float *bias_g = bias ? bias + g * M : NULL;

            build_segments(d, j0, ncols, NR, segs, seg_start);
            for (int64_t pc = 0; pc < K; pc += KC) {
                const int64_t kc = K - pc < KC ? K - pc : KC;
                pack_b(c, src_ng, pc, kc, npanels, segs, seg_start, bp);
                const float *a_pc = a_g + pc * p->a_panels * MR;
                for (int64_t q = 0; q < npanels; ++q) {
                    const int64_t j = j0 + q * NR, nr = N - j < NR ? N - j : NR;
                    const float *bq = bp + q * kc * NR;
                    for (int64_t m = m0; m < m1; m += MR) {
                        const int64_t mr = M - m < MR ? M - m : MR;
                        u->fn(kc, a_pc + (m / MR) * kc * MR, bq, c_ng + m * N + j, N, mr, nr,
                              pc > 0, bias_g ? bias_g + m : NULL);
                    }
                }
            }
        }
    }
}

const conv_impl_ops_t bdnn_conv_gemm_ops = {
    gemm_init, gemm_weights_bytes, gemm_pack_weights, gemm_execute, gemm_fini,
};
