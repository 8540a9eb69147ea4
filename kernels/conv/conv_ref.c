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
 * OpenMP loops only split independent output points between threads.
 *
 * Each direction's formula is written once, as a function of one output point (*_point
 * below). The whole-tensor entry points walk every point in order; the *_at entry points
 * (--check=sampled) walk a caller's list of points. Both call the same function, so a
 * sampled value is by construction the full reference's value at that point. */
#include "bdnn.h"

/* Element access in the plain layouts (bdnn.h). */
#define SRC_AT(n_, c_, z_, y_, x_) \
    src[((((n_) * d->ic + (c_)) * d->id + (z_)) * d->ih + (y_)) * d->iw + (x_)]
#define DST_AT(buf_, n_, c_, z_, y_, x_) \
    buf_[((((n_) * d->oc + (c_)) * d->od + (z_)) * d->oh + (y_)) * d->ow + (x_)]
#define WEI_AT(g_, o_, i_, z_, y_, x_) \
    wei[(((((g_) * OCG + (o_)) * ICG + (i_)) * d->kd + (z_)) * d->kh + (y_)) * d->kw + (x_)]

static int valid(const bdnn_conv_desc_t *d) {
    return d->g > 0 && d->oc % d->g == 0 && d->ic % d->g == 0;
}

/* ---- one point of each direction: the formulas ---------------------------------- */

static double fwd_point(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                        const float *bias, int64_t n, int64_t g, int64_t oc, int64_t od,
                        int64_t oh, int64_t ow) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g;
    double acc = 0.0;
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh)
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        const int64_t iw = ow * d->sw + kw * (d->dw + 1) - d->pw;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) continue;
        acc += (double)SRC_AT(n, g * ICG + ic, id, ih, iw) * (double)WEI_AT(g, oc, ic, kd, kh, kw);
    }
    if (bias) acc += (double)bias[g * OCG + oc];
    return acc;
}

/* Backward data: the forward formula read the other way round. Every (output point, tap)
 * pair that the forward pass multiplies src(i) by wei(k) for contributes
 * diff_dst(o) * wei(k) to diff_src(i):
 *
 *   diff_src(n, g*ICg + ic, id, ih, iw) = sum over oc < OCg, kd, kh, kw of
 *       diff_dst(n, g*OCg + oc, od, oh, ow) * wei(g, oc, ic, kd, kh, kw)
 *   where od = (id + PD - kd*(DD+1)) / SD exactly (the division has no remainder) and
 *   0 <= od < OD, and likewise for h and w. */
static double bwd_data_point(const bdnn_conv_desc_t *d, const float *diff_dst,
                             const float *wei, int64_t n, int64_t g, int64_t ic, int64_t id,
                             int64_t ih, int64_t iw) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g;
    double acc = 0.0;
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh)
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        const int64_t nd = id + d->pd - kd * (d->dd + 1);
        const int64_t nh = ih + d->ph - kh * (d->dh + 1);
        const int64_t nw = iw + d->pw - kw * (d->dw + 1);
        if (nd < 0 || nh < 0 || nw < 0) continue;
        if (nd % d->sd || nh % d->sh || nw % d->sw) continue;
        const int64_t od = nd / d->sd, oh = nh / d->sh, ow = nw / d->sw;
        if (od >= d->od || oh >= d->oh || ow >= d->ow) continue;
        acc += (double)DST_AT(diff_dst, n, g * OCG + oc, od, oh, ow)
             * (double)WEI_AT(g, oc, ic, kd, kh, kw);
    }
    return acc;
}

/* Backward weights: each weight collects the products it took part in over the minibatch
 * and every output point:
 *
 *   diff_wei(g, oc, ic, kd, kh, kw) = sum over n, od, oh, ow of
 *       diff_dst(n, g*OCg + oc, od, oh, ow)
 *     * src(n, g*ICg + ic, od*SD + kd*(DD+1) - PD, oh*SH + kh*(DH+1) - PH, ow*SW + kw*(DW+1) - PW)
 *   with src = 0 outside the input. */
static double bwd_weights_point(const bdnn_conv_desc_t *d, const float *src,
                                const float *diff_dst, int64_t g, int64_t oc, int64_t ic,
                                int64_t kd, int64_t kh, int64_t kw) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g;
    double acc = 0.0;
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t od = 0; od < d->od; ++od)
    for (int64_t oh = 0; oh < d->oh; ++oh)
    for (int64_t ow = 0; ow < d->ow; ++ow) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        const int64_t iw = ow * d->sw + kw * (d->dw + 1) - d->pw;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) continue;
        acc += (double)DST_AT(diff_dst, n, g * OCG + oc, od, oh, ow)
             * (double)SRC_AT(n, g * ICG + ic, id, ih, iw);
    }
    return acc;
}

/*   diff_bias(c) = sum over n, od, oh, ow of diff_dst(n, c, od, oh, ow). */
static double bwd_bias_point(const bdnn_conv_desc_t *d, const float *diff_dst, int64_t c) {
    const int64_t SP = d->od * d->oh * d->ow;
    double acc = 0.0;
    for (int64_t n = 0; n < d->mb; ++n)
        for (int64_t p = 0; p < SP; ++p)
            acc += (double)diff_dst[(n * d->oc + c) * SP + p];
    return acc;
}

/* ---- whole tensors ---------------------------------------------------------------- */

int bdnn_ref_conv_fwd(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                      const float *bias, double *dst) {
    if (!valid(d)) return BDNN_STATUS_INVALID;
    const int64_t G = d->g, OCG = d->oc / d->g;
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t od = 0; od < d->od; ++od)
    for (int64_t oh = 0; oh < d->oh; ++oh)
    for (int64_t ow = 0; ow < d->ow; ++ow)
        DST_AT(dst, n, g * OCG + oc, od, oh, ow)
            = fwd_point(d, src, wei, bias, n, g, oc, od, oh, ow);
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_data(const bdnn_conv_desc_t *d, const float *diff_dst,
                           const float *wei, double *diff_src) {
    if (!valid(d)) return BDNN_STATUS_INVALID;
    const int64_t G = d->g, ICG = d->ic / d->g;
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t id = 0; id < d->id; ++id)
    for (int64_t ih = 0; ih < d->ih; ++ih)
    for (int64_t iw = 0; iw < d->iw; ++iw)
        diff_src[((((n * d->ic) + g * ICG + ic) * d->id + id) * d->ih + ih) * d->iw + iw]
            = bwd_data_point(d, diff_dst, wei, n, g, ic, id, ih, iw);
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_weights(const bdnn_conv_desc_t *d, const float *src,
                              const float *diff_dst, double *diff_wei, double *diff_bias) {
    if (!valid(d)) return BDNN_STATUS_INVALID;
    const int64_t G = d->g, OCG = d->oc / d->g, ICG = d->ic / d->g;
    double *wei = diff_wei;   /* WEI_AT names the weights tensor `wei` */
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh)
    for (int64_t kw = 0; kw < d->kw; ++kw)
        WEI_AT(g, oc, ic, kd, kh, kw)
            = bwd_weights_point(d, src, diff_dst, g, oc, ic, kd, kh, kw);
    if (diff_bias) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < d->oc; ++c)
            diff_bias[c] = bwd_bias_point(d, diff_dst, c);
    }
    return BDNN_STATUS_OK;
}

/* ---- lists of points -------------------------------------------------------------- *
 * A point is a linear offset into the output tensor's plain layout; an offset outside
 * the tensor makes the call BDNN_STATUS_INVALID before anything is computed. Coordinates
 * are peeled off the offset innermost first. */

static int in_range(const int64_t *points, int64_t n_points, int64_t size) {
    for (int64_t i = 0; i < n_points; ++i)
        if (points[i] < 0 || points[i] >= size) return 0;
    return 1;
}

int bdnn_ref_conv_fwd_at(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                         const float *bias, const int64_t *points, int64_t n_points,
                         double *out) {
    if (!valid(d) || n_points < 0) return BDNN_STATUS_INVALID;
    if (!in_range(points, n_points, d->mb * d->oc * d->od * d->oh * d->ow))
        return BDNN_STATUS_INVALID;
    const int64_t OCG = d->oc / d->g;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_points; ++i) {
        int64_t p = points[i];
        const int64_t ow = p % d->ow; p /= d->ow;
        const int64_t oh = p % d->oh; p /= d->oh;
        const int64_t od = p % d->od; p /= d->od;
        const int64_t c = p % d->oc, n = p / d->oc;
        out[i] = fwd_point(d, src, wei, bias, n, c / OCG, c % OCG, od, oh, ow);
    }
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_data_at(const bdnn_conv_desc_t *d, const float *diff_dst,
                              const float *wei, const int64_t *points, int64_t n_points,
                              double *out) {
    if (!valid(d) || n_points < 0) return BDNN_STATUS_INVALID;
    if (!in_range(points, n_points, d->mb * d->ic * d->id * d->ih * d->iw))
        return BDNN_STATUS_INVALID;
    const int64_t ICG = d->ic / d->g;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_points; ++i) {
        int64_t p = points[i];
        const int64_t iw = p % d->iw; p /= d->iw;
        const int64_t ih = p % d->ih; p /= d->ih;
        const int64_t id = p % d->id; p /= d->id;
        const int64_t c = p % d->ic, n = p / d->ic;
        out[i] = bwd_data_point(d, diff_dst, wei, n, c / ICG, c % ICG, id, ih, iw);
    }
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_weights_at(const bdnn_conv_desc_t *d, const float *src,
                                 const float *diff_dst, const int64_t *points,
                                 int64_t n_points, double *out) {
    if (!valid(d) || n_points < 0) return BDNN_STATUS_INVALID;
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g;
    if (!in_range(points, n_points, d->g * OCG * ICG * d->kd * d->kh * d->kw))
        return BDNN_STATUS_INVALID;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_points; ++i) {
        int64_t p = points[i];
        const int64_t kw = p % d->kw; p /= d->kw;
        const int64_t kh = p % d->kh; p /= d->kh;
        const int64_t kd = p % d->kd; p /= d->kd;
        const int64_t ic = p % ICG; p /= ICG;
        const int64_t oc = p % OCG, g = p / OCG;
        out[i] = bwd_weights_point(d, src, diff_dst, g, oc, ic, kd, kh, kw);
    }
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_bias_at(const bdnn_conv_desc_t *d, const float *diff_dst,
                              const int64_t *points, int64_t n_points, double *out) {
    if (!valid(d) || n_points < 0 || !in_range(points, n_points, d->oc))
        return BDNN_STATUS_INVALID;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_points; ++i)
        out[i] = bwd_bias_point(d, diff_dst, points[i]);
    return BDNN_STATUS_OK;
}
