/* The GEMM family's convolution on plain layouts (gemm_conv, gemm_conv_bf16, _f16, _int8):
 * what its routes share. Each route is its own file and its own row of the table
 * (conv_api.c), with the predicate of its domain:
 *   conv_gemm_outer.c   backward weights, f32: outer products of transposed panels
 *   conv_gemm_shift.c   forward on zero-padded input planes read in place (shifted)
 *   conv_gemm_s2d.c     forward, bf16 / int8 first layers: space-to-depth, then shift
 *   conv_gemm_col2im.c  backward data, f32: a plain GEMM added into diff_src (col2im)
 *   conv_gemm_gather.c  every direction and type: B gathered per block (im2col-like)
 *   conv_gemm_dot.c     int8 forward, a long reduction, few outputs: dot products of
 *                       kw runs in place (no GEMM: of this header, only its helpers)
 *   conv_gemm.c         the plan's head and teardown, the weights reorder, execution
 *
 * Each direction is, per "instance", C[M x N] = A[M x K] * B[K x N] (+ bias per row):
 *
 *   direction  instance  M      N (columns)     K (reduction)     A                B (gathered)
 *   forward    (n, g)    OC/G   output points   (ic, kd, kh, kw)  weights          src at o*s - p + k*(d+1)
 *   bwd data   (n, g)    IC/G   input points    (oc, kd, kh, kw)  weights^T        diff_dst at (i + p - k*(d+1)) / s
 *   bwd wei    g         OC/G   (ic, kd,kh,kw)  (n, output pt)    diff_dst         src, im2col transposed
 *
 * C is the output tensor itself in its plain layout (dst, diff_src, or diff_wei), so no
 * output is ever copied. A and B are never materialized whole: the weights are packed into
 * A micro-panels once (the weights reorder, outside timing); everything else is packed by
 * the thread about to use it, one block at a time.
 *
 * Loops, outermost first (BLIS names):
 *   work item   (instance, column block jc of nc, row range [m0, m1))  -- split across threads
 *   pc loop     k blocks of at most KC       -- pack B[pc:pc+kc, block] (and A, if not prepacked)
 *   jr loop     NR-wide micro-panels of B    -- stays in L1 while...
 *   ir loop     MR-high micro-panels of A    -- ...A streams from L2
 *   micro-kernel                             -- the MR x NR tile in registers (conv_ukr.inc)
 * The first k block writes C (with bias); later ones accumulate into it. Work items write
 * disjoint parts of C, so threads never synchronize inside an execution (except f32
 * backward weights' outer-product route with one result: the threads pack each k block's
 * A and B together, then split C's tiles).
 *
 * Prepacked weights layout: per group, per k block, per MR panel, a kc x MR micro-panel
 * (element (k, r) at [k*MR + r]); rows past M are zero.
 *
 * Low-precision path (c->lp; see conv_impl.h): other data types, scales, zero points.
 *   - Operands that are not f32 are first widened, exactly, into an f32 copy (one pass,
 *     inside the timed execution), so the packers above serve every type.
 *   - Dot-product kernels (pack 2: bf16 pairs, pack 4: u8 x s8 quads) take each packed
 *     f32 panel regrouped into their layout; weights are regrouped once at pack time and
 *     their k padded to the group size with zeros.
 *   - int8: vpdpbusd multiplies unsigned by signed bytes, so an s8 source is shifted by
 *     +128 into u8, and taps outside the input read the source zero point (+ shift).
 *     Then acc = sum over k of w * (x + shift) and, with comp[ch] = (zp + shift) * sum of w,
 *     acc - comp = sum over in-bounds taps of w * (src - zp): padding contributes nothing
 *     and the zero point is applied exactly, in s32.
 *   - Tiles accumulate in a per-thread buffer (f32, or s32 for int8) across k blocks; the
 *     epilogue (conv_epilogue.c) converts each finished tile into the output tensor. */
#ifndef BDNN_CONV_GEMM_H
#define BDNN_CONV_GEMM_H

#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"
#include "dt.h"

/* The helpers below are defined here once and compiled into each route's file that uses
 * them as the file-local functions they are. GEMM_HELPER_CALLED: one kept a call (not
 * inlined into a route's loops), as when every route was one file. */
#define GEMM_HELPER static __attribute__((unused))
#define GEMM_HELPER_CALLED static __attribute__((unused, noinline))

enum { KC = 256, NC_PANELS_MAX = 8, MC_PANELS_MAX = 16 };
/* The fewest input channels per group the shift route takes (fewer: space-to-depth). */
enum { SHIFT_MIN_ICG = 16 };

/* A run of consecutive points along w of one row of the N grid (output points for the
 * forward pass, input points for backward data), inside one micro-panel: panel columns
 * [col, col + len) are the points (z, y, x0 + t), t < len. */
typedef struct {
    int64_t col, len, z, y, x0;
} segment_t;

/* Column j of a backward-weights block: input channel and tap offsets of (ic, kd, kh, kw). */
typedef struct {
    int64_t ic, dz, dy, dx;
} wcol_t;

/* Columns [col, col + len) of a panel: one (ic, kd, kh)'s taps from offset dx, whose input
 * points for any output lie side by side (dw = 0). */
typedef struct {
    int64_t ic, dz, dy, dx, col, len;
} wrun_t;

typedef struct {
    float *bp;            /* KC x nc packed B block (64-byte aligned) */
    void *bq;             /* lp, pack > 0: the B block regrouped for the dot products */
    void *aq;             /* lp, pack > 0, backward weights: the A block regrouped */
    void *acc;            /* lp: m_rows x nc accumulators (f32 or s32) */
    float *tmp;           /* lp: one row of the epilogue */
    float *ap;            /* m_rows x KC packed A block, when A is packed on the fly */
    segment_t *segs;      /* forward / backward data: runs of the current column block */
    int64_t *seg_start;   /* first run of each micro-panel (+1 sentinel) */
    wcol_t *wcols;        /* backward weights: the current column block's columns */
    int64_t wcol0;        /* ... and the index of its first column */
    float *brows;         /* op route: one B panel's im2col rows (NR x kc) */
    float *cbuf;          /* col2im route: m_rows x nc block of C */
    struct krow *krows;   /* op route, col2im route: the output rows a k block crosses */
    wrun_t *wruns;        /* op_runs: the current panel's column runs */
    conv_run_t *runs;     /* op_runs: ... their source for one output row */
} scratch_t;

typedef struct {
    int dir;
    int64_t instances, M, N, K, a_panels;
    int64_t nc, m_rows, n_col_blocks, n_row_blocks, n_items;
    int64_t k_splits, k_per_split;   /* K ranges with their own partial result (>= 1) */
    int col2im;           /* backward data on the col2im route */
    int col_private;      /* ... adding into per-thread copies of diff_src (partials) */
    int shift;            /* forward on the shift route */
    int b_in_place;       /* gather route, 1x1 unit stride, no padding: B is the tensor */
    float *subsampled;    /* 1x1 strided, no padding (forward; backward weights' op route):
                             the input points the outputs read, copied dense per execution
                             (forward: + a panel of slack), read in place as a unit-stride
                             problem */
    int64_t subsampled_slack;   /* floats after the subsampled points, zeroed with them */
    int64_t hp, wp;       /* shift: padded plane rows and columns */
    int64_t plane;        /* shift: one plane's stride in elements, hp * wp rounded up to
                             a cache line so that every tap's B rows start alike (stacked:
                             hp * wp) */
    int64_t chunk;        /* shift: images per copy and products pass */
    int stacked;          /* shift: the chunk's images side by side along N (a 1x1's) */
    int64_t gstride;      /* shift: elements from one channel group's plane to the next
                             one's of the same image: plane, or stacked chunk * plane
                             rounded up to a cache line */
    /* shift: the problem the padded planes pose (the descriptor's, or after
     * space-to-depth): channels per image and per group, taps, dilations */
    int64_t s_ic, s_icg, s_kh, s_kw, s_dh, s_dw;
    int64_t s2d_h, s2d_w; /* space-to-depth: phases along h and w (the stride), 0 if off */
    int direct_store;     /* shift, lp: each tile's last chain stored into dst (dp_store_fn) */
    const char *variant;  /* shift with bounded tiles (has_pairs16): the one the last
                             execution ran on every image chunk (its variant), "mixed"
                             when the chunks ran different tiles, NULL for the row's own
                             (bdnn_conv_variant) */
    float *padded;        /* shift: mb x ic padded planes (+ slack for the last reads) */
    int op;               /* backward weights on the outer-product route */
    int64_t b_panels;     /* op: NR panels of N */
    int64_t op_rb;        /* op: A panels per row block of a work item */
    float *op_a, *op_b;   /* op: one k block of A and of B, packed, shared by the threads */
    int64_t op_a_ld;      /* op: floats from one packed A panel to the next */
    int64_t op_kc;        /* op, one result: the k block (KC, or all of K: op_init) */
    int op_stream;        /* op, one result in one k block, >= OP_STREAM_MIN_FLOATS: C is
                             stored by UKR_STREAM where e->out is vector-aligned */
    int op_planes;        /* op: 1x1 without padding: B's rows are (subsampled) src planes */
    int op_runs;          /* op: B's panels gathered from src as runs of kw taps
                             (op_pack_b_runs) */
    int op_ahead;         /* op, k split: each k block's tiles fetch the next (op_ahead) */
    int op_b_private;     /* op, one result: each thread packs the B panels it multiplies,
                             one at a time (OP_PRIVATE_B_MAX_A_BYTES) */
    float *partials;      /* k_splits > 1: k_splits results of instances x M x N */
    scratch_t *scratch;   /* one per thread */
    /* lp */
    int pack;             /* 0 (f32 kernel), 2 or 4 */
    int64_t Kp;           /* K rounded up to pack */
    float b_shift;        /* int8: +128 for an s8 source, else 0 */
    float pad;            /* what taps outside the input read (int8 src zero point) */
    /* int8 forward whose padding byte (zero point + shift) a u8 cannot hold for some
     * channel (a u8 source's negative zero point), on a problem some of whose taps read
     * padding: those channels pad with the nearest byte, and the tiles of output points
     * that read padding take back what it added
     * (take_back_border, conv_gemm_gather.c), from a table appended to the packed
     * weights: per group, output channel and tap, the sum over the channels read of
     * w * (pad - zero point) */
    int border;
    int32_t *pads;        /* border, per-channel zero points: each channel's padding value */
    float *stage_b;       /* f32 copy of the tensor B gathers from (NULL if f32 already) */
    float *stage_a;       /* backward weights: f32 copy of diff_dst (NULL if f32) */
    float *bias_f32;      /* backward weights with bias: f32 sums before conversion */
} gemm_plan_t;

/* What one execution works on. */
typedef struct {
    const struct bdnn_conv *c;
    const gemm_plan_t *p;
    const void *a_packed;    /* forward / backward data: packed weights */
    const float *b_src;      /* tensor B gathers from: src, diff_dst, src (f32) */
    const float *a_src;      /* backward weights: diff_dst (f32) */
    const void *bias;        /* f32, or attr.bia_dt on the lp path */
    void *out;               /* f32, or the output type on the lp path */
    float pad;               /* forward B packing: the value of taps outside the input */
    const conv_gemm_ukr_t *tile;   /* shift, int8: the bounded tile this chunk runs (its
                                      bytes and the weights proven to fit), NULL: the
                                      row's own */
} exec_t;

/* One piece of an output row inside a k block: k block positions [kk, kk + len) are the
 * output points (n, od, oh, ow0 + t). */
struct krow {
    int64_t kk, len, n, od, oh, ow0;
};

GEMM_HELPER const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}

GEMM_HELPER int64_t taps_of(const bdnn_conv_desc_t *d) { return d->kd * d->kh * d->kw; }
GEMM_HELPER int64_t in_points(const bdnn_conv_desc_t *d) { return d->id * d->ih * d->iw; }
GEMM_HELPER int64_t out_points(const bdnn_conv_desc_t *d) { return d->od * d->oh * d->ow; }

GEMM_HELPER int64_t src_elems(const bdnn_conv_desc_t *d) { return d->mb * d->ic * in_points(d); }
GEMM_HELPER int64_t dst_elems(const bdnn_conv_desc_t *d) { return d->mb * d->oc * out_points(d); }

/* The data type of the tensor B gathers from, and of backward weights' A (diff_dst). */
GEMM_HELPER int b_dt_of(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_DATA ? c->attr.dst_dt : c->attr.src_dt;
}

/* The k block that starts at k0: the whole of K, or on the shift route the rest of k0's
 * tap, at most KC. */
GEMM_HELPER int64_t kblock_len(const gemm_plan_t *p, int64_t k0) {
    const int64_t end = p->shift ? (k0 / p->s_icg + 1) * p->s_icg : p->K;
    return end - k0 < KC ? end - k0 : KC;
}

/* Advances k = (channel, kd, kh, kw) like an odometer. */
typedef struct {
    int64_t ch, kd, kh, kw;
} tap_t;

GEMM_HELPER tap_t tap_at(const bdnn_conv_desc_t *d, int64_t k) {
    tap_t t;
    t.kw = k % d->kw, k /= d->kw;
    t.kh = k % d->kh, k /= d->kh;
    t.kd = k % d->kd, t.ch = k / d->kd;
    return t;
}

GEMM_HELPER void tap_next(const bdnn_conv_desc_t *d, tap_t *t) {
    if (++t->kw < d->kw) return;
    t->kw = 0;
    if (++t->kh < d->kh) return;
    t->kh = 0;
    if (++t->kd < d->kd) return;
    t->kd = 0;
    ++t->ch;
}

/* The output rows that k positions [pc, pc + kc) cross, k = (n, od, oh, ow). */
GEMM_HELPER int64_t krows_of(const bdnn_conv_desc_t *d, int64_t pc, int64_t kc, struct krow *rows) {
    int64_t nrows = 0;
    for (int64_t kk = 0; kk < kc;) {
        const int64_t k = pc + kk, ow = k % d->ow, line = k / d->ow;
        int64_t len = d->ow - ow;
        if (len > kc - kk) len = kc - kk;
        rows[nrows++] = (struct krow){kk, len, line / (d->oh * d->od),
                                      (line / d->oh) % d->od, line % d->oh, ow};
        kk += len;
    }
    return nrows;
}

/* The run [*lo, *hi) of a row's len points u (a B row's k positions, a C
 * row's columns) whose input column x0 + u * sw lies in [0, IW). */
GEMM_HELPER void col_run(int64_t x0, int64_t sw, int64_t IW, int64_t len, int64_t *lo,
                    int64_t *hi) {
    *lo = x0 >= 0 ? 0 : bdnn_div_up(-x0, sw);
    *hi = IW - 1 - x0 < 0 ? 0 : (IW - 1 - x0) / sw + 1;
    if (*lo > len) *lo = len;
    if (*hi > len) *hi = len;
    if (*hi < *lo) *hi = *lo;
}

/* The columns [j0, j0 + ncols) of a backward-weights block: (ic, tap) and tap offsets. */
GEMM_HELPER_CALLED void wcols_build(const bdnn_conv_desc_t *d, int64_t j0, int64_t ncols, wcol_t *w) {
    tap_t t = tap_at(d, j0);
    for (int64_t j = 0; j < ncols; ++j, tap_next(d, &t))
        w[j] = (wcol_t){t.ch, t.kd * (d->dd + 1) - d->pd, t.kh * (d->dh + 1) - d->ph,
                        t.kw * (d->dw + 1) - d->pw};
}

/* Bytes of a grouped A element: bf16 or s8, or for a kernel taking A widened (a_wide)
 * f32 or s16. */
GEMM_HELPER size_t a_esz(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return (p->pack == 2 ? 2 : 1) * (ukr_of(c)->a_wide ? 2 : 1);
}

/* Bytes of the regrouped weights of all groups (pack > 0), before the int8 compensation. */
GEMM_HELPER size_t grouped_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return bdnn_div_up(a_esz(c) * (size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->Kp), 64)
           * 64;
}

/* The border table (gemm_plan_t.border) in packed weights: after the compensation. */
GEMM_HELPER const int32_t *border_table(const struct bdnn_conv *c, const void *packed) {
    const gemm_plan_t *p = c->plan;
    return (const int32_t *)((const char *)packed + grouped_bytes(c)
                             + sizeof(int32_t) * (size_t)(c->d.g * p->M));
}

/* The shift route's bounded int8 tile (conv_gemm_ukr_t.pairs16) runs on a second copy
 * of A, plain s8 quads at the grouped A's element positions, appended to the packed
 * weights (after the border table, on a cache line), then the largest |w0| + |w1| of
 * its weight pairs (bdnn_pairs16_exact), an int32. */
GEMM_HELPER int has_pairs16(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return p->shift && p->pack == 4 && ukr_of(c)->pairs16 != NULL;
}
/* Bytes of the grouped weights (pack > 0) with the int8 compensation and the border
 * table, if any: the packed weights but for the bounded tile's part. */
GEMM_HELPER size_t grouped_head_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return grouped_bytes(c) + (p->pack == 4 ? sizeof(int32_t) * (size_t)(c->d.g * p->M) : 0)
           + (p->border ? sizeof(int32_t) * (size_t)(c->d.g * p->M * taps_of(&c->d)) : 0);
}
GEMM_HELPER size_t pairs16_offset(const struct bdnn_conv *c) {
    return bdnn_div_up(grouped_head_bytes(c), 64) * 64;
}
GEMM_HELPER size_t pairs16_a_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return bdnn_div_up((size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->Kp), 64) * 64;
}
GEMM_HELPER const int32_t *pairs16_wmax(const struct bdnn_conv *c, const void *packed) {
    return (const int32_t *)((const char *)packed + pairs16_offset(c) + pairs16_a_bytes(c));
}

/* Regroups a panel of kc rows x W f32 values (row stride W) into groups of `pack` rows:
 * element (k, w) to [(k / pack) * W * pack + w * pack + k % pack], zeros for k >= kc up to
 * the next multiple of pack. bf16 (pack 2) values convert exactly (they came from bf16);
 * int8 (pack 4) values are integers, shifted by `shift` (u8 source) or not (s8 weights).
 * wide (A of an a_wide kernel, conv_impl.h): the same places, as f32 (pack 2) or s16
 * (pack 4, a group's values in the order k%4 = 0, 2, 1, 3). */
GEMM_HELPER_CALLED void regroup(const float *in, int64_t kc, int64_t W, int pack, float shift,
                    int as_u8, int wide, void *out) {
    const int64_t kcp = bdnn_div_up(kc, pack) * pack;
    if (wide) {
        static const int slot4[4] = {0, 2, 1, 3};
        for (int64_t k = 0; k < kcp; ++k) {
            const float *row = in + k * W;
            const int64_t base = (k / pack) * W * pack + (pack == 4 ? slot4[k % 4] : k % pack);
            for (int64_t w = 0; w < W; ++w) {
                const float v = k < kc ? row[w] : 0.0f;
                if (pack == 2) ((float *)out)[base + w * pack] = v;
                else ((int16_t *)out)[base + w * pack] = (int16_t)(int32_t)v;
            }
        }
        return;
    }
    if (pack == 2) {
        /* Exact bf16 values: the high half of each f32 is the bf16, so a pair of rows
         * becomes one 32-bit lane per column, (row k+1 high half) | (row k high half),
         * with bit operations that vectorize. */
        for (int64_t k = 0; k < kcp; k += 2) {
            const uint32_t *r0 = (const uint32_t *)(in + k * W);
            const uint32_t *r1 = (const uint32_t *)(in + (k + 1) * W);
            uint32_t *o = (uint32_t *)out + (k / 2) * W;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__   /* row k at the lower address */
            if (k + 1 < kc)
                for (int64_t w = 0; w < W; ++w) o[w] = (r1[w] & 0xffff0000u) | (r0[w] >> 16);
            else   /* the odd last row pairs with zeros */
                for (int64_t w = 0; w < W; ++w) o[w] = r0[w] >> 16;
#else
            if (k + 1 < kc)
                for (int64_t w = 0; w < W; ++w) o[w] = (r0[w] & 0xffff0000u) | (r1[w] >> 16);
            else
                for (int64_t w = 0; w < W; ++w) o[w] = r0[w] & 0xffff0000u;
#endif
        }
        return;
    }
    for (int64_t k = 0; k < kcp; ++k) {
        const float *row = in + k * W;
        const int64_t base = (k / pack) * W * pack + k % pack;
        if (as_u8) {
            uint8_t *o = (uint8_t *)out + base;
            for (int64_t w = 0; w < W; ++w) o[w * 4] = k < kc ? (uint8_t)(int32_t)(row[w] + shift) : 0;
        } else {
            int8_t *o = (int8_t *)out + base;
            for (int64_t w = 0; w < W; ++w) o[w * 4] = k < kc ? (int8_t)(int32_t)row[w] : 0;
        }
    }
}

/* conv_gemm.c: a new plan (c->plan) with the GEMM each instance is (M, N, K, its A
 * panels), for a route's init to complete; the ops every route shares. */
int bdnn_gemm_plan_new(struct bdnn_conv *c, gemm_plan_t **out);
void bdnn_gemm_fini(struct bdnn_conv *c);
size_t bdnn_gemm_weights_bytes(const struct bdnn_conv *c);
void bdnn_gemm_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed);
void bdnn_gemm_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a);
/* Each route's loops over one execution (bdnn_gemm_execute runs the plan's). */
void bdnn_gemm_run_outer(const exec_t *e);
void bdnn_gemm_run_shift(const exec_t *e);
void bdnn_gemm_run_col2im(const exec_t *e);
void bdnn_gemm_run_gather(const exec_t *e);
/* The shift route's plan, on the input (s2d 0) or its space-to-depth phases (s2d 1),
 * UNIMPLEMENTED (the plan untouched) past its bounds; the phases' padded copy (returns
 * the OR of its lanes). */
int bdnn_gemm_shift_plan(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u,
                         int s2d);
uint32_t bdnn_gemm_s2d_pad_input(const exec_t *e, const void *src, int64_t n0, int64_t n1);

#endif /* BDNN_CONV_GEMM_H */
