/* The pooling reference: the formulas as plain loops, in double (reference 9.3). Shares no
 * code with the implementations. max: the first strict maximum over in-bounds taps, from
 * -FLT_MAX; avg_p: sum / (kd*kh*kw); avg_np: sum / in-bounds taps (0/0 for a window
 * entirely in padding, a case the driver skips). Backward finds the maximum in src again
 * (it has no workspace): the point is to check that the implementation's workspace names
 * the same tap. */
#include <float.h>
#include <string.h>

#include "bdnn_pool.h"

#define FOR_WINDOW(d, od, oh, ow)                                                         \
    for (int64_t kd = 0; kd < d->kd; ++kd)                                                \
        for (int64_t kh = 0; kh < d->kh; ++kh)                                            \
            for (int64_t kw = 0; kw < d->kw; ++kw)

static int64_t in_off(const bdnn_pool_desc_t *d, int64_t od, int64_t oh, int64_t ow,
                      int64_t kd, int64_t kh, int64_t kw) {
    const int64_t id = od * d->sd - d->pd + kd * (d->dd + 1);
    const int64_t ih = oh * d->sh - d->ph + kh * (d->dh + 1);
    const int64_t iw = ow * d->sw - d->pw + kw * (d->dw + 1);
    if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) return -1;
    return (id * d->ih + ih) * d->iw + iw;
}

int bdnn_ref_pool_fwd(const bdnn_pool_desc_t *d, int alg, const float *src, double *dst) {
    if (d->layout != BDNN_POOL_LAYOUT_NCX) return BDNN_STATUS_INVALID;
    const int64_t in_plane = d->id * d->ih * d->iw;
    int64_t o = 0;
    for (int64_t p = 0; p < d->mb * d->c; ++p)
        for (int64_t od = 0; od < d->od; ++od)
            for (int64_t oh = 0; oh < d->oh; ++oh)
                for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                    const float *s = src + p * in_plane;
                    double best = -FLT_MAX, sum = 0;
                    int64_t count = 0;
                    FOR_WINDOW(d, od, oh, ow) {
                        const int64_t i = in_off(d, od, oh, ow, kd, kh, kw);
                        if (i < 0) continue;
                        if (s[i] > best) best = s[i];
                        sum += s[i];
                        ++count;
                    }
                    dst[o] = alg == BDNN_POOL_MAX ? best
                           : alg == BDNN_POOL_AVG_P ? sum / (double)(d->kd * d->kh * d->kw)
                           : sum / (double)count;
                }
    return BDNN_STATUS_OK;
}

int bdnn_ref_pool_bwd(const bdnn_pool_desc_t *d, int alg, const float *src,
                      const float *diff_dst, double *diff_src) {
    if (d->layout != BDNN_POOL_LAYOUT_NCX) return BDNN_STATUS_INVALID;
    const int64_t in_plane = d->id * d->ih * d->iw;
    memset(diff_src, 0, sizeof(double) * d->mb * d->c * in_plane);
    int64_t o = 0;
    for (int64_t p = 0; p < d->mb * d->c; ++p)
        for (int64_t od = 0; od < d->od; ++od)
            for (int64_t oh = 0; oh < d->oh; ++oh)
                for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                    const float *s = src + p * in_plane;
                    double *ds = diff_src + p * in_plane;
                    double best = -FLT_MAX;
                    int64_t arg = -1, count = 0;
                    FOR_WINDOW(d, od, oh, ow) {
                        const int64_t i = in_off(d, od, oh, ow, kd, kh, kw);
                        if (i < 0) continue;
                        if (arg < 0 || s[i] > best) {
                            best = s[i];
                            arg = i;
                        }
                        ++count;
                    }
                    if (alg == BDNN_POOL_MAX) {
                        if (arg >= 0) ds[arg] += diff_dst[o];
                        continue;
                    }
                    const double div = alg == BDNN_POOL_AVG_P
                            ? (double)(d->kd * d->kh * d->kw) : (double)count;
                    FOR_WINDOW(d, od, oh, ow) {
                        const int64_t i = in_off(d, od, oh, ow, kd, kh, kw);
                        if (i >= 0) ds[i] += diff_dst[o] / div;
                    }
                }
    return BDNN_STATUS_OK;
}
