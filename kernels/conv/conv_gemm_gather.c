/* gemm_conv's gather route (rows <family>:<isa>:gather): every direction, data type,
 * scale and post-op chain of the plain layouts; per work item and k block, B is gathered
 * from the tensor (im2col-like, or read in place for a 1x1) and A is the packed weights
 * (backward weights: diff_dst, packed on the fly). The row after the family's other
 * routes: it takes whatever they leave. */
#include "conv_gemm.h"

static int lp_init(const struct bdnn_conv *c, gemm_plan_t *p) {
    if (!c->lp) return BDNN_STATUS_OK;
    const bdnn_conv_desc_t *d = &c->d;
    const int b_dt = b_dt_of(c);
    /* the zero point of the activation read: src forward, diff_dst backward data */
    const int zp = c->attr.src_zp || c->src_zps;
    if (zp && c->dir == BDNN_DIR_BWD_WEIGHTS) return BDNN_STATUS_UNIMPLEMENTED;
    if (zp && c->operands != OPERANDS_INT8) return BDNN_STATUS_UNIMPLEMENTED;
    p->pad = (float)c->attr.src_zp;
    if (c->operands == OPERANDS_INT8) {
        /* The padding's byte, zero point + shift, is a u8 where it can be (each
         * channel's). Forward takes any other zero point: those channels pad with the
         * nearest byte, and where some tap reads padding, the border table takes back
         * the difference (p->border). */
        p->b_shift = b_dt == BDNN_DT_S8 ? 128.0f : 0.0f;
        const int64_t n = !c->src_zps ? 1 : c->dir == BDNN_DIR_FWD ? d->ic : d->oc;
        const int64_t shift = (int64_t)p->b_shift;
        int clamped = 0;
        for (int64_t ch = 0; ch < n; ++ch) {
            const int64_t v = c->src_zps ? c->src_zps[ch] : c->attr.src_zp;
            if (v + shift >= 0 && v + shift <= 255) continue;
            if (c->dir != BDNN_DIR_FWD) return BDNN_STATUS_UNIMPLEMENTED;
            clamped = 1;
        }
        p->border = clamped && !bdnn_reads_no_padding(d);
        if (p->border && c->src_zps) {
            p->pads = malloc(sizeof(int32_t) * (size_t)n);
            if (!p->pads) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        for (int64_t ch = 0; p->border && ch < n; ++ch) {
            const int64_t v = c->src_zps ? c->src_zps[ch] : c->attr.src_zp;
            const int64_t byte = v + shift < 0 ? 0 : v + shift > 255 ? 255 : v + shift;
            if (p->pads) p->pads[ch] = (int32_t)(byte - shift);
            else p->pad = (float)(byte - shift);
        }
    }
    if (b_dt != BDNN_DT_F32) {
        const int64_t n = c->dir == BDNN_DIR_BWD_DATA ? dst_elems(d) : src_elems(d);
        if (conv_scratch((void **)&p->stage_b, sizeof(float) * (size_t)(n > 0 ? n : 1)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->attr.dst_dt != BDNN_DT_F32) {
        if (conv_scratch((void **)&p->stage_a,
                         sizeof(float) * (size_t)(dst_elems(d) > 0 ? dst_elems(d) : 1)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->with_bias) {
        if (conv_scratch((void **)&p->bias_f32, sizeof(float) * (size_t)d->oc))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static int gather_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t taps = taps_of(d);
    gemm_plan_t *p;
    const int st0 = bdnn_gemm_plan_new(c, &p);
    if (st0 != BDNN_STATUS_OK) return st0;
    p->k_splits = 1;

    /* Work split: enough items for every thread to get several (load balance), column
     * blocks no wider than NC_PANELS_MAX micro-panels (the B block stays in L2), rows split
     * when columns alone do not give enough items, and (A packed on the fly) when the A
     * block would not fit in L2. */
    const int64_t want = 4 * (int64_t)c->nthr;
    const int64_t panels = bdnn_div_up(p->N, u->nr);
    const int64_t inst = p->instances > 0 ? p->instances : 1;
    int64_t per_block = panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX;
    while (per_block > 1 && inst * bdnn_div_up(panels, per_block) < want)
        per_block = bdnn_div_up(per_block, 2);
    if (per_block < 1) per_block = 1;
    p->nc = per_block * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    int64_t row_blocks = 1;
    const int64_t items = inst * p->n_col_blocks;
    if (items < want) row_blocks = bdnn_div_up(want, items);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && row_blocks < bdnn_div_up(p->a_panels, MC_PANELS_MAX))
        row_blocks = bdnn_div_up(p->a_panels, MC_PANELS_MAX);
    if (row_blocks > p->a_panels) row_blocks = p->a_panels;
    p->m_rows = bdnn_div_up(p->a_panels, row_blocks) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = p->instances * p->n_col_blocks * p->n_row_blocks;

    p->pack = c->lp ? u->pack : 0;
    /* A 1x1 convolution at unit stride with no padding multiplies the input (forward) or
     * diff_dst (backward data) as it lies: B row k is channel k's plane. */
    p->b_in_place = !c->lp && c->dir != BDNN_DIR_BWD_WEIGHTS && taps == 1
        && d->sd == 1 && d->sh == 1 && d->sw == 1 && d->pd == 0 && d->ph == 0 && d->pw == 0
        && d->od == d->id && d->oh == d->ih && d->ow == d->iw;
    /* A strided 1x1 forward (ResNet's downsampling layers) reads every S-th input point:
     * gathering those once into a dense copy makes it a unit-stride problem read in place,
     * instead of a stride-aware gather per k block. The fault hooks need the gather. */
    if (!c->lp && c->dir == BDNN_DIR_FWD && taps == 1 && !p->b_in_place
            && bdnn_reads_no_padding(d) && c->fault == BDNN_FAULT_NONE) {
        p->subsampled_slack = u->nr;   /* zeroed by each execution's subsample() */
        if (conv_scratch((void **)&p->subsampled,
                         sizeof(float) * (size_t)(d->mb * d->ic * out_points(d) + u->nr)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        p->b_in_place = 1;
    }
    p->Kp = p->pack ? bdnn_div_up(p->K, p->pack) * p->pack : p->K;
    const int st = lp_init(c, p);
    if (st != BDNN_STATUS_OK) return st;

    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        if (conv_scratch((void **)&s->bp, sizeof(float) * KC * p->nc))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
            if (conv_scratch((void **)&s->ap, sizeof(float) * KC * p->m_rows)
                    || conv_scratch((void **)&s->wcols, sizeof(wcol_t) * p->nc))
                return BDNN_STATUS_OUT_OF_MEMORY;
        } else {
            if (conv_scratch((void **)&s->segs, sizeof(segment_t) * p->nc)
                    || conv_scratch((void **)&s->seg_start, sizeof(int64_t) * (per_block + 1)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
        if (c->lp) {
            if (conv_scratch((void **)&s->acc, 4 * (size_t)(p->m_rows * p->nc))
                    || conv_scratch((void **)&s->tmp,
                                    sizeof(float) * (size_t)(p->nc + EPI_TMP_SLACK)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
        if (p->pack) {   /* (4 bytes a value >= pack * element bytes) */
            if (conv_scratch((void **)&s->bq, 4 * (size_t)(KC * p->nc)))
                return BDNN_STATUS_OUT_OF_MEMORY;
            if (c->dir == BDNN_DIR_BWD_WEIGHTS
                    && conv_scratch((void **)&s->aq, 4 * (size_t)(KC * p->m_rows)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

/* ---------------------------------------------------------------------------------------
 * B packing, forward and backward data: columns are points of a grid (GD x GH x GW) */

/* Splits grid points [j0, j0 + ncols) into per-micro-panel runs along w. */
static void build_segments(int64_t GH, int64_t GW, int64_t j0, int64_t ncols, int64_t NR,
                           segment_t *segs, int64_t *seg_start) {
    int64_t ns = 0, q = 0;
    for (int64_t j = 0; j < ncols; ++q) {
        seg_start[q] = ns;
        const int64_t panel_end = j + NR < ncols ? j + NR : ncols;
        while (j < panel_end) {
            const int64_t pnt = j0 + j;
            const int64_t x = pnt % GW, rest = pnt / GW;
            int64_t len = GW - x;
            if (len > panel_end - j) len = panel_end - j;
            segs[ns++] = (segment_t){j - q * NR, len, rest / GH, rest % GH, x};
            j += len;
        }
    }
    seg_start[q] = ns;
}

/* Forward: B[(ic, tap)][output point] = src at o*s - p + tap*(d+1); outside the input, pad
 * (0, or the int8 source zero point). */
/* Runs here are short (a micro-panel is 32 columns): the copy loops stay inline rather
 * than becoming memcpy calls, and unit stride bounds its runs without the integer
 * divisions (tens of cycles each, per run) that strides need. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void pack_b_fwd(const exec_t *e, const float *src_ng, const int32_t *zps_g,
                       int64_t pc, int64_t kc, int64_t q0, int64_t npanels,
                       const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, ID = d->id, IH = d->ih, IW = d->iw, SW = d->sw;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    tap_t t = tap_at(d, pc);
    for (int64_t kk = 0; kk < kc; ++kk, tap_next(d, &t)) {
        /* the padding of this row's channel: its zero point, per channel or common */
        const float pad = zps_g ? (float)zps_g[t.ch] : e->pad;
        const float *plane = src_ng + t.ch * ID * IH * IW;
        const int64_t dz = t.kd * (d->dd + 1), dy = t.kh * (d->dh + 1), dx = t.kw * (d->dw + 1);
        for (int64_t q = q0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            int64_t filled = 0;
            for (int64_t si = s->seg_start[q]; si < s->seg_start[q + 1]; ++si) {
                const segment_t *sg = &s->segs[si];
                float *out = row + sg->col;
                const int64_t iz = sg->z * d->sd - d->pd + dz, iy = sg->y * d->sh - d->ph + dy;
                const int64_t ix0 = sg->x0 * SW - d->pw + dx;
                int64_t lo = 0, hi = 0;   /* run positions t whose input column is inside */
                if (iz >= 0 && iz < ID && iy >= 0 && iy < IH) {
                    if (SW == 1) {
                        lo = ix0 >= 0 ? 0 : -ix0;
                        hi = IW - ix0;
                    } else {
                        lo = ix0 >= 0 ? 0 : bdnn_div_up(-ix0, SW);
                        hi = bdnn_floor_div(IW - 1 - ix0, SW) + 1;
                    }
                    if (hi > sg->len) hi = sg->len;
                    if (hi < 0) hi = 0;   /* the whole run lies past the right edge */
                    if (lo > hi) lo = hi;
                }
                const float *in = plane + (iz * IH + iy) * IW + ix0;
                for (int64_t j = 0; j < lo; ++j) out[j] = pad;
                if (SW == 1)
                    for (int64_t j = lo; j < hi; ++j) out[j] = in[j];
                else
                    for (int64_t j = lo; j < hi; ++j) out[j] = in[j * SW];
                if (replicate_edge && hi > lo && hi < sg->len)
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = in[(IW - 1) - ix0];
                else
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = pad;
                filled = sg->col + sg->len;
            }
            for (int64_t j = filled; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

/* p->border: on a finished tile of s32 sums (rows of output channels, table: the border
 * table at the tile's first channel; columns [j, j + nr) of the output grid, row stride
 * ld), each output point takes back, channel by channel, the table's entries of the taps
 * that read padding: sum over them of w * (pad - zero point), which the padding added
 * where the zero point belonged. Interior points read no padding and skip the taps. */
static void take_back_border(const bdnn_conv_desc_t *d, const int32_t *table, int64_t mr,
                             int64_t j, int64_t nr, int32_t *acc, int64_t ld) {
    const int64_t taps = taps_of(d);
    for (int64_t col = 0; col < nr; ++col) {
        const int64_t pnt = j + col, ow = pnt % d->ow, oh = pnt / d->ow % d->oh;
        const int64_t od = pnt / (d->ow * d->oh);
        int64_t zlo, zhi, ylo, yhi, xlo, xhi;
        bdnn_taps_inside(od, d->sd, d->dd, d->pd, d->id, d->kd, &zlo, &zhi);
        bdnn_taps_inside(oh, d->sh, d->dh, d->ph, d->ih, d->kh, &ylo, &yhi);
        bdnn_taps_inside(ow, d->sw, d->dw, d->pw, d->iw, d->kw, &xlo, &xhi);
        if (zhi - zlo == d->kd && yhi - ylo == d->kh && xhi - xlo == d->kw) continue;
        for (int64_t kd = 0; kd < d->kd; ++kd)
            for (int64_t kh = 0; kh < d->kh; ++kh)
                for (int64_t kw = 0; kw < d->kw; ++kw) {
                    if (kd >= zlo && kd < zhi && kh >= ylo && kh < yhi && kw >= xlo && kw < xhi)
                        continue;
                    const int64_t t = (kd * d->kh + kh) * d->kw + kw;
                    for (int64_t r = 0; r < mr; ++r)   /* wrapping, as the s32 sums */
                        acc[r * ld + col] = (int32_t)((uint32_t)acc[r * ld + col]
                                                      - (uint32_t)table[r * taps + t]);
                }
    }
}

/* Backward data: B[(oc, tap)][input point i] = diff_dst at o = (i + p - tap*(d+1)) / s when
 * that division is exact and o is inside the output, else 0. */
static void pack_b_bwd_data(const exec_t *e, const float *ddst_ng, const int32_t *zps_g,
                            int64_t pc, int64_t kc, int64_t q0, int64_t npanels,
                            const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, OD = d->od, OH = d->oh, OW = d->ow, SW = d->sw;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const int truncate = e->c->fault == BDNN_FAULT_STRIDE_TRUNC;
    tap_t t = tap_at(d, pc);
    for (int64_t kk = 0; kk < kc; ++kk, tap_next(d, &t)) {
        const float *plane = ddst_ng + t.ch * OD * OH * OW;
        const int64_t dz = t.kd * (d->dd + 1), dy = t.kh * (d->dh + 1), dx = t.kw * (d->dw + 1);
        for (int64_t q = q0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            /* taps that reach no diff_dst point read the zero point (of this row's
             * channel): with the packed weights' compensation, (pad - zp) * w = 0, as in
             * forward's padding */
            const float pad = zps_g ? (float)zps_g[t.ch] : e->pad;
            if (pad == 0.0f) memset(row, 0, sizeof(float) * (size_t)NR);
            else for (int64_t j = 0; j < NR; ++j) row[j] = pad;
            for (int64_t si = s->seg_start[q]; si < s->seg_start[q + 1]; ++si) {
                const segment_t *sg = &s->segs[si];
                const int64_t nz = sg->z + d->pd - dz, ny = sg->y + d->ph - dy;
                if (nz < 0 || (nz % d->sd && !truncate) || nz / d->sd >= OD) continue;
                if (ny < 0 || (ny % d->sh && !truncate) || ny / d->sh >= OH) continue;
                const float *orow = plane + ((nz / d->sd) * OH + ny / d->sh) * OW;
                /* run position t reads ow = (x0 + t + pw - dx) / sw */
                const int64_t nx0 = sg->x0 + d->pw - dx;
                int64_t first = nx0 >= 0 ? 0 : -nx0;            /* first t with nx >= 0 */
                first += (SW - (nx0 + first) % SW) % SW;         /* ... and divisible */
                float *out = row + sg->col;
                int64_t tt = first;
                if (truncate) /* the deliberate defect: every t reads ow = nx / sw */
                    for (int64_t u = nx0 >= 0 ? 0 : -nx0; u < sg->len && (nx0 + u) / SW < OW; ++u)
                        out[u] = orow[(nx0 + u) / SW];
                for (; tt < sg->len && !truncate; tt += SW) {
                    const int64_t ow = (nx0 + tt) / SW;
                    if (ow >= OW) break;
                    out[tt] = orow[ow];
                }
                /* The deliberate defect: past the output's right edge, read its last value. */
                if (replicate_edge && tt > first)
                    for (; tt < sg->len; tt += SW) out[tt] = orow[OW - 1];
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Backward weights: columns are (ic, tap), the reduction runs over (n, output point) */

/* B[(n, o)][(ic, tap)] = src(n, g*ICg + ic, o*s + tap offset), 0 outside the input. */
static void pack_b_bwd_weights(const exec_t *e, int64_t g, int64_t pc, int64_t kc,
                               int64_t ncols, const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, ID = d->id, IH = d->ih, IW = d->iw;
    const int64_t OP = out_points(d), icg = d->ic / d->g;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const int64_t taps = taps_of(d);
    const int64_t npanels = bdnn_div_up(ncols, NR);
    for (int64_t kk = 0; kk < kc; ++kk) {
        const int64_t r = pc + kk, n = r / OP, o = r % OP;
        const int64_t ow = o % d->ow, oh = (o / d->ow) % d->oh, od = o / (d->ow * d->oh);
        const float *src_n = e->b_src + (n * d->ic + g * icg) * ID * IH * IW;
        const int64_t bz = od * d->sd, by = oh * d->sh, bx = ow * d->sw;
        for (int64_t q = 0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            const int64_t jend = ncols - q * NR < NR ? ncols - q * NR : NR;
            for (int64_t j = 0; j < jend; ++j) {
                const wcol_t *w = &s->wcols[q * NR + j];
                const int64_t iz = bz + w->dz, iy = by + w->dy;
                int64_t ix = bx + w->dx;
                if (replicate_edge && ix >= IW) ix = IW - 1;
                row[j] = (iz >= 0 && iz < ID && iy >= 0 && iy < IH && ix >= 0 && ix < IW)
                    ? src_n[(w->ic * ID + iz) * IH * IW + iy * IW + ix] : 0.0f;
                const int64_t col = s->wcol0 + q * NR + j;   /* (ic, tap) index */
                if ((e->c->fault == BDNN_FAULT_SKIP_LAST_IC && w->ic == icg - 1)
                        || (e->c->fault == BDNN_FAULT_SKIP_LAST_TAP && col % taps == taps - 1))
                    row[j] = 0.0f;
            }
            for (int64_t j = jend; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

/* A[oc][(n, o)] = diff_dst(n, g*OCg + oc, o), rows [m0, m1), packed into MR panels. */
static void pack_a_bwd_weights(const exec_t *e, int64_t g, int64_t m0, int64_t m1,
                               int64_t pc, int64_t kc, float *ap) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t MR = ukr_of(e->c)->mr, OP = out_points(d), ocg = d->oc / d->g;
    for (int64_t m = m0; m < m0 + bdnn_div_up(m1 - m0, MR) * MR; m += MR) {
        float *panel = ap + (m - m0) * kc;
        for (int64_t r = 0; r < MR; ++r) {
            if (m + r >= m1) {
                for (int64_t kk = 0; kk < kc; ++kk) panel[kk * MR + r] = 0.0f;
                continue;
            }
            int64_t n = pc / OP, o = pc % OP;
            const float *base = e->a_src + (g * ocg + m + r) * OP;
            for (int64_t kk = 0; kk < kc; ++kk) {
                panel[kk * MR + r] = base[n * d->oc * OP + o];
                if (++o == OP) { o = 0; ++n; }
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * The loops */

void bdnn_gemm_run_gather(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, N = p->N;
    const int64_t G = d->g;
    const int lp = c->lp, pack = p->pack;
    const size_t elt = pack == 2 ? 2 : 1;   /* bytes of a grouped B element */
    const size_t aelt = pack ? a_esz(c) : 0;   /* ... and of A's */
    int has_sum = 0;
    const float sum_scale = lp ? 0.0f : bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = !lp && c->n_post_ops > (has_sum ? 1 : 0);
    /* A chain whose one eltwise entry is an unscaled relu: applied by the micro-kernel to
     * the values it stores (UKR_RELU), no pass over the output. */
    const bdnn_post_op_t *tail = c->n_post_ops ? &c->post_ops[c->n_post_ops - 1] : NULL;
    const int fuse_relu = has_eltwise && c->n_post_ops == (has_sum ? 2 : 1)
        && tail->kind == BDNN_POST_ELTWISE && tail->alg == BDNN_ELT_RELU && tail->scale == 1.0f;
    const int32_t *comp = pack == 4 && p->dir != BDNN_DIR_BWD_WEIGHTS
        ? (const int32_t *)((const char *)e->a_packed + grouped_bytes(c)) : NULL;
    /* forward: what each channel's taps outside the input read */
    const int32_t *pads = p->pads ? p->pads : c->src_zps;
    const int32_t *border = p->border && c->fault != BDNN_FAULT_BORDER_KEPT
        ? border_table(c, e->a_packed) : NULL;

#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        scratch_t *s = &p->scratch[tid];
        for (int64_t item = tid; item < p->n_items; item += c->nthr) {
            int64_t rest = item;
            const int64_t rb = rest % p->n_row_blocks; rest /= p->n_row_blocks;
            const int64_t cb = rest % p->n_col_blocks;
            const int64_t inst = rest / p->n_col_blocks, g = inst % G;
            const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
            const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
            const int64_t npanels = bdnn_div_up(ncols, NR);
            /* B in place: every whole panel is read from the tensor itself; only a last
             * partial panel, whose full-width reads could pass the tensor's end, is packed. */
            const int64_t q_packed = p->subsampled ? npanels : p->b_in_place ? ncols / NR : 0;
            if (m0 >= M) continue;
            const int64_t out_inst = inst * M * N;   /* element offset of C */
            float *c_inst = lp ? NULL : (float *)e->out + out_inst;
            const float *bias_g = !lp && e->bias ? (const float *)e->bias + g * M : NULL;
            const float *b_inst = NULL;

            switch (p->dir) {
            case BDNN_DIR_FWD:
                b_inst = e->b_src + inst * (d->ic / G) * (p->subsampled ? out_points(d)
                                                                        : in_points(d));
                build_segments(d->oh, d->ow, j0, ncols, NR, s->segs, s->seg_start);
                break;
            case BDNN_DIR_BWD_DATA:
                b_inst = e->b_src + inst * (d->oc / G) * out_points(d);
                build_segments(d->ih, d->iw, j0, ncols, NR, s->segs, s->seg_start);
                break;
            default:
                wcols_build(d, j0, ncols, s->wcols);
                s->wcol0 = j0;
            }
            for (int64_t pc = 0; pc < K; pc += KC) {
                const int64_t kc = K - pc < KC ? K - pc : KC;
                const int64_t kcp = pack ? bdnn_div_up(kc, pack) * pack : kc;
                const int last = pc + kc == K;
                const int mode = pc > 0 ? UKR_ACCUMULATE : has_sum ? UKR_SUM : UKR_WRITE;
                const void *a_blk;   /* A micro-panels of rows [m0, ...) for this k block */
                switch (p->dir) {
                case BDNN_DIR_FWD:
                case BDNN_DIR_BWD_DATA:
                    if (p->dir == BDNN_DIR_FWD)
                        pack_b_fwd(e, b_inst, pads ? pads + g * (d->ic / G) : NULL,
                                   pc, kc, q_packed, npanels, s);
                    else
                        pack_b_bwd_data(e, b_inst,
                                        c->src_zps ? c->src_zps + g * (d->oc / G) : NULL, pc,
                                        kc, q_packed, npanels, s);
                    if (pack)
                        a_blk = (const char *)e->a_packed
                              + aelt * (size_t)(g * p->a_panels * MR * p->Kp
                                               + pc * p->a_panels * MR + (m0 / MR) * kcp * MR);
                    else
                        a_blk = (const float *)e->a_packed + g * p->a_panels * MR * K
                              + pc * p->a_panels * MR + (m0 / MR) * kc * MR;
                    break;
                default:
                    pack_b_bwd_weights(e, g, pc, kc, ncols, s);
                    pack_a_bwd_weights(e, g, m0, m1, pc, kc, s->ap);
                    a_blk = s->ap;
                    if (pack) {
                        for (int64_t m = m0; m < m1; m += MR)
                            regroup(s->ap + (m - m0) * kc, kc, MR, pack, 0.0f, 0, u->a_wide,
                                    (char *)s->aq + aelt * (size_t)((m - m0) * kcp));
                        a_blk = s->aq;
                    }
                }
                if (pack)
                    for (int64_t q = 0; q < npanels; ++q)
                        regroup(s->bp + q * kc * NR, kc, NR, pack, p->b_shift, 1, 0,
                                (char *)s->bq + elt * (size_t)(q * kcp * NR));
                for (int64_t q = 0; q < npanels; ++q) {
                    const int64_t j = j0 + q * NR, nr = N - j < NR ? N - j : NR;
                    for (int64_t m = m0; m < m1; m += MR) {
                        const int64_t mr = M - m < MR ? M - m : MR;
                        if (!lp) {
                            float *tile = c_inst + m * N + j;
                            const int in_place = q < q_packed;
                            u->fn(kc, (const float *)a_blk + (m - m0) * kc,
                                  in_place ? b_inst + pc * N + j : s->bp + q * kc * NR,
                                  in_place ? N : NR, tile, N, mr, nr,
                                  mode | (last && fuse_relu ? UKR_RELU : 0),
                                  bias_g ? bias_g + m : NULL, sum_scale,
                                  fuse_relu ? tail->alpha : 0.0f);
                            continue;
                        }
                        void *acc = (char *)s->acc + 4 * (size_t)((m - m0) * p->nc + q * NR);
                        if (pack)
                            u->dp_fn(kcp, (const char *)a_blk + aelt * (size_t)((m - m0) * kcp),
                                     (const char *)s->bq + elt * (size_t)(q * kcp * NR),
                                     NR * pack, acc, p->nc, mr, nr, pc > 0);
                        else
                            u->fn(kc, (const float *)a_blk + (m - m0) * kc, s->bp + q * kc * NR,
                                  NR, acc, p->nc, mr, nr, pc > 0 ? UKR_ACCUMULATE : UKR_WRITE,
                                  NULL, 0.0f, 0.0f);
                        if (last && border)
                            take_back_border(d, border + (g * M + m) * taps_of(d), mr, j, nr,
                                             (int32_t *)acc, p->nc);
                        if (last)
                            bdnn_conv_epilogue(c, acc, p->nc, mr, nr, g * M + m,
                                               p->dir == BDNN_DIR_BWD_WEIGHTS ? NULL : e->bias,
                                               comp, e->out, out_inst + m * N + j, N, s->tmp);
                    }
                }
                /* Eltwise post-ops on the finished block (m_rows x nc, still in L2), a
                 * row of the block per call: per tile row, the calls cost more than the
                 * arithmetic. */
                if (last && has_eltwise && !fuse_relu && !lp)
                    bdnn_post_ops_eltwise(c, c_inst + m0 * N + j0, N, m1 - m0, ncols);
            }
        }
    }
}

const conv_impl_ops_t bdnn_conv_gemm_gather_ops = {
    gather_init, bdnn_gemm_weights_bytes, bdnn_gemm_pack_weights, bdnn_gemm_execute,
    bdnn_gemm_fini, NULL,
};
