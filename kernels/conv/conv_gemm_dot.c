/* gemm_conv_int8's dot route (rows gemm_conv_int8:<isa>:dot): int8 forward on the plain
 * layouts, for a problem with a long reduction and few outputs per image, such as a
 * kernel as large as its input (one output point). The gather route packs every k row of
 * B into a micro-panel as wide as its kernel's NR, so with one or a few output points it
 * spends its time packing and regrouping padding; here each output is a sum of dot
 * products, one per (input channel, kd, kh), of the kw taps that read inside the input
 * (contiguous in the source and in the weights: dw = 0), read where they lie.
 *
 * Loops: item (output, share of the (ic, kd) rows)  -- split across threads, so that one
 *          output's reduction still runs on every thread
 *        row (ic, kd), kh                           -- skip what reads padding
 *        the ISA's dot kernel over the kw run        -- conv_dot_fn (conv_impl.h)
 * then, per image, the shares' sums added (s32, wrapping: exact whatever their order) and
 * the low-precision epilogue (scales, bias, post-ops, dst zero point, conversion).
 *
 * Zero points: each run adds dot - (zp + shift) * wsum, that is the sum of w * (x - zp)
 * over the taps inside the input, so padding contributes nothing (as on every int8
 * route) and no compensation is packed. An s8 source is read as u8 with its sign bit
 * flipped (x + 128: shift 128). Weights layout: the user's own (plain, goidhw), so packing
 * is a copy. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_gemm.h"   /* out_points */

/* The domain: few outputs per instance (a gather micro-panel would be mostly padding)
 * and runs long enough for a vector kernel. */
enum { DOT_MAX_POINTS = 8, DOT_MAX_OUTPUTS = 64, DOT_MIN_RUN = 16 };

typedef struct {
    int64_t outputs;   /* mb * oc * output points */
    int64_t rows;      /* (ic, kd) rows of one output's group */
    int64_t shares;    /* items per output: ranges of rows */
    uint32_t *part;    /* outputs x shares partial sums */
    float *acc;        /* outputs: the finished s32 sums as f32 (what the epilogue does
                          with an s32 accumulator), dst's plain order */
    float *tmp;        /* the epilogue's row */
} dot_plan_t;

int bdnn_conv_dot_shape(const bdnn_conv_desc_t *d) {
    return d->dw == 0 && d->kw >= DOT_MIN_RUN && out_points(d) <= DOT_MAX_POINTS
        && (d->oc / d->g) * out_points(d) <= DOT_MAX_OUTPUTS;
}

int bdnn_conv_dot_applies(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_FWD && c->fault == BDNN_FAULT_NONE
        && bdnn_conv_dot_shape(&c->d);
}

static void dot_fini(struct bdnn_conv *c) {
    dot_plan_t *p = c->plan;
    if (!p) return;
    free(p->part);
    free(p->acc);
    free(p->tmp);
    free(p);
    c->plan = NULL;
}

static int dot_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    if (!bdnn_conv_dot_applies(c) || c->attr.wei_dt != BDNN_DT_S8
            || (c->attr.src_dt != BDNN_DT_U8 && c->attr.src_dt != BDNN_DT_S8))
        return BDNN_STATUS_UNIMPLEMENTED;
    dot_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    const int64_t points = out_points(d);
    p->outputs = d->mb * d->oc * points;
    p->rows = (d->ic / d->g) * d->kd;
    /* enough items for every thread to get several; no share without rows */
    const int64_t want = 4 * (int64_t)c->nthr;
    p->shares = p->outputs >= want ? 1 : bdnn_div_up(want, p->outputs > 0 ? p->outputs : 1);
    if (p->shares > p->rows) p->shares = p->rows > 0 ? p->rows : 1;
    const int64_t n = p->outputs > 0 ? p->outputs : 1;
    if (conv_scratch((void **)&p->part, sizeof(uint32_t) * (size_t)(n * p->shares))
            || conv_scratch((void **)&p->acc, sizeof(float) * (size_t)n)
            || conv_scratch((void **)&p->tmp, sizeof(float) * (size_t)(points + EPI_TMP_SLACK)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

static size_t dot_weights_bytes(const struct bdnn_conv *c) {
    return (size_t)bdnn_weights_elems(&c->d);
}

static void dot_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    memcpy(packed, wei, dot_weights_bytes(c));
}

/* Output o's sum over rows [r0, r1) of its (ic, kd) rows. */
static uint32_t dot_share(const struct bdnn_conv *c, const uint8_t *src, const int8_t *wei,
                          int64_t o, int64_t r0, int64_t r1) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_dot_fn dot = ((const conv_dot_ker_t *)c->impl->kernel)->fn;
    const int64_t points = out_points(d), icg = d->ic / d->g, ocg = d->oc / d->g;
    const int64_t pt = o % points, oc = (o / points) % d->oc, n = o / (points * d->oc);
    const int64_t g = oc / ocg;
    const int64_t ow = pt % d->ow, oh = pt / d->ow % d->oh, od = pt / (d->ow * d->oh);
    int64_t zlo, zhi, ylo, yhi, xlo, xhi;
    bdnn_taps_inside(od, d->sd, d->dd, d->pd, d->id, d->kd, &zlo, &zhi);
    bdnn_taps_inside(oh, d->sh, d->dh, d->ph, d->ih, d->kh, &ylo, &yhi);
    bdnn_taps_inside(ow, d->sw, 0, d->pw, d->iw, d->kw, &xlo, &xhi);
    const int flip = c->attr.src_dt == BDNN_DT_S8;
    const int64_t ix0 = ow * d->sw - d->pw + xlo, len = xhi - xlo;
    uint32_t sum = 0;
    for (int64_t r = r0; r < r1 && len > 0; ++r) {
        const int64_t ic = r / d->kd, kd = r % d->kd;
        if (kd < zlo || kd >= zhi) continue;
        const int64_t ch = g * icg + ic;
        /* what each weight's x is measured from: the zero point, plus the flip's 128 */
        const uint32_t base = (uint32_t)((int64_t)(c->src_zps ? c->src_zps[ch] : c->attr.src_zp)
                                         + (flip ? 128 : 0));
        const int64_t iz = od * d->sd - d->pd + kd * (d->dd + 1);
        const uint8_t *plane = src + ((n * d->ic + ch) * d->id + iz) * d->ih * d->iw;
        const int8_t *wrow = wei + ((oc * icg + ic) * d->kd + kd) * d->kh * d->kw;
        for (int64_t kh = ylo; kh < yhi; ++kh) {
            const int64_t iy = oh * d->sh - d->ph + kh * (d->dh + 1);
            uint32_t v, ws;
            dot(plane + iy * d->iw + ix0, wrow + kh * d->kw + xlo, len, flip, &v, &ws);
            sum += v - base * ws;
        }
    }
    return sum;
}

static void dot_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const bdnn_conv_desc_t *d = &c->d;
    const dot_plan_t *p = c->plan;
    const uint8_t *src = a->src;
    const int8_t *wei = a->wei;
    const int64_t items = p->outputs * p->shares, S = p->shares, R = p->rows;
#pragma omp parallel for num_threads(c->nthr) schedule(dynamic, 1)
    for (int64_t it = 0; it < items; ++it) {
        const int64_t o = it / S, s = it % S;
        p->part[it] = dot_share(c, src, wei, o, s * R / S, (s + 1) * R / S);
    }
    for (int64_t o = 0; o < p->outputs; ++o) {
        uint32_t sum = 0;
        for (int64_t s = 0; s < S; ++s) sum += p->part[o * S + s];
        p->acc[o] = (float)(int32_t)sum;
    }
    const int64_t points = out_points(d);
    for (int64_t n = 0; n < d->mb; ++n)
        bdnn_conv_epilogue(c, p->acc + n * d->oc * points, points, d->oc, points, 0, a->bias,
                           NULL, a->dst, n * d->oc * points, points, p->tmp);
}

const conv_impl_ops_t bdnn_conv_dot_ops = {
    dot_init, dot_weights_bytes, dot_pack_weights, dot_execute, dot_fini, NULL,
};
