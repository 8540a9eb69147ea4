/* gemm_conv's outer-product route (rows gemm_conv:<isa>:outer): backward weights in f32
 * without scales (c->lp 0), on a kernel with a transposing copy (tr_fn). C = diff_dst x
 * im2col(src)^T, both operands packed k-major by transposing copies. Preconditions: the
 * row's applies (bdnn_gemm_outer_applies). */
#include "conv_gemm.h"

/* Backward weights reduces over K = mb * output points, often tens of thousands, into an
 * M x N result of a few thousand elements. Splitting M and N for threads would make every
 * thread copy the same operand rows again for its small tile; instead each of the
 * k_splits ranges of K accumulates a whole partial result, and the partials are added at
 * the end, when K gives every split several k blocks and the partials stay small. */
static const int64_t KSPLIT_MAX_PARTIAL_FLOATS = (int64_t)16 << 20;

/* Backward weights, outer-product route (f32): C[M x N] = A[M x K] * B[K x N] on the GEMM
 * micro-kernel, A = diff_dst (k = (n, output point)), B = im2col of src. Both operands run
 * along k in memory (diff_dst rows; im2col rows, each a shifted input row), so they are
 * packed k-major by a transposing copy (conv_transpose_fn, VLEN x VLEN tiles in registers):
 * every k block of A and of B is packed exactly once, (M + N) * K moves against M * N * K
 * multiply-adds, and the register-blocked kernel needs no lane sums (a dot-product route,
 * both operands as rows and sums across lanes per tile, is slower: it sums lanes per tile).
 * - Long K, small result (K >= 2 * KC * threads, partials within
 *   KSPLIT_MAX_PARTIAL_FLOATS): each thread takes a range of K and a whole partial result,
 *   packs all of A for a k block, then B a panel at a time, multiplied by every A panel
 *   while in L1; the partials are added at the end (reduce_partials). No barriers.
 * - Otherwise (short K: ResNet's 14x14 and 7x7 layers at mb1): one result; per k block the
 *   threads pack A together into a shared buffer, then split C's tiles, each item's B
 *   panel packed by its thread where A is small (OP_PRIVATE_B_MAX_A_BYTES), else all of B
 *   packed together first, shared (a large result with a K of a few blocks takes all of K
 *   as one block: OP_WHOLE_K_MAX_FLOATS). */
enum { OP_RB_MAX = 16 };   /* A panels per work item: the item's A block stays in L2 */
/* One result whose packed A for a k block stays within this many bytes (half of L2 here),
 * or that takes all of K as one block (each item already one B panel and every A panel),
 * with at least OP_PRIVATE_B_MIN_PANELS B panels per thread (a panel per item: the split
 * within an eighth of even): items are B panels, each packed by the thread that
 * multiplies it, into its own buffer (L1), right before its products: no shared B
 * crossing L3 between the threads and no barrier between B's packing and the products.
 * A larger A stays shared: read from L3 once per B panel, it would cost more than B. */
enum { OP_PRIVATE_B_MAX_A_BYTES = 512 << 10, OP_PRIVATE_B_MIN_PANELS = 8 };
/* B's panels are gathered straight from src as runs of kw taps (op_pack_b_runs) at a
 * stride above 1 with runs of at least this many taps; otherwise im2col rows are built and
 * transposed. At stride 1 those rows are plain copies, at a stride an element gather,
 * which the runs avoid; shorter runs (3x3) cost more in masked loads than they save. */
enum { OP_RUNS_MIN_KW = 5 };
/* One result written in one k block (K <= KC: mb1's 7x7 layers) goes out by non-temporal
 * stores (UKR_STREAM) from this size on, twice the L2 of both cores here: each line is
 * written once, and reading it in first only doubles the traffic. */
enum { OP_STREAM_MIN_FLOATS = 1 << 20 };
/* Such a result with a K of a few k blocks (mb8 and mb16's 7x7 layers: K = 392, 784) is
 * computed in one k block, all of K packed at once while that fits this many floats, and
 * each item takes one B panel and every A panel: C is then written once (streamed)
 * instead of read and written again per k block, and each B panel is read once. */
enum { OP_WHOLE_K_MAX_FLOATS = 6 << 20 };
/* A k split packs its operands per k block of up to this many points (twice KC) while all
 * of A's panels for one block stay within OP_SPLIT_A_MAX_FLOATS (1 MiB: L2), and K gives
 * each thread two such blocks: each operand's rows (channel planes of diff_dst and src)
 * are then read 2 KiB at a time instead of 1, and a thread's packing and products
 * alternate half as often. Longer blocks gain nothing more, and A's panels past L2 cost
 * more than they save. */
enum { OP_SPLIT_KC = 2 * KC, OP_SPLIT_A_MAX_FLOATS = 1 << 18 };

static int op_init(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u) {
    const bdnn_conv_desc_t *d = &c->d;
    p->op = 1;
    p->b_panels = bdnn_div_up(p->N, u->nr);
    const int64_t result = p->instances * p->M * p->N;
    const int k_split = c->nthr > 1 && p->K >= (int64_t)c->nthr * KC * 2
        && result * c->nthr <= KSPLIT_MAX_PARTIAL_FLOATS;
    int64_t kc = p->K < KC ? (p->K > 0 ? p->K : 1) : KC;   /* (mb 0: no k block runs) */
    if (k_split && p->K >= (int64_t)c->nthr * OP_SPLIT_KC * 2
            && p->a_panels * u->mr * OP_SPLIT_KC <= OP_SPLIT_A_MAX_FLOATS)
        kc = OP_SPLIT_KC;
    const int large = !k_split && result >= OP_STREAM_MIN_FLOATS;
    if (large && p->K > KC
            && (p->b_panels * u->nr + p->a_panels * u->mr) * p->K <= OP_WHOLE_K_MAX_FLOATS)
        kc = p->K;
    p->op_kc = kc;
    p->op_stream = large && p->K <= kc && p->N % u->vlen == 0;
    /* A 1x1 without padding: B's rows are the src planes, at a stride once subsampled
     * (the input points the outputs read, copied dense per execution, as forward does). */
    p->op_planes = taps_of(d) == 1 && bdnn_reads_no_padding(d) && c->fault == BDNN_FAULT_NONE;
    p->op_runs = !p->op_planes && u->runs_fn && d->kw >= OP_RUNS_MIN_KW && d->sw > 1
        && d->dw == 0 && c->fault == BDNN_FAULT_NONE;
    if (p->op_planes && in_points(d) != out_points(d)) {
        if (conv_scratch((void **)&p->subsampled, sizeof(float) * (size_t)(d->mb * d->ic * out_points(d))))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    /* A panels a vector apart (the transposing copy's last store may pass a panel's end) */
    p->op_a_ld = bdnn_div_up(u->mr * kc + u->vlen, 16) * 16;
    p->k_splits = k_split ? c->nthr : 1;
    /* A k split reads ahead where its operands come from memory on every run (op_ahead) */
    p->op_ahead = k_split && u->pf_fn && bdnn_bwt_from_memory(d);
    /* Equal ranges, each in equal blocks of at most kc (below, in bdnn_gemm_run_outer): ranges of whole
     * blocks gave the threads unequal shares (K = 3136 in blocks of 512: 2048 and 1088). */
    if (p->k_splits > 1) p->k_per_split = bdnn_div_up(p->K, p->k_splits);
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        if (conv_scratch((void **)&s->brows, sizeof(float) * (size_t)(u->nr * kc)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&s->krows, sizeof(struct krow) * (size_t)(kc + 2)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&s->wcols, sizeof(wcol_t) * (size_t)u->nr))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (p->op_runs) {   /* runs of at least one column each */
            if (conv_scratch((void **)&s->wruns, sizeof(wrun_t) * (size_t)u->nr))
                return BDNN_STATUS_OUT_OF_MEMORY;
            if (conv_scratch((void **)&s->runs, sizeof(conv_run_t) * (size_t)u->nr))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    if (p->k_splits > 1) {
        /* Each thread packs its own k range: all of A per k block, then B a panel at a
         * time, each panel multiplied by every A panel while in L1. */
        if (conv_scratch((void **)&p->partials, sizeof(float) * (size_t)(result * p->k_splits)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < c->nthr; ++t) {
            scratch_t *s = &p->scratch[t];
            if (conv_scratch((void **)&s->ap, sizeof(float) * (size_t)(p->a_panels * p->op_a_ld))
                    || conv_scratch((void **)&s->bp, sizeof(float) * (size_t)(u->nr * kc)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
        return BDNN_STATUS_OK;
    }
    /* One result: per k block the threads pack A together, then B: each its items' panels
     * (op_b_private), or all together into a shared buffer; then they split C's tiles. */
    if (conv_scratch((void **)&p->op_a, sizeof(float) * (size_t)(p->a_panels * p->op_a_ld)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    p->op_b_private = (p->op_kc > KC
                       || p->a_panels * p->op_a_ld * (int64_t)sizeof(float)
                              <= OP_PRIVATE_B_MAX_A_BYTES)
        && p->b_panels >= OP_PRIVATE_B_MIN_PANELS * (int64_t)c->nthr;
    if (p->op_b_private) {   /* an item: one B panel and every A panel */
        p->op_rb = p->a_panels, p->n_row_blocks = 1, p->n_items = p->b_panels;
        for (int t = 0; t < c->nthr; ++t) {
            scratch_t *s = &p->scratch[t];
            if (conv_scratch((void **)&s->bp, sizeof(float) * (size_t)(u->nr * kc)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
        return BDNN_STATUS_OK;
    }
    const int64_t want = 4 * (int64_t)c->nthr;
    int64_t rb = p->a_panels < OP_RB_MAX || p->op_kc > KC ? p->a_panels : OP_RB_MAX;
    while (rb > 1 && p->b_panels * bdnn_div_up(p->a_panels, rb) < want) rb = bdnn_div_up(rb, 2);
    p->op_rb = rb;
    p->n_row_blocks = bdnn_div_up(p->a_panels, rb);
    p->n_items = p->n_row_blocks * p->b_panels;
    if (conv_scratch((void **)&p->op_b, sizeof(float) * (size_t)(p->b_panels * u->nr * kc)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

/* B rows: for each column (ic, tap) of the block, src(n, g*ICg + ic, o*s + tap offset)
 * along the block's k positions, 0 outside the input (with the test faults' defects). */
static void im2col_rows(const exec_t *e, int64_t g, int64_t j0, int64_t ncols, int64_t kc,
                        const struct krow *rows, int64_t nrows, const scratch_t *s,
                        float *brows, int64_t ld) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, icg = d->ic / d->g, taps = taps_of(d);
    const int fault = e->c->fault;
    for (int64_t jj = 0; jj < ncols; ++jj) {
        const wcol_t *w = &s->wcols[jj];
        float *row = brows + jj * ld;
        const int64_t col = j0 + jj;
        if ((fault == BDNN_FAULT_SKIP_LAST_IC && w->ic == icg - 1)
                || (fault == BDNN_FAULT_SKIP_LAST_TAP && col % taps == taps - 1)) {
            memset(row, 0, sizeof(float) * (size_t)ld);
            continue;
        }
        for (int64_t r = 0; r < nrows; ++r) {
            const struct krow *kr = &rows[r];
            float *out = row + kr->kk;
            const int64_t iz = kr->od * d->sd + w->dz, iy = kr->oh * d->sh + w->dy;
            if (iz < 0 || iz >= ID || iy < 0 || iy >= IH) {
                memset(out, 0, sizeof(float) * (size_t)kr->len);
                continue;
            }
            const float *line = e->b_src
                + ((kr->n * d->ic + g * icg + w->ic) * ID + iz) * IH * IW + iy * IW;
            const int64_t sw = d->sw, x0 = kr->ow0 * sw + w->dx;   /* ix of t = 0 */
            int64_t t_lo, t_hi;
            col_run(x0, sw, IW, kr->len, &t_lo, &t_hi);
            for (int64_t t = 0; t < t_lo; ++t) out[t] = 0.0f;
            if (sw == 1) memcpy(out + t_lo, line + x0 + t_lo, sizeof(float) * (size_t)(t_hi - t_lo));
            else if (sw == 2) {   /* a constant stride: the compiler vectorizes it */
                const float *in = line + x0 + 2 * t_lo;
                for (int64_t t = 0; t < t_hi - t_lo; ++t) out[t_lo + t] = in[2 * t];
            } else for (int64_t t = t_lo; t < t_hi; ++t) out[t] = line[x0 + t * sw];
            const float right = fault == BDNN_FAULT_RIGHT_PAD_EDGE ? line[IW - 1] : 0.0f;
            for (int64_t t = t_hi; t < kr->len; ++t) out[t] = right;
        }
        for (int64_t kk = kc; kk < ld; ++kk) row[kk] = 0.0f;
    }
}

/* One MR panel of A for the outer-product route: panel[kk*MR + r] = diff_dst(n, g*OCg +
 * m0 + r, o) at k = pc + kk = (n, o); rows past M zero. */
static void op_pack_a(const exec_t *e, int64_t g, int64_t m0, int64_t pc, int64_t kc,
                      float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t MR = ukr_of(e->c)->mr, M = e->p->M, OP = out_points(d);
    const int64_t rows = M - m0 < MR ? M - m0 : MR;
    for (int64_t kk = 0; kk < kc;) {
        const int64_t k = pc + kk, n = k / OP, o = k % OP;
        const int64_t len = OP - o < kc - kk ? OP - o : kc - kk;
        const float *base = e->a_src + (n * d->oc + g * (d->oc / d->g) + m0) * OP + o;
        ukr_of(e->c)->tr_fn(base, OP, rows, len, panel + kk * MR, MR);
        kk += len;
    }
}

/* A panel's columns as runs of consecutive input points (wrun_t), each within one vector
 * of the panel's row; returns their count. */
static int64_t wruns_build(const wcol_t *w, int64_t ncols, int64_t vlen, wrun_t *runs) {
    int64_t n = 0;
    for (int64_t j = 0; j < ncols; ++j) {
        wrun_t *last = n > 0 ? &runs[n - 1] : NULL;
        if (last && last->ic == w[j].ic && last->dz == w[j].dz && last->dy == w[j].dy
                && last->dx + last->len == w[j].dx && j % vlen != 0)
            ++last->len;
        else
            runs[n++] = (wrun_t){w[j].ic, w[j].dz, w[j].dy, w[j].dx, j, 1};
    }
    return n;
}

/* The runs of output point ow0 + t of output row kr, each column run clipped to the
 * input's row; a run whose row lies outside the input, or whose taps all lie in the
 * padding, is left out (conv_runs_fn writes zeros there). */
static int64_t op_point_runs(const bdnn_conv_desc_t *d, const wrun_t *wruns, int64_t nw,
                             const struct krow *kr, const float *src_n, int64_t t,
                             conv_run_t *runs) {
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, bx = (kr->ow0 + t) * d->sw;
    int64_t nruns = 0;
    for (int64_t w = 0; w < nw; ++w) {
        const wrun_t *wr = &wruns[w];
        const int64_t iz = kr->od * d->sd + wr->dz, iy = kr->oh * d->sh + wr->dy;
        const int64_t x0 = bx + wr->dx;
        const int64_t l0 = x0 < 0 ? -x0 : 0, l1 = IW - x0 < wr->len ? IW - x0 : wr->len;
        if (iz < 0 || iz >= ID || iy < 0 || iy >= IH || l1 <= l0) continue;
        runs[nruns++] = (conv_run_t){src_n + ((wr->ic * ID + iz) * IH * IW + iy * IW + x0 + l0),
                                     wr->col + l0, l1 - l0};
    }
    return nruns;
}

/* One NR panel of B built from src's rows as runs (op_runs): per output row the block
 * crosses, one call of conv_runs_fn for the points whose taps all lie inside the input,
 * and one per point at the row's ends, its runs clipped to the input. Columns past ncols
 * are zeros. */
static void op_pack_b_runs(const exec_t *e, int64_t g, int64_t j0, int64_t ncols,
                           const scratch_t *s, int64_t nrows, float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const conv_gemm_ukr_t *u = ukr_of(e->c);
    const int64_t NR = u->nr, icg = d->ic / d->g;
    const int64_t span = (d->kw - 1) * (d->dw + 1);   /* from the first tap's x to the last's */
    wcols_build(d, j0, ncols, s->wcols);
    const int64_t nw = wruns_build(s->wcols, ncols, u->vlen, s->wruns);
    for (int64_t r = 0; r < nrows; ++r) {
        const struct krow *kr = &s->krows[r];
        const float *src_n = e->b_src + (kr->n * d->ic + g * icg) * in_points(d);
        float *rows = panel + kr->kk * NR;
        int64_t lo, hi;   /* the points whose taps all lie inside the input's row */
        col_run(kr->ow0 * d->sw - d->pw, d->sw, d->iw - span, kr->len, &lo, &hi);
        if (hi > lo)
            u->runs_fn(s->runs, op_point_runs(d, s->wruns, nw, kr, src_n, lo, s->runs), d->sw,
                       hi - lo, rows + lo * NR, NR, NR);
        const int64_t edges[2][2] = {{0, lo}, {hi, kr->len}};
        for (int side = 0; side < 2; ++side)
            for (int64_t t = edges[side][0]; t < edges[side][1]; ++t)
                u->runs_fn(s->runs, op_point_runs(d, s->wruns, nw, kr, src_n, t, s->runs), 0,
                           1, rows + t * NR, NR, NR);
    }
}

/* One NR panel of B: element (kk, j) = src at column j0 + j's (ic, tap) for k = pc + kk.
 * A 1x1 without padding reads the channels' planes as they lie (at a stride, the dense
 * subsampled copy); long runs of kw taps at a stride are gathered (op_runs); otherwise
 * the panel's im2col rows are built (NR x kc), then transposed. */
static void op_pack_b(const exec_t *e, int64_t g, int64_t q, int64_t pc, int64_t kc,
                      const scratch_t *s, int64_t nrows, float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const conv_gemm_ukr_t *u = ukr_of(e->c);
    const int64_t NR = u->nr, N = e->p->N, j0 = q * NR;
    const int64_t ncols = N - j0 < NR ? N - j0 : NR;
    if (e->p->op_planes) {
        const int64_t OP = out_points(d);
        for (int64_t kk = 0; kk < kc;) {
            const int64_t k = pc + kk, n = k / OP, o = k % OP;
            const int64_t len = OP - o < kc - kk ? OP - o : kc - kk;
            u->tr_fn(e->b_src + (n * d->ic + g * (d->ic / d->g) + j0) * OP + o, OP, ncols, len,
                     panel + kk * NR, NR);
            kk += len;
        }
        return;
    }
    if (e->p->op_runs) {
        op_pack_b_runs(e, g, j0, ncols, s, nrows, panel);
        return;
    }
    wcols_build(d, j0, ncols, s->wcols);
    im2col_rows(e, g, j0, ncols, kc, s->krows, nrows, s, s->brows, kc);
    u->tr_fn(s->brows, kc, ncols, kc, panel, NR);
}

/* A large result (mb16's 7x7 layers: 9 MB per partial) is accumulated from memory once
 * per k block: the next tile's rows of C [m, m + MR) x [j, j + nr) are requested while the
 * micro-kernel runs on this one (it reads its tile only after its k loop). */
static void op_prefetch_c(const float *c, int64_t ldc, int64_t m, int64_t M, int64_t mr,
                          int64_t j, int64_t nr) {
    for (int64_t r = m; r < m + mr && r < M; ++r)
        for (int64_t x = 0; x < nr; x += 16) __builtin_prefetch(c + r * ldc + j + x, 1, 3);
}

/* The next k block [pc, pc + kc) of group g, read ahead while this one computes: per
 * image it spans, diff_dst's rows (A) and the src points its B rows read, one run per
 * channel: the transposing copies otherwise wait on memory for much of their time. */
static bdnn_ahead_t op_ahead(const exec_t *e, int64_t g, int64_t pc, int64_t kc,
                             int64_t tiles) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const gemm_plan_t *p = e->p;
    const int64_t OP = out_points(d), IP = in_points(d), fsz = (int64_t)sizeof(float);
    const int64_t ICg = d->ic / d->g;
    bdnn_ahead_t h = {0};
    for (int64_t k = pc; k < pc + kc;) {
        const int64_t n = k / OP, o = k % OP;
        const int64_t len = OP - o < pc + kc - k ? OP - o : pc + kc - k;
        bdnn_ahead_add(&h, e->a_src + (n * d->oc + g * (d->oc / d->g)) * OP + o, len * fsz,
                       OP * fsz, p->M);
        if (p->op_planes) {
            bdnn_ahead_add(&h, e->b_src + (n * d->ic + g * ICg) * OP + o, len * fsz, OP * fsz,
                           ICg);
        } else {
            const int64_t last = o + len - 1, plane = d->oh * d->ow;
            const int64_t first_o[3] = {o / plane, o / d->ow % d->oh, o % d->ow};
            const int64_t last_o[3] = {last / plane, last / d->ow % d->oh, last % d->ow};
            const int64_t reach[3] = {(d->kd - 1) * (d->dd + 1), (d->kh - 1) * (d->dh + 1),
                                      (d->kw - 1) * (d->dw + 1)};
            int64_t i0, i1;
            bdnn_input_window(d, first_o, last_o, reach, &i0, &i1);
            bdnn_ahead_add(&h, e->b_src + (n * d->ic + g * ICg) * IP + i0, (i1 + 1 - i0) * fsz,
                           IP * fsz, ICg);
        }
        k += len;
    }
    bdnn_ahead_share(&h, tiles);
    return h;
}

void bdnn_gemm_run_outer(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, N = p->N, K = p->K;
#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        scratch_t *s = &p->scratch[tid];
        if (p->k_splits > 1) {
            const int64_t k_lo = tid * p->k_per_split < K ? tid * p->k_per_split : K;
            const int64_t k_hi = k_lo + p->k_per_split < K ? k_lo + p->k_per_split : K;
            const int64_t step = k_hi > k_lo   /* the range in equal blocks */
                ? bdnn_div_up(k_hi - k_lo, bdnn_div_up(k_hi - k_lo, p->op_kc)) : 1;
            for (int64_t g = 0; g < p->instances && tid < p->k_splits; ++g) {
                float *c_g = p->partials + (tid * p->instances + g) * M * N;
                for (int64_t pc = k_lo; pc < k_hi; pc += step) {
                    const int64_t kc = k_hi - pc < step ? k_hi - pc : step;
                    const int mode = pc > k_lo ? UKR_ACCUMULATE : UKR_WRITE;
                    /* the next block: this group's next, or the next group's first */
                    const int64_t next_g = pc + step < k_hi ? g : g + 1;
                    const int64_t next_pc = pc + step < k_hi ? pc + step : k_lo;
                    bdnn_ahead_t next = {0}, *reading = NULL;
                    if (p->op_ahead && next_g < p->instances) {
                        next = op_ahead(e, next_g, next_pc,
                                        k_hi - next_pc < step ? k_hi - next_pc : step,
                                        p->a_panels * p->b_panels);
                        reading = &next;
                    }
                    for (int64_t ip = 0; ip < p->a_panels; ++ip)
                        op_pack_a(e, g, ip * MR, pc, kc, s->ap + ip * p->op_a_ld);
                    const int64_t nrows = p->op_planes ? 0 : krows_of(d, pc, kc, s->krows);
                    for (int64_t q = 0; q < p->b_panels; ++q) {
                        const int64_t j = q * NR, nr = N - j < NR ? N - j : NR;
                        op_pack_b(e, g, q, pc, kc, s, nrows, s->bp);
                        for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                            const int64_t m = ip * MR;
                            if (mode == UKR_ACCUMULATE) op_prefetch_c(c_g, N, m + MR, M, MR, j, nr);
                            bdnn_ukr_reading_ahead(u, reading, kc, s->ap + ip * p->op_a_ld,
                                                   MR, s->bp, NR, c_g + m * N + j, N,
                                                   M - m < MR ? M - m : MR, nr, mode);
                        }
                    }
                }
            }
        } else {
            const int stream = p->op_stream
                && (uintptr_t)e->out % (sizeof(float) * (size_t)u->vlen) == 0;
            for (int64_t g = 0; g < p->instances; ++g) {
                float *c_g = (float *)e->out + g * M * N;
                for (int64_t pc = 0; pc < K; pc += p->op_kc) {
                    const int64_t kc = K - pc < p->op_kc ? K - pc : p->op_kc;
#pragma omp for schedule(static) nowait
                    for (int64_t ip = 0; ip < p->a_panels; ++ip)
                        op_pack_a(e, g, ip * MR, pc, kc, p->op_a + ip * p->op_a_ld);
                    const int64_t nrows = p->op_planes ? 0 : krows_of(d, pc, kc, s->krows);
                    if (p->op_b_private) {
#pragma omp barrier   /* every A panel packed (the loop above: nowait) */
                    } else {
#pragma omp for schedule(static)
                        for (int64_t q = 0; q < p->b_panels; ++q)
                            op_pack_b(e, g, q, pc, kc, s, nrows, p->op_b + q * NR * kc);
                    }
#pragma omp for schedule(static)
                    for (int64_t item = 0; item < p->n_items; ++item) {
                        const int64_t rb = item / p->b_panels, q = item % p->b_panels;
                        const int64_t j = q * NR, nr = N - j < NR ? N - j : NR;
                        const int64_t ip1 = (rb + 1) * p->op_rb < p->a_panels
                            ? (rb + 1) * p->op_rb : p->a_panels;
                        float *b = p->op_b_private ? s->bp : p->op_b + q * NR * kc;
                        if (p->op_b_private) op_pack_b(e, g, q, pc, kc, s, nrows, b);
                        for (int64_t ip = rb * p->op_rb; ip < ip1; ++ip) {
                            const int64_t m = ip * MR;
                            if (pc > 0 && ip + 1 < ip1) op_prefetch_c(c_g, N, m + MR, M, MR, j, nr);
                            u->fn(kc, p->op_a + ip * p->op_a_ld, b, NR,
                                  c_g + m * N + j, N, M - m < MR ? M - m : MR, nr,
                                  pc > 0 ? UKR_ACCUMULATE : stream ? UKR_WRITE | UKR_STREAM
                                                                   : UKR_WRITE,
                                  NULL, 0.0f, 0.0f);
                        }
                    }
                }
            }
            if (stream) bdnn_stream_fence();
        }
    }
}

int bdnn_gemm_outer_applies(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_WEIGHTS && !c->lp && ukr_of(c)->tr_fn;
}

static int outer_init(struct bdnn_conv *c) {
    gemm_plan_t *p;
    const int st = bdnn_gemm_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : op_init(c, p, ukr_of(c));
}

const conv_impl_ops_t bdnn_conv_gemm_outer_ops = {
    outer_init, bdnn_gemm_weights_bytes, bdnn_gemm_pack_weights, bdnn_gemm_execute, bdnn_gemm_fini,
    NULL,
};
