/* The pooling implementation table, the workspace contract, and the loops around the
 * per-ISA row kernels.
 *
 * Forward: threads split the output rows (n, c, od, oh); each row is one row-kernel call.
 * Backward data: threads split the (n, c) planes, so the scatter of gradients into a
 * diff_src plane is never shared between threads. Max routes each gradient to the tap the
 * workspace names; averages spread it over the window, accumulating in a per-thread double
 * plane (the quotients are not integers, and double keeps the sum independent of the
 * order in which overlapping windows add up). */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "pool_impl.h"

typedef struct {
    const char *name;
    int isa;
    const pool_ker_t *ker;
} pool_impl_entry_t;

static const pool_impl_entry_t impls[] = {
    {"pool:avx512", BDNN_ISA_AVX512, &bdnn_pool_ker_avx512},
    {"pool:avx2", BDNN_ISA_AVX2, &bdnn_pool_ker_avx2},
    {"pool:scalar", BDNN_ISA_SCALAR, &bdnn_pool_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_pool_impl_count(void) { return N_IMPLS; }
const char *bdnn_pool_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_pool_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }

static int desc_ok(const bdnn_pool_desc_t *d, int alg) {
    const int64_t pos[] = {d->c, d->id, d->ih, d->iw, d->od, d->oh, d->ow,
                           d->kd, d->kh, d->kw, d->sd, d->sh, d->sw};
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); ++i)
        if (pos[i] <= 0) return 0;
    if (d->mb < 0 || d->dd < 0 || d->dh < 0 || d->dw < 0) return 0;
    /* tap indexes are stored as int32 */
    if (d->kd * d->kh * d->kw > INT32_MAX) return 0;
    return alg == BDNN_POOL_MAX || alg == BDNN_POOL_AVG_P || alg == BDNN_POOL_AVG_NP;
}

static int64_t dst_elems(const bdnn_pool_desc_t *d) { return d->mb * d->c * d->od * d->oh * d->ow; }

int bdnn_pool_workspace(const bdnn_pool_desc_t *d, int alg, int prop, bdnn_pool_ws_t *ws) {
    ws->bytes = 0;
    ws->elem_bytes = 0;
    if (!desc_ok(d, alg)) return BDNN_STATUS_INVALID;
    if (prop != BDNN_PROP_FWD_TRAINING && prop != BDNN_PROP_FWD_INFERENCE
            && prop != BDNN_PROP_BWD_DATA)
        return BDNN_STATUS_INVALID;
    /* Only max needs to remember where its result came from; inference keeps nothing. */
    if (alg != BDNN_POOL_MAX || prop == BDNN_PROP_FWD_INFERENCE) return BDNN_STATUS_OK;
    ws->elem_bytes = sizeof(int32_t);
    ws->bytes = dst_elems(d) * ws->elem_bytes;   /* one tap index per dst point, dst order */
    return BDNN_STATUS_OK;
}

static int usable(int impl, const bdnn_pool_desc_t *d, int alg) {
    if (impl < 0 || impl >= N_IMPLS || !desc_ok(d, alg)) return BDNN_STATUS_INVALID;
    if (!bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

/* Output columns [lo, hi) whose input column ow*SW + off lies in [0, IW), per kw. */
static void column_bounds(const bdnn_pool_desc_t *d, int64_t *lo, int64_t *hi, int64_t *cnt_w) {
    for (int64_t ow = 0; ow < d->ow; ++ow) cnt_w[ow] = 0;
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        const int64_t off = kw * (d->dw + 1) - d->pw;
        int64_t l = 0, h = d->ow;
        while (l < h && l * d->sw + off < 0) ++l;
        while (h > l && (h - 1) * d->sw + off >= d->iw) --h;
        lo[kw] = l;
        hi[kw] = h;
        for (int64_t ow = l; ow < h; ++ow) ++cnt_w[ow];
    }
}

int bdnn_pool_fwd(int impl, const bdnn_pool_desc_t *d, int alg, int prop, const float *src,
                  float *dst, void *ws, int fault) {
    const int st = usable(impl, d, alg);
    if (st != BDNN_STATUS_OK) return st;
    bdnn_pool_ws_t wsd;
    bdnn_pool_workspace(d, alg, prop, &wsd);
    if (wsd.bytes && !ws) return BDNN_STATUS_INVALID;
    /* The unwritten-workspace defect runs training as inference. */
    int32_t *ws32 = wsd.bytes && fault != BDNN_POOL_FAULT_WS_UNWRITTEN ? ws : NULL;
    int64_t *bounds = malloc(sizeof(int64_t) * (2 * d->kw + d->ow));
    if (!bounds) return BDNN_STATUS_OUT_OF_MEMORY;
    int64_t *lo = bounds, *hi = bounds + d->kw, *cnt_w = bounds + 2 * d->kw;
    column_bounds(d, lo, hi, cnt_w);
    const pool_fwd_row_fn row = impls[impl].ker->fwd_row;
    const int64_t rows = d->mb * d->c * d->od * d->oh, OW = d->ow;
    const int64_t in_plane = d->id * d->ih * d->iw;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t oh = r % d->oh, od = r / d->oh % d->od, plane = r / (d->oh * d->od);
        row(d, alg, src + plane * in_plane, od, oh, dst + r * OW, ws32 ? ws32 + r * OW : NULL,
            lo, hi, cnt_w);
    }
    free(bounds);
    return BDNN_STATUS_OK;
}

/* diff_src coordinate of tap t of output point (od, oh, ow), or -1 if outside the input. */
static int64_t tap_offset(const bdnn_pool_desc_t *d, int64_t t, int64_t od, int64_t oh,
                          int64_t ow) {
    const int64_t kw = t % d->kw, kh = t / d->kw % d->kh, kd = t / (d->kw * d->kh);
    const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
    const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
    const int64_t iw = ow * d->sw + kw * (d->dw + 1) - d->pw;
    if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih || iw < 0 || iw >= d->iw) return -1;
    return (id * d->ih + ih) * d->iw + iw;
}

/* The first in-bounds tap of a window (what the workspace-ignored defect uses). */
static int64_t first_tap(const bdnn_pool_desc_t *d, int64_t od, int64_t oh, int64_t ow) {
    const int64_t taps = d->kd * d->kh * d->kw;
    for (int64_t t = 0; t < taps; ++t)
        if (tap_offset(d, t, od, oh, ow) >= 0) return t;
    return -1;
}

int bdnn_pool_bwd(int impl, const bdnn_pool_desc_t *d, int alg, const float *diff_dst,
                  const void *ws, float *diff_src, int fault) {
    const int st = usable(impl, d, alg);
    if (st != BDNN_STATUS_OK) return st;
    if (alg == BDNN_POOL_MAX && !ws) return BDNN_STATUS_INVALID;
    const int32_t *ws32 = ws;
    const int64_t planes = d->mb * d->c, in_plane = d->id * d->ih * d->iw;
    const int64_t out_plane = d->od * d->oh * d->ow, taps = d->kd * d->kh * d->kw;
    int oom = 0;
#pragma omp parallel reduction(|| : oom)
    {
        double *acc = alg == BDNN_POOL_MAX ? NULL : malloc(sizeof(double) * in_plane);
        if (alg != BDNN_POOL_MAX && !acc) oom = 1;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < planes; ++p) {
            float *ds = diff_src + p * in_plane;
            const float *dd = diff_dst + p * out_plane;
            if (alg == BDNN_POOL_MAX) {
                memset(ds, 0, sizeof(float) * in_plane);
                const int32_t *w = ws32 + p * out_plane;
                int64_t o = 0;
                for (int64_t od = 0; od < d->od; ++od)
                    for (int64_t oh = 0; oh < d->oh; ++oh)
                        for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                            const int64_t t = fault == BDNN_POOL_FAULT_WS_IGNORED
                                    ? first_tap(d, od, oh, ow) : w[o];
                            /* A corrupt (e.g. never written) entry must not become a write
                             * outside the plane: it names no tap, so it adds nothing. */
                            if (t < 0 || t >= taps) continue;
                            const int64_t i = tap_offset(d, t, od, oh, ow);
                            if (i >= 0) ds[i] += dd[o];
                        }
                continue;
            }
            if (!acc) continue;
            memset(acc, 0, sizeof(double) * in_plane);
            int64_t o = 0;
            for (int64_t od = 0; od < d->od; ++od)
                for (int64_t oh = 0; oh < d->oh; ++oh)
                    for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                        int64_t count = 0;
                        if (alg == BDNN_POOL_AVG_NP) {
                            for (int64_t t = 0; t < taps; ++t)
                                count += tap_offset(d, t, od, oh, ow) >= 0;
                        } else {
                            count = taps;
                        }
                        if (count == 0) continue;
                        const double g = (double)dd[o] / (double)count;
                        for (int64_t t = 0; t < taps; ++t) {
                            const int64_t i = tap_offset(d, t, od, oh, ow);
                            if (i >= 0) acc[i] += g;
                        }
                    }
            for (int64_t i = 0; i < in_plane; ++i) ds[i] = (float)acc[i];
        }
        free(acc);
    }
    return oom ? BDNN_STATUS_OUT_OF_MEMORY : BDNN_STATUS_OK;
}
