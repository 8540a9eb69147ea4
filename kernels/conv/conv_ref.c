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
 * Each direction's formula is written once, as a function of a few points (a *_block
 * below) that take the same terms in the same pattern: up to 8 points of one output row
 * (forward), 8 input channels at one input point (backward data), 8 weights at one tap
 * (backward weights). Each point keeps its own double accumulator, in a register, and
 * sums its terms in the order the formula lists them, skipping the taps that fall outside
 * the input: a block only interleaves independent sums, so the loads of one tap serve
 * several points (and the adds of different points overlap) while a point's value stays
 * independent of which block computes it. The whole-tensor entry points cover every
 * point with blocks; the *_at entry points (--check=sampled) compute a caller's list of
 * points, forward and backward data in one-point blocks, backward weights in blocks of
 * up to REF_BLOCK listed points of one tap (each of its points sums millions of terms:
 * one-point blocks waited on the add latency). Both call the same functions, so a
 * sampled value is by construction the full reference's value at that point.
 *
 * The functions that run the blocks are compiled twice (target_clones): for x86-64-v3
 * (AVX2 with FMA, scalar instructions: the multiply-add fuses, which cannot change a
 * result, see above) and for the baseline, chosen when the core loads. Both give the same
 * bits: the test suite's exact cross-checks run on whichever this CPU takes. */
#include <stdlib.h>

#include "bdnn.h"

/* Scalar in the binary as in the source: no auto-vectorization, so each point is computed
 * by the same plain scalar instructions whether it is in a full tensor or sampled (and
 * NB sums of a block stay NB scalar registers). */
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

/* ---- blocks of points of each direction: the formulas ------------------------------ */

/* Index arithmetic for the rows below: floor and ceiling of a / b for b > 0, a of any
 * sign (C's / truncates toward zero). */
static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t div_ceil(int64_t a, int64_t b) { return -div_floor(-a, b); }
static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The points x in [lo, hi) with 0 <= x * stride + offset < size: where a tap at a fixed
 * offset lands inside the tensor. Returns the clipped range through lo and hi. */
static void clip_row(int64_t stride, int64_t offset, int64_t size, int64_t *lo, int64_t *hi) {
    const int64_t first = div_ceil(-offset, stride), last = div_floor(size - 1 - offset, stride);
    if (*lo < first) *lo = first;
    if (*hi > last + 1) *hi = last + 1;
}

/* Points summed side by side in registers by the *_block functions below: enough
 * independent sums to hide the add latency. */
#define REF_BLOCK 8

/* The taps k of a kernel axis that land inside the input for the output coordinate o:
 * 0 <= o*stride + k*(dil+1) - pad < size holds for k in [*k0, *k1) (a contiguous range, as
 * the input coordinate grows with k). */
static void taps_in(int64_t o, int64_t stride, int64_t dil, int64_t pad, int64_t size,
                    int64_t kernel, int64_t *k0, int64_t *k1) {
    const int64_t at = o * stride - pad, step = dil + 1;
    *k0 = at >= 0 ? 0 : div_ceil(-at, step);
    *k1 = div_floor(size - 1 - at, step) + 1;
    if (*k1 > kernel) *k1 = kernel;
    if (*k1 < *k0) *k1 = *k0;
}

/* The kernel rows (kd, kh) that one row of points reads, in the formula's order: where
 * each starts in a channel of the tensor read (src forward, diff_dst backward data) and in
 * a weights (oc, ic) slice. The same for every channel and every point of the row. */
typedef struct {
    int64_t n;
    int64_t *in_off, *wei_off;
} kernel_rows_t;

/* Forward: the kernel rows that land inside the input for the output row (od, oh). */

static void fwd_kernel_rows(const bdnn_conv_desc_t *d, int64_t od, int64_t oh,
                            kernel_rows_t *rows) {
    rows->n = 0;
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        rows->in_off[rows->n] = (id * d->ih + ih) * d->iw;
        rows->wei_off[rows->n] = (kd * d->kh + kh) * d->kw;
        ++rows->n;
    }
}

/* Forward, NB consecutive points ow, ow+1, ... of one output row (n, g*OCg + oc, od, oh)
 * that take the same taps kw, [k0, k1): each sums its terms in the formula's order
 * (ic, kd, kh, kw), skipping the taps that fall outside the input, in a register of its
 * own. Always inlined with a constant NB (and SW where the caller knows it), so the sums
 * are NB scalar registers and a point's value is the same whichever block computes it. */
static inline __attribute__((always_inline)) void fwd_block(
        const bdnn_conv_desc_t *d, const float *src, const float *wei, int64_t n, int64_t g,
        int64_t oc, const kernel_rows_t *rows, int64_t ow, const int NB, const int64_t sw,
        int64_t k0, int64_t k1, double *restrict out) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, step = d->dw + 1;
    const int64_t src_chan = d->id * d->ih * d->iw, wei_chan = d->kd * d->kh * d->kw;
    const int64_t x0 = ow * sw - d->pw;   /* iw of the first point's tap 0 (may be < 0) */
    const float *src_c = &SRC_AT(n, g * ICG, 0, 0, 0);
    const float *wei_c = &WEI_AT(g, oc, 0, 0, 0, 0);
    double acc[REF_BLOCK];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[j] = 0.0;
    if (rows->n == 1 && k1 - k0 == 1) {   /* one tap (1x1, or an edge reaching one): ic alone */
        const float *in = src_c + rows->in_off[0] + x0 + k0 * step;
        const float *w = wei_c + rows->wei_off[0] + k0;
        for (int64_t ic = 0; ic < ICG; ++ic, in += src_chan, w += wei_chan) {
            const double wv = *w;
#pragma GCC unroll 8
            for (int j = 0; j < NB; ++j) acc[j] += (double)in[j * sw] * wv;
        }
    } else
    for (int64_t ic = 0; ic < ICG; ++ic, src_c += src_chan, wei_c += wei_chan)
    for (int64_t r = 0; r < rows->n; ++r) {
        const float *in = src_c + rows->in_off[r], *wei_row = wei_c + rows->wei_off[r];
        for (int64_t kw = k0; kw < k1; ++kw) {
            const double w = wei_row[kw];
#pragma GCC unroll 8
            for (int j = 0; j < NB; ++j) acc[j] += (double)in[x0 + kw * step + j * sw] * w;
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) out[j] = acc[j];
}

/* Forward, the points ow0 <= ow < ow1 of one output row, into out[ow - ow0] (bias added
 * last): runs of points with the same taps kw go through fwd_block together, REF_BLOCK at
 * a time where the run allows. */
__attribute__((target_clones("arch=x86-64-v3", "default")))
static void fwd_row(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                    const float *bias, int64_t n, int64_t g, int64_t oc, int64_t od,
                    int64_t oh, int64_t ow0, int64_t ow1, double *restrict out) {
    const int64_t OCG = d->oc / d->g, sw = d->sw;
    int64_t in_off[d->kd * d->kh], wei_off[d->kd * d->kh];
    kernel_rows_t rows = {0, in_off, wei_off};
    fwd_kernel_rows(d, od, oh, &rows);
    for (int64_t ow = ow0; ow < ow1;) {
        int64_t k0, k1, next_k0, next_k1, run = 1;
        taps_in(ow, sw, d->dw, d->pw, d->iw, d->kw, &k0, &k1);
        while (ow + run < ow1 && run < REF_BLOCK) {
            taps_in(ow + run, sw, d->dw, d->pw, d->iw, d->kw, &next_k0, &next_k1);
            if (next_k0 != k0 || next_k1 != k1) break;
            ++run;
        }
        double *o = out + (ow - ow0);
        if (run == REF_BLOCK && sw == 1)
            fwd_block(d, src, wei, n, g, oc, &rows, ow, REF_BLOCK, 1, k0, k1, o);
        else if (run == REF_BLOCK)
            fwd_block(d, src, wei, n, g, oc, &rows, ow, REF_BLOCK, sw, k0, k1, o);
        else if (run >= 4)
            run = 4, fwd_block(d, src, wei, n, g, oc, &rows, ow, 4, sw, k0, k1, o);
        else if (run >= 2)
            run = 2, fwd_block(d, src, wei, n, g, oc, &rows, ow, 2, sw, k0, k1, o);
        else
            run = 1, fwd_block(d, src, wei, n, g, oc, &rows, ow, 1, sw, k0, k1, o);
        ow += run;
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
 *   0 <= od < OD, and likewise for h and w.
 *
 * The kernel rows (kd, kh) that reach the input row (id, ih) from an output row. */
static void bwd_data_kernel_rows(const bdnn_conv_desc_t *d, int64_t id, int64_t ih,
                                 kernel_rows_t *rows) {
    rows->n = 0;
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t nd = id + d->pd - kd * (d->dd + 1);
        const int64_t nh = ih + d->ph - kh * (d->dh + 1);
        if (nd < 0 || nh < 0 || nd % d->sd || nh % d->sh) continue;
        const int64_t od = nd / d->sd, oh = nh / d->sh;
        if (od >= d->od || oh >= d->oh) continue;
        rows->in_off[rows->n] = (od * d->oh + oh) * d->ow;
        rows->wei_off[rows->n] = (kd * d->kh + kh) * d->kw;
        ++rows->n;
    }
}

/* Backward data, one input point (n, ic0 + j, id, ih, iw) for each j < NB: channels
 * g*ICg + ic0 + j of one group, which take the same taps. Each sums its terms in the
 * formula's order (oc, kd, kh, kw) in a register of its own, into out[j * out_stride].
 * Always inlined with a constant NB. */
static inline __attribute__((always_inline)) void bwd_data_block(
        const bdnn_conv_desc_t *d, const float *diff_dst, const float *wei, int64_t n,
        int64_t g, int64_t ic0, const int NB, const kernel_rows_t *rows, int64_t ntaps,
        const int64_t *kw, const int64_t *ow, double *restrict out, int64_t out_stride) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, wei_ic = d->kd * d->kh * d->kw;
    const int64_t dst_chan = d->od * d->oh * d->ow, wei_oc = ICG * wei_ic;
    const float *dd_c = &DST_AT(diff_dst, n, g * OCG, 0, 0, 0);
    const float *wei_c = &WEI_AT(g, 0, ic0, 0, 0, 0);
    double acc[REF_BLOCK];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[j] = 0.0;
    if (ntaps > 0)
        for (int64_t oc = 0; oc < OCG; ++oc, dd_c += dst_chan, wei_c += wei_oc)
        for (int64_t r = 0; r < rows->n; ++r) {
            const float *dd_row = dd_c + rows->in_off[r], *wei_rows = wei_c + rows->wei_off[r];
            for (int64_t t = 0; t < ntaps; ++t) {
                const double dd = dd_row[ow[t]];
                const float *w = wei_rows + kw[t];
#pragma GCC unroll 8
                for (int j = 0; j < NB; ++j) acc[j] += dd * (double)w[j * wei_ic];
            }
        }
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) out[j * out_stride] = acc[j];
}

/* Backward data, the points iw0 <= iw < iw1 of the input rows (n, g*ICg + ic, id, ih) for
 * ic0 <= ic < ic1, into out[(ic - ic0) * out_stride + iw - iw0]: for each point, the taps
 * kw it takes (where iw + PW - kw*(DW+1) is an exact multiple ow*SW of an output inside
 * [0, OW)), then the channels REF_BLOCK at a time, the rest 4, 2 and 1. */
__attribute__((target_clones("arch=x86-64-v3", "default")))
static void bwd_data_rows(const bdnn_conv_desc_t *d, const float *diff_dst,
                          const float *wei, int64_t n, int64_t g, int64_t ic0, int64_t ic1,
                          int64_t id, int64_t ih, int64_t iw0, int64_t iw1, double *out,
                          int64_t out_stride) {
    const int64_t step = d->dw + 1;
    int64_t in_off[d->kd * d->kh], wei_off[d->kd * d->kh], tap_kw[d->kw], tap_ow[d->kw];
    kernel_rows_t rows = {0, in_off, wei_off};
    bwd_data_kernel_rows(d, id, ih, &rows);
    for (int64_t iw = iw0; iw < iw1; ++iw) {
        int64_t ntaps = 0;
        for (int64_t kw = 0; kw < d->kw; ++kw) {
            const int64_t at = iw + d->pw - kw * step;   /* = ow * SW when the tap is taken */
            if (at < 0 || at % d->sw || at / d->sw >= d->ow) continue;
            tap_kw[ntaps] = kw, tap_ow[ntaps++] = at / d->sw;
        }
        double *o = out + (iw - iw0);
        int64_t ic = ic0;
        for (; ic + REF_BLOCK <= ic1; ic += REF_BLOCK)
            bwd_data_block(d, diff_dst, wei, n, g, ic, REF_BLOCK, &rows, ntaps, tap_kw, tap_ow,
                           o + (ic - ic0) * out_stride, out_stride);
        for (; ic + 4 <= ic1; ic += 4)
            bwd_data_block(d, diff_dst, wei, n, g, ic, 4, &rows, ntaps, tap_kw, tap_ow,
                           o + (ic - ic0) * out_stride, out_stride);
        for (; ic + 2 <= ic1; ic += 2)
            bwd_data_block(d, diff_dst, wei, n, g, ic, 2, &rows, ntaps, tap_kw, tap_ow,
                           o + (ic - ic0) * out_stride, out_stride);
        for (; ic < ic1; ++ic)
            bwd_data_block(d, diff_dst, wei, n, g, ic, 1, &rows, ntaps, tap_kw, tap_ow,
                           o + (ic - ic0) * out_stride, out_stride);
    }
}

/* Backward weights: each weight collects the products it took part in over the minibatch
 * and every output point:
 *
 *   diff_wei(g, oc, ic, kd, kh, kw) = sum over n, od, oh, ow of
 *       diff_dst(n, g*OCg + oc, od, oh, ow)
 *     * src(n, g*ICg + ic, od*SD + kd*(DD+1) - PD, oh*SH + kh*(DH+1) - PH, ow*SW + kw*(DW+1) - PW)
 *   with src = 0 outside the input.
 *
 * Here for NB weights at one tap (kd, kh, kw), any channel triples (g, oc, ic), given by
 * their flat indices pairs[j] = (g*OCg + oc)*ICg + ic: each sums its products in the
 * formula's order (n, od, oh, ow) in a register of its own, into out[out_at[j]]. Which
 * outputs ow the tap reads inside the input ([lo, hi)) and which rows (od, oh) it reads
 * at all are the same for every triple. Always inlined with a constant NB. */
static inline __attribute__((always_inline)) void bwd_weights_block(
        const bdnn_conv_desc_t *d, const float *src, const float *diff_dst,
        const int64_t *pairs, const int NB, int64_t kd, int64_t kh, int64_t kw,
        double *restrict out, const int64_t *out_at) {
    const int64_t OCG = d->oc / d->g, ICG = d->ic / d->g, sw = d->sw;
    const int64_t src_chan = d->id * d->ih * d->iw, dst_chan = d->od * d->oh * d->ow;
    const int64_t off = kw * (d->dw + 1) - d->pw;   /* iw = ow * SW + off */
    int64_t lo = 0, hi = d->ow;
    clip_row(sw, off, d->iw, &lo, &hi);
    int64_t src_at[REF_BLOCK], dst_at[REF_BLOCK];   /* each triple's channels, at n = 0 */
    double acc[REF_BLOCK];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
        const int64_t ic = pairs[j] % ICG, goc = pairs[j] / ICG;
        src_at[j] = (goc / OCG * ICG + ic) * src_chan + off;
        dst_at[j] = goc * dst_chan;
        acc[j] = 0.0;
    }
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t od = 0; od < d->od; ++od)
    for (int64_t oh = 0; oh < d->oh; ++oh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        const float *dd_rows = diff_dst + (n * d->oc * d->od + od) * d->oh * d->ow + oh * d->ow;
        const float *in_rows = src + ((n * d->ic * d->id + id) * d->ih + ih) * d->iw;
        for (int64_t ow = lo; ow < hi; ++ow)
#pragma GCC unroll 8
            for (int j = 0; j < NB; ++j)
                acc[j] += (double)dd_rows[dst_at[j] + ow]
                        * (double)in_rows[src_at[j] + ow * sw];
    }
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) out[out_at[j]] = acc[j];
}

/* Backward weights at one tap for the count triples pairs[], into out[out_at[i]]:
 * REF_BLOCK at a time, then 4, 2 and 1. */
__attribute__((target_clones("arch=x86-64-v3", "default")))
static void bwd_weights_run(const bdnn_conv_desc_t *d, const float *src,
                            const float *diff_dst, const int64_t *pairs, int64_t count,
                            int64_t kd, int64_t kh, int64_t kw, double *out,
                            const int64_t *out_at) {
    int64_t i = 0;
    for (; i + REF_BLOCK <= count; i += REF_BLOCK)
        bwd_weights_block(d, src, diff_dst, pairs + i, REF_BLOCK, kd, kh, kw, out, out_at + i);
    for (; i + 4 <= count; i += 4)
        bwd_weights_block(d, src, diff_dst, pairs + i, 4, kd, kh, kw, out, out_at + i);
    for (; i + 2 <= count; i += 2)
        bwd_weights_block(d, src, diff_dst, pairs + i, 2, kd, kh, kw, out, out_at + i);
    for (; i < count; ++i)
        bwd_weights_block(d, src, diff_dst, pairs + i, 1, kd, kh, kw, out, out_at + i);
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
    const int64_t G = d->g, ICG = d->ic / d->g, chan = d->id * d->ih * d->iw;
    const int64_t blocks = (ICG + REF_BLOCK - 1) / REF_BLOCK;
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < d->mb; ++n)
    for (int64_t g = 0; g < G; ++g)
    for (int64_t b = 0; b < blocks; ++b)
    for (int64_t id = 0; id < d->id; ++id)
    for (int64_t ih = 0; ih < d->ih; ++ih) {
        const int64_t ic0 = b * REF_BLOCK, ic1 = min_i64(ic0 + REF_BLOCK, ICG);
        bwd_data_rows(d, diff_dst, wei, n, g, ic0, ic1, id, ih, 0, d->iw,
                      &diff_src[(((n * d->ic) + g * ICG + ic0) * d->id + id) * d->ih * d->iw
                                + ih * d->iw], chan);
    }
    return BDNN_STATUS_OK;
}

int bdnn_ref_conv_bwd_weights(const bdnn_conv_desc_t *d, const float *src,
                              const float *diff_dst, double *diff_wei, double *diff_bias) {
    if (!valid(d)) return BDNN_STATUS_INVALID;
    const int64_t pairs = d->oc * (d->ic / d->g), taps = d->kd * d->kh * d->kw;
    const int64_t blocks = (pairs + REF_BLOCK - 1) / REF_BLOCK;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t tap = 0; tap < taps; ++tap)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t pair = b * REF_BLOCK, count = min_i64(REF_BLOCK, pairs - pair);
        int64_t block_pairs[REF_BLOCK], out_at[REF_BLOCK];
        for (int64_t j = 0; j < count; ++j) block_pairs[j] = pair + j, out_at[j] = j * taps;
        bwd_weights_run(d, src, diff_dst, block_pairs, count, tap / (d->kh * d->kw),
                        tap / d->kw % d->kh, tap % d->kw, diff_wei + pair * taps + tap, out_at);
    }
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
        bwd_data_rows(d, diff_dst, wei, n, c / ICG, c % ICG, c % ICG + 1, id, ih, iw, iw + 1,
                      &out[i], 1);
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
    /* The points by tap (each point's terms depend on its tap alone), then up to
     * REF_BLOCK of one tap per block: the points' sums run side by side, each in its own
     * register and order, so every value is the one a whole-tensor block gives. */
    const int64_t taps = d->kd * d->kh * d->kw;
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(n_points + 1));
    int64_t *pairs = malloc(sizeof(int64_t) * (size_t)(n_points + 1));
    int64_t *first = calloc((size_t)taps + 1, sizeof(int64_t));   /* each tap's run */
    if (!order || !pairs || !first) {
        free(order), free(pairs), free(first);
        return BDNN_STATUS_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < n_points; ++i) ++first[points[i] % taps + 1];
    for (int64_t t = 0; t < taps; ++t) first[t + 1] += first[t];
    for (int64_t i = 0; i < n_points; ++i) {   /* counting sort: ascending i within a tap */
        const int64_t at = first[points[i] % taps]++;
        order[at] = i, pairs[at] = points[i] / taps;
    }
    for (int64_t t = taps; t > 0; --t) first[t] = first[t - 1];   /* back to run starts */
    first[0] = 0;
    int64_t *block0 = malloc(sizeof(int64_t) * (size_t)(n_points + taps + 1));
    int64_t nblocks = 0;
    if (!block0) {
        free(order), free(pairs), free(first);
        return BDNN_STATUS_OUT_OF_MEMORY;
    }
    for (int64_t t = 0; t < taps; ++t)
        for (int64_t at = first[t]; at < first[t + 1]; at += REF_BLOCK) block0[nblocks++] = at;
#pragma omp parallel for schedule(dynamic)
    for (int64_t b = 0; b < nblocks; ++b) {
        const int64_t at = block0[b], tap = points[order[at]] % taps;
        const int64_t end = first[tap + 1] < at + REF_BLOCK ? first[tap + 1] : at + REF_BLOCK;
        bwd_weights_run(d, src, diff_dst, pairs + at, end - at, tap / (d->kh * d->kw),
                        tap / d->kw % d->kh, tap % d->kw, out, order + at);
    }
    free(order), free(pairs), free(first), free(block0);
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
