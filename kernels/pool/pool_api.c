/* The pooling implementation table, the workspace contract, and the loops around the
 * per-ISA row kernels (plain layout); the channels-inner layouts go to pool_cx.inc's
 * passes with the per-axis tables built here.
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
#include "post_chain.h"
#include "pool_impl.h"

typedef struct {
    const char *name;
    int isa;
    int operands;      /* BDNN_OPERANDS_*: which data types the row takes */
    int layouts;       /* 1 << BDNN_POOL_LAYOUT_*: the layouts the row runs on */
    const pool_ker_t *ker;
} pool_impl_entry_t;

#define F32 BDNN_OPERANDS_F32
#define BF16 BDNN_OPERANDS_BF16
#define F16 BDNN_OPERANDS_F16
#define INT BDNN_OPERANDS_INT8
#define PLAIN (1 << BDNN_POOL_LAYOUT_NCX)
#define NXC (1 << BDNN_POOL_LAYOUT_NXC)
#define BLOCKED ((1 << BDNN_POOL_LAYOUT_NCX8C) | (1 << BDNN_POOL_LAYOUT_NCX16C))
#define ROWS(prefix, operands, layouts)                                                   \
    {prefix ":avx512", BDNN_ISA_AVX512, operands, layouts, &bdnn_pool_ker_avx512},       \
    {prefix ":avx2", BDNN_ISA_AVX2, operands, layouts, &bdnn_pool_ker_avx2},             \
    {prefix ":scalar", BDNN_ISA_SCALAR, operands, layouts, &bdnn_pool_ker_scalar}
/* In order of preference per layout and type; a row refuses the layouts it does not list,
 * so each case meets the rows of its own layout only. */
static const pool_impl_entry_t impls[] = {
    /* plain (ncx): rows vectorized along ow */
    ROWS("pool", F32, PLAIN),
    /* bf16, f16: widened once per input plane and thread, f32 row kernels, rounded rows */
    ROWS("pool_bf16", BF16, PLAIN),
    ROWS("pool_f16", F16, PLAIN),
    /* s8, u8, s32 (forward only): averages round to nearest even, then saturate */
    ROWS("pool_int8", INT, PLAIN),
    /* channels-inner (pool_cx.inc): vectorized across the channels of a point */
    ROWS("pool_nhwc", F32, NXC),
    ROWS("pool_nhwc_bf16", BF16, NXC),
    ROWS("pool_nhwc_f16", F16, NXC),
    ROWS("pool_nhwc_int8", INT, NXC),
    ROWS("pool_blocked", F32, BLOCKED),
    ROWS("pool_blocked_bf16", BF16, BLOCKED),
    ROWS("pool_blocked_f16", F16, BLOCKED),
    ROWS("pool_blocked_int8", INT, BLOCKED),
};
#undef F32
#undef BF16
#undef F16
#undef INT
#undef PLAIN
#undef NXC
#undef BLOCKED
#undef ROWS
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_pool_impl_count(void) { return N_IMPLS; }
const char *bdnn_pool_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_pool_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_pool_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].operands : -1;
}
int bdnn_pool_impl_layouts(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].layouts : 0;
}

static int desc_ok(const bdnn_pool_desc_t *d, int alg) {
    const int64_t pos[] = {d->c, d->id, d->ih, d->iw, d->od, d->oh, d->ow,
                           d->kd, d->kh, d->kw, d->sd, d->sh, d->sw};
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); ++i)
        if (pos[i] <= 0) return 0;
    if (d->mb < 0 || d->dd < 0 || d->dh < 0 || d->dw < 0) return 0;
    if (d->layout < 0 || d->layout >= BDNN_POOL_N_LAYOUTS) return 0;
    /* tap indexes are stored as int32 */
    if (d->kd * d->kh * d->kw > INT32_MAX) return 0;
    return alg == BDNN_POOL_MAX || alg == BDNN_POOL_AVG_P || alg == BDNN_POOL_AVG_NP;
}

/* The channels-inner geometry of d's layout (blk = 0 for the plain one). */
static pool_cx_t cx_geometry(const bdnn_pool_desc_t *d) {
    pool_cx_t g = {0, 1, 0, 1};
    switch (d->layout) {
    case BDNN_POOL_LAYOUT_NXC: g.blk = d->c; break;
    case BDNN_POOL_LAYOUT_NCX8C: g.blk = 8; break;
    case BDNN_POOL_LAYOUT_NCX16C: g.blk = 16; break;
    default: return g;
    }
    g.nblk = (d->c + g.blk - 1) / g.blk;
    /* NXC: chunks of 64 channels (4 AVX-512 vectors), so a wide layer's row splits */
    g.chunk = g.blk < 64 ? g.blk : 64;
    g.nchunk = (g.blk + g.chunk - 1) / g.chunk;
    return g;
}

/* Elements of a dst-shaped tensor in d's layout (the padded channel tail included). */
static int64_t dst_elems(const bdnn_pool_desc_t *d) {
    const pool_cx_t g = cx_geometry(d);
    const int64_t c = g.blk ? g.nblk * g.blk : d->c;
    return d->mb * c * d->od * d->oh * d->ow;
}

int bdnn_pool_workspace(int impl, const bdnn_pool_desc_t *d, int alg, int prop,
                        bdnn_pool_ws_t *ws) {
    ws->bytes = 0;
    ws->elem_bytes = 0;
    if (impl < 0 || impl >= N_IMPLS || !desc_ok(d, alg)) return BDNN_STATUS_INVALID;
    if (prop != BDNN_PROP_FWD_TRAINING && prop != BDNN_PROP_FWD_INFERENCE
            && prop != BDNN_PROP_BWD_DATA)
        return BDNN_STATUS_INVALID;
    /* Only max needs to remember where its result came from; inference keeps nothing. */
    if (alg != BDNN_POOL_MAX || prop == BDNN_PROP_FWD_INFERENCE) return BDNN_STATUS_OK;
    /* One int32 tap index per dst element, in dst's own order (every row today; a row
     * could answer otherwise, callers only pass the buffer on). */
    ws->elem_bytes = sizeof(int32_t);
    ws->bytes = dst_elems(d) * ws->elem_bytes;
    return BDNN_STATUS_OK;
}

/* A post-op chain (bdnn_post_chain_status) over this descriptor's dst. */
static int pool_post_chain_status(const bdnn_pool_desc_t *d, const bdnn_post_chain_t *po) {
    const int st = bdnn_post_chain_status(po);
    if (st != BDNN_STATUS_OK || !po || po->n == 0) return st;
    if (po->c != d->c || po->d != d->od || po->h != d->oh || po->w != d->ow
            || po->channels_last)
        return BDNN_STATUS_INVALID;
    return BDNN_STATUS_OK;
}

static int usable(int impl, const bdnn_pool_desc_t *d, int alg, int dt, int backward) {
    if (impl < 0 || impl >= N_IMPLS || !desc_ok(d, alg)) return BDNN_STATUS_INVALID;
    if (!(impls[impl].layouts & (1 << d->layout))) return BDNN_STATUS_UNIMPLEMENTED;
    return bdnn_typed_row_status(impls[impl].isa, impls[impl].operands, dt, backward);
}

/* -- work memory ------------------------------------------------------------------------
 * A call's work memory is one block, carved in a fixed order into its parts, each rounded
 * up to 64 bytes: the caller's scratchpad (--attr-scratchpad=user) or, without one, a
 * block the call allocates and frees. work_bytes gives its size, work() carves it. */
enum { WORK_ALIGN = 64 };

static size_t work_round(size_t bytes) {
    return (bytes + WORK_ALIGN - 1) / WORK_ALIGN * WORK_ALIGN;
}

/* The next part of `bytes` bytes at *cursor. */
static void *work(char **cursor, size_t bytes) {
    void *p = *cursor;
    *cursor += work_round(bytes);
    return p;
}

static size_t axis_bytes(const bdnn_pool_desc_t *d) {
    return work_round(sizeof(int64_t) * (size_t)(2 * (d->od + d->oh + d->ow)));
}

/* The per-axis tables of pool_axis_t (d, h, w), carved at *cursor (axis_bytes). */
static void axis_tables(const bdnn_pool_desc_t *d, pool_axis_t ax[3], char **cursor) {
    const int64_t I[3] = {d->id, d->ih, d->iw}, O[3] = {d->od, d->oh, d->ow};
    const int64_t K[3] = {d->kd, d->kh, d->kw}, S[3] = {d->sd, d->sh, d->sw};
    const int64_t P[3] = {d->pd, d->ph, d->pw}, D[3] = {d->dd + 1, d->dh + 1, d->dw + 1};
    int64_t *p = work(cursor, axis_bytes(d));
    for (int a = 0; a < 3; ++a) {
        int64_t *klo = p, *khi = p + O[a];
        p = khi + O[a];
        for (int64_t o = 0; o < O[a]; ++o) {
            int64_t lo = 0, hi = K[a];
            while (lo < hi && o * S[a] + lo * D[a] - P[a] < 0) ++lo;
            while (hi > lo && o * S[a] + (hi - 1) * D[a] - P[a] >= I[a]) --hi;
            klo[o] = lo;
            khi[o] = hi;
        }
        ax[a] = (pool_axis_t){klo, khi};
    }
}

/* The work memory of one call on nthr threads: the channels-last and blocked rows' axis
 * tables (and backward's f32 accumulator for another type); the plain rows' column bounds
 * (forward) and each thread's widened plane and row (another type than f32), or its
 * double accumulator plane (backward averages) and widened planes (another type). */
static size_t work_bytes(const bdnn_pool_desc_t *d, int alg, int backward, int dt,
                         int dst_dt, int64_t nthr) {
    const pool_cx_t g = cx_geometry(d);
    const int64_t in_plane = d->id * d->ih * d->iw, out_plane = d->od * d->oh * d->ow;
    if (g.blk) {
        const int64_t n = d->mb * g.nblk * g.blk * in_plane;
        return axis_bytes(d)
             + (backward && dt != BDNN_DT_F32 ? work_round(sizeof(float) * (size_t)n) : 0);
    }
    if (!backward)
        return work_round(sizeof(int64_t) * (size_t)(2 * d->kw + d->ow))
             + (dt == BDNN_DT_F32 && dst_dt == BDNN_DT_F32
                    ? 0 : (size_t)nthr * work_round(sizeof(float) * (size_t)(in_plane + d->ow)));
    const size_t per_thread
        = (alg == BDNN_POOL_MAX ? 0 : work_round(sizeof(double) * (size_t)in_plane))
        + (dt == BDNN_DT_F32 ? 0 : work_round(sizeof(float) * (size_t)(out_plane + in_plane)));
    return (size_t)nthr * per_thread;
}

int64_t bdnn_pool_scratchpad_bytes(int impl, const bdnn_pool_desc_t *d, int alg, int backward,
                                   int dt, int dst_dt) {
    if (usable(impl, d, alg, dt, backward) != BDNN_STATUS_OK) return -1;
    return (int64_t)work_bytes(d, alg, backward, dt, backward ? dt : dst_dt,
                               omp_get_max_threads());
}

/* The call's work block of `bytes`: the scratchpad (*status BDNN_STATUS_INVALID when
 * its scratchpad_bytes is short: sized at another thread count), or a new block (*owned
 * set, to be freed; *status BDNN_STATUS_OUT_OF_MEMORY when it cannot be had). */
static char *work_block(void *scratchpad, int64_t scratchpad_bytes, size_t bytes,
                        char **owned, int *status) {
    *owned = NULL;
    *status = BDNN_STATUS_OK;
    if (scratchpad) {
        if (scratchpad_bytes < 0 || (size_t)scratchpad_bytes < bytes)
            *status = BDNN_STATUS_INVALID;
        return scratchpad;
    }
    if (!bytes) return NULL;
    *owned = aligned_alloc(WORK_ALIGN, work_round(bytes));
    if (!*owned) *status = BDNN_STATUS_OUT_OF_MEMORY;
    return *owned;
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
static void fwd_rows_typed(const bdnn_pool_desc_t *d, int alg, int dt, int dst_dt,
                           const pool_ker_t *ker,
                           const void *src, void *dst, int32_t *ws32, const int64_t *lo_w,
                           const int64_t *hi_w, const int64_t *cnt_w, int64_t lo, int64_t hi,
                           float *plane_buf, float *row_buf, const bdnn_post_chain_t *po,
                           int fault) {
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const int64_t in_plane = d->id * d->ih * d->iw, OW = d->ow;
    const int64_t size = (int64_t)bdnn_dt_size(dt), dst_size = (int64_t)bdnn_dt_size(dst_dt);
    const float lowest = bdnn_dt_lowest(dst_dt);
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
        if (po) bdnn_post_chain_run(po, row_buf, r * OW, OW, fault);
        ker->from_f32(dst_dt, row_buf, (char *)dst + r * OW * dst_size, OW, truncate);
    }
}

int bdnn_pool_fwd(int impl, const bdnn_pool_desc_t *d, int alg, int prop, int dt,
                  int dst_dt, const bdnn_post_chain_t *po, const void *src, void *dst,
                  void *ws, void *scratchpad, int64_t scratchpad_bytes, int fault) {
    const int st = usable(impl, d, alg, dt, 0);
    if (st != BDNN_STATUS_OK) return st;
    /* dst: any type whose conversions this row's ISA has */
    if (dst_dt != dt) {
        const int dst_st = bdnn_typed_row_status(impls[impl].isa, bdnn_dt_operands(dst_dt),
                                                 dst_dt, 0);
        if (dst_st != BDNN_STATUS_OK) return dst_st;
    }
    const int po_st = pool_post_chain_status(d, po);
    if (po_st != BDNN_STATUS_OK) return po_st;
    if (po && po->n == 0) po = NULL;
    bdnn_pool_ws_t wsd;
    bdnn_pool_workspace(impl, d, alg, prop, &wsd);
    if (wsd.bytes && !ws) return BDNN_STATUS_INVALID;
    /* The unwritten-workspace defect runs training as inference. */
    int32_t *ws32 = wsd.bytes && fault != BDNN_POOL_FAULT_WS_UNWRITTEN ? ws : NULL;
    const pool_cx_t g = cx_geometry(d);
    /* post-ops and a dst type of its own: the plain rows only */
    if (g.blk && (po || dst_dt != dt)) return BDNN_STATUS_UNIMPLEMENTED;
    const int nthr = omp_get_max_threads();
    int mem_st;
    char *owned, *cursor = work_block(scratchpad, scratchpad_bytes,
                                      work_bytes(d, alg, 0, dt, dst_dt, nthr), &owned, &mem_st);
    if (mem_st != BDNN_STATUS_OK) return mem_st;
    if (g.blk) {
        pool_axis_t ax[3];
        axis_tables(d, ax, &cursor);
        impls[impl].ker->cx_fwd(d, &g, ax, alg, dt, src, dst, ws32,
                                fault == BDNN_FAULT_TRUNCATE_DST);
        free(owned);
        return BDNN_STATUS_OK;
    }
    int64_t *bounds = work(&cursor, sizeof(int64_t) * (size_t)(2 * d->kw + d->ow));
    int64_t *lo = bounds, *hi = bounds + d->kw, *cnt_w = bounds + 2 * d->kw;
    column_bounds(d, lo, hi, cnt_w);
    const pool_ker_t *ker = impls[impl].ker;
    const int64_t rows = d->mb * d->c * d->od * d->oh, OW = d->ow;
    const int64_t in_plane = d->id * d->ih * d->iw;
    if (dt == BDNN_DT_F32 && dst_dt == BDNN_DT_F32) {
        const float *s32 = src;
        float *d32 = dst;
#pragma omp parallel for schedule(static) num_threads(nthr)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t oh = r % d->oh, od = r / d->oh % d->od, plane = r / (d->oh * d->od);
            ker->fwd_row(d, alg, s32 + plane * in_plane, od, oh, d32 + r * OW,
                         ws32 ? ws32 + r * OW : NULL, lo, hi, cnt_w);
            if (po) bdnn_post_chain_run(po, d32 + r * OW, r * OW, OW, fault);
        }
    } else {
        /* Contiguous row ranges per thread, so a thread widens each plane it touches once;
         * thread t's plane and row at part t of the per-thread parts. */
        const size_t per_thread = work_round(sizeof(float) * (size_t)(in_plane + OW));
#pragma omp parallel num_threads(nthr)
        {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            float *buf = (float *)(cursor + (size_t)t * per_thread);
            fwd_rows_typed(d, alg, dt, dst_dt, ker, src, dst, ws32, lo, hi, cnt_w,
                           rows * t / nt, rows * (t + 1) / nt, buf, buf + in_plane, po, fault);
        }
    }
    free(owned);
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
                  const void *ws, void *diff_src, void *scratchpad, int64_t scratchpad_bytes,
                  int fault) {
    const int st = usable(impl, d, alg, dt, 1);
    if (st != BDNN_STATUS_OK) return st;
    if (alg == BDNN_POOL_MAX && !ws) return BDNN_STATUS_INVALID;
    const pool_ker_t *ker = impls[impl].ker;
    const pool_cx_t g = cx_geometry(d);
    const int nthr = omp_get_max_threads();
    const size_t bytes = work_bytes(d, alg, 1, dt, dt, nthr);
    int mem_st;
    char *owned, *cursor = work_block(scratchpad, scratchpad_bytes, bytes, &owned, &mem_st);
    if (mem_st != BDNN_STATUS_OK) return mem_st;
    if (g.blk) {
        pool_axis_t ax[3];
        axis_tables(d, ax, &cursor);
        /* the f32 accumulator: diff_src itself, or a scratch tensor for the typed data */
        const int64_t n = d->mb * g.nblk * g.blk * d->id * d->ih * d->iw;
        float *acc = dt == BDNN_DT_F32 ? diff_src : work(&cursor, sizeof(float) * (size_t)n);
        ker->cx_bwd(d, &g, ax, alg, dt, diff_dst, alg == BDNN_POOL_MAX ? ws : NULL, diff_src,
                    acc, fault == BDNN_FAULT_TRUNCATE_DST, fault == BDNN_POOL_FAULT_WS_IGNORED);
        free(owned);
        return BDNN_STATUS_OK;
    }
    const int32_t *ws32 = ws;
    const int64_t planes = d->mb * d->c, in_plane = d->id * d->ih * d->iw;
    const int64_t out_plane = d->od * d->oh * d->ow, size = (int64_t)bdnn_dt_size(dt);
    const int typed = dt != BDNN_DT_F32, truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const size_t acc_bytes = alg == BDNN_POOL_MAX ? 0 : work_round(sizeof(double) * (size_t)in_plane);
    const size_t per_thread = bytes / (size_t)nthr;
#pragma omp parallel num_threads(nthr)
    {
        /* per thread: the averages' double plane; typed: f32 diff_dst and diff_src planes */
        char *part = cursor + (size_t)omp_get_thread_num() * per_thread;
        double *acc = alg == BDNN_POOL_MAX ? NULL : (double *)part;
        float *buf = typed ? (float *)(part + acc_bytes) : NULL;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < planes; ++p) {
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
    }
    free(owned);
    return BDNN_STATUS_OK;
}
