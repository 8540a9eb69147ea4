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
 * Each direction's formula is written once, as a function of one row of points that
 * share every coordinate but the innermost (*_row below): each point keeps its own double
 * accumulator and sums its terms in the order the formula lists them, so a row only
 * interleaves independent sums (which keeps a point's value independent of the row range
 * it is computed in, and lets the loads of one tap serve the whole row). The
 * whole-tensor entry points walk every row in order; the *_at entry points
 * (--check=sampled) compute one-point rows at a caller's list of points. Both call the
 * same function, so a sampled value is by construction the full reference's value at
 * that point. */
#include "bdnn.h"

/* Scalar in the binary as in the source: no auto-vectorization, so each point is computed
 * by the same plain scalar instructions whether it is in a full tensor or sampled. */
#pragma GCC optimize("no-tree-vectorize")

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

/* Index arithmetic for the rows below: floor and ceiling of a / b for b > 0, a of any
 * sign (C's / truncates toward zero). */
static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t div_ceil(int64_t a, int64_t b) { return -div_floor(-a, b); }

/* The points x in [lo, hi) with 0 <= x * stride + offset < size: where a tap at a fixed
 * offset lands inside the tensor. Returns the clipped range through lo and hi. */
static void clip_row(int64_t stride, int64_t offset, int64_t size, int64_t *lo, int64_t *hi) {
    const int64_t first = div_ceil(-offset, stride), last = div_floor(size - 1 - offset, stride);
    if (*lo < first) *lo = first;
    if (*hi > last + 1) *hi = last + 1;
}

/* Forward, the points ow0 <= ow < ow1 of one output row (n, g*OCg + oc, od, oh), into
 * out[ow - ow0]. Each point sums its taps in the formula's order (ic, kd, kh, kw), skipping
 * those that fall outside the input; a row only interleaves the independent sums of its
 * points, so a point's value does not depend on which row range it is computed in. Which
 * points of the row tap kw reaches ([lo, hi)) is the same for every (ic, kd, kh): it is
 * worked out once per row. */
static void fwd_row(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                    const float *bias, int64_t n, int64_t g, int64_t oc, int64_t od,
                    int64_t oh, int64_t ow0, int64_t ow1, double *restrict out) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, sw = d->sw;
    int64_t off[d->kw], lo[d->kw], hi[d->kw];   /* iw = ow * SW + off[kw] */
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        off[kw] = kw * (d->dw + 1) - d->pw;
        lo[kw] = ow0, hi[kw] = ow1;
        clip_row(d->sw, off[kw], d->iw, &lo[kw], &hi[kw]);
    }
    for (int64_t ow = ow0; ow < ow1; ++ow) out[ow - ow0] = 0.0;
    for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        const float *in_row = &SRC_AT(n, g * ICG + ic, id, ih, 0);
        const float *wei_row = &WEI_AT(g, oc, ic, kd, kh, 0);
        for (int64_t kw = 0; kw < d->kw; ++kw) {
            const double w = wei_row[kw];
            const float *in = in_row + off[kw];
            for (int64_t ow = lo[kw]; ow < hi[kw]; ++ow)
                out[ow - ow0] += (double)in[ow * sw] * w;
        }
    }
    if (bias)
        for (int64_t ow = ow0; ow < ow1; ++ow) out[ow - ow0] += (double)bias[g * OCG + oc];
}

/* Backward data: the forward formula read the other way round. Every (output point, tap)
 * pair that the forward pass multiplies src(i) by wei(k) for contributes
 * diff_dst(o) * wei(k) to diff_src(i):
 *
 *   diff_src(n, g*ICg + ic, id, ih, iw) = sum over oc < OCg, kd, kh, kw of
 *       diff_dst(n, g*OCg + oc, od, oh, ow) * wei(g, oc, ic, kd, kh, kw)
 *   where od = (id + PD - kd*(DD+1)) / SD exactly (the division has no remainder) and
 *   0 <= od < OD, and likewise for h and w. */
static void bwd_data_row(const bdnn_conv_desc_t *d, const float *diff_dst,
                         const float *wei, int64_t n, int64_t g, int64_t ic, int64_t id,
                         int64_t ih, int64_t iw0, int64_t iw1, double *restrict out) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, sw = d->sw;
    /* For tap kw, the outputs ow the row [iw0, iw1) reads from: iw = ow * SW + off[kw],
     * the points that are exact multiples away (the remainder test below, for w). The
     * same for every (oc, kd, kh): worked out once per row. */
    int64_t off[d->kw], lo[d->kw], hi[d->kw];
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        off[kw] = kw * (d->dw + 1) - d->pw;
        lo[kw] = div_ceil(iw0 - off[kw], d->sw);
        hi[kw] = div_floor(iw1 - 1 - off[kw], d->sw) + 1;
        if (lo[kw] < 0) lo[kw] = 0;
        if (hi[kw] > d->ow) hi[kw] = d->ow;
    }
    for (int64_t iw = iw0; iw < iw1; ++iw) out[iw - iw0] = 0.0;
    for (int64_t oc = 0; oc < OCG; ++oc)
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t nd = id + d->pd - kd * (d->dd + 1);
        const int64_t nh = ih + d->ph - kh * (d->dh + 1);
        if (nd < 0 || nh < 0 || nd % d->sd || nh % d->sh) continue;
        const int64_t od = nd / d->sd, oh = nh / d->sh;
        if (od >= d->od || oh >= d->oh) continue;
        const float *dd_row = &DST_AT(diff_dst, n, g * OCG + oc, od, oh, 0);
        const float *wei_row = &WEI_AT(g, oc, ic, kd, kh, 0);
        for (int64_t kw = 0; kw < d->kw; ++kw) {
            const double w = wei_row[kw];
            double *o = out + off[kw] - iw0;
            for (int64_t ow = lo[kw]; ow < hi[kw]; ++ow)
                o[ow * sw] += (double)dd_row[ow] * w;
        }
    }
}

/* Backward weights: each weight collects the products it took part in over the minibatch
 * and every output point:
 *
 *   diff_wei(g, oc, ic, kd, kh, kw) = sum over n, od, oh, ow of
 *       diff_dst(n, g*OCg + oc, od, oh, ow)
 *     * src(n, g*ICg + ic, od*SD + kd*(DD+1) - PD, oh*SH + kh*(DH+1) - PH, ow*SW + kw*(DW+1) - PW)
 *   with src = 0 outside the input. */
static void bwd_weights_row(const bdnn_conv_desc_t *d, const float *src,
                            const float *diff_dst, int64_t g, int64_t oc, int64_t ic,
                            int64_t kd, int64_t kh, int64_t kw0, int64_t kw1,
                            double *restrict out) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, sw = d->sw;
    /* The outputs ow whose tap kw reads inside the input row (iw = ow * SW + off[kw]):
     * the same for every (n, od, oh), worked out once. */
    int64_t off[kw1 - kw0], lo[kw1 - kw0], hi[kw1 - kw0];
    for (int64_t kw = kw0; kw < kw1; ++kw) {
        off[kw - kw0] = kw * (d->dw + 1) - d->pw;
        lo[kw - kw0] = 0, hi[kw - kw0] = d->ow;
        clip_row(d->sw, off[kw - kw0], d->iw, &lo[kw - kw0], &hi[kw - kw0]);
    }
    for (int64_t kw = kw0; kw < kw1; ++kw) out[kw - kw0] = 0.0;
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t od = 0; od < d->od; ++od)
    for (int64_t oh = 0; oh < d->oh; ++oh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        const float *dd_row = &DST_AT(diff_dst, n, g * OCG + oc, od, oh, 0);
        const float *in_row = &SRC_AT(n, g * ICG + ic, id, ih, 0);
        for (int64_t j = 0; j < kw1 - kw0; ++j) {
            const float *in = in_row + off[j];
            double acc = out[j];
            for (int64_t ow = lo[j]; ow < hi[j]; ++ow)
                acc += (double)dd_row[ow] * (double)in[ow * sw];
            out[j] = acc;
        }
    }
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
        fwd_row(d, src, wei, bias, n, g, oc, od, oh, 0, d->ow,
                &DST_AT(dst, n, g * OCG + oc, od, oh, 0));
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
        bwd_data_row(d, diff_dst, wei, n, g, ic, id, ih, 0, d->iw,
                     &diff_src[((((n * d->ic) + g * ICG + ic) * d->id + id) * d->ih + ih) * d->iw]);
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
        bwd_weights_row(d, src, diff_dst, g, oc, ic, kd, kh, 0, d->kw,
                        &WEI_AT(g, oc, ic, kd, kh, 0));
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
        fwd_row(d, src, wei, bias, n, c / OCG, c % OCG, od, oh, ow, ow + 1, &out[i]);
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
        bwd_data_row(d, diff_dst, wei, n, c / ICG, c % ICG, id, ih, iw, iw + 1, &out[i]);
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
        bwd_weights_row(d, src, diff_dst, g, oc, ic, kd, kh, kw, kw + 1, &out[i]);
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
