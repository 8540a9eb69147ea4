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
