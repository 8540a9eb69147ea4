/* dw_conv_fwd: forward depthwise convolution (one input and one output channel per group),
 * directly on the plain layouts. Threads split the (image, channel) planes; each plane is
 * computed by the ISA's plane kernel (conv_dw.inc) row by row.
 * Weights layout: the user's own ([G][1][1][KD][KH][KW]), so packing is a copy. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"

typedef struct {
    int64_t *ow_lo, *ow_hi;   /* per kw: valid output columns [lo, hi) */
    float **row_acc;          /* per thread: OW floats */
} dw_plan_t;

static void dw_fini(struct bdnn_conv *c) {
    dw_plan_t *p = c->plan;
    if (!p) return;
    if (p->row_acc)
        for (int t = 0; t < c->nthr; ++t) free(p->row_acc[t]);
    free(p->row_acc);
    free(p->ow_lo);
    free(p->ow_hi);
    free(p);
    c->plan = NULL;
}

static int dw_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir != BDNN_DIR_FWD || c->lp) return BDNN_STATUS_UNIMPLEMENTED;
    if (d->ic != d->g || d->oc != d->g) return BDNN_STATUS_UNIMPLEMENTED;
    dw_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->ow_lo = malloc(sizeof(int64_t) * d->kw);
    p->ow_hi = malloc(sizeof(int64_t) * d->kw);
    p->row_acc = calloc(c->nthr, sizeof(float *));
    if (!p->ow_lo || !p->ow_hi || !p->row_acc) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        /* iw = ow*SW + off must lie in [0, IW). */
        const int64_t off = kw * (d->dw + 1) - d->pw;
        int64_t lo = off >= 0 ? 0 : bdnn_div_up(-off, d->sw);
        int64_t hi = bdnn_floor_div(d->iw - 1 - off, d->sw) + 1;
        if (hi > d->ow) hi = d->ow;
        if (hi < 0) hi = 0;
        if (lo > hi) lo = hi;
        p->ow_lo[kw] = lo;
        p->ow_hi[kw] = hi;
    }
    for (int t = 0; t < c->nthr; ++t) {
        p->row_acc[t] = bdnn_aligned_alloc(sizeof(float) * (d->ow > 0 ? d->ow : 1));
        if (!p->row_acc[t]) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static size_t dw_weights_bytes(const struct bdnn_conv *c) {
    return sizeof(float) * (size_t)(c->d.g * c->d.kd * c->d.kh * c->d.kw);
}

static void dw_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed_v) {
    float *packed = packed_v;
    if (c->fault == BDNN_FAULT_SKIP_LAST_IC) /* the only input channel is the last one */
        memset(packed, 0, dw_weights_bytes(c));
    else
        memcpy(packed, wei, dw_weights_bytes(c));
    if (c->fault == BDNN_FAULT_SKIP_LAST_TAP) {
        const int64_t taps = c->d.kd * c->d.kh * c->d.kw;
        for (int64_t ch = 0; ch < c->d.g; ++ch) packed[ch * taps + taps - 1] = 0.0f;
    }
}

/* The deliberate right-edge defect: taps past the right edge read the row's last value. */
static void dw_fault_right_edge(const bdnn_conv_desc_t *d, const dw_plan_t *p,
                                const float *src, const float *wei, int64_t od, int64_t oh,
                                float *row_acc) {
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        const float edge = src[(id * d->ih + ih) * d->iw + d->iw - 1];
        for (int64_t kw = 0; kw < d->kw; ++kw) {
            if (p->ow_hi[kw] <= p->ow_lo[kw]) continue;
            for (int64_t ow = p->ow_hi[kw]; ow < d->ow; ++ow)
                row_acc[ow] += wei[(kd * d->kh + kh) * d->kw + kw] * edge;
        }
    }
}

static void dw_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const bdnn_conv_desc_t *d = &c->d;
    const dw_plan_t *p = c->plan;
    const conv_dw_row_fn row_kernel = ((const conv_dw_ker_t *)c->impl->kernel)->fn;
    const int64_t in_plane = d->id * d->ih * d->iw, out_plane = d->od * d->oh * d->ow;
    const int64_t taps = d->kd * d->kh * d->kw, planes = d->mb * d->g, OW = d->ow;
    int has_sum;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int swapped = c->fault == BDNN_FAULT_POST_OPS_SWAPPED && has_sum;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const int64_t ch = pl % d->g;
        const float *s = (const float *)a->src + pl * in_plane;
        const float *w = (const float *)a->wei + ch * taps;
        const float bias = a->bias ? ((const float *)a->bias)[ch] : 0.0f;
        float *acc = p->row_acc[omp_get_thread_num()];
        for (int64_t od = 0; od < d->od; ++od)
        for (int64_t oh = 0; oh < d->oh; ++oh) {
            row_kernel(d, s, w, od, oh, acc, p->ow_lo, p->ow_hi);
            if (c->fault == BDNN_FAULT_RIGHT_PAD_EDGE) dw_fault_right_edge(d, p, s, w, od, oh, acc);
            float *drow = (float *)a->dst + pl * out_plane + (od * d->oh + oh) * OW;
            /* Epilogue while the row is in cache: bias, sum (reads the prior dst), eltwise. */
            if (swapped) {   /* the deliberate defect: eltwise before the sum */
                for (int64_t ow = 0; ow < OW; ++ow) acc[ow] += bias;
                bdnn_post_ops_eltwise(c, acc, OW, 1, OW);
                for (int64_t ow = 0; ow < OW; ++ow) drow[ow] = sum_scale * drow[ow] + acc[ow];
                continue;
            }
            if (has_sum)
                for (int64_t ow = 0; ow < OW; ++ow) drow[ow] = sum_scale * drow[ow] + bias + acc[ow];
            else
                for (int64_t ow = 0; ow < OW; ++ow) drow[ow] = bias + acc[ow];
            bdnn_post_ops_eltwise(c, drow, OW, 1, OW);
        }
    }
}

const conv_impl_ops_t bdnn_conv_dw_ops = {
    dw_init, dw_weights_bytes, dw_pack_weights, dw_execute, dw_fini,
};
