/* gemm_conv: convolution in all three directions as blocked GEMMs over implicit operands.
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
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"
#include "dt.h"

enum { KC = 256, NC_PANELS_MAX = 8, MC_PANELS_MAX = 16 };

/* Backward weights reduces over K = mb * output points, often tens of thousands, into an
 * M x N result of a few thousand elements. Splitting M and N for threads would make every
 * thread copy the same operand rows again for its small tile; instead each of the
 * k_splits ranges of K accumulates a whole partial result, and the partials are added at
 * the end, when K gives every split several k blocks and the partials stay small. */

/* Backward data, col2im route (f32, no post-ops): the gather route packs diff_dst per
 * input point, testing every tap for stride divisibility, and with few input channels
 * (a first layer: M = 3) it packs far more than it computes. Instead, per image and
 * group, C[(ic, tap)][o] = W^T x diff_dst is a plain GEMM whose B rows are diff_dst rows
 * as they lie, and each C row is added into diff_src at its tap's offset (col2im). Taken
 * for strided or multi-tap problems; a 1x1 unit-stride problem is already a plain GEMM on
 * the gather route. Column blocks of one image overlap in diff_src, so threads either own
 * whole (image, group) slices or, with too few of those, add into private copies of
 * diff_src that are summed at the end (while they stay small). */
static const int64_t COL_MAX_PRIVATE_FLOATS = (int64_t)16 << 20;

/* Forward, shift route (f32, 1D/2D, unit stride, several taps): im2col copies every input
 * point once per tap it feeds (9x the input for 3x3). Instead the input is copied once
 * into a zero-padded buffer of Hp x Wp per channel, and the outputs are computed on the
 * padded grid (column oh*Wp + ow, the Wp - OW columns past each row's end discarded):
 * there, tap (kh, kw)'s operand is the padded plane itself shifted by kh*(DH+1)*Wp +
 * kw*(DW+1), so the micro-kernel reads B rows in place (ldb = the plane), with K ordered
 * (tap, ic) and k blocks inside one tap. A C block is computed on the padded grid, then
 * its valid columns are stored into dst with bias and post-ops. */
enum { SHIFT_MIN_ICG = 16 };

/* Forward, shift route by space-to-depth (bf16 / int8 first layers: few input channels,
 * stride S > 1, several taps; ResNet's 7x7 stride-2 conv1 on 3 channels). Neither route
 * above serves it: the gather route widens, packs and regroups every tap's input per
 * k block (there it took 7x the time of a 3x3 layer of the same size), and the shift route
 * needs unit stride. Splitting the input into its S x S phases, phase (py, px) being the
 * points (S*Y + py - PH, S*X + px - PW), makes it a unit-stride problem on the phase
 * planes: IC*S*S channels, ceil(KH/S) x ceil(KW/S) taps, no padding, tap (ky', kx') of
 * phase (py, px) being the original tap (S*ky' + py, S*kx' + px), and zero weights where
 * that lies past the kernel. The padded copy is then built with the phases as channels
 * (and the padding in each lane's own bytes, since phases differ in which points exist),
 * and everything after it is the shift route unchanged. It does up to
 * (S*ceil(K/S) / K)^2 more multiply-adds (1.3x for 7x7 stride 2) on ic*S*S channels a
 * multiple of the dot product's group, where the gather route regrouped ic = 3 into a
 * group of 4 (or 2) per tap. */
enum { S2D_MAX_ICG = SHIFT_MIN_ICG - 1 };
static const int64_t SHIFT_MAX_PAD_FLOATS = (int64_t)64 << 20;
static const int64_t KSPLIT_MAX_PARTIAL_FLOATS = (int64_t)16 << 20;

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
    int64_t hp, wp;       /* shift: padded plane rows and columns */
    /* shift: the problem the padded planes pose (the descriptor's, or after
     * space-to-depth): channels per image and per group, taps, dilations */
    int64_t s_ic, s_icg, s_kh, s_kw, s_dh, s_dw;
    int64_t s2d_h, s2d_w; /* space-to-depth: phases along h and w (the stride), 0 if off */
    int direct_store;     /* shift, lp: each tile's last chain stored into dst (dp_store_fn) */
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
} exec_t;

static const conv_gemm_ukr_t *ukr_of(const struct bdnn_conv *c) {
    return (const conv_gemm_ukr_t *)c->impl->kernel;
}

static int64_t taps_of(const bdnn_conv_desc_t *d) { return d->kd * d->kh * d->kw; }
static int64_t in_points(const bdnn_conv_desc_t *d) { return d->id * d->ih * d->iw; }
static int64_t out_points(const bdnn_conv_desc_t *d) { return d->od * d->oh * d->ow; }

/* ---------------------------------------------------------------------------------------
 * Planning */

static void gemm_fini(struct bdnn_conv *c) {
    gemm_plan_t *p = c->plan;
    if (!p) return;
    if (p->scratch)
        for (int t = 0; t < c->nthr; ++t) {
            free(p->scratch[t].bp);
            free(p->scratch[t].ap);
            free(p->scratch[t].segs);
            free(p->scratch[t].seg_start);
            free(p->scratch[t].wcols);
            free(p->scratch[t].bq);
            free(p->scratch[t].aq);
            free(p->scratch[t].acc);
            free(p->scratch[t].tmp);
            free(p->scratch[t].brows);
            free(p->scratch[t].krows);
            free(p->scratch[t].wruns);
            free(p->scratch[t].runs);
            free(p->scratch[t].cbuf);
        }
    free(p->scratch);
    free(p->stage_b);
    free(p->stage_a);
    free(p->bias_f32);
    free(p->partials);
    free(p->padded);
    free(p->subsampled);
    free(p->op_a);
    free(p->op_b);
    free(p);
    c->plan = NULL;
}

static int64_t src_elems(const bdnn_conv_desc_t *d) { return d->mb * d->ic * in_points(d); }
static int64_t dst_elems(const bdnn_conv_desc_t *d) { return d->mb * d->oc * out_points(d); }

/* The data type of the tensor B gathers from, and of backward weights' A (diff_dst). */
static int b_dt_of(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_DATA ? c->attr.dst_dt : c->attr.src_dt;
}

static int lp_init(const struct bdnn_conv *c, gemm_plan_t *p) {
    if (!c->lp) return BDNN_STATUS_OK;
    const bdnn_conv_desc_t *d = &c->d;
    const int b_dt = b_dt_of(c);
    if (c->attr.src_zp && c->dir != BDNN_DIR_FWD) return BDNN_STATUS_UNIMPLEMENTED;
    if (c->attr.src_zp && c->operands != OPERANDS_INT8) return BDNN_STATUS_UNIMPLEMENTED;
    if (c->operands == OPERANDS_INT8) {
        p->b_shift = b_dt == BDNN_DT_S8 ? 128.0f : 0.0f;
        const int64_t pad_u8 = (int64_t)c->attr.src_zp + (int64_t)p->b_shift;
        if (pad_u8 < 0 || pad_u8 > 255) return BDNN_STATUS_UNIMPLEMENTED;
    }
    p->pad = (float)c->attr.src_zp;
    if (b_dt != BDNN_DT_F32) {
        const int64_t n = c->dir == BDNN_DIR_BWD_DATA ? dst_elems(d) : src_elems(d);
        p->stage_b = bdnn_aligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        if (!p->stage_b) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->attr.dst_dt != BDNN_DT_F32) {
        p->stage_a = bdnn_aligned_alloc(sizeof(float) * (size_t)(dst_elems(d) > 0 ? dst_elems(d) : 1));
        if (!p->stage_a) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->with_bias) {
        p->bias_f32 = bdnn_aligned_alloc(sizeof(float) * (size_t)d->oc);
        if (!p->bias_f32) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

/* One piece of an output row inside a k block: k block positions [kk, kk + len) are the
 * output points (n, od, oh, ow0 + t). */
struct krow {
    int64_t kk, len, n, od, oh, ow0;
};

/* Backward weights, outer-product route (f32): C[M x N] = A[M x K] * B[K x N] on the GEMM
 * micro-kernel, A = diff_dst (k = (n, output point)), B = im2col of src. Both operands run
 * along k in memory (diff_dst rows; im2col rows, each a shifted input row), so they are
 * packed k-major by a transposing copy (conv_transpose_fn, VLEN x VLEN tiles in registers):
 * every k block of A and of B is packed exactly once, (M + N) * K moves against M * N * K
 * multiply-adds, and the register-blocked kernel needs no lane sums. (A dot-product route,
 * both operands as rows and sums across lanes per tile, measured slower on every ResNet-50
 * layer at mb1 and on the large mb16 layers.)
 * - Long K, small result (K >= 2 * KC * threads, partials within
 *   KSPLIT_MAX_PARTIAL_FLOATS): each thread takes a range of K and a whole partial result,
 *   packs all of A for a k block, then B a panel at a time, multiplied by every A panel
 *   while in L1; the partials are added at the end (reduce_partials). No barriers.
 * - Otherwise (short K: ResNet's 14x14 and 7x7 layers at mb1): one result; per k block the
 *   threads pack A together into a shared buffer, then split C's tiles, each item's B
 *   panel packed by its thread where A is small (OP_PRIVATE_B_MAX_A_BYTES), else all of B
 *   packed together first, shared (a large result with a K of a few blocks takes all of K
 *   as one block: OP_WHOLE_K_MAX_FLOATS). */
enum { OP_RB_MAX = 16 };   /* A panels per work item: the item's A block stays in L2 */
/* One result whose packed A for a k block stays within this many bytes (half of L2 here),
 * or that takes all of K as one block (each item already one B panel and every A panel),
 * with at least OP_PRIVATE_B_MIN_PANELS B panels per thread (a panel per item: the split
 * within an eighth of even): items are B panels, each packed by the thread that
 * multiplies it, into its own buffer (L1), right before its products. No shared B (at
 * ResNet's 14x14 3x3, 3.6-4.7 MB of it crossed L3 between the threads) and no barrier
 * between B's packing and the products. BWD_W on plain layouts, 2 threads, Zen 5,
 * alternating runs against shared B: mb1 res5a_branch2b 1.12x, res5a_branch2a 1.13x,
 * res5b_branch2a 1.14x, res5a_branch1 1.03x, res5a_branch2c 1.02x; mb16 (all of K)
 * 1.01x-1.05x; 3x3 256 -> 256 at 14x14 mb1 1.41x, mb2 1.58x. An A of 1 MB per block
 * (1x1 256 -> 1024 at 14x14, mb2), read from L3 once per B panel, read 0.90x: shared. */
enum { OP_PRIVATE_B_MAX_A_BYTES = 512 << 10, OP_PRIVATE_B_MIN_PANELS = 8 };
/* B's panels are gathered straight from src as runs of kw taps (op_pack_b_runs) at a
 * stride above 1 with runs of at least this many taps; otherwise im2col rows are built and
 * transposed. At stride 1 those rows are plain copies, at a stride an element gather.
 * BWD_W on plain layouts, 2 threads, Zen 5, alternating runs against im2col rows, min of
 * 2-3: ResNet-50 conv1 (7x7/2) mb1 1.15x, mb16 1.16x (AVX2 mb1 1.07x), a 5x5/2 on 3
 * channels at 224 1.25x, a 7x7/2 at 7x7 outputs 1.22x (at 14x14 0.99x); runs of 3 (3x3/2,
 * 64 channels at 56) 0.80x; at stride 1 a 5x5 0.90x, a 7x7 0.98x. */
enum { OP_RUNS_MIN_KW = 5 };
/* One result written in one k block (K <= KC: mb1's 7x7 layers) goes out by non-temporal
 * stores (UKR_STREAM) from this size on, twice the L2 of both cores here: each line is
 * written once, and reading it in first only doubles the traffic. ResNet-50 at mb1, 2
 * threads, Zen 4, streamed over cached, min of 3 alternating runs: res5a_branch2b (9.4 MB
 * of diff_weights) 0.93x the time, res5a_branch1 (8 MB) 0.96x, res5a_branch2c (4 MB)
 * 0.97x, res5b_branch2a (4 MB) 1.00x. */
enum { OP_STREAM_MIN_FLOATS = 1 << 20 };
/* Such a result with a K of a few k blocks (mb8 and mb16's 7x7 layers: K = 392, 784) is
 * computed in one k block, all of K packed at once while that fits this many floats, and
 * each item takes one B panel and every A panel: C is then written once (streamed)
 * instead of read and written again per k block, and each B panel is read once. ResNet-50
 * BWD_W, 2 threads, Zen 4, one k block over blocks of KC, min of 3 alternating runs: mb16
 * res5a_branch2b (9.4 MB of diff_weights, 16 MB packed) 0.875x the time, res5a_branch1
 * 0.92x, res5a_branch2c 0.975x, res5b_branch2a 0.885x; mb8 res5a_branch2b 0.87x,
 * res5b_branch2a 0.87x. */
enum { OP_WHOLE_K_MAX_FLOATS = 6 << 20 };
/* A k split packs its operands per k block of up to this many points (twice KC) while all
 * of A's panels for one block stay within OP_SPLIT_A_MAX_FLOATS (1 MiB: L2), and K gives
 * each thread two such blocks: each operand's rows (channel planes of diff_dst and src)
 * are then read 2 KiB at a time instead of 1, and a thread's packing and products
 * alternate half as often. ResNet-50 BWD_W on plain layouts, 2 threads, Zen 4, per-case
 * alternating runs against blocks of KC, min of 3: mb16 conv1 1.085x, res2a_branch2a
 * 1.047x, res2a_branch1 1.026x, mb1 conv1 1.04x; blocks of 1024 gained nothing more
 * (0.99x-1.01x) and with A's panels past L2 (OC 512: 1.1 MB per block of 512) they
 * cost 0.92x. */
enum { OP_SPLIT_KC = 2 * KC, OP_SPLIT_A_MAX_FLOATS = 1 << 18 };

static int op_init(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u) {
    const bdnn_conv_desc_t *d = &c->d;
    p->op = 1;
    p->b_panels = bdnn_div_up(p->N, u->nr);
    const int64_t result = p->instances * p->M * p->N;
    const int k_split = c->nthr > 1 && p->K >= (int64_t)c->nthr * KC * 2
        && result * c->nthr <= KSPLIT_MAX_PARTIAL_FLOATS;
    int64_t kc = p->K < KC ? (p->K > 0 ? p->K : 1) : KC;   /* (mb 0: no k block runs) */
    if (k_split && p->K >= (int64_t)c->nthr * OP_SPLIT_KC * 2
            && p->a_panels * u->mr * OP_SPLIT_KC <= OP_SPLIT_A_MAX_FLOATS)
        kc = OP_SPLIT_KC;
    const int large = !k_split && result >= OP_STREAM_MIN_FLOATS;
    if (large && p->K > KC
            && (p->b_panels * u->nr + p->a_panels * u->mr) * p->K <= OP_WHOLE_K_MAX_FLOATS)
        kc = p->K;
    p->op_kc = kc;
    p->op_stream = large && p->K <= kc && p->N % u->vlen == 0;
    /* A 1x1 without padding: B's rows are the src planes, at a stride once subsampled
     * (the input points the outputs read, copied dense per execution, as forward does). */
    p->op_planes = taps_of(d) == 1 && d->pd == 0 && d->ph == 0 && d->pw == 0
        && c->fault == BDNN_FAULT_NONE;
    p->op_runs = !p->op_planes && u->runs_fn && d->kw >= OP_RUNS_MIN_KW && d->sw > 1
        && d->dw == 0 && c->fault == BDNN_FAULT_NONE;
    if (p->op_planes && in_points(d) != out_points(d)) {
        p->subsampled = bdnn_aligned_alloc(sizeof(float) * (size_t)(d->mb * d->ic * out_points(d)));
        if (!p->subsampled) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    /* A panels a vector apart (the transposing copy's last store may pass a panel's end) */
    p->op_a_ld = bdnn_div_up(u->mr * kc + u->vlen, 16) * 16;
    p->k_splits = k_split ? c->nthr : 1;
    /* A k split reads ahead where its operands come from memory on every run (op_ahead) */
    p->op_ahead = k_split && u->pf_fn && bdnn_bwt_from_memory(d);
    /* Equal ranges, each in equal blocks of at most kc (below, in run_op): ranges of whole
     * blocks gave the threads unequal shares (K = 3136 in blocks of 512: 2048 and 1088). */
    if (p->k_splits > 1) p->k_per_split = bdnn_div_up(p->K, p->k_splits);
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        s->brows = bdnn_aligned_alloc(sizeof(float) * (size_t)(u->nr * kc));
        s->krows = malloc(sizeof(struct krow) * (size_t)(kc + 2));
        s->wcols = malloc(sizeof(wcol_t) * (size_t)u->nr);
        if (!s->brows || !s->krows || !s->wcols) return BDNN_STATUS_OUT_OF_MEMORY;
        if (p->op_runs) {   /* runs of at least one column each */
            s->wruns = malloc(sizeof(wrun_t) * (size_t)u->nr);
            s->runs = malloc(sizeof(conv_run_t) * (size_t)u->nr);
            if (!s->wruns || !s->runs) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    if (p->k_splits > 1) {
        /* Each thread packs its own k range: all of A per k block, then B a panel at a
         * time, each panel multiplied by every A panel while in L1. */
        p->partials = bdnn_aligned_alloc(sizeof(float) * (size_t)(result * p->k_splits));
        if (!p->partials) return BDNN_STATUS_OUT_OF_MEMORY;
        for (int t = 0; t < c->nthr; ++t) {
            scratch_t *s = &p->scratch[t];
            s->ap = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->a_panels * p->op_a_ld));
            s->bp = bdnn_aligned_alloc(sizeof(float) * (size_t)(u->nr * kc));
            if (!s->ap || !s->bp) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        return BDNN_STATUS_OK;
    }
    /* One result: per k block the threads pack A together, then B: each its items' panels
     * (op_b_private), or all together into a shared buffer; then they split C's tiles. */
    p->op_a = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->a_panels * p->op_a_ld));
    if (!p->op_a) return BDNN_STATUS_OUT_OF_MEMORY;
    p->op_b_private = (p->op_kc > KC
                       || p->a_panels * p->op_a_ld * (int64_t)sizeof(float)
                              <= OP_PRIVATE_B_MAX_A_BYTES)
        && p->b_panels >= OP_PRIVATE_B_MIN_PANELS * (int64_t)c->nthr;
    if (p->op_b_private) {   /* an item: one B panel and every A panel */
        p->op_rb = p->a_panels, p->n_row_blocks = 1, p->n_items = p->b_panels;
        for (int t = 0; t < c->nthr; ++t) {
            scratch_t *s = &p->scratch[t];
            s->bp = bdnn_aligned_alloc(sizeof(float) * (size_t)(u->nr * kc));
            if (!s->bp) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        return BDNN_STATUS_OK;
    }
    const int64_t want = 4 * (int64_t)c->nthr;
    int64_t rb = p->a_panels < OP_RB_MAX || p->op_kc > KC ? p->a_panels : OP_RB_MAX;
    while (rb > 1 && p->b_panels * bdnn_div_up(p->a_panels, rb) < want) rb = bdnn_div_up(rb, 2);
    p->op_rb = rb;
    p->n_row_blocks = bdnn_div_up(p->a_panels, rb);
    p->n_items = p->n_row_blocks * p->b_panels;
    p->op_b = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->b_panels * u->nr * kc));
    if (!p->op_b) return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

/* The k block that starts at k0: the whole of K, or on the shift route the rest of k0's
 * tap, at most KC. */
static int64_t kblock_len(const gemm_plan_t *p, int64_t k0) {
    const int64_t end = p->shift ? (k0 / p->s_icg + 1) * p->s_icg : p->K;
    return end - k0 < KC ? end - k0 : KC;
}

/* bf16 (pack 2) and int8 (pack 4) take the route with the padded copy made of channel
 * groups: one 32-bit lane per point holds channels (2i, 2i+1) as bf16, or (4i .. 4i+3)
 * as u8 (an s8 source shifted by 128), the layout the dot-product kernels read, so B is
 * read in place there too, straight from the user's input (no f32 staging, no im2col,
 * no regrouping); the padding holds the source zero point (shifted), which the packed
 * weights' compensation removes, and the accumulators go through the low-precision
 * epilogue. */
static int shift_init(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u, int s2d) {
    const bdnn_conv_desc_t *d = &c->d;
    /* the padded planes' problem: channels per image, taps, dilations (one group by s2d) */
    const int64_t s_ic = s2d ? d->ic * d->sh * d->sw : d->ic;
    const int64_t s_kh = s2d ? bdnn_div_up(d->kh, d->sh) : d->kh;
    const int64_t s_kw = s2d ? bdnn_div_up(d->kw, d->sw) : d->kw;
    const int64_t s_dh = s2d ? 0 : d->dh, s_dw = s2d ? 0 : d->dw;
    const int64_t hp = d->oh + (s_kh - 1) * (s_dh + 1), wp = d->ow + (s_kw - 1) * (s_dw + 1);
    const int pack = c->lp ? u->pack : 1;
    /* The gather route's rules for zero points (lp_init), checked before the plan moves. */
    const float shift = pack == 4 && c->attr.src_dt == BDNN_DT_S8 ? 128.0f : 0.0f;
    const int64_t pad_u8 = (int64_t)c->attr.src_zp + (int64_t)shift;
    if (c->attr.src_zp && pack != 4) return BDNN_STATUS_UNIMPLEMENTED;
    if (pack == 4 && (pad_u8 < 0 || pad_u8 > 255)) return BDNN_STATUS_UNIMPLEMENTED;
    /* planes of f32, or of 32-bit channel-group lanes */
    const int64_t padded = d->mb * (s_ic / pack) * hp * wp + wp + u->nr;
    if (padded > SHIFT_MAX_PAD_FLOATS) return BDNN_STATUS_UNIMPLEMENTED;
    p->shift = 1, p->hp = hp, p->wp = wp;
    p->s_ic = s_ic, p->s_icg = s2d ? s_ic : d->ic / d->g;
    p->s_kh = s_kh, p->s_kw = s_kw, p->s_dh = s_dh, p->s_dw = s_dw;
    p->s2d_h = s2d ? d->sh : 0, p->s2d_w = s2d ? d->sw : 0;
    p->instances = d->mb * d->g;
    p->M = d->oc / d->g, p->N = d->oh * wp, p->K = p->s_icg * p->s_kh * p->s_kw;
    p->pack = c->lp ? u->pack : 0;
    p->Kp = p->K;   /* k blocks are whole channel groups */
    p->b_shift = shift, p->pad = (float)c->attr.src_zp;
    p->a_panels = bdnn_div_up(p->M, u->mr);
    /* An epilogue of only a bias and the conversion: the kernel stores each tile's result
     * itself, in place of the accumulator block and the epilogue's pass over it (see
     * shift_chains); from registers where the grid has no columns to drop (a 1x1's), else
     * run by run of real outputs from the tile spilled to L1. */
    p->direct_store = p->pack && u->dp_store_fn && (u->store_dts & (1u << c->out_dt))
        && c->attr.scales == BDNN_SCALES_NONE && c->attr.dst_zp == 0
        && c->n_post_ops == 0 && c->fault == BDNN_FAULT_NONE;
    /* Work split as the gather route's: column blocks of up to NC_PANELS_MAX panels, rows
     * split when there are too few items. */
    const int64_t want = 4 * (int64_t)c->nthr, panels = bdnn_div_up(p->N, u->nr);
    int64_t per_block = panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX;
    while (per_block > 1 && p->instances * bdnn_div_up(panels, per_block) < want)
        per_block = bdnn_div_up(per_block, 2);
    p->nc = per_block * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    int64_t row_blocks = bdnn_div_up(p->a_panels, MC_PANELS_MAX);
    if (p->instances * p->n_col_blocks * row_blocks < want)
        row_blocks = bdnn_div_up(want, p->instances * p->n_col_blocks);
    if (row_blocks > p->a_panels) row_blocks = p->a_panels;
    p->m_rows = bdnn_div_up(p->a_panels, row_blocks) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = p->instances * p->n_col_blocks * p->n_row_blocks;
    p->padded = bdnn_aligned_alloc(sizeof(float) * (size_t)padded);
    if (!p->padded) return BDNN_STATUS_OUT_OF_MEMORY;
    /* Borders: zero, or int8's padding byte in each of a lane's four bytes; never
     * rewritten, since every execution copies the same positions. */
    if (pack == 4) {
        uint32_t *lanes = (uint32_t *)p->padded;
        for (int64_t i = 0; i < padded; ++i) lanes[i] = 0x01010101u * (uint32_t)pad_u8;
    } else {
        memset(p->padded, 0, sizeof(float) * (size_t)padded);
    }
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        s->cbuf = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->m_rows * p->nc));
        if (!s->cbuf) return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->lp) {
            s->tmp = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->nc + EPI_TMP_SLACK));
            if (!s->tmp) return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

static int col_init(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t diff_src = d->mb * d->ic * in_points(d);
    const int col_private = d->mb * d->g < 2 * (int64_t)c->nthr;
    if (col_private && diff_src * c->nthr > COL_MAX_PRIVATE_FLOATS)
        return BDNN_STATUS_UNIMPLEMENTED;   /* the gather route then; the plan is untouched */
    p->col2im = 1, p->col_private = col_private;
    p->instances = d->mb * d->g;
    p->M = (d->ic / d->g) * taps_of(d), p->N = out_points(d), p->K = d->oc / d->g;
    p->a_panels = bdnn_div_up(p->M, u->mr);
    const int64_t panels = bdnn_div_up(p->N, u->nr);
    p->nc = (panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX) * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    p->m_rows = (p->a_panels < MC_PANELS_MAX ? p->a_panels : MC_PANELS_MAX) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = p->instances * (p->col_private ? p->n_row_blocks * p->n_col_blocks : 1);
    if (p->col_private) {
        p->partials = bdnn_aligned_alloc(sizeof(float) * (size_t)(diff_src * c->nthr));
        if (!p->partials) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        s->bp = bdnn_aligned_alloc(sizeof(float) * KC * p->nc);
        s->cbuf = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->m_rows * p->nc));
        s->krows = malloc(sizeof(struct krow) * (size_t)(p->nc + 2));
        if (!s->bp || !s->cbuf || !s->krows) return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static int gemm_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    gemm_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->dir = c->dir;
    const int64_t icg = d->ic / d->g, ocg = d->oc / d->g, taps = taps_of(d);
    switch (c->dir) {
    case BDNN_DIR_FWD:
        p->instances = d->mb * d->g, p->M = ocg, p->N = out_points(d), p->K = icg * taps;
        break;
    case BDNN_DIR_BWD_DATA:
        p->instances = d->mb * d->g, p->M = icg, p->N = in_points(d), p->K = ocg * taps;
        break;
    case BDNN_DIR_BWD_WEIGHTS:
        p->instances = d->g, p->M = ocg, p->N = icg * taps, p->K = d->mb * out_points(d);
        break;
    default:
        return BDNN_STATUS_INVALID;
    }
    p->a_panels = bdnn_div_up(p->M, u->mr);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && !c->lp && u->tr_fn) return op_init(c, p, u);
    /* f32, or bf16 / int8 on the dot-product kernels with whole channel groups (see
     * shift_init). */
    const int shift_types = !c->lp || (u->pack > 0 && icg % u->pack == 0);
    /* A 1x1 in bf16 or int8 takes it too: its "padded" planes are the channel-group
     * planes the dot products read in place, built straight from the user's input
     * (the gather route would widen the input to f32, pack it and regroup it). */
    const int grouped = c->lp && u->pack > 0;
    /* ... and a strided one: its planes hold the input points the outputs read. */
    const int unit_stride = d->sh == 1 && d->sw == 1;
    const int planar = d->kd == 1 && d->id == 1 && d->od == 1;
    if (c->dir == BDNN_DIR_FWD && shift_types && (taps > 1 || grouped) && icg >= SHIFT_MIN_ICG
            && planar && (unit_stride || (grouped && taps == 1))) {
        const int st = shift_init(c, p, u, 0);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    /* A first layer in bf16 / int8, by space-to-depth (see S2D_MAX_ICG). The fault hooks
     * that act on B (stride truncation, the right padding's edge) live on the other routes. */
    if (c->dir == BDNN_DIR_FWD && grouped && d->g == 1 && icg <= S2D_MAX_ICG && taps > 1
            && planar && !unit_stride && d->dh == 0 && d->dw == 0
            && (icg * d->sh * d->sw) % u->pack == 0 && c->fault != BDNN_FAULT_STRIDE_TRUNC
            && c->fault != BDNN_FAULT_RIGHT_PAD_EDGE) {
        const int st = shift_init(c, p, u, 1);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    /* (The stride-truncation defect lives in the gather route's divisibility test.) */
    if (c->dir == BDNN_DIR_BWD_DATA && !c->lp && c->n_post_ops == 0
            && c->fault != BDNN_FAULT_STRIDE_TRUNC
            && (taps > 1 || d->sd > 1 || d->sh > 1 || d->sw > 1)) {
        const int st = col_init(c, p, u);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    p->k_splits = 1;

    /* Work split: enough items for every thread to get several (load balance), column
     * blocks no wider than NC_PANELS_MAX micro-panels (the B block stays in L2), rows split
     * when columns alone do not give enough items, and (A packed on the fly) when the A
     * block would not fit in L2. */
    const int64_t want = 4 * (int64_t)c->nthr;
    const int64_t panels = bdnn_div_up(p->N, u->nr);
    const int64_t inst = p->instances > 0 ? p->instances : 1;
    int64_t per_block = panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX;
    while (per_block > 1 && inst * bdnn_div_up(panels, per_block) < want)
        per_block = bdnn_div_up(per_block, 2);
    if (per_block < 1) per_block = 1;
    p->nc = per_block * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    int64_t row_blocks = 1;
    const int64_t items = inst * p->n_col_blocks;
    if (items < want) row_blocks = bdnn_div_up(want, items);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && row_blocks < bdnn_div_up(p->a_panels, MC_PANELS_MAX))
        row_blocks = bdnn_div_up(p->a_panels, MC_PANELS_MAX);
    if (row_blocks > p->a_panels) row_blocks = p->a_panels;
    p->m_rows = bdnn_div_up(p->a_panels, row_blocks) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->n_items = p->instances * p->n_col_blocks * p->n_row_blocks;

    p->pack = c->lp ? u->pack : 0;
    /* A 1x1 convolution at unit stride with no padding multiplies the input (forward) or
     * diff_dst (backward data) as it lies: B row k is channel k's plane. */
    p->b_in_place = !c->lp && c->dir != BDNN_DIR_BWD_WEIGHTS && taps == 1
        && d->sd == 1 && d->sh == 1 && d->sw == 1 && d->pd == 0 && d->ph == 0 && d->pw == 0
        && d->od == d->id && d->oh == d->ih && d->ow == d->iw;
    /* A strided 1x1 forward (ResNet's downsampling layers) reads every S-th input point:
     * gathering those once into a dense copy makes it a unit-stride problem read in place,
     * instead of a stride-aware gather per k block. The fault hooks need the gather. */
    if (!c->lp && c->dir == BDNN_DIR_FWD && taps == 1 && !p->b_in_place
            && d->pd == 0 && d->ph == 0 && d->pw == 0 && c->fault == BDNN_FAULT_NONE) {
        p->subsampled = bdnn_aligned_alloc(
            sizeof(float) * (size_t)(d->mb * d->ic * out_points(d) + u->nr));
        if (!p->subsampled) return BDNN_STATUS_OUT_OF_MEMORY;
        memset(p->subsampled + d->mb * d->ic * out_points(d), 0, sizeof(float) * u->nr);
        p->b_in_place = 1;
    }
    p->Kp = p->pack ? bdnn_div_up(p->K, p->pack) * p->pack : p->K;
    const int st = lp_init(c, p);
    if (st != BDNN_STATUS_OK) return st;

    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        s->bp = bdnn_aligned_alloc(sizeof(float) * KC * p->nc);
        if (!s->bp) return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
            s->ap = bdnn_aligned_alloc(sizeof(float) * KC * p->m_rows);
            s->wcols = malloc(sizeof(wcol_t) * p->nc);
            if (!s->ap || !s->wcols) return BDNN_STATUS_OUT_OF_MEMORY;
        } else {
            s->segs = malloc(sizeof(segment_t) * p->nc);
            s->seg_start = malloc(sizeof(int64_t) * (per_block + 1));
            if (!s->segs || !s->seg_start) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        if (c->lp) {
            s->acc = bdnn_aligned_alloc(4 * (size_t)(p->m_rows * p->nc));
            s->tmp = bdnn_aligned_alloc(sizeof(float) * (size_t)(p->nc + EPI_TMP_SLACK));
            if (!s->acc || !s->tmp) return BDNN_STATUS_OUT_OF_MEMORY;
        }
        if (p->pack) {
            s->bq = bdnn_aligned_alloc(4 * (size_t)(KC * p->nc));   /* >= pack*elt bytes */
            if (!s->bq) return BDNN_STATUS_OUT_OF_MEMORY;
            if (c->dir == BDNN_DIR_BWD_WEIGHTS) {
                s->aq = bdnn_aligned_alloc(4 * (size_t)(KC * p->m_rows));
                if (!s->aq) return BDNN_STATUS_OUT_OF_MEMORY;
            }
        }
    }
    return BDNN_STATUS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Weights reorder (forward and backward data) */

/* Bytes of a grouped A element: bf16 or s8, or for a kernel taking A widened (a_wide)
 * f32 or s16. */
static size_t a_esz(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return (p->pack == 2 ? 2 : 1) * (ukr_of(c)->a_wide ? 2 : 1);
}

/* Bytes of the regrouped weights of all groups (pack > 0), before the int8 compensation. */
static size_t grouped_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    return bdnn_div_up(a_esz(c) * (size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->Kp), 64)
           * 64;
}

static size_t gemm_weights_bytes(const struct bdnn_conv *c) {
    const gemm_plan_t *p = c->plan;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return 0;
    if (!p->pack) return sizeof(float) * (size_t)(c->d.g * p->a_panels * ukr_of(c)->mr * p->K);
    return grouped_bytes(c) + (p->pack == 4 ? sizeof(int32_t) * (size_t)(c->d.g * p->M) : 0);
}

/* Space-to-depth: the original input channel and tap of row k = (tap', phase * IC + ic) of
 * the phase problem; 0 where that tap lies past the kernel (a zero weight). */
static int s2d_source(const bdnn_conv_desc_t *d, const gemm_plan_t *p, int64_t k,
                      int64_t *ic, int64_t *tap) {
    const int64_t ch = k % p->s_icg, tp = k / p->s_icg;
    const int64_t phase = ch / d->ic, py = phase / p->s2d_w, px = phase % p->s2d_w;
    const int64_t ky = (tp / p->s_kw) * p->s2d_h + py, kx = (tp % p->s_kw) * p->s2d_w + px;
    *ic = ch % d->ic, *tap = ky * d->kw + kx;
    return ky < d->kh && kx < d->kw;
}

static void pack_weights_f32(const struct bdnn_conv *c, const float *wei, float *packed) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = ukr_of(c)->mr, M = p->M, K = p->K;
    const int64_t taps = taps_of(d), icg = d->ic / d->g, ocg = d->oc / d->g;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return;
    for (int64_t g = 0; g < d->g; ++g) {
        const float *wg = wei + g * ocg * icg * taps;
        float *ag = packed + g * p->a_panels * MR * K;
        for (int64_t pc = 0, kc; pc < K; pc += kc) {
            kc = kblock_len(p, pc);
            for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                float *panel = ag + pc * p->a_panels * MR + ip * kc * MR;
                for (int64_t kk = 0; kk < kc; ++kk)
                    for (int64_t r = 0; r < MR; ++r) {
                        const int64_t m = ip * MR + r, k = pc + kk, tap = k % taps;
                        /* forward: A[oc][(ic, tap)]; backward data: A[ic][(oc, tap)];
                         * col2im: A[(ic, tap)][oc]; shift: A[oc][(tap, ic)] */
                        const int64_t oc = c->dir == BDNN_DIR_FWD ? m : p->col2im ? k : k / taps;
                        int64_t ic = p->shift ? k % icg : c->dir == BDNN_DIR_FWD ? k / taps
                                   : p->col2im ? m / taps : m;
                        int64_t tp = p->shift ? k / icg : p->col2im ? m % taps : tap;
                        const int real = !p->s2d_h || s2d_source(d, p, k, &ic, &tp);
                        float v = m < M && real ? wg[(oc * icg + ic) * taps + tp] : 0.0f;
                        if (c->fault == BDNN_FAULT_SKIP_LAST_IC && ic == icg - 1) v = 0.0f;
                        if (c->fault == BDNN_FAULT_SKIP_LAST_TAP && tp == taps - 1) v = 0.0f;
                        panel[kk * MR + r] = v;
                    }
            }
        }
    }
}

/* Regroups a panel of kc rows x W f32 values (row stride W) into groups of `pack` rows:
 * element (k, w) to [(k / pack) * W * pack + w * pack + k % pack], zeros for k >= kc up to
 * the next multiple of pack. bf16 (pack 2) values convert exactly (they came from bf16);
 * int8 (pack 4) values are integers, shifted by `shift` (u8 source) or not (s8 weights).
 * wide (A of an a_wide kernel, conv_impl.h): the same places, as f32 (pack 2) or s16
 * (pack 4, a group's values in the order k%4 = 0, 2, 1, 3). */
static void regroup(const float *in, int64_t kc, int64_t W, int pack, float shift,
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

/* Weights of any type: widened to f32 and packed as above; for the dot-product kernels,
 * each micro-panel regrouped, and for int8 the compensation (see the top) appended. */
static void gemm_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir == BDNN_DIR_BWD_WEIGHTS) return;
    const int64_t n = bdnn_weights_elems(d), MR = ukr_of(c)->mr, K = p->K;
    float *wf = NULL, *panels = NULL;
    if (c->attr.wei_dt != BDNN_DT_F32) {
        wf = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        if (!wf) return;
        bdnn_cvt_to_f32(c->attr.wei_dt, wei, wf, n);
    }
    const float *w32 = wf ? wf : (const float *)wei;
    if (!p->pack) {
        pack_weights_f32(c, w32, packed);
        free(wf);
        return;
    }
    const size_t f32_bytes = sizeof(float) * (size_t)(d->g * p->a_panels * MR * K);
    panels = malloc(f32_bytes > 0 ? f32_bytes : 1);
    if (!panels) { free(wf); return; }
    pack_weights_f32(c, w32, panels);
    const size_t elt = a_esz(c);
    int32_t *comp = p->pack == 4 ? (int32_t *)((char *)packed + grouped_bytes(c)) : NULL;
    const float zp_shift = p->pad + p->b_shift;
    for (int64_t g = 0; g < d->g; ++g) {
        const float *fg = panels + g * p->a_panels * MR * K;
        char *qg = (char *)packed + elt * (size_t)(g * p->a_panels * MR * p->Kp);
        for (int64_t pc = 0, kc; pc < K; pc += kc) {
            kc = kblock_len(p, pc);
            const int64_t kcp = bdnn_div_up(kc, p->pack) * p->pack;
            for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                const float *fpanel = fg + pc * p->a_panels * MR + ip * kc * MR;
                regroup(fpanel, kc, MR, p->pack, 0.0f, 0, ukr_of(c)->a_wide,
                        qg + elt * (size_t)(pc * p->a_panels * MR + ip * kcp * MR));
                if (!comp) continue;
                for (int64_t r = 0; r < MR && ip * MR + r < p->M; ++r) {
                    int64_t sum = 0;
                    for (int64_t kk = 0; kk < kc; ++kk) sum += (int64_t)fpanel[kk * MR + r];
                    int32_t *slot = &comp[g * p->M + ip * MR + r];
                    if (pc == 0) *slot = 0;
                    *slot += (int32_t)(sum * (int64_t)zp_shift);
                }
            }
        }
    }
    free(panels);
    free(wf);
}

/* ---------------------------------------------------------------------------------------
 * B packing, forward and backward data: columns are points of a grid (GD x GH x GW) */

/* Splits grid points [j0, j0 + ncols) into per-micro-panel runs along w. */
static void build_segments(int64_t GH, int64_t GW, int64_t j0, int64_t ncols, int64_t NR,
                           segment_t *segs, int64_t *seg_start) {
    int64_t ns = 0, q = 0;
    for (int64_t j = 0; j < ncols; ++q) {
        seg_start[q] = ns;
        const int64_t panel_end = j + NR < ncols ? j + NR : ncols;
        while (j < panel_end) {
            const int64_t pnt = j0 + j;
            const int64_t x = pnt % GW, rest = pnt / GW;
            int64_t len = GW - x;
            if (len > panel_end - j) len = panel_end - j;
            segs[ns++] = (segment_t){j - q * NR, len, rest / GH, rest % GH, x};
            j += len;
        }
    }
    seg_start[q] = ns;
}

/* Advances k = (channel, kd, kh, kw) like an odometer. */
typedef struct {
    int64_t ch, kd, kh, kw;
} tap_t;

static tap_t tap_at(const bdnn_conv_desc_t *d, int64_t k) {
    tap_t t;
    t.kw = k % d->kw, k /= d->kw;
    t.kh = k % d->kh, k /= d->kh;
    t.kd = k % d->kd, t.ch = k / d->kd;
    return t;
}

static void tap_next(const bdnn_conv_desc_t *d, tap_t *t) {
    if (++t->kw < d->kw) return;
    t->kw = 0;
    if (++t->kh < d->kh) return;
    t->kh = 0;
    if (++t->kd < d->kd) return;
    t->kd = 0;
    ++t->ch;
}

/* Forward: B[(ic, tap)][output point] = src at o*s - p + tap*(d+1); outside the input, pad
 * (0, or the int8 source zero point). */
/* Runs here are short (a micro-panel is 32 columns): the copy loops stay inline rather
 * than becoming memcpy calls, and unit stride bounds its runs without the integer
 * divisions (tens of cycles each, per run) that strides need. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void pack_b_fwd(const exec_t *e, const float *src_ng, int64_t pc, int64_t kc,
                       int64_t q0, int64_t npanels, const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, ID = d->id, IH = d->ih, IW = d->iw, SW = d->sw;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const float pad = e->pad;
    tap_t t = tap_at(d, pc);
    for (int64_t kk = 0; kk < kc; ++kk, tap_next(d, &t)) {
        const float *plane = src_ng + t.ch * ID * IH * IW;
        const int64_t dz = t.kd * (d->dd + 1), dy = t.kh * (d->dh + 1), dx = t.kw * (d->dw + 1);
        for (int64_t q = q0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            int64_t filled = 0;
            for (int64_t si = s->seg_start[q]; si < s->seg_start[q + 1]; ++si) {
                const segment_t *sg = &s->segs[si];
                float *out = row + sg->col;
                const int64_t iz = sg->z * d->sd - d->pd + dz, iy = sg->y * d->sh - d->ph + dy;
                const int64_t ix0 = sg->x0 * SW - d->pw + dx;
                int64_t lo = 0, hi = 0;   /* run positions t whose input column is inside */
                if (iz >= 0 && iz < ID && iy >= 0 && iy < IH) {
                    if (SW == 1) {
                        lo = ix0 >= 0 ? 0 : -ix0;
                        hi = IW - ix0;
                    } else {
                        lo = ix0 >= 0 ? 0 : bdnn_div_up(-ix0, SW);
                        hi = bdnn_floor_div(IW - 1 - ix0, SW) + 1;
                    }
                    if (hi > sg->len) hi = sg->len;
                    if (hi < 0) hi = 0;   /* the whole run lies past the right edge */
                    if (lo > hi) lo = hi;
                }
                const float *in = plane + (iz * IH + iy) * IW + ix0;
                for (int64_t j = 0; j < lo; ++j) out[j] = pad;
                if (SW == 1)
                    for (int64_t j = lo; j < hi; ++j) out[j] = in[j];
                else
                    for (int64_t j = lo; j < hi; ++j) out[j] = in[j * SW];
                if (replicate_edge && hi > lo && hi < sg->len)
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = in[(IW - 1) - ix0];
                else
                    for (int64_t j = hi; j < sg->len; ++j) out[j] = pad;
                filled = sg->col + sg->len;
            }
            for (int64_t j = filled; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

/* Backward data: B[(oc, tap)][input point i] = diff_dst at o = (i + p - tap*(d+1)) / s when
 * that division is exact and o is inside the output, else 0. */
static void pack_b_bwd_data(const exec_t *e, const float *ddst_ng, int64_t pc, int64_t kc,
                            int64_t q0, int64_t npanels, const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, OD = d->od, OH = d->oh, OW = d->ow, SW = d->sw;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const int truncate = e->c->fault == BDNN_FAULT_STRIDE_TRUNC;
    tap_t t = tap_at(d, pc);
    for (int64_t kk = 0; kk < kc; ++kk, tap_next(d, &t)) {
        const float *plane = ddst_ng + t.ch * OD * OH * OW;
        const int64_t dz = t.kd * (d->dd + 1), dy = t.kh * (d->dh + 1), dx = t.kw * (d->dw + 1);
        for (int64_t q = q0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            memset(row, 0, sizeof(float) * (size_t)NR);
            for (int64_t si = s->seg_start[q]; si < s->seg_start[q + 1]; ++si) {
                const segment_t *sg = &s->segs[si];
                const int64_t nz = sg->z + d->pd - dz, ny = sg->y + d->ph - dy;
                if (nz < 0 || (nz % d->sd && !truncate) || nz / d->sd >= OD) continue;
                if (ny < 0 || (ny % d->sh && !truncate) || ny / d->sh >= OH) continue;
                const float *orow = plane + ((nz / d->sd) * OH + ny / d->sh) * OW;
                /* run position t reads ow = (x0 + t + pw - dx) / sw */
                const int64_t nx0 = sg->x0 + d->pw - dx;
                int64_t first = nx0 >= 0 ? 0 : -nx0;            /* first t with nx >= 0 */
                first += (SW - (nx0 + first) % SW) % SW;         /* ... and divisible */
                float *out = row + sg->col;
                int64_t tt = first;
                if (truncate) /* the deliberate defect: every t reads ow = nx / sw */
                    for (int64_t u = nx0 >= 0 ? 0 : -nx0; u < sg->len && (nx0 + u) / SW < OW; ++u)
                        out[u] = orow[(nx0 + u) / SW];
                for (; tt < sg->len && !truncate; tt += SW) {
                    const int64_t ow = (nx0 + tt) / SW;
                    if (ow >= OW) break;
                    out[tt] = orow[ow];
                }
                /* The deliberate defect: past the output's right edge, read its last value. */
                if (replicate_edge && tt > first)
                    for (; tt < sg->len; tt += SW) out[tt] = orow[OW - 1];
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Backward weights: columns are (ic, tap), the reduction runs over (n, output point) */

static void wcols_build(const bdnn_conv_desc_t *d, int64_t j0, int64_t ncols, wcol_t *w) {
    tap_t t = tap_at(d, j0);
    for (int64_t j = 0; j < ncols; ++j, tap_next(d, &t))
        w[j] = (wcol_t){t.ch, t.kd * (d->dd + 1) - d->pd, t.kh * (d->dh + 1) - d->ph,
                        t.kw * (d->dw + 1) - d->pw};
}

/* B[(n, o)][(ic, tap)] = src(n, g*ICg + ic, o*s + tap offset), 0 outside the input. */
static void pack_b_bwd_weights(const exec_t *e, int64_t g, int64_t pc, int64_t kc,
                               int64_t ncols, const scratch_t *s) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t NR = ukr_of(e->c)->nr, ID = d->id, IH = d->ih, IW = d->iw;
    const int64_t OP = out_points(d), icg = d->ic / d->g;
    const int replicate_edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const int64_t taps = taps_of(d);
    const int64_t npanels = bdnn_div_up(ncols, NR);
    for (int64_t kk = 0; kk < kc; ++kk) {
        const int64_t r = pc + kk, n = r / OP, o = r % OP;
        const int64_t ow = o % d->ow, oh = (o / d->ow) % d->oh, od = o / (d->ow * d->oh);
        const float *src_n = e->b_src + (n * d->ic + g * icg) * ID * IH * IW;
        const int64_t bz = od * d->sd, by = oh * d->sh, bx = ow * d->sw;
        for (int64_t q = 0; q < npanels; ++q) {
            float *row = s->bp + (q * kc + kk) * NR;
            const int64_t jend = ncols - q * NR < NR ? ncols - q * NR : NR;
            for (int64_t j = 0; j < jend; ++j) {
                const wcol_t *w = &s->wcols[q * NR + j];
                const int64_t iz = bz + w->dz, iy = by + w->dy;
                int64_t ix = bx + w->dx;
                if (replicate_edge && ix >= IW) ix = IW - 1;
                row[j] = (iz >= 0 && iz < ID && iy >= 0 && iy < IH && ix >= 0 && ix < IW)
                    ? src_n[(w->ic * ID + iz) * IH * IW + iy * IW + ix] : 0.0f;
                const int64_t col = s->wcol0 + q * NR + j;   /* (ic, tap) index */
                if ((e->c->fault == BDNN_FAULT_SKIP_LAST_IC && w->ic == icg - 1)
                        || (e->c->fault == BDNN_FAULT_SKIP_LAST_TAP && col % taps == taps - 1))
                    row[j] = 0.0f;
            }
            for (int64_t j = jend; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

/* A[oc][(n, o)] = diff_dst(n, g*OCg + oc, o), rows [m0, m1), packed into MR panels. */
static void pack_a_bwd_weights(const exec_t *e, int64_t g, int64_t m0, int64_t m1,
                               int64_t pc, int64_t kc, float *ap) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t MR = ukr_of(e->c)->mr, OP = out_points(d), ocg = d->oc / d->g;
    for (int64_t m = m0; m < m0 + bdnn_div_up(m1 - m0, MR) * MR; m += MR) {
        float *panel = ap + (m - m0) * kc;
        for (int64_t r = 0; r < MR; ++r) {
            if (m + r >= m1) {
                for (int64_t kk = 0; kk < kc; ++kk) panel[kk * MR + r] = 0.0f;
                continue;
            }
            int64_t n = pc / OP, o = pc % OP;
            const float *base = e->a_src + (g * ocg + m + r) * OP;
            for (int64_t kk = 0; kk < kc; ++kk) {
                panel[kk * MR + r] = base[n * d->oc * OP + o];
                if (++o == OP) { o = 0; ++n; }
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * The loops */

static void run_gemm(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, N = p->N;
    const int64_t G = d->g;
    const int lp = c->lp, pack = p->pack;
    const size_t elt = pack == 2 ? 2 : 1;   /* bytes of a grouped B element */
    const size_t aelt = pack ? a_esz(c) : 0;   /* ... and of A's */
    int has_sum = 0;
    const float sum_scale = lp ? 0.0f : bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = !lp && c->n_post_ops > (has_sum ? 1 : 0);
    /* A chain whose one eltwise entry is an unscaled relu: applied by the micro-kernel to
     * the values it stores (UKR_RELU), no pass over the output. */
    const bdnn_post_op_t *tail = c->n_post_ops ? &c->post_ops[c->n_post_ops - 1] : NULL;
    const int fuse_relu = has_eltwise && c->n_post_ops == (has_sum ? 2 : 1)
        && tail->kind == BDNN_POST_ELTWISE && tail->alg == BDNN_ELT_RELU && tail->scale == 1.0f;
    const int32_t *comp = pack == 4 && p->dir != BDNN_DIR_BWD_WEIGHTS
        ? (const int32_t *)((const char *)e->a_packed + grouped_bytes(c)) : NULL;

#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        scratch_t *s = &p->scratch[tid];
        for (int64_t item = tid; item < p->n_items; item += c->nthr) {
            int64_t rest = item;
            const int64_t rb = rest % p->n_row_blocks; rest /= p->n_row_blocks;
            const int64_t cb = rest % p->n_col_blocks;
            const int64_t inst = rest / p->n_col_blocks, g = inst % G;
            const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
            const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
            const int64_t npanels = bdnn_div_up(ncols, NR);
            /* B in place: every whole panel is read from the tensor itself; only a last
             * partial panel, whose full-width reads could pass the tensor's end, is packed. */
            const int64_t q_packed = p->subsampled ? npanels : p->b_in_place ? ncols / NR : 0;
            if (m0 >= M) continue;
            const int64_t out_inst = inst * M * N;   /* element offset of C */
            float *c_inst = lp ? NULL : (float *)e->out + out_inst;
            const float *bias_g = !lp && e->bias ? (const float *)e->bias + g * M : NULL;
            const float *b_inst = NULL;

            switch (p->dir) {
            case BDNN_DIR_FWD:
                b_inst = e->b_src + inst * (d->ic / G) * (p->subsampled ? out_points(d)
                                                                        : in_points(d));
                build_segments(d->oh, d->ow, j0, ncols, NR, s->segs, s->seg_start);
                break;
            case BDNN_DIR_BWD_DATA:
                b_inst = e->b_src + inst * (d->oc / G) * out_points(d);
                build_segments(d->ih, d->iw, j0, ncols, NR, s->segs, s->seg_start);
                break;
            default:
                wcols_build(d, j0, ncols, s->wcols);
                s->wcol0 = j0;
            }
            for (int64_t pc = 0; pc < K; pc += KC) {
                const int64_t kc = K - pc < KC ? K - pc : KC;
                const int64_t kcp = pack ? bdnn_div_up(kc, pack) * pack : kc;
                const int last = pc + kc == K;
                const int mode = pc > 0 ? UKR_ACCUMULATE : has_sum ? UKR_SUM : UKR_WRITE;
                const void *a_blk;   /* A micro-panels of rows [m0, ...) for this k block */
                switch (p->dir) {
                case BDNN_DIR_FWD:
                case BDNN_DIR_BWD_DATA:
                    if (p->dir == BDNN_DIR_FWD) pack_b_fwd(e, b_inst, pc, kc, q_packed, npanels, s);
                    else pack_b_bwd_data(e, b_inst, pc, kc, q_packed, npanels, s);
                    if (pack)
                        a_blk = (const char *)e->a_packed
                              + aelt * (size_t)(g * p->a_panels * MR * p->Kp
                                               + pc * p->a_panels * MR + (m0 / MR) * kcp * MR);
                    else
                        a_blk = (const float *)e->a_packed + g * p->a_panels * MR * K
                              + pc * p->a_panels * MR + (m0 / MR) * kc * MR;
                    break;
                default:
                    pack_b_bwd_weights(e, g, pc, kc, ncols, s);
                    pack_a_bwd_weights(e, g, m0, m1, pc, kc, s->ap);
                    a_blk = s->ap;
                    if (pack) {
                        for (int64_t m = m0; m < m1; m += MR)
                            regroup(s->ap + (m - m0) * kc, kc, MR, pack, 0.0f, 0, u->a_wide,
                                    (char *)s->aq + aelt * (size_t)((m - m0) * kcp));
                        a_blk = s->aq;
                    }
                }
                if (pack)
                    for (int64_t q = 0; q < npanels; ++q)
                        regroup(s->bp + q * kc * NR, kc, NR, pack, p->b_shift, 1, 0,
                                (char *)s->bq + elt * (size_t)(q * kcp * NR));
                for (int64_t q = 0; q < npanels; ++q) {
                    const int64_t j = j0 + q * NR, nr = N - j < NR ? N - j : NR;
                    for (int64_t m = m0; m < m1; m += MR) {
                        const int64_t mr = M - m < MR ? M - m : MR;
                        if (!lp) {
                            float *tile = c_inst + m * N + j;
                            const int in_place = q < q_packed;
                            u->fn(kc, (const float *)a_blk + (m - m0) * kc,
                                  in_place ? b_inst + pc * N + j : s->bp + q * kc * NR,
                                  in_place ? N : NR, tile, N, mr, nr,
                                  mode | (last && fuse_relu ? UKR_RELU : 0),
                                  bias_g ? bias_g + m : NULL, sum_scale,
                                  fuse_relu ? tail->alpha : 0.0f);
                            continue;
                        }
                        void *acc = (char *)s->acc + 4 * (size_t)((m - m0) * p->nc + q * NR);
                        if (pack)
                            u->dp_fn(kcp, (const char *)a_blk + aelt * (size_t)((m - m0) * kcp),
                                     (const char *)s->bq + elt * (size_t)(q * kcp * NR),
                                     NR * pack, acc, p->nc, mr, nr, pc > 0);
                        else
                            u->fn(kc, (const float *)a_blk + (m - m0) * kc, s->bp + q * kc * NR,
                                  NR, acc, p->nc, mr, nr, pc > 0 ? UKR_ACCUMULATE : UKR_WRITE,
                                  NULL, 0.0f, 0.0f);
                        if (last)
                            bdnn_conv_epilogue(c, acc, p->nc, mr, nr, g * M + m,
                                               p->dir == BDNN_DIR_BWD_WEIGHTS ? NULL : e->bias,
                                               comp, e->out, out_inst + m * N + j, N, s->tmp);
                    }
                }
                /* Eltwise post-ops on the finished block (m_rows x nc, still in L2), a
                 * row of the block per call: per tile row, the calls cost more than the
                 * arithmetic. */
                if (last && has_eltwise && !fuse_relu && !lp)
                    bdnn_post_ops_eltwise(c, c_inst + m0 * N + j0, N, m1 - m0, ncols);
            }
        }
    }
}

/* The output rows that k positions [pc, pc + kc) cross, k = (n, od, oh, ow). */
static int64_t krows_of(const bdnn_conv_desc_t *d, int64_t pc, int64_t kc, struct krow *rows) {
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
static void col_run(int64_t x0, int64_t sw, int64_t IW, int64_t len, int64_t *lo,
                    int64_t *hi) {
    *lo = x0 >= 0 ? 0 : bdnn_div_up(-x0, sw);
    *hi = IW - 1 - x0 < 0 ? 0 : (IW - 1 - x0) / sw + 1;
    if (*lo > len) *lo = len;
    if (*hi > len) *hi = len;
    if (*hi < *lo) *hi = *lo;
}

/* B rows: for each column (ic, tap) of the block, src(n, g*ICg + ic, o*s + tap offset)
 * along the block's k positions, 0 outside the input (with the test faults' defects). */
static void im2col_rows(const exec_t *e, int64_t g, int64_t j0, int64_t ncols, int64_t kc,
                        const struct krow *rows, int64_t nrows, const scratch_t *s,
                        float *brows, int64_t ld) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, icg = d->ic / d->g, taps = taps_of(d);
    const int fault = e->c->fault;
    for (int64_t jj = 0; jj < ncols; ++jj) {
        const wcol_t *w = &s->wcols[jj];
        float *row = brows + jj * ld;
        const int64_t col = j0 + jj;
        if ((fault == BDNN_FAULT_SKIP_LAST_IC && w->ic == icg - 1)
                || (fault == BDNN_FAULT_SKIP_LAST_TAP && col % taps == taps - 1)) {
            memset(row, 0, sizeof(float) * (size_t)ld);
            continue;
        }
        for (int64_t r = 0; r < nrows; ++r) {
            const struct krow *kr = &rows[r];
            float *out = row + kr->kk;
            const int64_t iz = kr->od * d->sd + w->dz, iy = kr->oh * d->sh + w->dy;
            if (iz < 0 || iz >= ID || iy < 0 || iy >= IH) {
                memset(out, 0, sizeof(float) * (size_t)kr->len);
                continue;
            }
            const float *line = e->b_src
                + ((kr->n * d->ic + g * icg + w->ic) * ID + iz) * IH * IW + iy * IW;
            const int64_t sw = d->sw, x0 = kr->ow0 * sw + w->dx;   /* ix of t = 0 */
            int64_t t_lo, t_hi;
            col_run(x0, sw, IW, kr->len, &t_lo, &t_hi);
            for (int64_t t = 0; t < t_lo; ++t) out[t] = 0.0f;
            if (sw == 1) memcpy(out + t_lo, line + x0 + t_lo, sizeof(float) * (size_t)(t_hi - t_lo));
            else if (sw == 2) {   /* a constant stride: the compiler vectorizes it */
                const float *in = line + x0 + 2 * t_lo;
                for (int64_t t = 0; t < t_hi - t_lo; ++t) out[t_lo + t] = in[2 * t];
            } else for (int64_t t = t_lo; t < t_hi; ++t) out[t] = line[x0 + t * sw];
            const float right = fault == BDNN_FAULT_RIGHT_PAD_EDGE ? line[IW - 1] : 0.0f;
            for (int64_t t = t_hi; t < kr->len; ++t) out[t] = right;
        }
        for (int64_t kk = kc; kk < ld; ++kk) row[kk] = 0.0f;
    }
}

/* One MR panel of A for the outer-product route: panel[kk*MR + r] = diff_dst(n, g*OCg +
 * m0 + r, o) at k = pc + kk = (n, o); rows past M zero. */
static void op_pack_a(const exec_t *e, int64_t g, int64_t m0, int64_t pc, int64_t kc,
                      float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t MR = ukr_of(e->c)->mr, M = e->p->M, OP = out_points(d);
    const int64_t rows = M - m0 < MR ? M - m0 : MR;
    for (int64_t kk = 0; kk < kc;) {
        const int64_t k = pc + kk, n = k / OP, o = k % OP;
        const int64_t len = OP - o < kc - kk ? OP - o : kc - kk;
        const float *base = e->a_src + (n * d->oc + g * (d->oc / d->g) + m0) * OP + o;
        ukr_of(e->c)->tr_fn(base, OP, rows, len, panel + kk * MR, MR);
        kk += len;
    }
}

/* A panel's columns as runs of consecutive input points (wrun_t), each within one vector
 * of the panel's row; returns their count. */
static int64_t wruns_build(const wcol_t *w, int64_t ncols, int64_t vlen, wrun_t *runs) {
    int64_t n = 0;
    for (int64_t j = 0; j < ncols; ++j) {
        wrun_t *last = n > 0 ? &runs[n - 1] : NULL;
        if (last && last->ic == w[j].ic && last->dz == w[j].dz && last->dy == w[j].dy
                && last->dx + last->len == w[j].dx && j % vlen != 0)
            ++last->len;
        else
            runs[n++] = (wrun_t){w[j].ic, w[j].dz, w[j].dy, w[j].dx, j, 1};
    }
    return n;
}

/* The runs of output point ow0 + t of output row kr, each column run clipped to the
 * input's row; a run whose row lies outside the input, or whose taps all lie in the
 * padding, is left out (conv_runs_fn writes zeros there). */
static int64_t op_point_runs(const bdnn_conv_desc_t *d, const wrun_t *wruns, int64_t nw,
                             const struct krow *kr, const float *src_n, int64_t t,
                             conv_run_t *runs) {
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, bx = (kr->ow0 + t) * d->sw;
    int64_t nruns = 0;
    for (int64_t w = 0; w < nw; ++w) {
        const wrun_t *wr = &wruns[w];
        const int64_t iz = kr->od * d->sd + wr->dz, iy = kr->oh * d->sh + wr->dy;
        const int64_t x0 = bx + wr->dx;
        const int64_t l0 = x0 < 0 ? -x0 : 0, l1 = IW - x0 < wr->len ? IW - x0 : wr->len;
        if (iz < 0 || iz >= ID || iy < 0 || iy >= IH || l1 <= l0) continue;
        runs[nruns++] = (conv_run_t){src_n + ((wr->ic * ID + iz) * IH * IW + iy * IW + x0 + l0),
                                     wr->col + l0, l1 - l0};
    }
    return nruns;
}

/* One NR panel of B built from src's rows as runs (op_runs): per output row the block
 * crosses, one call of conv_runs_fn for the points whose taps all lie inside the input,
 * and one per point at the row's ends, its runs clipped to the input. Columns past ncols
 * are zeros. */
static void op_pack_b_runs(const exec_t *e, int64_t g, int64_t j0, int64_t ncols,
                           const scratch_t *s, int64_t nrows, float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const conv_gemm_ukr_t *u = ukr_of(e->c);
    const int64_t NR = u->nr, icg = d->ic / d->g;
    const int64_t span = (d->kw - 1) * (d->dw + 1);   /* from the first tap's x to the last's */
    wcols_build(d, j0, ncols, s->wcols);
    const int64_t nw = wruns_build(s->wcols, ncols, u->vlen, s->wruns);
    for (int64_t r = 0; r < nrows; ++r) {
        const struct krow *kr = &s->krows[r];
        const float *src_n = e->b_src + (kr->n * d->ic + g * icg) * in_points(d);
        float *rows = panel + kr->kk * NR;
        int64_t lo, hi;   /* the points whose taps all lie inside the input's row */
        col_run(kr->ow0 * d->sw - d->pw, d->sw, d->iw - span, kr->len, &lo, &hi);
        if (hi > lo)
            u->runs_fn(s->runs, op_point_runs(d, s->wruns, nw, kr, src_n, lo, s->runs), d->sw,
                       hi - lo, rows + lo * NR, NR, NR);
        const int64_t edges[2][2] = {{0, lo}, {hi, kr->len}};
        for (int side = 0; side < 2; ++side)
            for (int64_t t = edges[side][0]; t < edges[side][1]; ++t)
                u->runs_fn(s->runs, op_point_runs(d, s->wruns, nw, kr, src_n, t, s->runs), 0,
                           1, rows + t * NR, NR, NR);
    }
}

/* One NR panel of B: element (kk, j) = src at column j0 + j's (ic, tap) for k = pc + kk.
 * A 1x1 without padding reads the channels' planes as they lie (at a stride, the dense
 * subsampled copy); long runs of kw taps at a stride are gathered (op_runs); otherwise
 * the panel's im2col rows are built (NR x kc), then transposed. */
static void op_pack_b(const exec_t *e, int64_t g, int64_t q, int64_t pc, int64_t kc,
                      const scratch_t *s, int64_t nrows, float *panel) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const conv_gemm_ukr_t *u = ukr_of(e->c);
    const int64_t NR = u->nr, N = e->p->N, j0 = q * NR;
    const int64_t ncols = N - j0 < NR ? N - j0 : NR;
    if (e->p->op_planes) {
        const int64_t OP = out_points(d);
        for (int64_t kk = 0; kk < kc;) {
            const int64_t k = pc + kk, n = k / OP, o = k % OP;
            const int64_t len = OP - o < kc - kk ? OP - o : kc - kk;
            u->tr_fn(e->b_src + (n * d->ic + g * (d->ic / d->g) + j0) * OP + o, OP, ncols, len,
                     panel + kk * NR, NR);
            kk += len;
        }
        return;
    }
    if (e->p->op_runs) {
        op_pack_b_runs(e, g, j0, ncols, s, nrows, panel);
        return;
    }
    wcols_build(d, j0, ncols, s->wcols);
    im2col_rows(e, g, j0, ncols, kc, s->krows, nrows, s, s->brows, kc);
    u->tr_fn(s->brows, kc, ncols, kc, panel, NR);
}

/* A large result (mb16's 7x7 layers: 9 MB per partial) is accumulated from memory once
 * per k block: the next tile's rows of C [m, m + MR) x [j, j + nr) are requested while the
 * micro-kernel runs on this one (it reads its tile only after its k loop). */
static void op_prefetch_c(const float *c, int64_t ldc, int64_t m, int64_t M, int64_t mr,
                          int64_t j, int64_t nr) {
    for (int64_t r = m; r < m + mr && r < M; ++r)
        for (int64_t x = 0; x < nr; x += 16) __builtin_prefetch(c + r * ldc + j + x, 1, 3);
}

/* The next k block [pc, pc + kc) of group g, read ahead while this one computes: per
 * image it spans, diff_dst's rows (A) and the src points its B rows read, one run per
 * channel. ResNet-50 at mb16, 2 threads, Zen 5: res2a_branch2a (1x1, 64 channels at
 * 56x56) spent 42% of its time in the transposing copies from memory, conv1 37% in its
 * packing. */
static bdnn_ahead_t op_ahead(const exec_t *e, int64_t g, int64_t pc, int64_t kc,
                             int64_t tiles) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const gemm_plan_t *p = e->p;
    const int64_t OP = out_points(d), IP = in_points(d), fsz = (int64_t)sizeof(float);
    const int64_t ICg = d->ic / d->g;
    bdnn_ahead_t h = {0};
    for (int64_t k = pc; k < pc + kc;) {
        const int64_t n = k / OP, o = k % OP;
        const int64_t len = OP - o < pc + kc - k ? OP - o : pc + kc - k;
        bdnn_ahead_add(&h, e->a_src + (n * d->oc + g * (d->oc / d->g)) * OP + o, len * fsz,
                       OP * fsz, p->M);
        if (p->op_planes) {
            bdnn_ahead_add(&h, e->b_src + (n * d->ic + g * ICg) * OP + o, len * fsz, OP * fsz,
                           ICg);
        } else {
            const int64_t last = o + len - 1, plane = d->oh * d->ow;
            const int64_t first_o[3] = {o / plane, o / d->ow % d->oh, o % d->ow};
            const int64_t last_o[3] = {last / plane, last / d->ow % d->oh, last % d->ow};
            const int64_t reach[3] = {(d->kd - 1) * (d->dd + 1), (d->kh - 1) * (d->dh + 1),
                                      (d->kw - 1) * (d->dw + 1)};
            int64_t i0, i1;
            bdnn_input_window(d, first_o, last_o, reach, &i0, &i1);
            bdnn_ahead_add(&h, e->b_src + (n * d->ic + g * ICg) * IP + i0, (i1 + 1 - i0) * fsz,
                           IP * fsz, ICg);
        }
        k += len;
    }
    bdnn_ahead_share(&h, tiles);
    return h;
}

static void run_op(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, N = p->N, K = p->K;
#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        scratch_t *s = &p->scratch[tid];
        if (p->k_splits > 1) {
            const int64_t k_lo = tid * p->k_per_split < K ? tid * p->k_per_split : K;
            const int64_t k_hi = k_lo + p->k_per_split < K ? k_lo + p->k_per_split : K;
            const int64_t step = k_hi > k_lo   /* the range in equal blocks */
                ? bdnn_div_up(k_hi - k_lo, bdnn_div_up(k_hi - k_lo, p->op_kc)) : 1;
            for (int64_t g = 0; g < p->instances && tid < p->k_splits; ++g) {
                float *c_g = p->partials + (tid * p->instances + g) * M * N;
                for (int64_t pc = k_lo; pc < k_hi; pc += step) {
                    const int64_t kc = k_hi - pc < step ? k_hi - pc : step;
                    const int mode = pc > k_lo ? UKR_ACCUMULATE : UKR_WRITE;
                    /* the next block: this group's next, or the next group's first */
                    const int64_t next_g = pc + step < k_hi ? g : g + 1;
                    const int64_t next_pc = pc + step < k_hi ? pc + step : k_lo;
                    bdnn_ahead_t next = {0}, *reading = NULL;
                    if (p->op_ahead && next_g < p->instances) {
                        next = op_ahead(e, next_g, next_pc,
                                        k_hi - next_pc < step ? k_hi - next_pc : step,
                                        p->a_panels * p->b_panels);
                        reading = &next;
                    }
                    for (int64_t ip = 0; ip < p->a_panels; ++ip)
                        op_pack_a(e, g, ip * MR, pc, kc, s->ap + ip * p->op_a_ld);
                    const int64_t nrows = p->op_planes ? 0 : krows_of(d, pc, kc, s->krows);
                    for (int64_t q = 0; q < p->b_panels; ++q) {
                        const int64_t j = q * NR, nr = N - j < NR ? N - j : NR;
                        op_pack_b(e, g, q, pc, kc, s, nrows, s->bp);
                        for (int64_t ip = 0; ip < p->a_panels; ++ip) {
                            const int64_t m = ip * MR;
                            if (mode == UKR_ACCUMULATE) op_prefetch_c(c_g, N, m + MR, M, MR, j, nr);
                            bdnn_ukr_reading_ahead(u, reading, kc, s->ap + ip * p->op_a_ld,
                                                   s->bp, NR, c_g + m * N + j, N,
                                                   M - m < MR ? M - m : MR, nr, mode);
                        }
                    }
                }
            }
        } else {
            const int stream = p->op_stream
                && (uintptr_t)e->out % (sizeof(float) * (size_t)u->vlen) == 0;
            for (int64_t g = 0; g < p->instances; ++g) {
                float *c_g = (float *)e->out + g * M * N;
                for (int64_t pc = 0; pc < K; pc += p->op_kc) {
                    const int64_t kc = K - pc < p->op_kc ? K - pc : p->op_kc;
#pragma omp for schedule(static) nowait
                    for (int64_t ip = 0; ip < p->a_panels; ++ip)
                        op_pack_a(e, g, ip * MR, pc, kc, p->op_a + ip * p->op_a_ld);
                    const int64_t nrows = p->op_planes ? 0 : krows_of(d, pc, kc, s->krows);
                    if (p->op_b_private) {
#pragma omp barrier   /* every A panel packed (the loop above: nowait) */
                    } else {
#pragma omp for schedule(static)
                        for (int64_t q = 0; q < p->b_panels; ++q)
                            op_pack_b(e, g, q, pc, kc, s, nrows, p->op_b + q * NR * kc);
                    }
#pragma omp for schedule(static)
                    for (int64_t item = 0; item < p->n_items; ++item) {
                        const int64_t rb = item / p->b_panels, q = item % p->b_panels;
                        const int64_t j = q * NR, nr = N - j < NR ? N - j : NR;
                        const int64_t ip1 = (rb + 1) * p->op_rb < p->a_panels
                            ? (rb + 1) * p->op_rb : p->a_panels;
                        float *b = p->op_b_private ? s->bp : p->op_b + q * NR * kc;
                        if (p->op_b_private) op_pack_b(e, g, q, pc, kc, s, nrows, b);
                        for (int64_t ip = rb * p->op_rb; ip < ip1; ++ip) {
                            const int64_t m = ip * MR;
                            if (pc > 0 && ip + 1 < ip1) op_prefetch_c(c_g, N, m + MR, M, MR, j, nr);
                            u->fn(kc, p->op_a + ip * p->op_a_ld, b, NR,
                                  c_g + m * N + j, N, M - m < MR ? M - m : MR, nr,
                                  pc > 0 ? UKR_ACCUMULATE : stream ? UKR_WRITE | UKR_STREAM
                                                                   : UKR_WRITE,
                                  NULL, 0.0f, 0.0f);
                        }
                    }
                }
            }
            if (stream) bdnn_stream_fence();
        }
    }
}

/* The padded copy of the input (shift route); the right-edge defect fills the right
 * padding of every existing row with the row's last value. */
static void shift_pad_input(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t hp = p->hp, wp = p->wp, IH = d->ih, IW = d->iw;
    const int edge = c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < d->mb * d->ic; ++plane) {
        const float *in = e->b_src + plane * IH * IW;
        float *out = p->padded + plane * hp * wp;
        for (int64_t y = 0; y < hp; ++y) {
            const int64_t iy = y - d->ph;
            if (iy < 0 || iy >= IH) continue;   /* a zero row, from creation */
            const int64_t x0 = d->pw, x1 = d->pw + IW < wp ? d->pw + IW : wp;
            memcpy(out + y * wp + x0, in + iy * IW, sizeof(float) * (size_t)(x1 > x0 ? x1 - x0 : 0));
            if (edge)
                for (int64_t x = x1; x < wp; ++x) out[y * wp + x] = in[iy * IW + IW - 1];
        }
    }
}

/* One 32-bit lane of channel-group plane data: channels c0 .. c0+pack-1 (planes `step`
 * apart) at point i, lowest channel in the lowest bits, the order regroup() gives a
 * packed panel. */
static inline uint32_t group_lane(const void *src, int pack, int64_t step, int64_t i,
                                  uint32_t flip) {
    if (pack == 2) {
        const uint16_t *h = src;
        return (uint32_t)h[i] | (uint32_t)h[step + i] << 16;
    }
    const uint8_t *b = src;
    return ((uint32_t)b[i] | (uint32_t)b[step + i] << 8 | (uint32_t)b[2 * step + i] << 16
            | (uint32_t)b[3 * step + i] << 24) ^ flip;
}

/* group_lane over a run of n consecutive points from point i, written so that the compiler
 * vectorizes it (separate restrict-qualified channel rows, no pack test in the loop): the
 * regrouping is a pass over the whole input inside every execution, and lane by lane it
 * cost a 1x1 layer more than its dot products did. */
static inline void group_lanes_run_s(uint32_t *restrict out, const void *src, int pack,
                                     int64_t step, int64_t i, int64_t n, uint32_t flip,
                                     int64_t s) {
    if (pack == 2) {
        const uint16_t *restrict h0 = (const uint16_t *)src + i, *restrict h1 = h0 + step;
        for (int64_t x = 0; x < n; ++x)
            out[x] = (uint32_t)h0[x * s] | (uint32_t)h1[x * s] << 16;
        return;
    }
    const uint8_t *restrict b0 = (const uint8_t *)src + i, *restrict b1 = b0 + step,
                            *restrict b2 = b1 + step, *restrict b3 = b2 + step;
    for (int64_t x = 0; x < n; ++x)
        out[x] = ((uint32_t)b0[x * s] | (uint32_t)b1[x * s] << 8 | (uint32_t)b2[x * s] << 16
                  | (uint32_t)b3[x * s] << 24) ^ flip;
}
/* ... points s apart along the input row (a strided 1x1's planes); s = 1 and 2 (ResNet's
 * downsampling layers) are compiled apart, with the stride a constant to vectorize by. */
static void group_lanes_run(uint32_t *out, const void *src, int pack, int64_t step, int64_t i,
                            int64_t n, uint32_t flip, int64_t s) {
    if (s == 1) group_lanes_run_s(out, src, pack, step, i, n, flip, 1);
    else if (s == 2) group_lanes_run_s(out, src, pack, step, i, n, flip, 2);
    else group_lanes_run_s(out, src, pack, step, i, n, flip, s);
}

/* The padded copy of a bf16 or int8 input as channel groups (shift route): lane (y, x)
 * of group plane i holds channels pack*i .. pack*i + pack-1 of input point
 * (y*SH - PH, x*SW - PW); an s8 source flips each byte's sign bit, which is adding 128
 * (the u8 the VNNI kernel takes). Strides other than 1 come only with one tap (1x1): the
 * plane is then the grid of output points, each lane the input point it reads. */
static void shift_pad_input_groups(const exec_t *e, const void *src) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int pack = p->pack;
    const int64_t hp = p->hp, wp = p->wp, IH = d->ih, IW = d->iw, groups = d->ic / pack;
    const int64_t elt = pack == 2 ? 2 : 1;
    const uint32_t flip = p->b_shift != 0.0f ? 0x80808080u : 0u;
    const int edge = c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    const int64_t SH = d->sh, SW = d->sw, PW = d->pw;
    /* columns whose input x*SW - PW lies in [0, IW) */
    const int64_t x0 = bdnn_div_up(PW, SW);
    const int64_t x_end = (IW - 1 + PW) / SW + 1, x1 = x_end < wp ? x_end : wp;
    uint32_t *padded = (uint32_t *)p->padded;
    /* Rows as wide in both, unit strides: the rows inside the input are one run (a 1x1's
     * whole plane), not rows of 7 to 56 points, most of them a vector loop's tail. */
    const int rows_join = SH == 1 && SW == 1 && PW == 0 && wp == IW && !edge;
    const int64_t y0 = d->ph > 0 ? d->ph : 0, y1 = IH + d->ph < hp ? IH + d->ph : hp;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < d->mb * groups; ++plane) {
        const int64_t n = plane / groups, i = plane % groups;
        const char *in = (const char *)src + elt * (size_t)((n * d->ic + pack * i) * IH * IW);
        uint32_t *out = padded + plane * hp * wp;
        if (rows_join) {   /* rows [y0, y1) are one run in both */
            group_lanes_run(out + y0 * wp, in, pack, IH * IW, (y0 - d->ph) * IW,
                            (y1 - y0) * wp, flip, 1);
            continue;
        }
        for (int64_t y = 0; y < hp; ++y) {
            const int64_t iy = y * SH - d->ph;
            if (iy < 0 || iy >= IH) continue;   /* a padding row, from creation */
            uint32_t *row = out + y * wp;
            group_lanes_run(row + x0, in, pack, IH * IW, iy * IW + x0 * SW - PW, x1 - x0,
                            flip, SW);
            if (edge)
                for (int64_t x = x1; x < wp; ++x)
                    row[x] = group_lane(in, pack, IH * IW, iy * IW + IW - 1, flip);
        }
    }
}

/* One row of space-to-depth lanes: lane x gets, in its b-th channel slot, src[b][(x -
 * lo[b]) * s] for x in [lo[b], hi[b]) (src[b]: the input under column lo[b], or NULL for
 * a row outside the input) and pad[b] elsewhere. The columns inside every channel's range
 * run branch-free with s a constant (stride 2: ResNet's conv1), so the compiler vectorizes
 * them; the edges go lane by lane. */
static inline void s2d_lanes_row(uint32_t *restrict row, int64_t wp, int pack,
                                 const void *const *src, const int64_t *lo, const int64_t *hi,
                                 const uint32_t *pad, uint32_t flip, int64_t s) {
    int64_t in_lo = 0, in_hi = wp;
    for (int b = 0; b < pack; ++b) {
        if (!src[b]) in_lo = wp;
        if (lo[b] > in_lo) in_lo = lo[b];
        if (hi[b] < in_hi) in_hi = hi[b];
    }
    if (in_hi > in_lo) {
        const int64_t n = in_hi - in_lo;
        uint32_t *restrict out = row + in_lo;
        if (pack == 2) {
            const uint16_t *restrict h0 = (const uint16_t *)src[0] + (in_lo - lo[0]) * s;
            const uint16_t *restrict h1 = (const uint16_t *)src[1] + (in_lo - lo[1]) * s;
            for (int64_t t = 0; t < n; ++t)
                out[t] = (uint32_t)h0[t * s] | (uint32_t)h1[t * s] << 16;
        } else {
            const uint8_t *restrict b0 = (const uint8_t *)src[0] + (in_lo - lo[0]) * s;
            const uint8_t *restrict b1 = (const uint8_t *)src[1] + (in_lo - lo[1]) * s;
            const uint8_t *restrict b2 = (const uint8_t *)src[2] + (in_lo - lo[2]) * s;
            const uint8_t *restrict b3 = (const uint8_t *)src[3] + (in_lo - lo[3]) * s;
            for (int64_t t = 0; t < n; ++t)
                out[t] = ((uint32_t)b0[t * s] | (uint32_t)b1[t * s] << 8
                          | (uint32_t)b2[t * s] << 16 | (uint32_t)b3[t * s] << 24) ^ flip;
        }
    } else {
        in_lo = in_hi = wp;
    }
    for (int64_t x = 0; x < wp; ++x) {
        if (x == in_lo) x = in_hi;
        if (x >= wp) break;
        uint32_t lane = 0;
        for (int b = 0; b < pack; ++b) {
            const int bits = 32 / pack * b;
            const int inside = src[b] && x >= lo[b] && x < hi[b];
            const int64_t at = inside ? (x - lo[b]) * s : 0;
            lane |= inside
                ? (pack == 2 ? (uint32_t)((const uint16_t *)src[b])[at] << bits
                             : (uint32_t)(((const uint8_t *)src[b])[at] ^ (flip & 0xffu)) << bits)
                : pad[b];
        }
        row[x] = lane;
    }
}

/* The padded copy by space-to-depth (see S2D_MAX_ICG): channel c = phase * IC + ic of
 * the phase planes, phase = py * S_W + px, holds input channel ic at point
 * (y*S_H + py - PH, x*S_W + px - PW), lanes grouping channels as shift_pad_input_groups
 * does. Every lane is written each execution: which points exist differs by phase, so a
 * lane can mix input and padding. */
static void s2d_pad_input_groups(const exec_t *e, const void *src) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int pack = p->pack;
    const int64_t hp = p->hp, wp = p->wp, IH = d->ih, IW = d->iw, IC = d->ic;
    const int64_t SH = p->s2d_h, SW = p->s2d_w, groups = p->s_ic / pack;
    const size_t elt = pack == 2 ? 2 : 1;
    const uint32_t flip = p->b_shift != 0.0f ? 0x80808080u : 0u;
    const uint8_t pad_u8 = (uint8_t)(int32_t)(p->pad + p->b_shift);
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < d->mb * groups; ++plane) {
        const int64_t n = plane / groups, i = plane % groups;
        uint32_t *lanes = (uint32_t *)p->padded + plane * hp * wp;
        int64_t ic[4], py[4], px[4], lo[4], hi[4];
        uint32_t pad[4];
        for (int b = 0; b < pack; ++b) {   /* the lane's b-th channel */
            const int64_t ch = pack * i + b, phase = ch / IC;
            ic[b] = ch % IC, py[b] = phase / SW, px[b] = phase % SW;
            /* columns whose input x*SW + px - PW lies in [0, IW) */
            lo[b] = d->pw > px[b] ? bdnn_div_up(d->pw - px[b], SW) : 0;
            const int64_t last = IW - 1 + d->pw - px[b];   /* x*SW <= last */
            const int64_t x_end = last < 0 ? 0 : last / SW + 1;
            hi[b] = x_end < wp ? x_end : wp;
            if (hi[b] < lo[b]) hi[b] = lo[b];
            pad[b] = pack == 4 ? (uint32_t)pad_u8 << (8 * b) : 0;
        }
        for (int64_t y = 0; y < hp; ++y) {
            const void *rows[4];
            for (int b = 0; b < pack; ++b) {
                const int64_t iy = y * SH + py[b] - d->ph;
                /* the input under column lo[b] */
                rows[b] = iy >= 0 && iy < IH && lo[b] < hi[b]
                    ? (const char *)src + elt * (size_t)((n * IC + ic[b]) * IH * IW + iy * IW
                                                         + lo[b] * SW + px[b] - d->pw)
                    : NULL;
            }
            uint32_t *row = lanes + y * wp;
            if (SW == 2) s2d_lanes_row(row, wp, pack, rows, lo, hi, pad, flip, 2);
            else s2d_lanes_row(row, wp, pack, rows, lo, hi, pad, flip, SW);
        }
    }
}

/* Stores rows [m0, m1) of a C block on the padded grid (columns [j0, j0 + ncols)) into
 * dst: the columns of real outputs, with bias, the sum post-op and eltwise entries. */
static void shift_store(const exec_t *e, const float *cbuf, int64_t ldc, int64_t inst,
                        int64_t m0, int64_t m1, int64_t j0, int64_t ncols) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t wp = p->wp, OW = d->ow, OP = d->oh * OW, G = d->g;
    int has_sum;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = c->n_post_ops > (has_sum ? 1 : 0);
    const int64_t n = inst / G, g = inst % G;
    for (int64_t m = m0; m < m1; ++m) {
        const int64_t oc = g * p->M + m;
        const float bias = e->bias ? ((const float *)e->bias)[oc] : 0.0f;
        float *dplane = (float *)e->out + (n * d->oc + oc) * OP;
        const float *crow = cbuf + (m - m0) * ldc;
        for (int64_t j = j0; j < j0 + ncols;) {
            const int64_t oh = j / wp, ow0 = j % wp;
            const int64_t row_end = (oh + 1) * wp < j0 + ncols ? (oh + 1) * wp : j0 + ncols;
            const int64_t ow1 = ow0 + (row_end - j);   /* this run: padded columns [ow0, ow1) */
            const int64_t len = (ow1 < OW ? ow1 : OW) - ow0;
            if (len > 0) {
                float *out = dplane + oh * OW + ow0;
                const float *in = crow + (j - j0);
                if (has_sum)
                    for (int64_t t = 0; t < len; ++t) out[t] = sum_scale * out[t] + bias + in[t];
                else
                    for (int64_t t = 0; t < len; ++t) out[t] = bias + in[t];
                if (has_eltwise) bdnn_post_ops_eltwise(c, out, len, 1, len);
            }
            j = row_end;
        }
    }
}

/* The low-precision store of a C block on the padded grid: the epilogue (scales, bias,
 * post-ops, conversion) on each run of real outputs. */
static void shift_store_lp(const exec_t *e, const scratch_t *s, int64_t inst, int64_t m0,
                           int64_t m1, int64_t j0, int64_t ncols) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t wp = p->wp, OW = d->ow, OP = d->oh * OW, G = d->g;
    const int64_t n = inst / G, g = inst % G;
    /* int8: (zero point + shift) x sum of weights, after the grouped weights */
    const int32_t *comp = p->pack == 4
        ? (const int32_t *)((const char *)e->a_packed + grouped_bytes(c)) : NULL;
    /* No columns to drop (1x1: the padded grid is the output grid): one run, as long as
     * the block, instead of one per output row (7 points at 7x7, a vector's tail). */
    if (wp == OW) {
        bdnn_conv_epilogue(c, s->cbuf, p->nc, m1 - m0, ncols, g * p->M + m0, e->bias, comp,
                           e->out, (n * d->oc + g * p->M + m0) * OP + j0, OP, s->tmp);
        return;
    }
    for (int64_t j = j0; j < j0 + ncols;) {
        const int64_t oh = j / wp, ow0 = j % wp;
        const int64_t row_end = (oh + 1) * wp < j0 + ncols ? (oh + 1) * wp : j0 + ncols;
        const int64_t ow1 = ow0 + (row_end - j), len = (ow1 < OW ? ow1 : OW) - ow0;
        if (len > 0)
            bdnn_conv_epilogue(c, s->cbuf + (j - j0), p->nc, m1 - m0, len, g * p->M + m0,
                               e->bias, comp, e->out,
                               (n * d->oc + g * p->M + m0) * OP + oh * OW + ow0, OP, s->tmp);
        j = row_end;
    }
}

/* The tiles of one work item with a chain kernel (dp_chain_fn): consecutive k blocks
 * (taps, or KC parts of one) are grouped into chains whose B rows for one micro-panel
 * stay in L1 (at most SHIFT_CHAIN_B_BYTES), and each tile runs a whole chain with its
 * accumulators in registers: C is written once per chain instead of once per k block
 * (3x3 with 64 channels: once instead of nine times). With direct_store, a tile's last
 * chain (reading the earlier chains' sums from C, if any) stores the finished values into
 * dst itself, and the item has no epilogue pass. */
enum { SHIFT_CHAIN_B_BYTES = 24 << 10, SHIFT_CHAIN_MAX = 64, MAX_STORE_MR = 32,
       MAX_STORE_NR = 32 };

/* The runs of real outputs among padded-grid columns [j, j + n) (rows of wp columns, the
 * first ow of each real): tile column col, length, and offset in the output plane (oh*ow
 * + x). At most n runs. */
static int output_runs(int64_t wp, int64_t ow, int64_t j, int64_t n, conv_dp_seg_t *segs) {
    int count = 0;
    for (int64_t t = 0; t < n;) {
        const int64_t oh = (j + t) / wp, x = (j + t) % wp;
        const int64_t run = wp - x < n - t ? wp - x : n - t;   /* to the row's end */
        if (x < ow)
            segs[count++] = (conv_dp_seg_t){(int32_t)t,
                                            (int32_t)((x + run < ow ? x + run : ow) - x),
                                            oh * ow + x};
        t += run;
    }
    return count;
}
static void shift_chains(const exec_t *e, const scratch_t *s, const float *in_ng, int64_t n,
                         int64_t g, int64_t j0, int64_t ncols, int64_t m0, int64_t m1) {
    const struct bdnn_conv *c = e->c;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int32_t *comp = p->pack == 4   /* int8: see shift_store_lp */
        ? (const int32_t *)((const char *)e->a_packed + grouped_bytes(c)) : NULL;
    const size_t osz = bdnn_dt_size(c->out_dt);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, pack = p->pack;
    const int64_t icg = p->s_icg, plane = p->hp * p->wp;
    const size_t elt = pack == 2 ? 2 : 1;
    const int64_t ldb = (int64_t)(4 / elt) * plane;   /* a lane row in B's elements */
    const size_t aelt = a_esz(c);
    const char *a_g = (const char *)e->a_packed + aelt * (size_t)(g * p->a_panels * MR * p->Kp);
    int64_t kcs[SHIFT_CHAIN_MAX], pcs[SHIFT_CHAIN_MAX];
    const float *bs[SHIFT_CHAIN_MAX];
    conv_dp_block_t blk[SHIFT_CHAIN_MAX];
    for (int64_t pc0 = 0, pc1; pc0 < K; pc0 = pc1) {
        int64_t nb = 0, rows = 0;
        for (pc1 = pc0; pc1 < K && nb < SHIFT_CHAIN_MAX;) {
            const int64_t kc = kblock_len(p, pc1);
            if (nb > 0 && (rows + kc / pack) * NR * 4 > SHIFT_CHAIN_B_BYTES) break;
            const int64_t tap = pc1 / icg, c0 = pc1 % icg;
            const int64_t kh = tap / p->s_kw, kw = tap % p->s_kw;
            kcs[nb] = kc, pcs[nb] = pc1;
            bs[nb] = in_ng + c0 / pack * plane + kh * (p->s_dh + 1) * p->wp + kw * (p->s_dw + 1) + j0;
            rows += kc / pack, ++nb, pc1 += kc;
        }
        for (int64_t q = 0; q * NR < ncols; ++q) {
            const int64_t nr = ncols - q * NR < NR ? ncols - q * NR : NR;
            /* direct store on the padded grid: the tile's runs of real outputs */
            conv_dp_seg_t segs[MAX_STORE_NR + 1];
            int nseg = 0;
            int64_t q_off = j0 + q * NR;   /* dst offset of column 0 (no columns to drop) */
            if (p->direct_store && pc1 == K && p->wp != c->d.ow) {
                nseg = output_runs(p->wp, c->d.ow, j0 + q * NR, nr, segs);
                q_off = 0;
                if (nseg == 0) continue;   /* only dropped columns: nothing to store */
            }
            for (int64_t m = m0; m < m1; m += MR) {
                const int64_t mr = M - m < MR ? M - m : MR;
                for (int64_t i = 0; i < nb; ++i) {
                    /* grouped weights, as run_gemm addresses them */
                    blk[i].kcp = kcs[i];
                    blk[i].a = a_g + aelt * (size_t)(pcs[i] * p->a_panels * MR + (m / MR) * kcs[i] * MR);
                    blk[i].b = bs[i] + q * NR;
                }
                float *cblk = s->cbuf + (m - m0) * p->nc + q * NR;
                if (p->direct_store && pc1 == K) {
                    const int64_t oc = g * M + m, OP = c->d.oh * c->d.ow;
                    float bias[MAX_STORE_MR];
                    for (int64_t r = 0; r < mr && e->bias; ++r)
                        bias[r] = bdnn_load_f32(e->bias, c->attr.bia_dt, oc + r);
                    const conv_dp_store_t st = {c->out_dt, e->bias ? bias : NULL,
                                                comp ? comp + oc : NULL, nseg, segs};
                    u->dp_store_fn(nb, blk, ldb, pc0 > 0 ? cblk : NULL, p->nc,
                                   (char *)e->out + osz * (size_t)((n * c->d.oc + oc) * OP
                                                                   + q_off),
                                   OP, mr, nr, &st);
                } else {
                    u->dp_chain_fn(nb, blk, ldb, cblk, p->nc, mr, nr, pc0 > 0);
                }
            }
        }
    }
}

static void run_shift(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, N = p->N, K = p->K, G = d->g;
    const int64_t icg = p->s_icg, plane = p->hp * p->wp, pack = p->pack;
    if (p->s2d_h) s2d_pad_input_groups(e, e->b_src);
    else if (pack) shift_pad_input_groups(e, e->b_src);
    else shift_pad_input(e);
#pragma omp parallel num_threads(c->nthr)
    {
        const scratch_t *s = &p->scratch[omp_get_thread_num()];
#pragma omp for schedule(static, 1)
        for (int64_t item = 0; item < p->n_items; ++item) {
            const int64_t rb = item % p->n_row_blocks;
            const int64_t cb = (item / p->n_row_blocks) % p->n_col_blocks;
            const int64_t inst = item / (p->n_row_blocks * p->n_col_blocks);
            const int64_t n = inst / G, g = inst % G;
            const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
            const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
            if (m0 >= M) continue;
            /* first element (f32 or 32-bit pair lane) of this image and group's planes */
            const float *in_ng = p->padded + (n * p->s_ic + g * icg) / (pack ? pack : 1) * plane;
            if (pack && u->dp_chain_fn) {
                shift_chains(e, s, in_ng, n, g, j0, ncols, m0, m1);
                if (!p->direct_store) shift_store_lp(e, s, inst, m0, m1, j0, ncols);
                continue;
            }
            for (int64_t pc = 0, kc; pc < K; pc += kc) {
                kc = kblock_len(p, pc);
                const int64_t tap = pc / icg, c0 = pc % icg;
                const int64_t kh = tap / p->s_kw, kw = tap % p->s_kw;
                const float *b = in_ng + c0 / (pack ? pack : 1) * plane
                               + kh * (p->s_dh + 1) * p->wp + kw * (p->s_dw + 1) + j0;
                for (int64_t q = 0; q * NR < ncols; ++q)
                    for (int64_t m = m0; m < m1; m += MR) {
                        const int64_t mr = M - m < MR ? M - m : MR;
                        const int64_t nr = ncols - q * NR < NR ? ncols - q * NR : NR;
                        float *cblk = s->cbuf + (m - m0) * p->nc + q * NR;
                        if (pack) {   /* grouped weights, as run_gemm addresses them */
                            const size_t elt = pack == 2 ? 2 : 1;
                            const char *a_blk = (const char *)e->a_packed + a_esz(c) * (size_t)(
                                g * p->a_panels * MR * p->Kp + pc * p->a_panels * MR
                                + (m / MR) * kc * MR);
                            /* ldb: a lane row in the B operand's elements (bf16 or bytes) */
                            u->dp_fn(kc, a_blk, b + q * NR, (int64_t)(4 / elt) * plane, cblk,
                                     p->nc, mr, nr, pc > 0);
                        } else {
                            const float *a_blk = (const float *)e->a_packed
                                + g * p->a_panels * MR * K + pc * p->a_panels * MR
                                + (m / MR) * kc * MR;
                            u->fn(kc, a_blk, b + q * NR, plane, cblk, p->nc, mr, nr,
                                  pc > 0 ? UKR_ACCUMULATE : UKR_WRITE, NULL, 0.0f, 0.0f);
                        }
                    }
            }
            if (pack) shift_store_lp(e, s, inst, m0, m1, j0, ncols);
            else shift_store(e, s->cbuf, p->nc, inst, m0, m1, j0, ncols);
        }
    }
}

/* B block of the col2im route: rows oc of diff_dst(n, g*OCg + oc, o) over the block's
 * output points, as they lie, zero past N. */
static void col_pack_b(const exec_t *e, const float *ddst_ng, int64_t pc, int64_t kc,
                       int64_t j0, int64_t ncols, float *bp) {
    const int64_t NR = ukr_of(e->c)->nr, OP = out_points(&e->c->d);
    const int64_t npanels = bdnn_div_up(ncols, NR);
    for (int64_t kk = 0; kk < kc; ++kk) {
        const float *line = ddst_ng + (pc + kk) * OP + j0;
        for (int64_t q = 0; q < npanels; ++q) {
            float *row = bp + (q * kc + kk) * NR;
            const int64_t len = ncols - q * NR < NR ? ncols - q * NR : NR;
            memcpy(row, line + q * NR, sizeof(float) * (size_t)len);
            for (int64_t j = len; j < NR; ++j) row[j] = 0.0f;
        }
    }
}

static void col_add(float *line, int64_t x0, int64_t sw, const float *in, int64_t lo,
                    int64_t hi) {
    if (sw == 1) {
        float *out = line + x0;
        for (int64_t u = lo; u < hi; ++u) out[u] += in[u];
    } else {
        for (int64_t u = lo; u < hi; ++u) line[x0 + u * sw] += in[u];
    }
}

/* col2im: adds rows [m0, m1) of the C block (row m = (ic, kd, kh, kw), columns the output
 * points of `rows`) into diff_src planes at src_ng (this image and group). At stride 2
 * without dilation a tap and the next (kw + 1) land on the two parities of the same input
 * columns, so their rows go in together as one interleaved, contiguous run (vectorized),
 * where one at a time each added to every other float (scalar: ResNet-50's conv1 spent
 * as long there as in its GEMM). */
static void col_scatter(const exec_t *e, const float *cbuf, int64_t ldc, int64_t m0,
                        int64_t m1, const struct krow *rows, int64_t nrows, float *src_ng) {
    const bdnn_conv_desc_t *d = &e->c->d;
    const int64_t ID = d->id, IH = d->ih, IW = d->iw, sw = d->sw;
    const int edge = e->c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
    for (int64_t m = m0; m < m1; ++m) {
        const tap_t t = tap_at(d, m);
        const int pair = sw == 2 && d->dw == 0 && !edge && t.kw + 1 < d->kw && m + 1 < m1;
        float *plane = src_ng + t.ch * ID * IH * IW;
        const float *crow = cbuf + (m - m0) * ldc, *crow2 = crow + ldc;
        const int64_t dz = t.kd * (d->dd + 1) - d->pd, dy = t.kh * (d->dh + 1) - d->ph;
        const int64_t dx = t.kw * (d->dw + 1) - d->pw;
        for (int64_t r = 0; r < nrows; ++r) {
            const struct krow *kr = &rows[r];
            const int64_t iz = kr->od * d->sd + dz, iy = kr->oh * d->sh + dy;
            if (iz < 0 || iz >= ID || iy < 0 || iy >= IH) continue;
            float *line = plane + (iz * IH + iy) * IW;
            const float *in = crow + kr->kk;
            const int64_t x0 = kr->ow0 * sw + dx;   /* ix of t = 0 */
            int64_t lo, hi;
            col_run(x0, sw, IW, kr->len, &lo, &hi);
            if (pair) {   /* tap kw + 1: column x0 + 1 + 2u */
                const float *in2 = crow2 + kr->kk;
                int64_t lo2, hi2;
                col_run(x0 + 1, sw, IW, kr->len, &lo2, &hi2);
                const int64_t a = lo > lo2 ? lo : lo2, b = hi < hi2 ? hi : hi2;
                if (b > a) {
                    float *out = line + x0;
                    for (int64_t u = a; u < b; ++u) {
                        out[2 * u] += in[u];
                        out[2 * u + 1] += in2[u];
                    }
                    col_add(line, x0, sw, in, lo, a), col_add(line, x0, sw, in, b, hi);
                    col_add(line, x0 + 1, sw, in2, lo2, a), col_add(line, x0 + 1, sw, in2, b, hi2);
                } else {
                    col_add(line, x0, sw, in, lo, hi), col_add(line, x0 + 1, sw, in2, lo2, hi2);
                }
                continue;
            }
            col_add(line, x0, sw, in, lo, hi);
            /* The deliberate defect: what lands past the right edge goes on the last column. */
            if (edge)
                for (int64_t u = hi > lo ? hi : lo; u < kr->len; ++u)
                    if (x0 + u * sw >= IW) line[IW - 1] += in[u];
        }
        m += pair;   /* its next row went in with it */
    }
}

/* One (image, group, row block, column block) of the col2im route. */
static void col_block(const exec_t *e, const scratch_t *s, int64_t inst, int64_t rb,
                      int64_t cb, float *diff_src) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, N = p->N, K = p->K, G = d->g;
    const int64_t n = inst / G, g = inst % G, icg = d->ic / G, ocg = d->oc / G;
    const int64_t j0 = cb * p->nc, ncols = N - j0 < p->nc ? N - j0 : p->nc;
    const int64_t m0 = rb * p->m_rows, m1 = m0 + p->m_rows < M ? m0 + p->m_rows : M;
    const int64_t npanels = bdnn_div_up(ncols, NR);
    if (m0 >= M) return;
    const float *ddst_ng = e->b_src + (n * d->oc + g * ocg) * out_points(d);
    for (int64_t pc = 0; pc < K; pc += KC) {
        const int64_t kc = K - pc < KC ? K - pc : KC;
        col_pack_b(e, ddst_ng, pc, kc, j0, ncols, s->bp);
        const float *a_blk = (const float *)e->a_packed + g * p->a_panels * MR * K
                           + pc * p->a_panels * MR + (m0 / MR) * kc * MR;
        for (int64_t q = 0; q < npanels; ++q)
            for (int64_t m = m0; m < m1; m += MR)
                u->fn(kc, a_blk + (m - m0) * kc, s->bp + q * kc * NR, NR,
                      s->cbuf + (m - m0) * p->nc + q * NR, p->nc, M - m < MR ? M - m : MR,
                      ncols - q * NR < NR ? ncols - q * NR : NR,
                      pc > 0 ? UKR_ACCUMULATE : UKR_WRITE, NULL, 0.0f, 0.0f);
    }
    const int64_t nrows = krows_of(d, j0, ncols, s->krows);
    col_scatter(e, s->cbuf, p->nc, m0, m1, s->krows, nrows,
                diff_src + (n * d->ic + g * icg) * in_points(d));
}

static void run_col2im(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t size = d->mb * d->ic * in_points(d);
    const int64_t slice = (d->ic / d->g) * in_points(d);   /* one (image, group) */
    float *out = e->out;
#pragma omp parallel num_threads(c->nthr)
    {
        const int tid = omp_get_thread_num();
        const scratch_t *s = &p->scratch[tid];
        float *mine = p->col_private ? p->partials + tid * size : NULL;
        if (mine) memset(mine, 0, sizeof(float) * (size_t)size);
#pragma omp for schedule(dynamic, 1)
        for (int64_t item = 0; item < p->n_items; ++item) {
            if (mine) {
                const int64_t cb = item % p->n_col_blocks;
                const int64_t rb = (item / p->n_col_blocks) % p->n_row_blocks;
                col_block(e, s, item / (p->n_col_blocks * p->n_row_blocks), rb, cb, mine);
                continue;
            }
            /* (n, g) slices are contiguous: image n's channels of group g. */
            const int64_t n = item / d->g, g = item % d->g;
            memset(out + (n * d->ic + g * (d->ic / d->g)) * in_points(d), 0,
                   sizeof(float) * (size_t)slice);
            for (int64_t rb = 0; rb < p->n_row_blocks; ++rb)
                for (int64_t cb = 0; cb < p->n_col_blocks; ++cb)
                    col_block(e, s, item, rb, cb, out);
        }
        if (mine) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < size; ++i) {
                float sum = p->partials[i];
                for (int t = 1; t < c->nthr; ++t) sum += p->partials[t * size + i];
                out[i] = sum;
            }
        }
    }
    if (e->bias) {
        const float *bias = e->bias;
        const int64_t IP = in_points(d);
#pragma omp parallel for collapse(2) num_threads(c->nthr) schedule(static)
        for (int64_t n = 0; n < d->mb; ++n)
            for (int64_t ch = 0; ch < d->ic; ++ch) {
                float *plane = out + (n * d->ic + ch) * IP;
                for (int64_t i = 0; i < IP; ++i) plane[i] += bias[ch];
            }
    }
}

/* out = the sum of the k splits' partial results. */
static void reduce_partials(const struct bdnn_conv *c, float *out) {
    const gemm_plan_t *p = c->plan;
    const int64_t n = p->instances * p->M * p->N;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        float sum = p->partials[i];
        for (int64_t ks = 1; ks < p->k_splits; ++ks) sum += p->partials[ks * n + i];
        out[i] = sum;
    }
}

/* Widens a tensor to f32 in parallel (the lp path's copy of a non-f32 operand). */
static const float *staged(const struct bdnn_conv *c, int dt, const void *in, float *copy,
                           int64_t n) {
    if (!copy) return in;
    const int64_t chunk = 1 << 14;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t i = 0; i < n; i += chunk)
        bdnn_cvt_to_f32(dt, (const char *)in + (size_t)i * bdnn_dt_size(dt), copy + i,
                        n - i < chunk ? n - i : chunk);
    return copy;
}

/* The input points a strided 1x1 forward reads, dense: (n, ic, od, oh, ow) at
 * (od*SD, oh*SH, ow*SW). */
static const float *subsample(const struct bdnn_conv *c, const float *src) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t OD = d->od, OH = d->oh, OW = d->ow, SW = d->sw;
#pragma omp parallel for collapse(2) num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < d->mb * d->ic; ++plane)
        for (int64_t od = 0; od < OD; ++od) {
            const float *in_z = src + (plane * d->id + od * d->sd) * d->ih * d->iw;
            float *out_z = p->subsampled + (plane * OD + od) * OH * OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
                const float *in = in_z + oh * d->sh * d->iw;
                float *out = out_z + oh * OW;
                for (int64_t ow = 0; ow < OW; ++ow) out[ow] = in[ow * SW];
            }
        }
    return p->subsampled;
}

static void gemm_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const gemm_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    exec_t e = {c, p, NULL, NULL, NULL, NULL, NULL, p->pad};
    const int b_dt = b_dt_of(c);
    switch (c->dir) {
    case BDNN_DIR_FWD:
        e.a_packed = a->wei, e.bias = a->bias, e.out = a->dst;
        e.b_src = staged(c, b_dt, a->src, p->stage_b, src_elems(d));
        if (p->subsampled) e.b_src = subsample(c, e.b_src);
        break;
    case BDNN_DIR_BWD_DATA:
        e.a_packed = a->wei, e.bias = a->bias, e.out = a->diff_src;
        e.b_src = staged(c, b_dt, a->diff_dst, p->stage_b, dst_elems(d));
        break;
    default:
        e.out = a->diff_wei;
        e.b_src = staged(c, b_dt, a->src, p->stage_b, src_elems(d));
        e.a_src = staged(c, c->attr.dst_dt, a->diff_dst, p->stage_a, dst_elems(d));
        if (p->subsampled) e.b_src = subsample(c, e.b_src);
    }
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->d.mb == 0) {
        /* An empty minibatch: every sum is empty, and the k loop would never write C.
         * All-zero bits are 0 in every type. */
        memset(e.out, 0, (c->lp ? bdnn_dt_size(c->out_dt) : sizeof(float))
                         * (size_t)bdnn_weights_elems(&c->d));
        if (c->lp && a->bias) memset((void *)a->bias, 0, bdnn_dt_size(c->attr.bia_dt) * (size_t)d->oc);
        return;
    }
    if (p->op) run_op(&e);
    else if (p->col2im) run_col2im(&e);
    else if (p->shift) run_shift(&e);
    else run_gemm(&e);
    if (p->k_splits > 1) reduce_partials(c, e.out);
    if (c->dir == BDNN_DIR_BWD_WEIGHTS && c->lp && a->bias) {
        /* diff_bias: f32 sums of the f32 diff_dst, converted once. */
        bdnn_bias_grad(e.a_src, d->mb, d->oc, out_points(d), p->bias_f32);
        bdnn_cvt_from_f32(c->attr.bia_dt, p->bias_f32, (void *)a->bias, d->oc);
    }
}

const conv_impl_ops_t bdnn_conv_gemm_ops = {
    gemm_init, gemm_weights_bytes, gemm_pack_weights, gemm_execute, gemm_fini, NULL,
};
