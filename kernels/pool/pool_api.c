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

#include "dt.h"
#include "pool_impl.h"

typedef struct {
    const char *name;
    int isa;
    int operands;      /* BDNN_OPERANDS_*: which data types the row takes */
    const pool_ker_t *ker;
} pool_impl_entry_t;

#define F32 BDNN_OPERANDS_F32
#define BF16 BDNN_OPERANDS_BF16
#define F16 BDNN_OPERANDS_F16
#define INT BDNN_OPERANDS_INT8
static const pool_impl_entry_t impls[] = {
    {"pool:avx512", BDNN_ISA_AVX512, F32, &bdnn_pool_ker_avx512},
    {"pool:avx2", BDNN_ISA_AVX2, F32, &bdnn_pool_ker_avx2},
    {"pool:scalar", BDNN_ISA_SCALAR, F32, &bdnn_pool_ker_scalar},
    /* bf16, f16: widened once per input plane and thread, f32 row kernels, rounded rows */
    {"pool_bf16:avx512", BDNN_ISA_AVX512, BF16, &bdnn_pool_ker_avx512},
    {"pool_bf16:avx2", BDNN_ISA_AVX2, BF16, &bdnn_pool_ker_avx2},
    {"pool_bf16:scalar", BDNN_ISA_SCALAR, BF16, &bdnn_pool_ker_scalar},
    {"pool_f16:avx512", BDNN_ISA_AVX512, F16, &bdnn_pool_ker_avx512},
    {"pool_f16:avx2", BDNN_ISA_AVX2, F16, &bdnn_pool_ker_avx2},
    {"pool_f16:scalar", BDNN_ISA_SCALAR, F16, &bdnn_pool_ker_scalar},
    /* s8, u8, s32 (forward only): averages round to nearest even, then saturate */
    {"pool_int8:avx512", BDNN_ISA_AVX512, INT, &bdnn_pool_ker_avx512},
    {"pool_int8:avx2", BDNN_ISA_AVX2, INT, &bdnn_pool_ker_avx2},
    {"pool_int8:scalar", BDNN_ISA_SCALAR, INT, &bdnn_pool_ker_scalar},
};
#undef F32
#undef BF16
#undef F16
#undef INT
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_pool_impl_count(void) { return N_IMPLS; }
const char *bdnn_pool_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_pool_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_pool_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].operands : -1;
}

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

static int usable(int impl, const bdnn_pool_desc_t *d, int alg, int dt, int backward) {
    if (impl < 0 || impl >= N_IMPLS || !desc_ok(d, alg)) return BDNN_STATUS_INVALID;
    return bdnn_typed_row_status(impls[impl].isa, impls[impl].operands, dt, backward);
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

/* Rows [lo, hi) of a typed (non-f32) forward: each input plane is widened once into
 * plane_buf (when the thread reaches it), each output row computed into row_buf and
 * rounded into dst. */
static void fwd_rows_typed(const bdnn_pool_desc_t *d, int alg, int dt, const pool_ker_t *ker,
                           const void *src, void *dst, int32_t *ws32, const int64_t *lo_w,
                           const int64_t *hi_w, const int64_t *cnt_w, int64_t lo, int64_t hi,
                           float *plane_buf, float *row_buf, int truncate) {
    const int64_t in_plane = d->id * d->ih * d->iw, OW = d->ow;
    const int64_t size = (int64_t)bdnn_dt_size(dt);
    const float lowest = bdnn_dt_lowest(dt);
    int64_t loaded = -1;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t oh = r % d->oh, od = r / d->oh % d->od, plane = r / (d->oh * d->od);
        if (plane != loaded) {
            ker->to_f32(dt, (const char *)src + plane * in_plane * size, plane_buf, in_plane);
            loaded = plane;
        }
        ker->fwd_row(d, alg, plane_buf, od, oh, row_buf, ws32 ? ws32 + r * OW : NULL, lo_w,
                     hi_w, cnt_w);
        /* A max over a window with no tap is the type's lowest value, not -FLT_MAX rounded
         * to -Inf (inputs are never below it, so nothing else changes). */
        if (alg == BDNN_POOL_MAX)
            for (int64_t ow = 0; ow < OW; ++ow) row_buf[ow] = fmaxf(row_buf[ow], lowest);
        ker->from_f32(dt, row_buf, (char *)dst + r * OW * size, OW, truncate);
    }
}

int bdnn_pool_fwd(int impl, const bdnn_pool_desc_t *d, int alg, int prop, int dt,
                  const void *src, void *dst, void *ws, int fault) {
    const int st = usable(impl, d, alg, dt, 0);
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
    const pool_ker_t *ker = impls[impl].ker;
    const int64_t rows = d->mb * d->c * d->od * d->oh, OW = d->ow;
    const int64_t in_plane = d->id * d->ih * d->iw;
    int oom = 0;
    if (dt == BDNN_DT_F32) {
        const float *s32 = src;
        float *d32 = dst;
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t oh = r % d->oh, od = r / d->oh % d->od, plane = r / (d->oh * d->od);
            ker->fwd_row(d, alg, s32 + plane * in_plane, od, oh, d32 + r * OW,
                         ws32 ? ws32 + r * OW : NULL, lo, hi, cnt_w);
        }
    } else {
        /* Contiguous row ranges per thread, so a thread widens each plane it touches once. */
#pragma omp parallel reduction(|| : oom)
        {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            float *buf = malloc(sizeof(float) * (in_plane + OW));
            if (!buf) oom = 1;
            else fwd_rows_typed(d, alg, dt, ker, src, dst, ws32, lo, hi, cnt_w,
                                rows * t / nt, rows * (t + 1) / nt, buf, buf + in_plane,
                                fault == BDNN_FAULT_TRUNCATE_DST);
            free(buf);
        }
    }
    free(bounds);
    return oom ? BDNN_STATUS_OUT_OF_MEMORY : BDNN_STATUS_OK;
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

/* One (n, c) plane of backward data, in f32: ds (in_plane, overwritten) from dd
 * (out_plane) and, for max, the plane's workspace w; acc: in_plane doubles (averages). */
static void bwd_plane(const bdnn_pool_desc_t *d, int alg, const float *dd, const int32_t *w,
                      float *ds, double *acc, int fault) {
    const int64_t in_plane = d->id * d->ih * d->iw, taps = d->kd * d->kh * d->kw;
    int64_t o = 0;
    if (alg == BDNN_POOL_MAX) {
        memset(ds, 0, sizeof(float) * in_plane);
        for (int64_t od = 0; od < d->od; ++od)
            for (int64_t oh = 0; oh < d->oh; ++oh)
                for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                    const int64_t t = fault == BDNN_POOL_FAULT_WS_IGNORED
                            ? first_tap(d, od, oh, ow) : w[o];
                    /* A corrupt (e.g. never written) entry must not become a write outside
                     * the plane: it names no tap, so it adds nothing. */
                    if (t < 0 || t >= taps) continue;
                    const int64_t i = tap_offset(d, t, od, oh, ow);
                    if (i >= 0) ds[i] += dd[o];
                }
        return;
    }
    memset(acc, 0, sizeof(double) * in_plane);
    for (int64_t od = 0; od < d->od; ++od)
        for (int64_t oh = 0; oh < d->oh; ++oh)
            for (int64_t ow = 0; ow < d->ow; ++ow, ++o) {
                int64_t count = 0;
                if (alg == BDNN_POOL_AVG_NP) {
                    for (int64_t t = 0; t < taps; ++t) count += tap_offset(d, t, od, oh, ow) >= 0;
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

int bdnn_pool_bwd(int impl, const bdnn_pool_desc_t *d, int alg, int dt, const void *diff_dst,
                  const void *ws, void *diff_src, int fault) {
    const int st = usable(impl, d, alg, dt, 1);
    if (st != BDNN_STATUS_OK) return st;
    if (alg == BDNN_POOL_MAX && !ws) return BDNN_STATUS_INVALID;
    const pool_ker_t *ker = impls[impl].ker;
    const int32_t *ws32 = ws;
    const int64_t planes = d->mb * d->c, in_plane = d->id * d->ih * d->iw;
    const int64_t out_plane = d->od * d->oh * d->ow, size = (int64_t)bdnn_dt_size(dt);
    const int typed = dt != BDNN_DT_F32, truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    int oom = 0;
#pragma omp parallel reduction(|| : oom)
    {
        /* per thread: the averages' double plane; typed: f32 diff_dst and diff_src planes */
        double *acc = alg == BDNN_POOL_MAX ? NULL : malloc(sizeof(double) * in_plane);
        float *buf = typed ? malloc(sizeof(float) * (out_plane + in_plane)) : NULL;
        const int ok = (alg == BDNN_POOL_MAX || acc) && (!typed || buf);
        if (!ok) oom = 1;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < planes; ++p) {
            if (!ok) continue;
            const char *dd_p = (const char *)diff_dst + p * out_plane * size;
            char *ds_p = (char *)diff_src + p * in_plane * size;
            const int32_t *w = ws32 ? ws32 + p * out_plane : NULL;
            if (!typed) {
                bwd_plane(d, alg, (const float *)dd_p, w, (float *)ds_p, acc, fault);
                continue;
            }
            ker->to_f32(dt, dd_p, buf, out_plane);
            bwd_plane(d, alg, buf, w, buf + out_plane, acc, fault);
            ker->from_f32(dt, buf + out_plane, ds_p, in_plane, truncate);
        }
        free(acc);
        free(buf);
    }
    return oom ? BDNN_STATUS_OUT_OF_MEMORY : BDNN_STATUS_OK;
}
