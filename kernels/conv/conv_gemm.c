/* gemm_conv's shared part (conv_gemm.h has the method and the routes): a plan's head
 * (the GEMM per instance) and teardown, the weights reorder into the routes' A panels,
 * and execution (staging, the route's loops, the k splits' sum). */
#include "conv_gemm.h"

/* ---------------------------------------------------------------------------------------
 * Planning */

void bdnn_gemm_fini(struct bdnn_conv *c) {
    gemm_plan_t *p = c->plan;
    if (!p) return;
    if (p->scratch)
        for (int t = 0; t < c->nthr; ++t) {
            free(p->scratch[t].bp);
            free(p->scratch[t].ap);
            free(p->scratch[t].segs);
            free(p->scratch[t].seg_start);
            free(p->scratch[t].wcols);
            free(p->scratch[t].bq);
            free(p->scratch[t].aq);
            free(p->scratch[t].acc);
            free(p->scratch[t].tmp);
            free(p->scratch[t].brows);
            free(p->scratch[t].krows);
            free(p->scratch[t].wruns);
            free(p->scratch[t].runs);
            free(p->scratch[t].cbuf);
        }
    free(p->scratch);
    free(p->stage_b);
    free(p->pads);
    free(p->stage_a);
    free(p->bias_f32);
    free(p->partials);
    free(p->padded);
    free(p->subsampled);
    free(p->op_a);
    free(p->op_b);
    free(p);
    c->plan = NULL;
}

int bdnn_gemm_plan_new(struct bdnn_conv *c, gemm_plan_t **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    gemm_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->dir = c->dir;
    const int64_t icg = d->ic / d->g, ocg = d->oc / d->g, taps = taps_of(d);
    switch (c->dir) {
    case BDNN_DIR_FWD:
        p->instances = d->mb * d->g, p->M = ocg, p->N = out_points(d), p->K = icg * taps;
        break;
    case BDNN_DIR_BWD_DATA:
        p->instances = d->mb * d->g, p->M = icg, p->N = in_points(d), p->K = ocg * taps;
        break;
    case BDNN_DIR_BWD_WEIGHTS:
        p->instances = d->g, p->M = ocg, p->N = icg * taps, p->K = d->mb * out_points(d);
        break;
    default:
        return BDNN_STATUS_INVALID;
    }
    p->a_panels = bdnn_div_up(p->M, u->mr);
    *out = p;
    return BDNN_STATUS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Weights reorder (forward and backward data) */

size_t bdnn_gemm_weights_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return 0;
    if (!p->pack) return sizeof(float) * (size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->K);
    if (has_pairs16(c)) return pairs16_offset(c) + pairs16_a_bytes(c) + sizeof(int32_t);
    return grouped_head_bytes(c);
}

/* The largest |w0| + |w1| over the s8 weight pairs (bytes 0-1 and 2-3 of each quad) of
 * n bytes of grouped A (the k padding's zeros included: they bound nothing). */
static int32_t weight_pair_max(const int8_t *a, size_t n) {
    int32_t most = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        const int32_t s = abs((int32_t)a[i]) + abs((int32_t)a[i + 1]);
        if (s > most) most = s;
    }
    return most;
}

/* Space-to-depth: the original input channel and tap of row k = (tap', phase * IC + ic) of
 * the phase problem; 0 where that tap lies past the kernel (a zero weight). */
static int s2d_source(const bdnn_conv_desc_t *d, const gemm_plan_t *p, int64_t k,
                      int64_t *ic, int64_t *tap) {
    const int64_t ch = k % p->s_icg, tp = k / p->s_icg;
    const int64_t phase = ch / d->ic, py = phase / p->s2d_w, px = phase % p->s2d_w;
    const int64_t ky = (tp / p->s_kw) * p->s2d_h + py, kx = (tp % p->s_kw) * p->s2d_w + px;
    *ic = ch % d->ic, *tap = ky * d->kw + kx;
    return ky < d->kh && kx < d->kw;
}

/* The first k of k's block: blocks of KC from 0, or (shift) from each tap's first row. */
static int64_t kblock_start(const gemm_plan_t *p, int64_t k) {
    const int64_t seg = p->shift ? k / p->s_icg * p->s_icg : 0;
    return seg + (k - seg) / KC * KC;
}

/* The same blocks by index (K rows): per segment (a tap's rows for shift, else all K),
 * ceil(segment / KC) of them; kblocks gives their count, kblock_first block b's start. */
static int64_t kblocks_per_seg(const gemm_plan_t *p, int64_t K) {
    return bdnn_div_up(p->shift ? p->s_icg : K, KC);
}
static int64_t kblocks(const gemm_plan_t *p, int64_t K) {
    return (p->shift ? K / p->s_icg : 1) * kblocks_per_seg(p, K);
}
static int64_t kblock_first(const gemm_plan_t *p, int64_t K, int64_t b) {
    const int64_t per_seg = kblocks_per_seg(p, K);
    return (p->shift ? b / per_seg * p->s_icg : 0) + b % per_seg * KC;
}

/* From this many packed values on, the rows k of A are packed on the primitive's threads
 * (each k's values land at a place of their own: no two threads write one). */
enum { PACK_PARALLEL_MIN = 1 << 20 };

/* Row k of one group's A (wg: the group's weights): its a_panels x MR values into k's
 * block, whose first value is at blk (panel ip's MR values at ip * kc * MR + kk * MR, kk
 * = k - the block's start); rows past M are zeros. */
static void pack_k_f32(const struct bdnn_conv *c, const float *wg, int64_t k, float *blk) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = ukr_of(c)->mr, M = p->M, taps = taps_of(d), icg = d->ic / d->g;
    const int fwd = c->dir == BDNN_DIR_FWD;
    const int64_t pc = kblock_start(p, k), kc = kblock_len(p, pc), kk = k - pc;
    /* what k names: forward, (ic, tap) (shift: (tap, ic)); backward data, (oc, tap);
     * col2im, oc */
    int64_t k_ch = fwd ? (p->shift ? k % icg : k / taps) : p->col2im ? k : k / taps;
    int64_t k_tap = fwd && p->shift ? k / icg : k % taps;
    const int real = !p->s2d_h || s2d_source(d, p, k, &k_ch, &k_tap);
    for (int64_t ip = 0; ip < p->a_panels; ++ip) {
        float *row = blk + ip * kc * MR + kk * MR;
        /* rows past M are zeros, written without the loop below (an M of 1, a single
         * output channel, leaves MR - 1 of them in every k) */
        const int64_t live = real ? (M - ip * MR < MR ? M - ip * MR : MR) : 0;
        for (int64_t r = live; r < MR; ++r) row[r] = 0.0f;
        for (int64_t r = 0; r < live; ++r) {
            const int64_t m = ip * MR + r;
            /* forward: A[oc][(ic, tap)]; backward data: A[ic][(oc, tap)]; col2im:
             * A[(ic, tap)][oc]; shift: A[oc][(tap, ic)] */
            const int64_t oc = fwd ? m : k_ch;
            const int64_t ic = fwd ? k_ch : p->col2im ? m / taps : m;
            const int64_t tp = fwd || !p->col2im ? k_tap : m % taps;
            float v = wg[(oc * icg + ic) * taps + tp];
            if (c->fault == BDNN_FAULT_SKIP_LAST_IC && ic == icg - 1) v = 0.0f;
            if (c->fault == BDNN_FAULT_SKIP_LAST_TAP && tp == taps - 1) v = 0.0f;
            row[r] = v;
        }
    }
}

/* The border table (gemm_plan_t.border; forward: row k of A is (ic, tap)): entry (g, oc,
 * tap) = the sum over ic of w * (pad - zero point) of ic, exact in int64, wrapped to
 * int32 as the s32 accumulators wrap. */
static void pack_border(const struct bdnn_conv *c, const float *w32, int32_t *table) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t taps = taps_of(d), icg = d->ic / d->g, M = p->M;
    for (int64_t g = 0; g < d->g; ++g)
        for (int64_t oc = 0; oc < M; ++oc)
            for (int64_t t = 0; t < taps; ++t) {
                int64_t sum = 0;
                for (int64_t ic = 0; ic < icg; ++ic) {
                    const int64_t ch = g * icg + ic;
                    const int64_t zp = c->src_zps ? c->src_zps[ch] : c->attr.src_zp;
                    const int64_t pad = p->pads ? p->pads[ch] : (int64_t)p->pad;
                    sum += (int64_t)w32[((g * M + oc) * icg + ic) * taps + t] * (pad - zp);
                }
                table[(g * M + oc) * taps + t] = (int32_t)sum;
            }
}

/* Weights of any type: widened to f32 and packed into A's panels, k block by k block
 * (each k's values land at a place of their own: the threads share the k rows); for the
 * dot-product kernels each block goes through a thread's f32 block and is regrouped,
 * and for int8 the compensation (see the top) is appended. */
void bdnn_gemm_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return;
    const int64_t n = bdnn_weights_elems(d), MR = ukr_of(c)->mr, K = p->K, M = p->M;
    const int64_t taps = taps_of(d), wg_elems = (d->oc / d->g) * (d->ic / d->g) * taps;
    float *wf = NULL;
    if (c->attr.wei_dt != BDNN_DT_F32) {
        wf = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        if (!wf) return;
        bdnn_cvt_to_f32(c->attr.wei_dt, wei, wf, n);
    }
    const float *w32 = wf ? wf : (const float *)wei;
    const int big = K * p->a_panels * MR >= PACK_PARALLEL_MIN;
    if (!p->pack) {
        for (int64_t g = 0; g < d->g; ++g) {
            float *ag = (float *)packed + g * p->a_panels * MR * K;
#pragma omp parallel for num_threads(c->nthr) schedule(static) if (big)
            for (int64_t k = 0; k < K; ++k)
                pack_k_f32(c, w32 + g * wg_elems, k, ag + kblock_start(p, k) * p->a_panels * MR);
        }
        free(wf);
        return;
    }
    const size_t elt = a_esz(c);
    int32_t *comp = p->pack == 4 ? (int32_t *)((char *)packed + grouped_bytes(c)) : NULL;
    int8_t *narrow = has_pairs16(c) ? (int8_t *)packed + pairs16_offset(c) : NULL;
    if (narrow) *(int32_t *)pairs16_wmax(c, packed) = INT32_MAX;   /* until packed whole */
    const int64_t zp_shift = (int64_t)c->attr.src_zp + (int64_t)p->b_shift;
    /* per-channel zero points (gather route: row k is (channel read, tap) of the group,
     * ic forward, oc backward data) */
    const int64_t cg = c->dir == BDNN_DIR_FWD ? d->ic / d->g : d->oc / d->g;
    const int64_t n_blocks = kblocks(p, K);
    /* each row's compensation: its weights times the padding's byte (zero point + shift),
     * summed exactly in int64 over every k, wrapped to int32 at the end */
    int64_t *sums = comp ? calloc((size_t)(M > 0 ? M : 1), sizeof(int64_t)) : NULL;
    int oom = comp && !sums;
    for (int64_t g = 0; g < d->g && !oom; ++g) {
        const float *wg = w32 + g * wg_elems;
        char *qg = (char *)packed + elt * (size_t)(g * p->a_panels * MR * p->Kp);
        if (sums) memset(sums, 0, sizeof(int64_t) * (size_t)M);
#pragma omp parallel num_threads(big ? c->nthr : 1)
        {
            float *blk = malloc(sizeof(float) * (size_t)(p->a_panels * MR * KC));
            int64_t *mine = sums ? calloc((size_t)(M > 0 ? M : 1), sizeof(int64_t)) : NULL;
            const int ok = blk && (!sums || mine);
            if (!ok) {
#pragma omp atomic write
                oom = 1;
            }
#pragma omp for schedule(static)
            for (int64_t b = 0; b < n_blocks; ++b) {
                if (!ok) continue;
                const int64_t pc = kblock_first(p, K, b);
                const int64_t kc = kblock_len(p, pc), kcp = bdnn_div_up(kc, p->pack) * p->pack;
                for (int64_t k = pc; k < pc + kc; ++k) pack_k_f32(c, wg, k, blk);
                for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                    const size_t at = (size_t)(pc * p->a_panels * MR + ip * kcp * MR);
                    regroup(blk + ip * kc * MR, kc, MR, p->pack, 0.0f, 0, ukr_of(c)->a_wide,
                            qg + elt * at);
                    if (narrow)   /* the bounded tile's copy: s8, one byte an element */
                        regroup(blk + ip * kc * MR, kc, MR, p->pack, 0.0f, 0, 0,
                                narrow + (size_t)(g * p->a_panels * MR * p->Kp) + at);
                }
                if (!mine) continue;
                for (int64_t m = 0; m < M; ++m) {
                    const float *col = blk + (m / MR) * kc * MR + m % MR;
                    int64_t sum = 0;
                    for (int64_t kk = 0; kk < kc; ++kk)
                        sum += (int64_t)col[kk * MR]
                             * (c->src_zps ? (int64_t)c->src_zps[g * cg + (pc + kk) / taps]
                                                 + (int64_t)p->b_shift
                                           : zp_shift);
                    mine[m] += sum;
                }
            }
            if (mine) {
#pragma omp critical(bdnn_pack_comp)
                for (int64_t m = 0; m < M; ++m) sums[m] += mine[m];
            }
            free(mine);
            free(blk);
        }
        if (sums && !oom)
            for (int64_t m = 0; m < M; ++m) comp[g * M + m] = (int32_t)sums[m];
    }
    free(sums);
    if (narrow && !oom)
        *(int32_t *)pairs16_wmax(c, packed) =
            weight_pair_max(narrow, (size_t)(d->g * p->a_panels * MR * p->Kp));
    if (p->border && !oom) pack_border(c, w32, (int32_t *)border_table(c, packed));
    free(wf);
}

/* out = the sum of the k splits' partial results. */
static void reduce_partials(const struct bdnn_conv *c, float *out) {
    const gemm_plan_t *p = c->plan;
    const int64_t n = p->instances * p->M * p->N;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        float sum = p->partials[i];
        for (int64_t ks = 1; ks < p->k_splits - (c->fault == BDNN_FAULT_SPLIT_DROPPED); ++ks)
            sum += p->partials[ks * n + i];
        out[i] = sum;
    }
}

/* Widens a tensor to f32 in parallel (the lp path's copy of a non-f32 operand). */
static const float *staged(const struct bdnn_conv *c, int dt, const void *in, float *copy,
                           int64_t n) {
    if (!copy) return in;
    const int64_t chunk = 1 << 14;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t i = 0; i < n; i += chunk)
        bdnn_cvt_to_f32(dt, (const char *)in + (size_t)i * bdnn_dt_size(dt), copy + i,
                        n - i < chunk ? n - i : chunk);
    return copy;
}

/* The input points a strided 1x1 forward reads, dense: (n, ic, od, oh, ow) at
 * (od*SD, oh*SH, ow*SW). */
static const float *subsample(const struct bdnn_conv *c, const float *src) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t OD = d->od, OH = d->oh, OW = d->ow, SW = d->sw;
#pragma omp parallel for collapse(2) num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < d->mb * d->ic; ++plane)
        for (int64_t od = 0; od < OD; ++od) {
            const float *in_z = src + (plane * d->id + od * d->sd) * d->ih * d->iw;
            float *out_z = p->subsampled + (plane * OD + od) * OH * OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const float *in = in_z + oh * d->sh * d->iw;
                float *out = out_z + oh * OW;
                for (int64_t ow = 0; ow < OW; ++ow) out[ow] = in[ow * SW];
            }
        }
    /* (the last panel's reads past the points: the scratchpad holds anything) */
    memset(p->subsampled + d->mb * d->ic * OD * OH * OW, 0,
           sizeof(float) * (size_t)p->subsampled_slack);
    return p->subsampled;
}

void bdnn_gemm_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    exec_t e = {c, p, NULL, NULL, NULL, NULL, NULL, p->pad, NULL};
    const int b_dt = b_dt_of(c);
    switch (c->dir) {
    case BDNN_DIR_FWD:
        e.a_packed = a->wei, e.bias = a->bias, e.out = a->dst;
        e.b_src = staged(c, b_dt, a->src, p->stage_b, src_elems(d));
        if (p->subsampled) e.b_src = subsample(c, e.b_src);
        break;
    case BDNN_DIR_BWD_DATA:
        e.a_packed = a->wei, e.bias = a->bias, e.out = a->diff_src;
        e.b_src = staged(c, b_dt, a->diff_dst, p->stage_b, dst_elems(d));
        break;
    default:
        e.out = a->diff_wei;
        e.b_src = staged(c, b_dt, a->src, p->stage_b, src_elems(d));
        e.a_src = staged(c, c->attr.dst_dt, a->diff_dst, p->stage_a, dst_elems(d));
        if (p->subsampled) e.b_src = subsample(c, e.b_src);
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->d.mb == 0) {
        /* An empty minibatch: every sum is empty, and the k loop would never write C.
         * All-zero bits are 0 in every type. */
        memset(e.out, 0, (c->lp ? bdnn_dt_size(c->out_dt) : sizeof(float))
                         * (size_t)bdnn_weights_elems(&c->d));
        if (c->lp && a->bias) memset((void *)a->bias, 0, bdnn_dt_size(c->attr.bia_dt) * (size_t)d->oc);
        return;
    }
    if (p->op) bdnn_gemm_run_outer(&e);
    else if (p->col2im) bdnn_gemm_run_col2im(&e);
    else if (p->shift) bdnn_gemm_run_shift(&e);
    else bdnn_gemm_run_gather(&e);
    if (p->k_splits > 1) reduce_partials(c, e.out);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->lp && a->bias) {
        /* diff_bias: f32 sums of the f32 diff_dst, converted once. */
        bdnn_bias_grad(e.a_src, d->mb, d->oc, out_points(d), p->bias_f32);
        bdnn_cvt_from_f32(c->attr.bia_dt, p->bias_f32, (void *)a->bias, d->oc);
    }
}
