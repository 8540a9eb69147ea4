/* gemm_conv's col2im route (rows gemm_conv:<isa>:col2im): backward data in f32 without
 * post-ops, strided or with several taps, as C[(ic, tap)][o] = W^T x diff_dst per image
 * and group, each C row added into diff_src at its tap's offset. Preconditions: the row's
 * applies (bdnn_gemm_col2im_applies); private copies of diff_src within
 * COL_MAX_PRIVATE_FLOATS where they are needed (init refuses past it). */
#include "conv_gemm.h"

/* Backward data, col2im route (f32, no post-ops): the gather route packs diff_dst per
 * input point, testing every tap for stride divisibility, and with few input channels
 * (a first layer: M = 3) it packs far more than it computes. Instead, per image and
 * group, C[(ic, tap)][o] = W^T x diff_dst is a plain GEMM whose B rows are diff_dst rows
 * as they lie, and each C row is added into diff_src at its tap's offset (col2im). Taken
 * for strided or multi-tap problems; a 1x1 unit-stride problem is already a plain GEMM on
 * the gather route. Column blocks of one image overlap in diff_src, so threads either own
 * whole (image, group) slices or, with too few of those, add into private copies of
 * diff_src that are summed at the end (while they stay small). */
static const int64_t COL_MAX_PRIVATE_FLOATS = (int64_t)16 << 20;

static int col_init(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t diff_src = d->mb * d->ic * in_points(d);
    int col_private = d->mb * d->g < 2 * (int64_t)c->nthr;
    if (col_private && diff_src * c->nthr > COL_MAX_PRIVATE_FLOATS) {
        /* the gather route then (the plan is untouched), unless it refuses the problem:
         * then threads own whole (image, group) slices, and those past them idle */
        if (!bdnn_few_live_taps(d)) return BDNN_STATUS_UNIMPLEMENTED;
        col_private = 0;
    }
    p->col2im = 1, p->col_private = col_private;
    p->instances = d->mb * d->g;
    p->M = (d->ic / d->g) * taps_of(d), p->N = out_points(d), p->K = d->oc / d->g;
    p->a_panels = bdnn_div_up(p->M, u->mr);
    const int64_t panels = bdnn_div_up(p->N, u->nr);
    p->nc = (panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX) * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    p->m_rows = (p->a_panels < MC_PANELS_MAX ? p->a_panels : MC_PANELS_MAX) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = p->instances * (p->col_private ? p->n_row_blocks * p->n_col_blocks : 1);
    if (p->col_private) {
        if (conv_scratch((void **)&p->partials, sizeof(float) * (size_t)(diff_src * c->nthr)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        if (conv_scratch((void **)&s->bp, sizeof(float) * KC * p->nc))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&s->cbuf, sizeof(float) * (size_t)(p->m_rows * p->nc)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&s->krows, sizeof(struct krow) * (size_t)(p->nc + 2)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

/* B block of the col2im route: rows oc of diff_dst(n, g*OCg + oc, o) over the block's
 * output points, as they lie, zero past N. */
static void col_pack_b(const exec_t *e, const float *ddst_ng, int64_t pc, int64_t kc,
                       int64_t j0, int64_t ncols, float *bp) {
    const int64_t NR = ukr_of(e->c)->nr, OP = out_points(&e->c->d);
    const int64_t npanels = bdnn_div_up(ncols, NR);
    for (int64_t kk = 0; kk < kc; ++kk) {
        const float *line = ddst_ng + (pc + kk) * OP + j0;
        for (int64_t q = 0; q < npanels; ++q) {
            float *row = bp + (q * kc + kk) * NR;
            const int64_t len = ncols - q * NR < NR ? ncols - q * NR : NR;
            memcpy(row, line + q * NR, sizeof(float) * (size_t)len);
            for (int64_t j = len; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

static void col_add(float *line, int64_t x0, int64_t sw, const float *in, int64_t lo,
                    int64_t hi) {
    if (sw == 1) {
        float *out = line + x0;
        for (int64_t u = lo; u < hi; ++u) out[u] += in[u];
    } else {
        for (int64_t u = lo; u < hi; ++u) line[x0 + u * sw] += in[u];
    }
}

/* col2im: adds rows [m0, m1) of the C block (row m = (ic, kd, kh, kw), columns the output
 * points of `rows`) into diff_src planes at src_ng (this image and group). At stride 2
 * without dilation a tap and the next (kw + 1) land on the two parities of the same input
 * columns, so their rows go in together as one interleaved, contiguous run (vectorized),
 * where one at a time each added to every other float (scalar: ResNet-50's conv1 spent
 * as long there as in its GEMM). */
static void col_scatter(const exec_t *e, const float *cbuf, int64_t ldc, int64_t m0,
                        int64_t m1, const struct krow *rows, int64_t nrows, float *src_ng) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, sw = d->sw;
    const int edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    for (int64_t m = m0; m < m1; ++m) {
        const tap_t t = tap_at(d, m);
        const int pair = sw == 2 && d->dw == 0 && !edge && t.kw + 1 < d->kw && m + 1 < m1;
        float *plane = src_ng + t.ch * ID * IH * IW;
        const float *crow = cbuf + (m - m0) * ldc, *crow2 = crow + ldc;
        const int64_t dz = t.kd * (d->dd + 1) - d->pd, dy = t.kh * (d->dh + 1) - d->ph;
        const int64_t dx = t.kw * (d->dw + 1) - d->pw;
        for (int64_t r = 0; r < nrows; ++r) {
            const struct krow *kr = &rows[r];
            const int64_t iz = kr->od * d->sd + dz, iy = kr->oh * d->sh + dy;
            if (iz < 0 || iz >= ID || iy < 0 || iy >= IH) continue;
            float *line = plane + (iz * IH + iy) * IW;
            const float *in = crow + kr->kk;
            const int64_t x0 = kr->ow0 * sw + dx;   /* ix of t = 0 */
            int64_t lo, hi;
            col_run(x0, sw, IW, kr->len, &lo, &hi);
            if (pair) {   /* tap kw + 1: column x0 + 1 + 2u */
                const float *in2 = crow2 + kr->kk;
                int64_t lo2, hi2;
                col_run(x0 + 1, sw, IW, kr->len, &lo2, &hi2);
                const int64_t a = lo > lo2 ? lo : lo2, b = hi < hi2 ? hi : hi2;
                if (b > a) {
                    float *out = line + x0;
                    for (int64_t u = a; u < b; ++u) {
                        out[2 * u] += in[u];
                        out[2 * u + 1] += in2[u];
                    }
                    col_add(line, x0, sw, in, lo, a), col_add(line, x0, sw, in, b, hi);
                    col_add(line, x0 + 1, sw, in2, lo2, a), col_add(line, x0 + 1, sw, in2, b, hi2);
                } else {
                    col_add(line, x0, sw, in, lo, hi), col_add(line, x0 + 1, sw, in2, lo2, hi2);
                }
                continue;
            }
            col_add(line, x0, sw, in, lo, hi);
            /* The deliberate defect: what lands past the right edge goes on the last column. */
            if (edge)
                for (int64_t u = hi > lo ? hi : lo; u < kr->len; ++u)
                    if (x0 + u * sw >= IW) line[IW - 1] += in[u];
        }
        m += pair;   /* its next row went in with it */
    }
}

/* One (image, group, row block, column block) of the col2im route. */
static void col_block(const exec_t *e, const scratch_t *s, int64_t inst, int64_t rb,
                      int64_t cb, float *diff_src) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, N = p->N, K = p->K, G = d->g;
    const int64_t n = inst / G, g = inst % G, icg = d->ic / G, ocg = d->oc / G;
    const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
    const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
    const int64_t npanels = bdnn_div_up(ncols, NR);
    if (m0 >= M) return;
    const float *ddst_ng = e->b_src + (n * d->oc + g * ocg) * out_points(d);
    for (int64_t pc = 0; pc < K; pc += KC) {
        const int64_t kc = K - pc < KC ? K - pc : KC;
        col_pack_b(e, ddst_ng, pc, kc, j0, ncols, s->bp);
        const float *a_blk = (const float *)e->a_packed + g * p->a_panels * MR * K
                           + pc * p->a_panels * MR + (m0 / MR) * kc * MR;
        for (int64_t q = 0; q < npanels; ++q)
            for (int64_t m = m0; m < m1; m += MR)
                u->fn(kc, a_blk + (m - m0) * kc, s->bp + q * kc * NR, NR,
                      s->cbuf + (m - m0) * p->nc + q * NR, p->nc, M - m < MR ? M - m : MR,
                      ncols - q * NR < NR ? ncols - q * NR : NR,
                      pc > 0 ? UKR_ACCUMULATE : UKR_WRITE, NULL, 0.0f, 0.0f);
    }
    const int64_t nrows = krows_of(d, j0, ncols, s->krows);
    col_scatter(e, s->cbuf, p->nc, m0, m1, s->krows, nrows,
                diff_src + (n * d->ic + g * icg) * in_points(d));
}

void bdnn_gemm_run_col2im(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t size = d->mb * d->ic * in_points(d);
    const int64_t slice = (d->ic / d->g) * in_points(d);   /* one (image, group) */
    float *out = e->out;
    /* the deliberate defect drops, on more than one thread, the partial results of the
     * last thread that had work (with dynamic scheduling, a thread may get no item) */
    int worked[c->nthr];
    memset(worked, 0, sizeof(worked));
#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        const scratch_t *s = &p->scratch[tid];
        float *mine = p->col_private ? p->partials + tid * size : NULL;
        if (mine) memset(mine, 0, sizeof(float) * (size_t)size);
#pragma omp for schedule(dynamic, 1)
        for (int64_t item = 0; item < p->n_items; ++item) {
            worked[tid] = 1;
            if (mine) {
                const int64_t cb = item % p->n_col_blocks;
                const int64_t rb = (item / p->n_col_blocks) % p->n_row_blocks;
                col_block(e, s, item / (p->n_col_blocks * p->n_row_blocks), rb, cb, mine);
                continue;
            }
            /* (n, g) slices are contiguous: image n's channels of group g. */
            const int64_t n = item / d->g, g = item % d->g;
            memset(out + (n * d->ic + g * (d->ic / d->g)) * in_points(d), 0,
                   sizeof(float) * (size_t)slice);
            for (int64_t rb = 0; rb < p->n_row_blocks; ++rb)
                for (int64_t cb = 0; cb < p->n_col_blocks; ++cb)
                    col_block(e, s, item, rb, cb, out);
        }
        if (mine) {   /* (after the work loop's barrier: every worked[] is set) */
            /* the defect zeroes that thread's partials once, off the reduction's loop */
            if (c->fault == BDNN_FAULT_SPLIT_DROPPED && c->nthr > 1) {
#pragma omp single
                {
                    int drop = -1;
                    for (int t = 0; t < c->nthr; ++t)
                        if (worked[t]) drop = t;
                    if (drop >= 0)
                        memset(p->partials + drop * size, 0, sizeof(float) * (size_t)size);
                }
            }
#pragma omp for schedule(static)
            for (int64_t i = 0; i < size; ++i) {
                float sum = p->partials[i];
                for (int t = 1; t < c->nthr; ++t) sum += p->partials[t * size + i];
                out[i] = sum;
            }
        }
    }
    if (e->bias) {
        const float *bias = e->bias;
        const int64_t IP = in_points(d);
#pragma omp parallel for collapse(2) num_threads(c->nthr) schedule(static)
        for (int64_t n = 0; n < d->mb; ++n)
            for (int64_t ch = 0; ch < d->ic; ++ch) {
                float *plane = out + (n * d->ic + ch) * IP;
                for (int64_t i = 0; i < IP; ++i) plane[i] += bias[ch];
            }
    }
}

int bdnn_gemm_col2im_applies(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    /* (The stride-truncation defect lives in the gather route's divisibility test.) */
    return c->dir == BDNN_DIR_BWD_DATA && !c->lp && c->n_post_ops == 0
        && c->fault != BDNN_FAULT_STRIDE_TRUNC
        && (taps_of(d) > 1 || d->sd > 1 || d->sh > 1 || d->sw > 1);
}

static int col2im_init(struct bdnn_conv *c) {
    gemm_plan_t *p;
    const int st = bdnn_gemm_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : col_init(c, p, ukr_of(c));
}

const conv_impl_ops_t bdnn_conv_gemm_col2im_ops = {
    col2im_init, bdnn_gemm_weights_bytes, bdnn_gemm_pack_weights, bdnn_gemm_execute, bdnn_gemm_fini,
    NULL,
};
