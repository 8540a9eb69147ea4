/* Reference convolution: the formulas of the convolution spec written as plain loops.
 *
 *   dst(n, g*OCg + oc, od, oh, ow) = bias(g*OCg + oc)
 *       + sum over ic < ICg, kd, kh, kw of
 *           src(n, g*ICg + ic, od*SD + kd*(DD+1) - PD, oh*SH + kh*(DH+1) - PH, ow*SW + kw*(DW+1) - PW)
 *         * wei(g, oc, ic, kd, kh, kw)
 *   with src = 0 outside the input.
 *
 * Accumulates in double and returns double, so the caller rounds once, to the type it
 * compares in. (A product of two floats is exact in double, so whether the compiler fuses
 * the multiply-add cannot change the result.) Shares nothing with the fast kernels; the
 * OpenMP loop only splits independent output points between threads. */
#include "bdnn.h"

int bdnn_ref_conv_fwd(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                      const float *bias, double *dst) {
    const int64_t G = d->g, MB = d->mb, OCG = d->oc / d->g, ICG = d->ic / d->g;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, OD = d->od, OH = d->oh, OW = d->ow;
    const int64_t KD = d->kd, KH = d->kh, KW = d->kw;
    if (G <= 0 || d->oc % G || d->ic % G) return BDNN_STATUS_INVALID;

#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < MB; ++n)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t od = 0; od < OD; ++od)
    for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = 0.0;
        for (int64_t ic = 0; ic < ICG; ++ic)
        for (int64_t kd = 0; kd < KD; ++kd)
        for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
            const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
            const int64_t iw = ow * d->sw + kw * (d->dw + 1) - d->pw;
            if (id < 0 || id >= ID || ih < 0 || ih >= IH || iw < 0 || iw >= IW) continue;
            const float s = src[((((n * d->ic) + g * ICG + ic) * ID + id) * IH + ih) * IW + iw];
            const float w = wei[(((((g * OCG + oc) * ICG + ic) * KD + kd) * KH + kh) * KW) + kw];
            acc += (double)s * (double)w;
        }
        if (bias) acc += (double)bias[g * OCG + oc];
        dst[((((n * d->oc) + g * OCG + oc) * OD + od) * OH + oh) * OW + ow] = acc;
    }
    return BDNN_STATUS_OK;
}

/* Backward data: the forward formula read the other way round. Every (output point, tap)
 * pair that the forward pass multiplies src(i) by wei(k) for contributes
 * diff_dst(o) * wei(k) to diff_src(i):
 *
 *   diff_src(n, g*ICg + ic, id, ih, iw) = sum over oc < OCg, kd, kh, kw of
 *       diff_dst(n, g*OCg + oc, od, oh, ow) * wei(g, oc, ic, kd, kh, kw)
 *   where od = (id + PD - kd*(DD+1)) / SD exactly (the division has no remainder) and
 *   0 <= od < OD, and likewise for h and w. */
int bdnn_ref_conv_bwd_data(const bdnn_conv_desc_t *d, const float *diff_dst,
                           const float *wei, double *diff_src) {
    const int64_t G = d->g, MB = d->mb, OCG = d->oc / d->g, ICG = d->ic / d->g;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, OD = d->od, OH = d->oh, OW = d->ow;
    const int64_t KD = d->kd, KH = d->kh, KW = d->kw;
    if (G <= 0 || d->oc % G || d->ic % G) return BDNN_STATUS_INVALID;

#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < MB; ++n)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t id = 0; id < ID; ++id)
    for (int64_t ih = 0; ih < IH; ++ih)
    for (int64_t iw = 0; iw < IW; ++iw) {
        double acc = 0.0;
        for (int64_t oc = 0; oc < OCG; ++oc)
        for (int64_t kd = 0; kd < KD; ++kd)
        for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t nd = id + d->pd - kd * (d->dd + 1);
            const int64_t nh = ih + d->ph - kh * (d->dh + 1);
            const int64_t nw = iw + d->pw - kw * (d->dw + 1);
            if (nd < 0 || nh < 0 || nw < 0) continue;
            if (nd % d->sd || nh % d->sh || nw % d->sw) continue;
            const int64_t od = nd / d->sd, oh = nh / d->sh, ow = nw / d->sw;
            if (od >= OD || oh >= OH || ow >= OW) continue;
            const float dd = diff_dst[((((n * d->oc) + g * OCG + oc) * OD + od) * OH + oh) * OW + ow];
            const float w = wei[(((((g * OCG + oc) * ICG + ic) * KD + kd) * KH + kh) * KW) + kw];
            acc += (double)dd * (double)w;
        }
        diff_src[((((n * d->ic) + g * ICG + ic) * ID + id) * IH + ih) * IW + iw] = acc;
    }
    return BDNN_STATUS_OK;
}

/* Backward weights: each weight collects the products it took part in over the minibatch
 * and every output point:
 *
 *   diff_wei(g, oc, ic, kd, kh, kw) = sum over n, od, oh, ow of
 *       diff_dst(n, g*OCg + oc, od, oh, ow)
 *     * src(n, g*ICg + ic, od*SD + kd*(DD+1) - PD, oh*SH + kh*(DH+1) - PH, ow*SW + kw*(DW+1) - PW)
 *   with src = 0 outside the input;
 *   diff_bias(c) = sum over n, od, oh, ow of diff_dst(n, c, od, oh, ow). */
int bdnn_ref_conv_bwd_weights(const bdnn_conv_desc_t *d, const float *src,
                              const float *diff_dst, double *diff_wei, double *diff_bias) {
    const int64_t G = d->g, MB = d->mb, OCG = d->oc / d->g, ICG = d->ic / d->g;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, OD = d->od, OH = d->oh, OW = d->ow;
    const int64_t KD = d->kd, KH = d->kh, KW = d->kw;
    if (G <= 0 || d->oc % G || d->ic % G) return BDNN_STATUS_INVALID;

#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t kd = 0; kd < KD; ++kd)
    for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
        double acc = 0.0;
        for (int64_t n = 0; n < MB; ++n)
        for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
            const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
            const int64_t iw = ow * d->sw + kw * (d->dw + 1) - d->pw;
            if (id < 0 || id >= ID || ih < 0 || ih >= IH || iw < 0 || iw >= IW) continue;
            const float dd = diff_dst[((((n * d->oc) + g * OCG + oc) * OD + od) * OH + oh) * OW + ow];
            const float s = src[((((n * d->ic) + g * ICG + ic) * ID + id) * IH + ih) * IW + iw];
            acc += (double)dd * (double)s;
        }
        diff_wei[(((((g * OCG + oc) * ICG + ic) * KD + kd) * KH + kh) * KW) + kw] = acc;
    }

    if (diff_bias) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < d->oc; ++c) {
            double acc = 0.0;
            for (int64_t n = 0; n < MB; ++n)
                for (int64_t p = 0; p < OD * OH * OW; ++p)
                    acc += (double)diff_dst[(n * d->oc + c) * OD * OH * OW + p];
            diff_bias[c] = acc;
        }
    }
    return BDNN_STATUS_OK;
}
