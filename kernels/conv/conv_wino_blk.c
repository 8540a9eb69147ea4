/* wino_f43_blocked: forward f32 convolution by Winograd's F(4x4, 3x3) on channel blocks,
 * where the transformed weights fit the caches.
 *
 * Domain: forward, f32 (the fast path), 2D, 3x3 kernel, unit stride, no dilation, one
 * group, U (36 x IC x OC floats) at most BDNN_WINO_BLOCKED_MAX_U_BYTES, activations in
 * the channel blocks of the row's vector width (nChw16c for AVX-512, nChw8c for AVX2);
 * any padding, bias, a sum (first) and eltwise post-ops. Anything else: UNIMPLEMENTED (the wino_f43
 * rows take it, on plain layouts).
 *
 * Why a second Winograd. wino_f43 (conv_wino.c) sums over the input channels with 36
 * GEMMs whose C, M, goes through memory between them and the output transform; its
 * input side gathers each tile's 6x6 patch channel by channel from a plain layout. With
 * 3 input channels the GEMMs are all overhead (slower than the direct kernel). On
 * channel blocks a patch pixel is one vector of input channels, and here M
 * never leaves registers: per 6-wide row of the 6x6 and a few tiles, the row's sums over
 * all the input channels (a broadcast V value against U's vector of output channels),
 * then the output transform along the row at once. With few input channels (at most 4)
 * U's row stays in registers across the tiles instead.
 *
 * Shared with wino_f43 (conv_wino.c): the domain test and U = G g G^T per (oc, ic), in
 * double, with its defects; packed here rounded once, [ob][p][ic][vlen].
 *
 * Loops, outermost first:
 *   work item  (image, tile row)  -- split across threads (dynamic)
 *     chunk of WB_TB tiles: V of each (36 vectors per input block, from the patch's
 *       pixel vectors)
 *       output block: per row i of the 6x6, per WB_QS tiles: M's row in registers, A^T
 *         along it (t buffer); per tile: A^T down the columns, epilogue, store.
 * Work items write disjoint output rows; each thread owns its v and t buffers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"

/* The largest U the row takes is BDNN_WINO_BLOCKED_MAX_U_BYTES (bdnn.h). Each chunk of
 * tiles reads all of U once, so U must come from the caches: past the bound, wino_f43
 * (which streams U once per tile block) is the faster. */
/* Tiles per chunk (at most: a tile row is a work item): their t (24 vectors each) stays
 * in L1, their V (36 per input block) in L2. */
enum { WB_TB = 8 };

typedef struct {
    const conv_wino_blk_ker_t *k;
    int64_t th, tw, icb, ocb, thr_floats;
    float *scratch;   /* per thread: v, t */
} wino_blk_plan_t;

/* The packed U: [ceil(OC/vlen)][36][IC][vlen] floats. */
static size_t u_bytes(const bdnn_conv_desc_t *d, int64_t vlen) {
    return sizeof(float) * (size_t)(bdnn_div_up(d->oc, vlen) * 36 * d->ic * vlen);
}

static int wino_blk_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_wino_blk_ker_t *k = c->impl->kernel;
    if (!bdnn_wino_f43_takes(c, BDNN_FAULT_PADDING_GARBAGE)) return BDNN_STATUS_UNIMPLEMENTED;
    if (bdnn_layout_block(c->attr.layout) != k->vlen) return BDNN_STATUS_UNIMPLEMENTED;
    if (d->g != 1 || u_bytes(d, k->vlen) > (size_t)BDNN_WINO_BLOCKED_MAX_U_BYTES)
        return BDNN_STATUS_UNIMPLEMENTED;
    wino_blk_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->k = k;
    p->th = bdnn_div_up(d->oh, 4), p->tw = bdnn_div_up(d->ow, 4);
    p->ocb = bdnn_div_up(d->oc, k->vlen);
    p->icb = bdnn_div_up(d->ic, k->vlen);
    p->thr_floats = WB_TB * (36 * p->icb + 24) * k->vlen;
    if (conv_scratch((void **)&p->scratch, sizeof(float) * (size_t)(p->thr_floats * c->nthr)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

static void wino_blk_fini(struct bdnn_conv *c) {
    wino_blk_plan_t *p = c->plan;
    if (!p) return;
    free(p->scratch);
    free(p);
    c->plan = NULL;
}

static size_t wino_blk_weights_bytes(const struct bdnn_conv *c) {
    return u_bytes(&c->d, ((const wino_blk_plan_t *)c->plan)->k->vlen);
}

static void wino_blk_pack_weights(const struct bdnn_conv *c, const void *wei_, void *packed) {
    const wino_blk_plan_t *p = c->plan;
    const float *wei = wei_;
    float *u = packed;
    const int64_t vl = p->k->vlen, ic_n = c->d.ic;
    memset(u, 0, wino_blk_weights_bytes(c));
    for (int64_t oc = 0; oc < c->d.oc; ++oc)
        for (int64_t ic = 0; ic < ic_n; ++ic) {
            double uw[36];
            bdnn_wino_f43_weights(c, wei + (oc * ic_n + ic) * 9, uw);
            for (int pos = 0; pos < 36; ++pos)
                u[((oc / vl * 36 + pos) * ic_n + ic) * vl + oc % vl] = (float)uw[pos];
        }
}

static void wino_blk_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *args) {
    const wino_blk_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t vl = p->k->vlen, items = d->mb * p->th;
    int has_sum;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = c->n_post_ops > has_sum;
    const float tail_v = c->fault == BDNN_FAULT_PADDING_GARBAGE ? 1.0f : 0.0f;
    const size_t dst_bytes = sizeof(float) * (size_t)(d->mb * p->ocb * d->oh * d->ow * vl);
    const int stream = bdnn_streams_output(args->dst, dst_bytes, sizeof(float) * (size_t)vl);
#pragma omp parallel num_threads(c->nthr)
    {
        float *v = p->scratch + p->thr_floats * omp_get_thread_num();
        wino_blk_chunk_t a = {
            .u = args->wei, .bias = args->bias, .v = v, .t = v + WB_TB * 36 * p->icb * vl,
            .ih = d->ih, .iw = d->iw, .src_cb = d->ih * d->iw * vl, .icg = d->ic, .ocb = p->ocb, .oc = d->oc,
            .dst_ob = d->oh * d->ow * vl, .ow = d->ow, .has_sum = has_sum,
            .has_eltwise = has_eltwise, .stream = stream, .sum_scale = sum_scale,
            .tail_v = tail_v,
        };
#pragma omp for schedule(dynamic, 1)
        for (int64_t item = 0; item < items; ++item) {
            const int64_t n = item / p->th, ty = item % p->th;
            a.src = (const float *)args->src + n * p->icb * a.src_cb;
            a.dst = (float *)args->dst + n * p->ocb * a.dst_ob;
            a.oy = 4 * ty, a.y0 = a.oy - d->ph;
            a.rows = d->oh - a.oy < 4 ? d->oh - a.oy : 4;
            a.rows_inside = a.y0 >= 0 && a.y0 + 6 <= d->ih;
            for (int64_t tx0 = 0; tx0 < p->tw; tx0 += WB_TB) {
                a.nt = p->tw - tx0 < WB_TB ? p->tw - tx0 : WB_TB;
                a.ox0 = 4 * tx0, a.x0 = a.ox0 - d->pw;
                p->k->chunk(c, &a);
            }
        }
    }
}

const conv_impl_ops_t bdnn_conv_wino_blk_ops = {
    wino_blk_init, wino_blk_weights_bytes, wino_blk_pack_weights, wino_blk_execute,
    wino_blk_fini, NULL,
};
