/* The f64 convolution's driver (rows conv_f64:<isa>; contract in conv_f64.h): checks,
 * weight packing and the threading of the per-ISA loops. */
#include <omp.h>
#include <string.h>

#include "conv_f64.h"

static int f64_init(struct bdnn_conv *c) {
    const bdnn_conv_attr_t *a = &c->attr;
    if (a->src_dt != BDNN_DT_F64 || a->wei_dt != BDNN_DT_F64 || a->dst_dt != BDNN_DT_F64
            || (c->with_bias && a->bia_dt != BDNN_DT_F64))
        return BDNN_STATUS_UNIMPLEMENTED;
    if (a->n_post_ops || a->scales != BDNN_SCALES_NONE || a->src_zp || a->dst_zp
            || c->src_zps || c->dst_zps)
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;   /* no plan: the loops keep their accumulators on the stack */
}

static size_t f64_weights_bytes(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_WEIGHTS ? 0
                                          : sizeof(double) * (size_t)bdnn_weights_elems(&c->d);
}

/* The user's [g][oc][ic][tap] as [g][tap][ic][oc] (forward) or [g][tap][oc][ic] (backward
 * data): the loops' channel block then reads contiguous weights. */
static void f64_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, taps = d->kd * d->kh * d->kw;
    const double *w = wei;
    double *p = packed;
    const int fwd = c->dir == BDNN_DIR_FWD;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t g = 0; g < G; ++g)
        for (int64_t oc = 0; oc < OCG; ++oc)
            for (int64_t ic = 0; ic < ICG; ++ic)
                for (int64_t t = 0; t < taps; ++t) {
                    const double v = w[((g * OCG + oc) * ICG + ic) * taps + t];
                    if (fwd) p[((g * taps + t) * ICG + ic) * OCG + oc] = v;
                    else p[((g * taps + t) * OCG + oc) * ICG + ic] = v;
                }
}

static f64_act_t f64_act(const struct bdnn_conv *c, int64_t channels, int64_t points) {
    const f64_act_t plain = {channels * points, points, 1}, nhwc = {channels * points, 1, channels};
    return c->attr.layout == BDNN_LAYOUT_NHWC ? nhwc : plain;
}

static void f64_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *args) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_f64_ker_t *k = c->impl->kernel;
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, taps = d->kd * d->kh * d->kw;
    f64_args_t a = {d, f64_act(c, d->ic, d->id * d->ih * d->iw),
                    f64_act(c, d->oc, d->od * d->oh * d->ow), args->src, args->wei,
                    args->bias, args->diff_dst, NULL, c->fault == BDNN_FAULT_TRUNCATE_DST};
    if (c->dir != BDNN_DIR_BWD_WEIGHTS) {
        /* rows of the written activation: dst's (od, oh) forward, diff_src's (id, ih)
         * backward data */
        const int fwd = c->dir == BDNN_DIR_FWD;
        void (*row)(const f64_args_t *, int64_t, int64_t, int64_t, int64_t)
            = fwd ? k->fwd_row : k->bwd_data_row;
        const int64_t R0 = fwd ? d->od : d->id, R1 = fwd ? d->oh : d->ih;
        a.out = fwd ? args->dst : args->diff_src;
#pragma omp parallel for collapse(4) schedule(static) num_threads(c->nthr)
        for (int64_t n = 0; n < d->mb; ++n)
            for (int64_t g = 0; g < G; ++g)
                for (int64_t r0 = 0; r0 < R0; ++r0)
                    for (int64_t r1 = 0; r1 < R1; ++r1) row(&a, n, g, r0, r1);
        return;
    }
    a.out = args->diff_wei;
    const int64_t icb = bdnn_div_up(ICG, F64_BLOCK);
#pragma omp parallel num_threads(c->nthr)
    {
#pragma omp for collapse(4) schedule(dynamic)
        for (int64_t g = 0; g < G; ++g)
            for (int64_t t = 0; t < taps; ++t)
                for (int64_t oc = 0; oc < OCG; ++oc)
                    for (int64_t b = 0; b < icb; ++b) {
                        const int64_t ic0 = b * F64_BLOCK;
                        k->bwd_weights(&a, g, t, oc, ic0,
                                       ICG - ic0 < F64_BLOCK ? ICG - ic0 : F64_BLOCK);
                    }
        if (args->bias) {   /* diff_bias: diff_dst summed per channel, in double */
            double *diff_bias = (double *)args->bias;
#pragma omp for schedule(static)
            for (int64_t ch = 0; ch < d->oc; ++ch) {
                double acc = 0.0;
                for (int64_t n = 0; n < d->mb; ++n)
                    for (int64_t p = 0; p < d->od * d->oh * d->ow; ++p)
                        acc += a.diff_dst[n * a.at_dst.sn + ch * a.at_dst.sc + p * a.at_dst.sp];
                diff_bias[ch] = acc;
            }
        }
    }
}

static void f64_fini(struct bdnn_conv *c) { (void)c; }

const conv_impl_ops_t bdnn_conv_f64_ops = {
    f64_init, f64_weights_bytes, f64_pack_weights, f64_execute, f64_fini, NULL,
};
