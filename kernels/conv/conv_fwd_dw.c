/* dw_conv_fwd: forward depthwise convolution (one input and one output channel per group),
 * on the plain layouts. Threads split the (image, channel) planes. Each plane is first
 * copied into a zero-padded buffer, its columns split by the stride's phase (column x
 * goes to phase x % SW at x / SW), so that every tap of a row of outputs reads one
 * contiguous run with no bounds checks; the ISA's plane kernel (conv_dw.inc) then sums the
 * taps a vector of outputs at a time. Small planes (MobileNet's 7x7 and 14x14) cost a
 * copy and a few vectors per row instead of a bounds-checked loop per tap.
 * Weights layout: the user's own ([G][1][1][KD][KH][KW]), so packing is a copy.
 *
 * Low precision (c->lp: int8, f16 or bf16 operands, or f32 with scales, zero points, other
 * output types or a chain the f32 store does not apply): each plane is widened to f32
 * first (int8: minus its src zero point, so that the zero padding stands for the zero
 * point, as the other int8 routes pad), the same plane kernel sums the taps in f32 into a
 * plane of accumulators, and the low-precision epilogue (bdnn_conv_epilogue) applies
 * scales, bias, post-ops (binary and prelu included: a plane is a run of dst's plain
 * offsets), dst scale and zero point and the conversion. For int8 the f32 sums are exact:
 * init refuses a problem whose largest possible sum reaches 2^24. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"
#include "dt.h"

typedef struct {
    int64_t *ow_lo, *ow_hi;   /* per kw: valid output columns [lo, hi) (the edge defect) */
    float **pad;              /* per thread: the padded, phase-split plane */
    float **wide, **acc, **tmp;   /* lp, per thread: the widened input plane, the output
                                     plane's f32 sums, the epilogue's row buffer */
    float **swap_tmp;         /* per thread: a plane of outputs (the swapped-post-ops defect) */
    int64_t *tap_off;         /* per tap: offset in pad of its input for output (0, 0, 0) */
    int64_t lz, ly, lx;       /* padded extents: the inputs the outputs reach */
    size_t pad_floats;
    dw_geom_t geom;
} dw_plan_t;

static void dw_fini(struct bdnn_conv *c) {
    dw_plan_t *p = c->plan;
    if (!p) return;
    for (int t = 0; t < c->nthr; ++t) {
        if (p->swap_tmp) free(p->swap_tmp[t]);
        if (p->pad) free(p->pad[t]);
    }
    free(p->wide);
    free(p->acc);
    free(p->tmp);
    free(p->swap_tmp);
    free(p->pad);
    free(p->tap_off);
    free(p->ow_lo);
    free(p->ow_hi);
    free(p);
    c->plan = NULL;
}

/* The largest |src - zero point| of an int8 source (0: not int8). */
static int64_t int8_src_reach(const struct bdnn_conv *c) {
    if (c->operands != OPERANDS_INT8) return 0;
    int64_t zp = c->attr.src_zp < 0 ? -(int64_t)c->attr.src_zp : c->attr.src_zp;
    for (int64_t ch = 0; c->src_zps && ch < c->d.ic; ++ch) {
        const int64_t z = c->src_zps[ch] < 0 ? -(int64_t)c->src_zps[ch] : c->src_zps[ch];
        if (z > zp) zp = z;
    }
    return (c->attr.src_dt == BDNN_DT_U8 ? 255 : 128) + zp;
}

static int dw_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir != BDNN_DIR_FWD) return BDNN_STATUS_UNIMPLEMENTED;
    if (d->ic != d->g || d->oc != d->g) return BDNN_STATUS_UNIMPLEMENTED;
    /* int8 in f32: every partial sum of s8 weights (|w| <= 128) must stay an exact f32
     * integer (below 2^24) */
    const int64_t reach = int8_src_reach(c), taps0 = d->kd * d->kh * d->kw;
    if (reach && taps0 * reach * 128 >= ((int64_t)1 << 24)) return BDNN_STATUS_UNIMPLEMENTED;
    dw_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->ow_lo = malloc(sizeof(int64_t) * d->kw);
    p->ow_hi = malloc(sizeof(int64_t) * d->kw);
    p->swap_tmp = calloc(c->nthr, sizeof(float *));
    if (!p->ow_lo || !p->ow_hi || !p->swap_tmp) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        /* iw = ow*SW + off must lie in [0, IW). */
        const int64_t off = kw * (d->dw + 1) - d->pw;
        int64_t lo = off >= 0 ? 0 : bdnn_div_up(-off, d->sw);
        int64_t hi = bdnn_floor_div(d->iw - 1 - off, d->sw) + 1;
        if (hi > d->ow) hi = d->ow;
        if (hi < 0) hi = 0;
        if (lo > hi) lo = hi;
        p->ow_lo[kw] = lo;
        p->ow_hi[kw] = hi;
    }
    /* Padded extents: along each axis, outputs reach inputs [-p, (O-1)*S + (K-1)*(D+1) - p]. */
    const int vlen = ((const conv_dw_ker_t *)c->impl->kernel)->vlen;
    const int64_t taps = d->kd * d->kh * d->kw, SW = d->sw;
    p->lz = d->od > 0 ? (d->od - 1) * d->sd + (d->kd - 1) * (d->dd + 1) + 1 : 0;
    p->ly = d->oh > 0 ? (d->oh - 1) * d->sh + (d->kh - 1) * (d->dh + 1) + 1 : 0;
    p->lx = d->ow > 0 ? (d->ow - 1) * SW + (d->kw - 1) * (d->dw + 1) + 1 : 0;
    dw_geom_t *g = &p->geom;
    /* A phase row holds its columns, and a vector more: the last vector of outputs reads
     * up to owv - 1 past a tap's first column. */
    g->phase = bdnn_div_up(p->lx, SW) + vlen;
    g->ystride = SW * g->phase;
    g->zstride = p->ly * g->ystride;
    g->ystep = d->sh * g->ystride;
    g->zstep = d->sd * g->zstride;
    g->od = d->od;
    g->oh = d->oh;
    g->ow = d->ow;
    g->taps = taps;
    p->tap_off = malloc(sizeof(int64_t) * (size_t)(taps > 0 ? taps : 1));
    p->pad = calloc(c->nthr, sizeof(float *));
    if (!p->tap_off || !p->pad) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int64_t kd = 0, t = 0; kd < d->kd; ++kd)
        for (int64_t kh = 0; kh < d->kh; ++kh)
            for (int64_t kw = 0; kw < d->kw; ++kw, ++t) {
                const int64_t x = kw * (d->dw + 1);
                p->tap_off[t] = kd * (d->dd + 1) * g->zstride + kh * (d->dh + 1) * g->ystride
                              + (x % SW) * g->phase + x / SW;
            }
    g->tap_off = p->tap_off;
    p->pad_floats = (size_t)(p->lz * g->zstride) + (size_t)vlen;
    /* the padded planes' borders are zeroed here once and never written again: the
     * primitive's own memory, not its scratchpad's (conv_scratch) */
    for (int t = 0; t < c->nthr; ++t) {
        p->pad[t] = bdnn_aligned_alloc(sizeof(float) * p->pad_floats);
        if (!p->pad[t]) return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->fault == BDNN_FAULT_POST_OPS_SWAPPED) {
            const int64_t out_plane = d->od * d->oh * d->ow;
            if (conv_scratch((void **)&p->swap_tmp[t], sizeof(float) * (size_t)(out_plane > 0 ? out_plane : 1)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
        memset(p->pad[t], 0, sizeof(float) * p->pad_floats);
    }
    if (c->lp) {
        const int64_t in_plane = d->id * d->ih * d->iw, out_plane = d->od * d->oh * d->ow;
        p->wide = calloc(c->nthr, sizeof(float *));
        p->acc = calloc(c->nthr, sizeof(float *));
        p->tmp = calloc(c->nthr, sizeof(float *));
        if (!p->wide || !p->acc || !p->tmp) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < c->nthr; ++t)
            if (conv_scratch((void **)&p->wide[t], sizeof(float) * (size_t)(in_plane + 1))
                    || conv_scratch((void **)&p->acc[t], sizeof(float) * (size_t)(out_plane + 1))
                    || conv_scratch((void **)&p->tmp[t],
                                    sizeof(float) * (size_t)(out_plane + EPI_TMP_SLACK)))
                return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static size_t dw_weights_bytes(const struct bdnn_conv *c) {
    return sizeof(float) * (size_t)(c->d.g * c->d.kd * c->d.kh * c->d.kw);
}

static void dw_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed_v) {
    float *packed = packed_v;
    const int64_t n = c->d.g * c->d.kd * c->d.kh * c->d.kw;
    if (c->fault == BDNN_FAULT_SKIP_LAST_IC) /* the only input channel is the last one */
        memset(packed, 0, dw_weights_bytes(c));
    else if (c->attr.wei_dt != BDNN_DT_F32)   /* widened: exact for s8, f16 and bf16 */
        bdnn_cvt_to_f32(c->attr.wei_dt, wei, packed, n);
    else
        memcpy(packed, wei, dw_weights_bytes(c));
    if (c->fault == BDNN_FAULT_SKIP_LAST_TAP) {
        const int64_t taps = c->d.kd * c->d.kh * c->d.kw;
        for (int64_t ch = 0; ch < c->d.g; ++ch) packed[ch * taps + taps - 1] = 0.0f;
    }
}

/* Copies one input plane into the padded, phase-split buffer. Inputs outside the padded
 * extents are never read; the padding itself was zeroed at creation and is never written,
 * since every plane of the problem covers the same positions. */
static void dw_pad_plane(const bdnn_conv_desc_t *d, const dw_plan_t *p, const float *src,
                         float *pad) {
    const dw_geom_t *g = &p->geom;
    const int64_t SW = d->sw;
    const int64_t z1 = d->id < p->lz - d->pd ? d->id : p->lz - d->pd;
    const int64_t y1 = d->ih < p->ly - d->ph ? d->ih : p->ly - d->ph;
    const int64_t x1 = d->iw < p->lx - d->pw ? d->iw : p->lx - d->pw;
    const int64_t z0 = d->pd > 0 ? 0 : -d->pd, y0 = d->ph > 0 ? 0 : -d->ph;
    const int64_t x0 = d->pw > 0 ? 0 : -d->pw;
    for (int64_t z = z0; z < z1; ++z)
        for (int64_t y = y0; y < y1; ++y) {
            const float *in = src + (z * d->ih + y) * d->iw;
            float *out = pad + (z + d->pd) * g->zstride + (y + d->ph) * g->ystride;
            if (SW == 1) {
                memcpy(out + x0 + d->pw, in + x0, sizeof(float) * (size_t)(x1 > x0 ? x1 - x0 : 0));
                continue;
            }
            if (SW == 2 && x1 > x0) {
                /* Both phases in one pass over the row: a loop of interleaved pairs the
                 * compiler vectorizes (MobileNet's stride-2 layers spend as long on this
                 * copy as on their taps otherwise). */
                const int64_t X0 = x0 + d->pw, n = x1 - x0;
                float *restrict pa = out + (X0 & 1) * g->phase + X0 / 2;
                float *restrict pb = out + ((X0 + 1) & 1) * g->phase + (X0 + 1) / 2;
                const float *restrict i0 = in + x0;
                for (int64_t k = 0; k < n / 2; ++k) {
                    pa[k] = i0[2 * k];
                    pb[k] = i0[2 * k + 1];
                }
                if (n & 1) pa[n / 2] = i0[n - 1];
                continue;
            }
            /* phase by phase: no division per element */
            for (int64_t r = 0; r < SW; ++r) {
                int64_t x = x0 + ((r - (x0 + d->pw)) % SW + SW) % SW;   /* first of phase r */
                float *phase_row = out + r * g->phase;
                for (int64_t t = (x + d->pw) / SW; x < x1; x += SW, ++t) phase_row[t] = in[x];
            }
        }
}

/* The deliberate right-edge defect: taps past the right edge read the row's last value. */
static void dw_fault_right_edge(const bdnn_conv_desc_t *d, const dw_plan_t *p,
                                const float *src, const float *wei, int64_t od, int64_t oh,
                                float *row) {
    for (int64_t kd = 0; kd < d->kd; ++kd)
    for (int64_t kh = 0; kh < d->kh; ++kh) {
        const int64_t id = od * d->sd + kd * (d->dd + 1) - d->pd;
        const int64_t ih = oh * d->sh + kh * (d->dh + 1) - d->ph;
        if (id < 0 || id >= d->id || ih < 0 || ih >= d->ih) continue;
        const float edge = src[(id * d->ih + ih) * d->iw + d->iw - 1];
        for (int64_t kw = 0; kw < d->kw; ++kw) {
            if (p->ow_hi[kw] <= p->ow_lo[kw]) continue;
            for (int64_t ow = p->ow_hi[kw]; ow < d->ow; ++ow)
                row[ow] += wei[(kd * d->kh + kh) * d->kw + kw] * edge;
        }
    }
}

/* The low-precision planes (see the top): widen, sum the taps, then the epilogue. */
static void dw_execute_lp(const struct bdnn_conv *c, const bdnn_conv_args_t *a,
                          conv_dw_plane_fn plane_kernel) {
    const bdnn_conv_desc_t *d = &c->d;
    const dw_plan_t *p = c->plan;
    const int64_t in_plane = d->id * d->ih * d->iw, out_plane = d->od * d->oh * d->ow;
    const int64_t taps = d->kd * d->kh * d->kw, planes = d->mb * d->g, OW = d->ow;
    const int src_dt = c->attr.src_dt;
    const size_t src_sz = bdnn_dt_size(src_dt);
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const int64_t ch = pl % d->g;
        const int tid = omp_get_thread_num();
        float *wide = p->wide[tid], *acc = p->acc[tid];
        const float *w = (const float *)a->wei + ch * taps;
        bdnn_cvt_to_f32(src_dt, (const char *)a->src + (size_t)(pl * in_plane) * src_sz, wide,
                        in_plane);
        if (c->operands == OPERANDS_INT8) {
            const float zp = (float)(c->src_zps ? c->src_zps[ch] : c->attr.src_zp);
            if (zp != 0.0f)
                for (int64_t i = 0; i < in_plane; ++i) wide[i] -= zp;
        }
        dw_pad_plane(d, p, wide, p->pad[tid]);
        plane_kernel(&p->geom, p->pad[tid], w, 0.0f, 0.0f, 0, acc);
        if (c->fault == BDNN_FAULT_RIGHT_PAD_EDGE)
            for (int64_t od = 0; od < d->od; ++od)
                for (int64_t oh = 0; oh < d->oh; ++oh)
                    dw_fault_right_edge(d, p, wide, w, od, oh, acc + (od * d->oh + oh) * OW);
        bdnn_conv_epilogue(c, acc, out_plane, 1, out_plane, ch, a->bias, NULL, a->dst,
                           pl * out_plane, out_plane, p->tmp[tid]);
    }
}

static void dw_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const bdnn_conv_desc_t *d = &c->d;
    const dw_plan_t *p = c->plan;
    const conv_dw_ker_t *ker = c->impl->kernel;
    const conv_dw_plane_fn plane_kernel = ker->narrow && d->ow <= ker->narrow_vlen
                                              ? ker->narrow : ker->fn;
    if (c->lp) {
        dw_execute_lp(c, a, plane_kernel);
        return;
    }
    const int64_t in_plane = d->id * d->ih * d->iw, out_plane = d->od * d->oh * d->ow;
    const int64_t taps = d->kd * d->kh * d->kw, planes = d->mb * d->g, OW = d->ow;
    int has_sum;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int swapped = c->fault == BDNN_FAULT_POST_OPS_SWAPPED && has_sum;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const int64_t ch = pl % d->g;
        const float *s = (const float *)a->src + pl * in_plane;
        const float *w = (const float *)a->wei + ch * taps;
        const float bias = a->bias ? ((const float *)a->bias)[ch] : 0.0f;
        float *pad = p->pad[omp_get_thread_num()];
        float *dplane = (float *)a->dst + pl * out_plane;
        dw_pad_plane(d, p, s, pad);
        if (swapped) {   /* the deliberate defect: eltwise before the sum */
            float *tmp = p->swap_tmp[omp_get_thread_num()];
            plane_kernel(&p->geom, pad, w, bias, 0.0f, 0, tmp);
            bdnn_post_ops_eltwise(c, tmp, out_plane, 1, out_plane);
            for (int64_t i = 0; i < out_plane; ++i) dplane[i] = sum_scale * dplane[i] + tmp[i];
            continue;
        }
        /* Bias and sum (which reads the prior dst) are applied in the kernel's store. */
        plane_kernel(&p->geom, pad, w, bias, sum_scale, has_sum, dplane);
        if (c->fault == BDNN_FAULT_RIGHT_PAD_EDGE)   /* linear: added after the sum */
            for (int64_t od = 0; od < d->od; ++od)
                for (int64_t oh = 0; oh < d->oh; ++oh)
                    dw_fault_right_edge(d, p, s, w, od, oh, dplane + (od * d->oh + oh) * OW);
        /* Eltwise on the finished plane, still in cache. */
        bdnn_post_ops_eltwise(c, dplane, out_plane, 1, out_plane);
    }
}

const conv_impl_ops_t bdnn_conv_dw_ops = {
    dw_init, dw_weights_bytes, dw_pack_weights, dw_execute, dw_fini, NULL,
};
