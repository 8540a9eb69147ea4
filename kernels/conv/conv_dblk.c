/* Direct forward convolution on channel-blocked activations (f32; nChw16c on AVX-512,
 * nChw8c on AVX2, and their 1D/3D forms): the forward direction of the gemm_conv_blocked
 * rows, and their backward data at unit stride as a forward convolution with flipped
 * taps (conv_gemm_nhwc.c hands both over at init); and, on bf16 and u8 nChw16c, the
 * forward direction of the gemm_conv_blocked_bf16 and _int8 rows (bdnn_conv_dc_lp_ops,
 * below). No im2col and no packing of the input:
 * a kernel call (conv_dblk.h) reads the src block rows in place, broadcasting one input
 * value per (point, tap, input channel) against the weight vectors of OCB output channel
 * blocks, for UR output points of one row, all accumulators in registers.
 *
 * Padding never reaches the kernels: per output row the (kd, kh) taps are clipped to the
 * input, and the row's points split into an interior range (every kw tap inside the
 * input: calls of up to UR points) and the border points on either side, their kw taps
 * clipped: calls of up to UR points down a border column where the rows' kd and kh taps
 * are all inside (dc_border_columns), else one point per call. A 1x1 convolution at
 * unit stride without padding reads input point p for output point p, so its rows are
 * runs of an image's points, not image rows (the late layers' 7x7 images give calls of
 * UR points instead of 7); a strided one without padding runs so too, each work item on
 * a dense copy of the input points it reads, gathered into a per-thread buffer, unless
 * it reads them in place on image rows (see init). A first layer's src may come channels
 * last instead (attr.src_nhwc: its few input channels would be mostly padding in a
 * block): the same calls read each point's IC channels in place (points IC elements
 * apart, not B), on image rows (bf16: the interior points a window of KW taps' channels
 * at a time, dc_plan_t.fold).
 *
 * Loops, outermost first:
 *   work item  (n, g, group of OCB output blocks, run of output rows)  -- across threads
 *              (or (g, group, n, rows) where weights outweigh inputs, (n, g, rows, group)
 *              for strided 1x1s read in place on long rows: see init)
 *   chunk      input channel blocks whose weights for the group fit WEI_CHUNK (in L2)
 *   row        output rows of the item (od, oh) from the first whose taps are all
 *              inside, or runs of points (1x1)
 *   call       interior runs of UR points; border points in runs down their columns
 *              (rows whose kd and kh taps are all inside), else one by one
 *   kernel     input blocks of the chunk, taps, the block's channels
 * The first chunk's calls start from the bias (and the sum post-op's scaled prior), the
 * later ones from dst; after the last chunk the item's rows get the eltwise entries and,
 * on the last output block, the zeroed padded tail. Work items write disjoint parts of
 * dst.
 *
 * Low-precision operands (lp: the kernel's pack > 1) take the same loops with the item's
 * sums in a per-thread block ([output block][item point][B], accs) instead of dst. f32
 * sums (bf16): the first chunk starts from the bias (the sum post-op: from the prior dst,
 * converted and scaled). s32 sums (int8): the first chunk starts from 0, and after the
 * last one the sums become f32 plus the bias (dc_ker_t.sums_to_f32), then the sum adds
 * the scaled prior. Then the block gets the eltwise entries and the padded tail and is
 * converted into dst once (dc_ker_t.store), saturating for integers. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_dblk.h"
#include "dt.h"

/* WEI_CHUNK: half the smallest L2 (L2_BYTES), the rest for the item's input and sums.
 * Each chunk is a pass over the item's rows (every call set up again, the sums read and
 * written again): chunks of 128 KiB made a 3x3 on 512 channels (ResNet-50's
 * res5a_branch2b) eleven passes, which ran slower than five. */
enum { WEI_CHUNK = 256 * 1024, DST_ITEM = 128 * 1024,
       FLAT_RUN_CALLS = 4 };
/* A forward f32 call with few products per accumulator keeps at most FEW_ACCS
 * accumulators: such a call is short, and the burst of its accumulators' stores at the
 * end (24 to 28 vectors at the kernels' UR x OCB) held up the next call, where 12 went
 * out behind its products. Those calls: flat ones (1x1 at unit stride) on at most
 * FEW_PRODUCTS input channels whose src stays in the caches between runs (under
 * BDNN_GATHER_AHEAD_MIN_BYTES; MobileNet's conv2_1_pw and conv2_2_pw at mb1 and mb2: from
 * memory the longer calls ran as fast), and a folded window's interior calls on at most
 * FEW_PRODUCTS taps' channels (MobileNet's conv1, 27, at mb1 and mb16). The low-precision
 * kernels ran slower on fewer points, and backward data gained too little to tell. */
enum { FEW_PRODUCTS = 64, FEW_ACCS = 12 };
/* a core's L2, the smallest of the CPUs these kernels target (Zen 3: 512 KiB) */
static const int64_t L2_BYTES = (int64_t)512 << 10;
/* a gathering item's copy of its points' input (all input blocks), or the input points
 * a groups-innermost item reads in place: within L2 */
static const int64_t GATHER_BYTES = (int64_t)128 << 10;
/* A strided 1x1 reads its points in place (no gather) where its output rows are at
 * least SUB_INPLACE_MIN_OW wide and its output blocks make at most SUB_INPLACE_MAX_OCG
 * groups (f32: SUB_INPLACE_MAX_OCG_F32), and on blocks of at least SUB_ROWS_MIN_B
 * channels where its rows are at least SUB_ROWS_MIN_OW wide, there with the groups
 * innermost (dc_init) */
enum { SUB_INPLACE_MIN_OW = 14, SUB_INPLACE_MAX_OCG = 4, SUB_INPLACE_MAX_OCG_F32 = 2,
       SUB_ROWS_MIN_OW = 28, SUB_ROWS_MIN_B = 16 };

/* Which direct kernels serve which gemm_conv_blocked row (by its GEMM micro-kernel): the
 * scalar row has none and keeps the GEMM path. */
static const struct {
    const conv_gemm_ukr_t *ukr;
    const dc_ker_t *ker;
} dc_kers[] = {
    {&bdnn_gemm_ukr_blk_avx512, &bdnn_dc_ker_avx512},
    {&bdnn_gemm_ukr_blk_avx2, &bdnn_dc_ker_avx2},
};

typedef struct {
    bdnn_conv_desc_t d;    /* the forward convolution computed (backward data: see init) */
    int bwd;               /* backward data at unit stride, as that forward convolution */
    const dc_ker_t *ker;   /* the kernels this execution runs: row_ker or its exact twin */
    const dc_ker_t *row_ker;
    const char *variant;   /* bounded kernels: which form the last execution ran */
    int64_t B, ICB, OCB;   /* channel block; input / output blocks per group */
    int64_t ocb, n_ocg;    /* output blocks per call (the last group may have fewer), groups */
    int64_t taps, wblk;    /* taps; packed floats per output block (ICB * taps * B * B) */
    int flat;              /* 1x1, unit stride, no padding: rows are runs of points */
    /* src elements per input point: B, or on channels-last src (attr.src_nhwc) its IC;
     * a channels-last src is never flat or subsampled (its rows are image rows) */
    int src_nhwc;
    int64_t px;
    /* A channels-last src's interior points read their KW taps' channels, KW * IC
     * consecutive elements (no dilation along w, one input block), as one tap of one
     * input "block" of fold_run channels (more than B allowed: the kernel's lanes run
     * on): one loop over the window's channels, not KW taps of a few, on weights packed
     * densely so (fold_runp channels, fold_run rounded up to a whole lane, per (kd, kh);
     * wblk_f per output block, after the main packing). The border points keep the
     * taps. */
    int fold;
    int64_t fold_run, fold_runp, wblk_f;
    /* per axis (d, h, w) the outputs [in_lo, in_hi) whose every tap is inside the input:
     * rows' interior points (w), and the rows whose kd and kh taps are (row_inside) */
    int64_t in_lo[3], in_hi[3];
    int64_t rows, row_len; /* output rows per image and points per row (flat: per run) */
    int64_t rc, n_rc;      /* rows per work item, row runs per (n, g, group) */
    int64_t icc;           /* input blocks per chunk */
    int64_t n_items;
    int whole_groups;      /* threads take contiguous runs of items, not turns (see init) */
    /* item order (n, g, q, rows); with images_inner (g, q, n, rows); with groups_inner
     * (n, g, rows, q) */
    int images_inner, groups_inner;
    float *bias;           /* G * OCB * B: the bias padded to whole blocks */
    /* 1x1 strided without padding: d is the unit-stride problem on the input points the
     * outputs read, which runs flat on copies of those points gathered by each work item
     * (items (n, g, range of points, range of n_qs output block groups): see init). Read
     * in place, a row's points lie strides apart (a cache line per point's block, half of
     * it used at stride 2, all of it fetched for bf16 and u8 blocks) and rows of 7 or 14
     * points make calls of 3 to 5; the gathered points make long calls on whole lines. */
    int subsampled;
    int64_t sub_sd, sub_sh, sub_sw;     /* the strides (when subsampled) */
    int64_t sub_id, sub_ih, sub_iw;     /* ... and the input's dims */
    int64_t n_qs, qs_len;               /* group ranges per range of points, groups per range */
    int64_t buf_floats;                 /* per thread, in elements of esz bytes */
    char *bufs;
    uintptr_t *lines;                   /* per thread: the next item's lines (dc_ahead_t);
                                           NULL: no reading ahead (a src under
                                           BDNN_GATHER_AHEAD_MIN_BYTES) */
    int64_t lines_per_thread;
    /* low-precision operands: elements of the operand type (src, weights) and the
     * per-thread f32 sums of an item (acc_floats each) */
    int lp;
    int64_t esz;
    int64_t acc_floats;
    float *accs;
    /* points a call at most, per count of output blocks: the kernels' ur_max, or fewer
     * for calls with few products per accumulator (FEW_PRODUCTS: see init) */
    int64_t urm[DC_OCB_MAX + 1];
} dc_plan_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Taps k of one axis whose input o + k * (dil + 1) lies in [0, n): [*lo, *hi). */
static void tap_range(int64_t o, int64_t k_n, int64_t dil, int64_t n, int64_t *lo,
                      int64_t *hi) {
    const int64_t step = dil + 1;
    *lo = o >= 0 ? 0 : (-o + step - 1) / step;
    *hi = o > n - 1 ? 0 : min64(k_n, (n - 1 - o) / step + 1);
    if (*hi < *lo) *hi = *lo;
}

/* Output blocks of group q. */
static int64_t ocb_of(const dc_plan_t *p, int64_t q) { return min64(p->ocb, p->OCB - q * p->ocb); }

/* The relu of a chain whose one eltwise entry is an unscaled relu (after an optional
 * sum), which the kernels apply to the values they store; NULL otherwise. */
static const bdnn_post_op_t *fusable_relu(const struct bdnn_conv *c, int has_sum) {
    const bdnn_post_op_t *tail = c->n_post_ops ? &c->post_ops[c->n_post_ops - 1] : NULL;
    return c->n_post_ops == (has_sum ? 2 : 1) && tail->kind == BDNN_POST_ELTWISE
                   && tail->alg == BDNN_ELT_RELU && tail->scale == 1.0f
               ? tail : NULL;
}

static int dc_init(struct bdnn_conv *c, const dc_ker_t *ker, void **plan) {
    const int64_t B = bdnn_layout_block(c->attr.layout);
    const bdnn_conv_desc_t *cd = &c->d;
    const int bwd = c->dir == BDNN_DIR_BWD_DATA;
    if (!ker || B != ker->vlen || !(c->dir == BDNN_DIR_FWD || bwd)
            || (bwd && (cd->sd > 1 || cd->sh > 1 || cd->sw > 1)))
        return BDNN_STATUS_UNIMPLEMENTED;
    const int64_t G = cd->g;
    if (G > 1 && ((cd->ic / G) % B || (cd->oc / G) % B)) return BDNN_STATUS_UNIMPLEMENTED;
    dc_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    *plan = p;
    /* Backward data at unit stride is the forward convolution of diff_dst (OC channels,
     * the output's points) into diff_src (IC channels) with the taps flipped, padding
     * (K - 1) * (dil + 1) - p: diff_src[i] = sum over k of diff_dst[i + p - k * (dil + 1)]
     * * W[k], and with k' = K - 1 - k, i + p - (K - 1 - k') * (dil + 1) = i - p' + k' *
     * (dil + 1). Weights are packed transposed and flipped (bdnn_dc_pack_weights). */
    p->d = *cd;
    p->bwd = bwd;
    p->lp = ker->pack > 1;
    p->esz = p->lp ? (int64_t)bdnn_dt_size(c->attr.src_dt) : (int64_t)sizeof(float);
    p->src_nhwc = c->attr.src_nhwc;
    p->px = p->src_nhwc ? cd->ic : B;
    if (bwd) {
        bdnn_conv_desc_t *v = &p->d;
        v->ic = cd->oc, v->oc = cd->ic;
        v->id = cd->od, v->ih = cd->oh, v->iw = cd->ow;
        v->od = cd->id, v->oh = cd->ih, v->ow = cd->iw;
        v->pd = (cd->kd - 1) * (cd->dd + 1) - cd->pd;
        v->ph = (cd->kh - 1) * (cd->dh + 1) - cd->ph;
        v->pw = (cd->kw - 1) * (cd->dw + 1) - cd->pw;
    }
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t ICG = d->ic / G, OCG = d->oc / G;
    p->ker = p->row_ker = ker;
    p->B = B;
    p->ICB = bdnn_div_up(ICG, B);
    p->OCB = bdnn_div_up(OCG, B);
    /* output blocks per call: the ISA's preference, balanced over the groups (5 blocks at
     * 4: 3 + 2, not 4 + 1) */
    const int64_t pref = min64(ker->ocb_pref, DC_OCB_MAX);
    p->n_ocg = bdnn_div_up(p->OCB, pref);
    p->ocb = bdnn_div_up(p->OCB, p->n_ocg);
    p->n_ocg = bdnn_div_up(p->OCB, p->ocb);
    /* A strided 1x1 with few output block groups and rows of 14 and more reads in place
     * instead: each group reads the strided points again (bf16 and u8 blocks use half of
     * each line at stride 2), but with up to four groups (f32: two) that cost less than
     * the gather's copy, whose strided reads wait on L3, and rows that long make whole
     * calls (with more groups and 7-wide rows the gather stays ahead; f32 at four groups
     * too).
     * On 16-channel blocks, rows of 28 and more read in place with every group in turn
     * on an item's rows (groups_inner): the points come from memory once and from L2 for
     * the other groups, as from the gather's copy, but without the copy, whose strided
     * reads stalled where the caches started cold (ResNet-50's res3a_branch1 at mb1
     * timed in turns with mb16). Not so: 8-channel blocks (AVX2: a line read in place
     * feeds a quarter of the products, and the gather ran ahead), rows of 14 and 7
     * (calls of a few points: the gather ran ahead), and low-precision operands with few
     * groups (bf16 at mb16 ran faster group by group). */
    const int sub = !bwd && !p->src_nhwc && cd->kd * cd->kh * cd->kw == 1
                    && bdnn_reads_no_padding(cd) && (cd->sd > 1 || cd->sh > 1 || cd->sw > 1);
    const int few_groups = cd->ow >= SUB_INPLACE_MIN_OW
                           && p->n_ocg <= (p->lp ? SUB_INPLACE_MAX_OCG
                                                 : SUB_INPLACE_MAX_OCG_F32);
    p->groups_inner = sub && B >= SUB_ROWS_MIN_B && cd->ow >= SUB_ROWS_MIN_OW
                      && !(p->lp && few_groups);
    if (sub && !few_groups && !p->groups_inner) {
        bdnn_conv_desc_t *v = &p->d;
        p->subsampled = 1;
        p->sub_sd = cd->sd, p->sub_sh = cd->sh, p->sub_sw = cd->sw;
        p->sub_id = cd->id, p->sub_ih = cd->ih, p->sub_iw = cd->iw;
        v->id = cd->od, v->ih = cd->oh, v->iw = cd->ow;
        v->sd = v->sh = v->sw = 1;
    }
    p->taps = d->kd * d->kh * d->kw;
    p->wblk = p->ICB * p->taps * B * B;
    /* taps of a few channels are each a short loop (bf16: its pairs split across taps,
     * 3 channels a pair and a half), and the main packing's taps B lanes apart put every
     * tap's few lanes in the same cache sets (f32 ResNet-50 conv1: 49 taps of 3 lanes,
     * 4 KiB apart) */
    p->fold = p->src_nhwc && G == 1 && p->ICB == 1 && d->kw > 1 && d->dw == 0;
    if (p->fold) {
        const int64_t P = ker->pack;
        p->fold_run = d->kw * ICG;   /* a point's window: KW points of IC channels */
        p->fold_runp = bdnn_div_up(p->fold_run, P) * P;
        p->wblk_f = d->kd * d->kh * p->fold_runp * B;
    }
    const int64_t OSP = d->od * d->oh * d->ow;
    p->flat = !p->src_nhwc && p->taps == 1 && d->sd == 1 && d->sh == 1 && d->sw == 1
              && d->pd == 0 && d->ph == 0 && d->pw == 0 && d->id == d->od && d->ih == d->oh
              && d->iw == d->ow;
    bdnn_interior(d->od, d->kd, d->dd, d->sd, d->pd, d->id, &p->in_lo[0], &p->in_hi[0]);
    bdnn_interior(d->oh, d->kh, d->dh, d->sh, d->ph, d->ih, &p->in_lo[1], &p->in_hi[1]);
    bdnn_interior(d->ow, d->kw, d->dw, d->sw, d->pw, d->iw, &p->in_lo[2], &p->in_hi[2]);
    const int few = !p->bwd && !p->lp
        && ((p->flat && p->ICB * B <= FEW_PRODUCTS
             && d->mb * G * p->ICB * B * (int64_t)sizeof(float) * d->id * d->ih * d->iw
                    < BDNN_GATHER_AHEAD_MIN_BYTES)
            || (p->fold && d->kd * d->kh * p->fold_run <= FEW_PRODUCTS));
    for (int n = 1; n <= DC_OCB_MAX; ++n)
        p->urm[n] = few && n * ker->ur_max[n] > FEW_ACCS ? max64(1, FEW_ACCS / n)
                                                         : ker->ur_max[n];
    if (p->flat) {
        /* runs of equal length: 49 points in runs of at most 24 are 17 + 17 + 15 (calls of
         * 5 or 6 points), not 24 + 24 + 1 (whose one-point call runs at a quarter of the
         * FMA rate: too few accumulators to cover the latency) */
        p->rows = bdnn_div_up(max64(OSP, 1), FLAT_RUN_CALLS * p->urm[p->ocb]);
        p->row_len = bdnn_div_up(max64(OSP, 1), p->rows);
    } else {
        p->row_len = d->ow;
        p->rows = d->od * d->oh;
    }
    /* rows per item: at least four items per thread where rows allow, and an item's dst
     * (the chunks read and write it again) within DST_ITEM; with the groups innermost,
     * the input points the item reads (each group again) within GATHER_BYTES */
    const int64_t per_rows = d->mb * G * p->n_ocg;
    const int64_t row_bytes = p->row_len * p->ocb * B * (int64_t)sizeof(float);   /* f32 sums */
    const int64_t row_in = p->groups_inner ? p->row_len * p->ICB * B * p->esz : 0;
    p->rc = max64(p->rows, 1);
    while (p->rc > 1 && (per_rows * bdnn_div_up(p->rows, p->rc) < 4 * c->nthr
                         || p->rc * row_bytes > DST_ITEM || p->rc * row_in > GATHER_BYTES))
        p->rc = bdnn_div_up(p->rc, 2);
    p->n_rc = bdnn_div_up(p->rows, p->rc);
    p->n_items = per_rows * p->n_rc;
    /* A thread runs its share of the items in order, so consecutive items run on one core
     * close in time. With the image outermost, an image's input is reused from L2 by every
     * output block group, and the weights are read again per image: mb x W bytes from L3
     * or memory once they exceed L2. With images innermost, a group's weights stay in L2
     * across the images, and each image's input is read again per group: W + n_ocg x mb x
     * image bytes. Images go innermost where that is less (large weights, few output block
     * groups, small images). */
    const int64_t wei_bytes = p->esz * G * p->OCB * p->wblk;
    const int64_t img_bytes = p->esz * (p->src_nhwc ? d->ic : G * p->ICB * B) * d->id * d->ih
                              * d->iw;
    p->images_inner = !p->groups_inner && d->mb > 1 && wei_bytes > L2_BYTES
                      && wei_bytes > p->n_ocg * img_bytes;
    /* Threads taking items in order split each group's rows, so every thread reads every
     * group's weights. Where those outgrow L2 and come from L3 on every execution, and
     * the groups split evenly, each thread takes a contiguous run of items instead:
     * whole groups, half the weights each on two threads: each core's L2 then holds its
     * half. */
    p->whole_groups = !p->images_inner && !p->groups_inner && p->n_rc > 1
                      && wei_bytes > L2_BYTES && per_rows % c->nthr == 0;
    /* A strided 1x1 runs on its points gathered per work item (n, g, range of points,
     * range of output block groups): each copies its points' input (every input block)
     * into a per-thread buffer of at most GATHER_BYTES and runs its groups on it, so the
     * points are read once per group range and the weights once per range of points,
     * and no copy of the input is written out and read back (a dense copy made per
     * execution outgrows the caches at mb16: 12.8 MB for ResNet-50's res3a_branch2a). */
    if (p->subsampled) {
        const int64_t per = d->mb * G, pt_bytes = p->ICB * B * p->esz;
        int64_t rc = max64(p->rows, 1);
        while (rc > 1 && (per * bdnn_div_up(p->rows, rc) < 4 * c->nthr
                          || rc * p->row_len * pt_bytes > GATHER_BYTES))
            rc = bdnn_div_up(rc, 2);
        int64_t n_rc = bdnn_div_up(p->rows, rc);
        /* Flat ranges split the points evenly, so any count of them works: one the threads
         * divide gathers each point once, where group ranges (below) would gather it once
         * per range. */
        while (p->flat && (per * n_rc) % c->nthr) ++n_rc;
        /* group ranges: at least four items per thread, and as many per thread */
        int64_t n_qs = 1;
        while (n_qs < p->n_ocg && (per * n_rc * n_qs < 4 * c->nthr
                                   || (per * n_rc * n_qs) % c->nthr))
            ++n_qs;
        p->rc = rc, p->n_rc = n_rc;
        p->qs_len = bdnn_div_up(p->n_ocg, n_qs);
        p->n_qs = bdnn_div_up(p->n_ocg, p->qs_len);
        p->n_items = per * n_rc * p->n_qs;
        p->images_inner = 0;
        p->whole_groups = 0;
        p->buf_floats = rc * p->row_len * p->ICB * B;
        if (conv_scratch((void **)&p->bufs, (size_t)(p->esz * c->nthr * p->buf_floats)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        const int64_t src_bytes = d->mb * G * p->ICB * B * p->esz
                                  * (p->sub_id * p->sub_ih * p->sub_iw);
        if (src_bytes >= BDNN_GATHER_AHEAD_MIN_BYTES) {   /* read ahead (dc_ahead_t) */
            p->lines_per_thread = 2 * p->buf_floats / B;   /* two lines per point at most */
            if (conv_scratch((void **)&p->lines,
                             sizeof(uintptr_t) * (size_t)(c->nthr * p->lines_per_thread)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    const int64_t blk_bytes = p->taps * B * p->ocb * B * p->esz;
    /* a call runs all its taps, reading the chunk in order, which the prefetcher streams
     * from L2 */
    p->icc = max64(1, min64(p->ICB, WEI_CHUNK / blk_bytes));
    if (conv_scratch((void **)&p->bias, sizeof(float) * (size_t)(G * p->OCB * B)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    if (p->lp) {
        p->acc_floats = p->ocb * p->rc * p->row_len * B;
        if (conv_scratch((void **)&p->accs, sizeof(float) * (size_t)(c->nthr * p->acc_floats)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

int bdnn_dc_init(struct bdnn_conv *c, const conv_gemm_ukr_t *ukr, void **plan) {
    for (size_t i = 0; i < sizeof(dc_kers) / sizeof(dc_kers[0]); ++i)
        if (dc_kers[i].ukr == ukr) return dc_init(c, dc_kers[i].ker, plan);
    return BDNN_STATUS_UNIMPLEMENTED;
}

void bdnn_dc_fini(void *plan) {
    dc_plan_t *p = plan;
    if (!p) return;
    free(p->bias);
    free(p->bufs);
    free(p->lines);
    free(p->accs);
    free(p);
}

/* The packed weights' bytes; bounded kernels' packings are followed by the bound of their
 * weight pairs (an int32 at the start of DC_BOUND_BYTES more: dc_ker_t.exact). */
static size_t dc_packed_bytes(const dc_plan_t *p) {
    return (size_t)(p->esz * p->d.g * p->OCB * (p->wblk + (p->fold ? p->wblk_f : 0)));
}
enum { DC_BOUND_BYTES = 64 };   /* (keeps whatever follows on a cache line) */

size_t bdnn_dc_weights_bytes(const struct bdnn_conv *c, const void *plan) {
    const dc_plan_t *p = plan;
    return dc_packed_bytes(p) + (p->row_ker->exact ? DC_BOUND_BYTES : 0);
}

/* One element of esz bytes (4, 2 or 1) from from, or +0 (every type's zero bits) for NULL:
 * memcpy of a constant size, inlined. */
static inline void put_elem(char *to, const char *from, int64_t esz) {
    static const char zero[4];
    if (esz == 4)
        memcpy(to, from ? from : zero, 4);
    else if (esz == 2)
        memcpy(to, from ? from : zero, 2);
    else
        *to = from ? *from : 0;
}

/* Where weight (input block icb, tap t of taps, channel i of the block's run, output
 * channel o of the call's nq blocks) lies in a group's packing, in elements: [icb][t]
 * [i / P][nq * B][P], run channels per (icb, t): B in the main packing, a folded window's
 * fold_runp in the second one (both below). */
static inline int64_t packed_at(int64_t icb, int64_t t, int64_t taps, int64_t i, int64_t run,
                                int64_t o, int64_t nq, int64_t B, int64_t P) {
    return (((icb * taps + t) * (run / P) + i / P) * nq * B + o) * P + i % P;
}

/* The folded weights (dc_plan_t.fold: one group, forward): per output block group q, at
 * q * ocb * wblk_f, [kd][kh][c / PACK][ocb_q][B][PACK] with c = kw * IC + ic (fold_runp
 * channels per (kd, kh)), element W[oc][ic][kd][kh][kw]; the rest left zero. */
static void dc_pack_folded(const dc_plan_t *p, const char *w, char *out) {
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t B = p->B, P = p->ker->pack, esz = p->esz, IC = d->ic, taps = p->taps;
    for (int64_t q = 0; q < p->n_ocg; ++q) {
        const int64_t nq = ocb_of(p, q), oc0 = q * p->ocb * B;
        const int64_t ocs = min64(nq * B, d->oc - oc0);
        char *base = out + esz * q * p->ocb * p->wblk_f;
        for (int64_t kd = 0; kd < d->kd; ++kd)
            for (int64_t kh = 0; kh < d->kh; ++kh)
                for (int64_t c = 0; c < d->kw * IC; ++c)
                    for (int64_t o = 0; o < ocs; ++o) {
                        const int64_t kw = c / IC, ic = c % IC;
                        const int64_t at = ((oc0 + o) * IC + ic) * taps
                                           + (kd * d->kh + kh) * d->kw + kw;
                        put_elem(base + esz * packed_at(0, kd * d->kh + kh, d->kd * d->kh, c,
                                                        p->fold_runp, o, nq, B, P),
                                 w + esz * at, esz);
                    }
    }
}

/* Per group g and output block group q (ocb_q blocks, starting at output block q * ocb of
 * the group, at (g * OCB + q * ocb) * wblk): [icb][kd][kh][kw][ic / PACK][ocb_q][B][PACK]
 * in the operand type, element
 * W[g][oc][ic][tap] (backward data, in the forward convolution's terms: W[g][ic][oc]
 * [taps - 1 - tap]), zeros for channels past ICG / OCG (the blocks' padding). */
void bdnn_dc_pack_weights(const struct bdnn_conv *c, const void *plan, const void *wei,
                          void *packed) {
    const dc_plan_t *p = plan;
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t B = p->B, G = d->g, ICG = d->ic / G, OCG = d->oc / G, taps = p->taps;
    const int64_t P = p->ker->pack, esz = p->esz;
    const char *w = wei;
    char *out = packed;
    /* the blocks' padding is zeros (+0 in every type); then only real channels are
     * copied, a block's taps on the primitive's threads when they are many (a kernel as
     * large as its input: 3d_conv_large_shape) */
    memset(out, 0, bdnn_dc_weights_bytes(c, plan));
    for (int64_t g = 0; g < G; ++g)
        for (int64_t q = 0; q < p->n_ocg; ++q) {
            const int64_t nq = ocb_of(p, q), oc0 = q * p->ocb * B;
            const int64_t ocs = min64(nq * B, OCG - oc0);
            char *base = out + esz * (g * p->OCB + q * p->ocb) * p->wblk;
            for (int64_t icb = 0; icb < p->ICB; ++icb) {
                const int64_t ics = min64(B, ICG - icb * B);
#pragma omp parallel for num_threads(c->nthr) schedule(static) if (taps * ics * ocs >= (1 << 20))
                for (int64_t t = 0; t < taps; ++t)
                    for (int64_t i = 0; i < ics; ++i)
                        for (int64_t o = 0; o < ocs; ++o) {
                            const int64_t ic = icb * B + i, oc = oc0 + o;
                            const int64_t at = p->bwd
                                ? ((g * ICG + ic) * OCG + oc) * taps + taps - 1 - t
                                : ((g * OCG + oc) * ICG + ic) * taps + t;
                            put_elem(base + esz * packed_at(icb, t, taps, i, B, o, nq, B, P),
                                     w + esz * at, esz);
                        }
            }
        }
    if (p->fold) dc_pack_folded(p, w, out + esz * G * p->OCB * p->wblk);
    if (p->row_ker->exact) {
        /* the largest |w0| + |w1| of the pairs a weight vector's s8 lanes hold (bytes 0, 1
         * and 2, 3 of each), over the whole packing (its zeros included) */
        const int8_t *b = (const int8_t *)out;
        const size_t n = dc_packed_bytes(p);
        int32_t bound = 0;
        for (size_t i = 0; i + 1 < n; i += 2) {
            const int32_t pair = abs(b[i]) + abs(b[i + 1]);
            if (pair > bound) bound = pair;
        }
        memcpy(out + n, &bound, sizeof(bound));
    }
}

/* The sums of a call whose first output point is pt (of the plan's numbering: flat rows
 * p0 + j, others row * ow + j) in the block that starts at point dst_pt0; with a direct
 * store, also where the call's output goes (a->out). */
static inline float *call_at(dc_call_t *a, float *dst_q, int64_t dst_pt0, int64_t pt,
                             int64_t B) {
    if (a->out_q) a->out = a->out_q + a->out_esz * pt * B;
    return dst_q + (pt - dst_pt0) * B;
}

/* The output points [*pt0, *pt1) of row range rr (rows [rr * rc, rr * rc + rc)). A flat
 * plan's rows are only runs of calls, so its ranges split the points evenly instead:
 * items of equal work, where whole runs left a thread one run more per image than the
 * other (ResNet-50's 14x14 strided 1x1, 196 points: 110 and 86). */
static void range_points(const dc_plan_t *p, int64_t rr, int64_t *pt0, int64_t *pt1) {
    const int64_t OSP = p->d.od * p->d.oh * p->d.ow;
    if (p->flat) {
        *pt0 = rr * OSP / p->n_rc, *pt1 = (rr + 1) * OSP / p->n_rc;
    } else {
        *pt0 = rr * p->rc * p->row_len;
        *pt1 = min64((rr * p->rc + p->rc) * p->row_len, OSP);
    }
}

/* Border point ow's kw taps inside the input: sets a->nkw and returns the first, kw_lo;
 * *col: the input column it reads. */
static int64_t border_taps(const bdnn_conv_desc_t *d, int64_t ow, dc_call_t *a, int64_t *col) {
    const int64_t iw0 = ow * d->sw - d->pw;
    int64_t kw_lo, kw_hi;
    tap_range(iw0, d->kw, d->dw, d->iw, &kw_lo, &kw_hi);
    a->nkw = kw_hi - kw_lo;
    *col = iw0 + kw_lo * (d->dw + 1);
    return kw_lo;
}

/* A gathering work item's image n, group g, range of output block groups qs and points
 * [pt0, pt1) (items (n, g, range of points, range of groups), the last fastest). */
static void sub_item(const dc_plan_t *p, int64_t item, int64_t *n, int64_t *g, int64_t *qs,
                     int64_t *pt0, int64_t *pt1) {
    *qs = item % p->n_qs, item /= p->n_qs;
    const int64_t rr = item % p->n_rc;
    item /= p->n_rc;
    *g = item % p->d.g, *n = item / p->d.g;
    range_points(p, rr, pt0, pt1);
}

/* The strided input of image n, group g (its first block's first point). */
static const char *sub_img(const dc_plan_t *p, const char *src, int64_t n, int64_t g) {
    const int64_t points = p->sub_id * p->sub_ih * p->sub_iw;
    return src + p->B * p->esz * (n * p->d.g + g) * p->ICB * points;
}

/* The run along x of point pt (up to pt1) in input block icb of the strided image img:
 * returns its first point's input and sets *run to its length (the gather's unit). */
static const char *sub_run(const dc_plan_t *p, const char *img, int64_t icb, int64_t pt,
                           int64_t pt1, int64_t *run) {
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t IW = p->sub_iw, IHW = p->sub_ih * IW, ISP_IN = p->sub_id * IHW;
    const int64_t xx = pt % d->iw, y = (pt / d->iw) % d->ih, z = pt / (d->iw * d->ih);
    *run = min64(d->iw - xx, pt1 - pt);
    return img + p->B * p->esz * (icb * ISP_IN + z * p->sub_sd * IHW + y * p->sub_sh * IW
                                  + xx * p->sub_sw);
}

/* A gathering item reads the next item's points ahead (the one its thread takes next):
 * their lines, listed in the order that item's gather copies them, go to the kernel
 * calls a few per input block (dc_call_t.pf), so that the next gather copies from the
 * caches. Gathered cold, the copy waited on every line with nothing to overlap; asked
 * for in bursts between calls, the lines came no sooner. */
typedef struct {
    uintptr_t *line;         /* the lines, and how many */
    int64_t n;
    int64_t done;            /* handed out */
    int64_t per_icb;         /* lines per input block of a call */
} dc_ahead_t;

/* The lines of points [pt0, pt1) of the strided input img (every input block), in the
 * gather's order: for each run along x, where points are a line or more apart each
 * point's line (and the next, where a src off a cache line makes a point straddle two),
 * else every line from the run's first point to its last. Returns their count, at most
 * two per point. */
static int64_t sub_lines(const dc_plan_t *p, const char *img, int64_t pt0, int64_t pt1,
                         uintptr_t *line) {
    const int64_t pt_bytes = p->B * p->esz, step = p->sub_sw * pt_bytes;
    const uintptr_t L = 64;
    int64_t n = 0, run;
    for (int64_t icb = 0; icb < p->ICB; ++icb)
        for (int64_t pt = pt0; pt < pt1; pt += run) {   /* in dc_gather_points' order */
            const uintptr_t in = (uintptr_t)sub_run(p, img, icb, pt, pt1, &run);
            if (step >= (int64_t)L) {   /* a point's line, and the next if it straddles */
                for (int64_t j = 0; j < run; ++j) {
                    const uintptr_t at = in + j * step;
                    line[n++] = at & ~(L - 1);
                    if (at % L + (uintptr_t)pt_bytes > L) line[n++] = (at & ~(L - 1)) + L;
                }
            } else {
                const uintptr_t end = in + (run - 1) * step + pt_bytes;
                for (uintptr_t a = in & ~(L - 1); a < end; a += L) line[n++] = a;
            }
        }
    return n;
}

/* A run of n points in calls of at most urm points: the fewest calls, their sizes within
 * one of each other, never a short last call: a call's UR x OCB accumulators are its
 * independent sums, and a call with few of them leaves the FMA units waiting on their
 * latency. Call i has dc_len(sp, i) points: the first r calls q + 1, the others q. */
typedef struct {
    int64_t calls, q, r;
} dc_split_t;
static dc_split_t dc_split(int64_t n, int64_t urm) {
    const int64_t calls = n > 0 ? bdnn_div_up(n, urm) : 0;
    return (dc_split_t){calls, calls ? n / calls : 0, calls ? n % calls : 0};
}
static inline int64_t dc_len(dc_split_t sp, int64_t i) { return sp.q + (i < sp.r); }
/* The end of call i's run of calls of its length (the longer ones come first). */
static inline int64_t dc_same_end(dc_split_t sp, int64_t i) { return i < sp.r ? sp.r : sp.calls; }

/* The reading ahead of work item next by the item (n, g, points [pt0, pt1), groups [q0,
 * q1)) before it: its lines, over the first half of this item's calls' input blocks (a
 * call per run of up to ur_max points, as dc_row makes them). None (returns 0) without
 * the plan's line buffers, or where next gathers these very points (another range of
 * groups): they are in cache already. */
static int dc_ahead_of(const dc_plan_t *p, const char *src, int64_t next, int64_t n, int64_t g,
                       int64_t pt0, int64_t pt1, int64_t q0, int64_t q1, dc_ahead_t *h) {
    int64_t nn, ng, nqs, npt0, npt1, blocks = 0;
    if (!p->lines) return 0;
    sub_item(p, next, &nn, &ng, &nqs, &npt0, &npt1);
    if (nn == n && ng == g && npt0 == pt0) return 0;
    h->line = p->lines + omp_get_thread_num() * p->lines_per_thread;
    h->n = sub_lines(p, sub_img(p, src, nn, ng), npt0, npt1, h->line);
    h->done = 0;
    for (int64_t q = q0; q < q1; ++q)
        for (int64_t r = pt0; r < pt1; r += p->row_len)
            blocks += dc_split(min64(p->row_len, pt1 - r), p->urm[ocb_of(p, q)]).calls;
    blocks *= p->ICB;   /* every call meets each input block once */
    h->per_icb = bdnn_div_up(h->n, max64(1, blocks / 2));
    return 1;
}

/* The call's share of the lines: per_icb per input block while n_icb blocks' worth are
 * left; else none (the few left over come with the gather itself). */
static void dc_ahead_feed(dc_ahead_t *h, dc_call_t *a) {
    if (h->n - h->done >= a->n_icb * h->per_icb) {
        a->pf = h->line + h->done, a->pf_icb = h->per_icb;
        h->done += a->n_icb * h->per_icb;
    } else {
        a->pf = NULL;
    }
}

/* The calls of one output row (flat: one run of points), for input blocks [c0, c0 + n)
 * of group g and output block group q, every tap. Flat rows read point pt of src_img at
 * (pt - src_pt0) * B (a gathering item's copy starts at its first point); output point pt
 * is at dst_q + (pt - dst_pt0) * B (lp: the item's sums start at its first point). src_img
 * and wq are in elements of esz bytes. A flat row is the run [row, row + n_flat). Without
 * borders, a row's border points are left to dc_border_columns. */
static void dc_row(const struct bdnn_conv *c, const dc_plan_t *p, const char *src_img,
                   int64_t src_pt0, const char *wq, const char *wq_f, float *dst_q,
                   int64_t dst_pt0, int64_t row, int64_t n_flat, int64_t nq, int borders,
                   dc_call_t *a, dc_ahead_t *ah) {
    const bdnn_conv_desc_t *d = &p->d;
    const dc_ker_t *k = p->ker;
    const int64_t B = p->B, urm = p->urm[nq], esz = p->esz, px = p->px;
    if (p->flat) {
        const int64_t p0 = row, n = n_flat;
        a->nkd = a->nkh = a->nkw = 1;
        const dc_split_t sp = dc_split(n, urm);
        /* the runs of one length in one call (n_seg), but where the calls read ahead: each
         * takes its own share of the lines */
        for (int64_t i = 0, j = 0; i < sp.calls;) {
            const int64_t ur = dc_len(sp, i), end = ah ? i + 1 : dc_same_end(sp, i);
            if (ah) dc_ahead_feed(ah, a);
            a->n_seg = end - i;
            k->fn[nq][ur][DC_ONE_TAP](src_img + esz * (p0 - src_pt0 + j) * B, wq,
                                      call_at(a, dst_q, dst_pt0, p0 + j, B), a);
            j += (end - i) * ur, i = end;
        }
        a->n_seg = 0;
        a->pf = NULL;
        return;
    }
    const int64_t od = row / d->oh, oh = row % d->oh;
    const int64_t id0 = od * d->sd - d->pd, ih0 = oh * d->sh - d->ph;
    int64_t kd_lo, kd_hi, kh_lo, kh_hi;
    tap_range(id0, d->kd, d->dd, d->id, &kd_lo, &kd_hi);
    tap_range(ih0, d->kh, d->dh, d->ih, &kh_lo, &kh_hi);
    a->nkd = kd_hi - kd_lo;
    a->nkh = kh_hi - kh_lo;
    const int64_t KWB = d->kw * nq * B * B;   /* packed elements per kh */
    const char *s_row = src_img + esz * ((id0 + kd_lo * (d->dd + 1)) * d->ih
                                         + ih0 + kh_lo * (d->dh + 1)) * d->iw * px;
    const char *w_row = wq + esz * (kd_lo * d->kh + kh_lo) * KWB;
    const int64_t pt_row = row * d->ow, lo = p->in_lo[2], hi = p->in_hi[2];
    /* the stride's instance (points px apart: the general one) */
    const int sv = px == B && d->sw <= 2 ? (int)d->sw : 0;
    if (hi > lo) {
        const dc_call_t taps = *a;   /* a folded window's blocks and strides, then back */
        const char *w_in = w_row;
        a->nkw = d->kw;
        if (p->fold) {
            const int64_t RB = p->fold_runp * nq * B;   /* packed elements per (kd, kh) */
            a->nkw = 1, a->n_icb = 1, a->last_ic = p->fold_run;
            a->w_kh = RB, a->w_kd = d->kh * RB, a->w_icb = d->kd * d->kh * RB;
            w_in = wq_f + esz * (kd_lo * d->kh + kh_lo) * RB;
        }
        /* the row's segments of one size in one call: a call's setup is large beside the
         * products of points with few channels and taps (first layers) */
        const dc_split_t sp = dc_split(hi - lo, urm);
        for (int64_t i = 0, j = lo; i < sp.calls;) {
            /* calls [i, end) have ur points each */
            const int64_t ur = dc_len(sp, i), end = dc_same_end(sp, i), segs = end - i;
            a->n_seg = segs;
            k->fn[nq][ur][sv](s_row + esz * (j * d->sw - d->pw) * px, w_in,
                              call_at(a, dst_q, dst_pt0, pt_row + j, B), a);
            i += segs, j += segs * ur;
        }
        a->n_seg = 0;
        a->n_icb = taps.n_icb, a->last_ic = taps.last_ic;
        a->w_kh = taps.w_kh, a->w_kd = taps.w_kd, a->w_icb = taps.w_icb;
    }
    for (int64_t ow = 0; borders && ow < d->ow; ++ow) {   /* the border points, one per call */
        if (ow == lo) ow = hi;
        if (ow >= d->ow) break;
        int64_t col;
        const int64_t kw_lo = border_taps(d, ow, a, &col);
        k->fn[nq][1][px == B](s_row + esz * col * px, w_row + esz * kw_lo * nq * B * B,
                        call_at(a, dst_q, dst_pt0, pt_row + ow, B), a);
    }
}

/* Whether every (kd, kh) tap of output row r (od * oh + oh) is inside the input. */
static int row_inside(const dc_plan_t *p, int64_t r) {
    const int64_t od = r / p->d.oh, oh = r % p->d.oh;
    return od >= p->in_lo[0] && od < p->in_hi[0] && oh >= p->in_lo[1] && oh < p->in_hi[1];
}

/* The border points (those whose kw taps are clipped) of rows [r0, r1) that are
 * row_inside, down each border column: a run of such rows of one output plane shares
 * the column's taps and lies an output row apart in src and in the sums, so it goes in
 * calls of up to UR points (s = 0, s_pt and d_pt a row's), where one point per call had
 * only OCB accumulators (on a 7x7 image, 10 of its 14 border points). Arguments as
 * dc_row's; the rows' other points are dc_row's. */
static void dc_border_columns(const dc_plan_t *p, const char *src_img, const char *wq,
                              float *dst_q, int64_t dst_pt0, int64_t r0, int64_t r1,
                              int64_t nq, dc_call_t *a) {
    const bdnn_conv_desc_t *d = &p->d;
    const dc_ker_t *k = p->ker;
    const int64_t B = p->B, urm = p->urm[nq], esz = p->esz, px = p->px;
    const int64_t lo = p->in_lo[2], hi = p->in_hi[2];
    if (lo == 0 && hi == d->ow) return;
    const int64_t s_pt = a->s_pt;
    a->s_pt = d->sh * d->iw * px;
    a->d_pt = d->ow * B;
    a->nkd = d->kd, a->nkh = d->kh;
    for (int64_t r = r0; r < r1;) {
        if (!row_inside(p, r)) {
            ++r;
            continue;
        }
        int64_t e = r + 1;   /* the run [r, e): inside rows of r's plane */
        while (e < r1 && e / d->oh == r / d->oh && row_inside(p, e)) ++e;
        const char *s_row = src_img + esz * ((r / d->oh * d->sd - d->pd) * d->ih
                                             + r % d->oh * d->sh - d->ph) * d->iw * px;
        const dc_split_t sp = dc_split(e - r, urm);
        for (int64_t ow = 0; ow < d->ow; ++ow) {
            if (ow == lo) ow = hi;
            if (ow >= d->ow) break;
            int64_t col;
            const int64_t kw_lo = border_taps(d, ow, a, &col);
            for (int64_t i = 0, j = 0; i < sp.calls; j += dc_len(sp, i++))
                k->fn[nq][dc_len(sp, i)][0](s_row + esz * (j * d->sh * d->iw + col) * px,
                                            wq + esz * kw_lo * nq * B * B,
                                            call_at(a, dst_q, dst_pt0, (r + j) * d->ow + ow, B),
                                            a);
        }
        r = e;
    }
    a->s_pt = s_pt;
    a->d_pt = B;
}

/* What every work item of one execution shares. */
typedef struct {
    const char *wei;
    float *dst;            /* f32 dst (lp: NULL) */
    void *out;             /* lp: dst in out_dt */
    int has_sum, has_eltwise;
    float sum_scale;
    const bdnn_post_op_t *relu;
    int64_t tail;          /* padded channels of the last block (G 1) */
    float tail_v;
    int with_bias;
    /* lp: the last chunk stores into dst itself (dc_call_t's direct store): no sum, no
     * eltwise entry but a lone relu, and a padded tail of zeros (the zero weights and bias
     * give it); every call has all its taps */
    int direct;
    /* f32: every store final (one chunk, no sum, nothing after the kernels)
     * into a dst of at least BDNN_STREAM_MIN_BYTES, vector-aligned: stored past the caches */
    int stream;
} dc_exec_t;

/* The eltwise entries on the real channels and the padded tail, on npt points of output
 * block ob (of the G * OCB) whose values are at blk (points B floats apart). */
static void dc_finish_block(const struct bdnn_conv *c, const dc_plan_t *p, const dc_exec_t *x,
                            int64_t ob, float *blk, int64_t npt) {
    const int64_t B = p->B;
    const int last = ob == p->d.g * p->OCB - 1;
    const int64_t cols = last ? B - x->tail : B;
    if (x->has_eltwise) bdnn_post_ops_eltwise(c, blk, B, npt, cols);
    if (last && x->tail)
        for (int64_t pt = 0; pt < npt; ++pt)
            for (int64_t i = cols; i < B; ++i) blk[pt * B + i] = x->tail_v;
}

/* Output points [pt0, pt1) of image n, group g, output block group q (whole rows, but for
 * flat plans: range_points): every chunk of input
 * blocks, then the eltwise entries on the real channels and the padded tail (lp: into the
 * thread's sums, then converted into dst). src_g: the group's input blocks, s_icb
 * elements apart, flat rows' points from src_pt0 (dc_row). */
static void dc_group_rows(const struct bdnn_conv *c, const dc_plan_t *p, const dc_exec_t *x,
                          int64_t n, int64_t g, int64_t q, int64_t pt0, int64_t pt1,
                          const char *src_g, int64_t s_icb, int64_t src_pt0, dc_ahead_t *ah) {
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t B = p->B, G = d->g, OSP = d->od * d->oh * d->ow;
    const int64_t out_img = G * p->OCB * B * OSP, nq = ocb_of(p, q);
    const int64_t ob0 = g * p->OCB + q * p->ocb;   /* the group's first output block */
    const int64_t npt = pt1 - pt0, L = p->row_len;
    /* the item's rows r (flat: runs starting at point r, L apart) */
    const int64_t r0 = p->flat ? pt0 : pt0 / L, r1 = p->flat ? pt1 : bdnn_div_up(pt1, L);
    const int64_t r_step = p->flat ? L : 1;
    /* where the sums go: dst itself, or (lp) the thread's block of the item's points */
    const int64_t out_q = n * out_img + ob0 * B * OSP;
    float *sums = p->lp ? p->accs + omp_get_thread_num() * p->acc_floats : x->dst + out_q;
    const int64_t s_ocb = p->lp ? npt * B : OSP * B, s_pt0 = p->lp ? pt0 : 0;
    const char *wq = x->wei + p->esz * ob0 * p->wblk;
    const char *wq_f = p->fold ? x->wei + p->esz * (G * p->OCB * p->wblk + ob0 * p->wblk_f)
                               : NULL;
    const int s32 = p->ker->s32;   /* int8: bias, sum and relu after the kernels */
    const float *bias = x->with_bias ? p->bias + ob0 * B : NULL;
    dc_call_t a = {0};
    a.s_icb = s_icb;
    a.s_kd = (d->dd + 1) * d->ih * d->iw * p->px;
    a.s_kh = (d->dh + 1) * d->iw * p->px;
    a.s_kw = (d->dw + 1) * p->px;
    a.s_pt = d->sw * p->px;
    a.d_pt = B;
    a.w_kh = d->kw * nq * B * B;
    a.w_kd = d->kh * a.w_kh;
    a.w_icb = p->taps * nq * B * B;
    a.d_ocb = s_ocb;
    a.bias = s32 ? NULL : bias;
    a.sum_scale = x->sum_scale;
    a.stream = x->stream;
    if (p->lp && !s32 && x->has_sum)   /* the prior dst, for DC_SUM to scale */
        for (int64_t o = 0; o < nq; ++o) {
            const int64_t at = out_q + o * OSP * B + pt0 * B;   /* the item's first point */
            for (int64_t i = 0; i < npt * B; ++i)
                sums[o * s_ocb + i] = bdnn_load_f32(x->out, c->out_dt, at + i);
        }
    for (int64_t c0 = 0; c0 < p->ICB; c0 += p->icc) {
        a.n_icb = min64(p->icc, p->ICB - c0);
        a.last_ic = c0 + a.n_icb == p->ICB ? d->ic / G - (p->ICB - 1) * B : B;
        a.mode = c0 ? DC_ACC : x->has_sum && !s32 ? DC_SUM : DC_BIAS;
        a.relu = x->relu && c0 + a.n_icb == p->ICB;
        a.relu_alpha = x->relu ? x->relu->alpha : 0.0f;
        if (x->direct && c0 + a.n_icb == p->ICB) {
            a.out_esz = (int64_t)bdnn_dt_size(c->out_dt);
            a.out_q = (char *)x->out + a.out_esz * out_q;
            a.o_ocb = OSP * B;
            a.out_dt = c->out_dt;
            a.out_bias = s32 ? bias : NULL;
            a.out_relu = s32 && x->relu;
            a.relu = !s32 && x->relu;
        }
        const char *src_c = src_g + p->esz * c0 * s_icb;
        const char *w_c = wq + p->esz * c0 * a.w_icb;
        /* the rows from the first whose (kd, kh) taps are all inside, those above it last:
         * its calls read the chunk's weights whole and in order, a stream the prefetcher
         * follows from L3 or memory where the weights outgrow L2; a border row first had
         * read only its taps' parts of them, leaving the others to come in pieces
         * (ResNet-50's 3x3 on 7x7 images, whose weights are read once per 7 rows) */
        int64_t first = r0;
        while (!p->flat && first < r1 && !row_inside(p, first)) ++first;
        if (first == r1) first = r0;
        for (int64_t r = first; r < r1; r += r_step)
            dc_row(c, p, src_c, src_pt0, w_c, wq_f, sums, s_pt0, r, min64(L, r1 - r), nq,
                   p->flat || !row_inside(p, r), &a, ah);
        for (int64_t r = r0; r < first; ++r)
            dc_row(c, p, src_c, src_pt0, w_c, wq_f, sums, s_pt0, r, L, nq, 1, &a, ah);
        if (!p->flat) dc_border_columns(p, src_c, w_c, sums, s_pt0, r0, r1, nq, &a);
    }
    if (x->direct) return;
    for (int64_t o = 0; o < nq; ++o) {
        float *blk = sums + o * s_ocb + (pt0 - s_pt0) * B;
        const int64_t at = out_q + o * OSP * B + pt0 * B;   /* lp: its place in dst */
        if (s32) {
            p->ker->sums_to_f32(blk, bias ? bias + o * B : NULL, npt);
            if (x->has_sum)   /* scale * prior + v, the epilogue's order */
                for (int64_t i = 0; i < npt * B; ++i)
                    blk[i] += x->sum_scale * bdnn_load_f32(x->out, c->out_dt, at + i);
        }
        dc_finish_block(c, p, x, ob0 + o, blk, npt);
        if (p->lp)
            p->ker->store(c->out_dt, blk,
                          (char *)x->out + bdnn_dt_size(c->out_dt) * (size_t)at, npt * B);
    }
}

/* n points of pt_bytes (a block) from in, step bytes apart, to out, dense: in moves of a
 * constant size (a loop over B floats ran scalar, as long as the convolution it feeds; a
 * memcpy of a run-time size is a call per point: on int8's 16-byte blocks that copy took
 * as long as a strided 1x1's dot products) */
static void copy_points(char *restrict out, const char *restrict in, int64_t n, int64_t step,
                        int64_t pt_bytes) {
    switch (pt_bytes) {
    case 64: for (int64_t j = 0; j < n; ++j) memcpy(out + j * 64, in + j * step, 64); break;
    case 32: for (int64_t j = 0; j < n; ++j) memcpy(out + j * 32, in + j * step, 32); break;
    case 16: for (int64_t j = 0; j < n; ++j) memcpy(out + j * 16, in + j * step, 16); break;
    default:
        for (int64_t j = 0; j < n; ++j) memcpy(out + j * pt_bytes, in + j * step, (size_t)pt_bytes);
    }
}

/* Points [pt0, pt1) of the subsampled problem (image n, group g), every input block, from
 * the strided input into buf ([icb][pt - pt0][B], elements of esz bytes): point (z, y, x)
 * is input point (z*sd, y*sh, x*sw). */
static void dc_gather_points(const dc_plan_t *p, const char *src, int64_t n, int64_t g,
                             int64_t pt0, int64_t pt1, char *buf) {
    const int64_t npt = pt1 - pt0, pt_bytes = p->B * p->esz;
    const char *img = sub_img(p, src, n, g);
    int64_t run;
    for (int64_t icb = 0; icb < p->ICB; ++icb)
        for (int64_t pt = pt0; pt < pt1; pt += run) {   /* by runs along x */
            const char *in = sub_run(p, img, icb, pt, pt1, &run);
            copy_points(buf + pt_bytes * (icb * npt + pt - pt0), in, run,
                        p->sub_sw * pt_bytes, pt_bytes);
        }
}

/* Work item `item` of a plan that is not subsampled: (n, g, q, row range rr), or (g, q, n,
 * rr) with images inner, or (n, g, rr, q) with groups inner. */
static void plain_item_of(const dc_plan_t *p, int64_t item, int64_t *n, int64_t *g, int64_t *q,
                          int64_t *rr) {
    if (p->groups_inner) {
        *q = item % p->n_ocg, item /= p->n_ocg;
        *rr = item % p->n_rc, item /= p->n_rc;
        *g = item % p->d.g, *n = item / p->d.g;
        return;
    }
    *rr = item % p->n_rc, item /= p->n_rc;
    if (p->images_inner) {
        *n = item % p->d.mb, item /= p->d.mb;
        *q = item % p->n_ocg, *g = item / p->n_ocg;
    } else {
        *q = item % p->n_ocg, item /= p->n_ocg;
        *g = item % p->d.g, *n = item / p->d.g;
    }
}

/* A plain item's cost for bdnn_cost_share: its points times its output blocks. */
static int64_t dc_plain_cost(const void *ctx, int64_t item) {
    const dc_plan_t *p = ctx;
    int64_t n, g, q, rr, pt0, pt1;
    plain_item_of(p, item, &n, &g, &q, &rr);
    range_points(p, rr, &pt0, &pt1);
    return (pt1 - pt0) * ocb_of(p, q);
}

/* Plain work item `item` (plain_item_of). src is the whole input; in_img, in_g and in_icb
 * the distances (in elements) of its images, groups and input blocks. */
static void dc_plain_item(const struct bdnn_conv *c, const dc_plan_t *p, const dc_exec_t *x,
                          const char *src, int64_t item, int64_t in_img, int64_t in_g,
                          int64_t in_icb) {
    int64_t n, g, q, rr, pt0, pt1;
    plain_item_of(p, item, &n, &g, &q, &rr);
    range_points(p, rr, &pt0, &pt1);
    dc_group_rows(c, p, x, n, g, q, pt0, pt1, src + p->esz * (n * in_img + g * in_g), in_icb,
                  0, NULL);
}

void bdnn_dc_execute(const struct bdnn_conv *c, void *plan, const bdnn_conv_args_t *args) {
    dc_plan_t *p = plan;
    const bdnn_conv_desc_t *d = &p->d;
    const int64_t B = p->B, G = d->g, OCG = d->oc / G, esz = p->esz;
    const int64_t ISP = d->id * d->ih * d->iw;
    /* an image's src, and a group's offset and input blocks' distance in it */
    const int64_t in_img = (p->src_nhwc ? d->ic : G * p->ICB * B) * ISP;
    const int64_t in_g = p->src_nhwc ? d->ic / G : p->ICB * ISP * B;
    const int64_t in_icb = p->src_nhwc ? B : ISP * B;
    const char *src = p->bwd ? args->diff_dst : args->src;
    const void *bias = args->bias;
    if (bias)   /* padded to whole blocks: a call reads its blocks' whole vectors */
        for (int64_t g = 0; g < G; ++g)
            for (int64_t oc = 0; oc < p->OCB * B; ++oc)
                p->bias[g * p->OCB * B + oc] =
                    oc < OCG ? bdnn_load_f32(bias, c->attr.bia_dt, g * OCG + oc) : 0.0f;
    if (p->row_ker->exact) {   /* the bounded form where any u8 byte keeps it exact */
        int32_t bound;
        memcpy(&bound, (const char *)args->wei + dc_packed_bytes(p), sizeof(bound));
        p->ker = bdnn_pairs16_exact(255, p->row_ker->pair_depth * bound) ? p->row_ker
                                                                           : p->row_ker->exact;
        p->variant = p->ker->variant;
    }
    dc_exec_t x = {0};
    x.wei = args->wei;
    if (p->lp)
        x.out = args->dst;
    else
        x.dst = p->bwd ? args->diff_src : args->dst;
    x.sum_scale = bdnn_post_ops_sum_scale(c, &x.has_sum);
    x.relu = fusable_relu(c, x.has_sum);   /* in the last chunk's store */
    x.direct = p->lp && !x.has_sum && c->n_post_ops == (x.relu ? 1 : 0)
               && c->fault != BDNN_FAULT_PADDING_GARBAGE;
    if (p->ker->s32 && !x.direct) x.relu = NULL;   /* s32 sums: relu after the conversion */
    x.has_eltwise = c->n_post_ops > (x.has_sum ? 1 : 0) && !x.relu;
    x.tail = p->OCB * B - OCG;
    x.tail_v = c->fault == BDNN_FAULT_PADDING_GARBAGE ? 1.0f : 0.0f;
    x.with_bias = bias != NULL;
    const size_t dst_bytes = sizeof(float) * (size_t)(d->mb * G * p->OCB * B * d->od * d->oh * d->ow);
    /* Streamed stores of a vector short of a 64-byte line (AVX2's 8 floats), a call's
     * points of more than one output block in turn: where those blocks are a multiple of
     * BDNN_ALIAS_BYTES apart they drained slower than stores through the caches (first
     * layers and 1x1s on 112x112, 64x64 and 224x224 images), so such outputs go through
     * the caches (blocks otherwise apart, and wino_f43_blocked's tiles, gained by
     * streaming). */
    const int64_t blk_bytes = (int64_t)sizeof(float) * B * d->od * d->oh * d->ow;
    x.stream = !p->lp && p->icc >= p->ICB && !x.has_sum && !x.has_eltwise
               && x.tail == 0 && bdnn_streams_output(x.dst, dst_bytes, sizeof(float) * (size_t)B)
               && (B * (int64_t)sizeof(float) >= 64 || p->ocb == 1
                   || blk_bytes % BDNN_ALIAS_BYTES != 0);

    /* Plain items: each thread a fixed contiguous share, balanced by cost, and the last
     * few to threads as they free up (bdnn_cost_share). A gathering item
     * reads its thread's next item ahead, and whole groups keep each thread's weights in
     * its L2: those keep their fixed shares (turns, runs). */
#pragma omp parallel num_threads(c->nthr)
    {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    if (p->whole_groups) {   /* (never subsampled) */
        for (int64_t item = p->n_items * t / nt; item < p->n_items * (t + 1) / nt; ++item)
            dc_plain_item(c, p, &x, src, item, in_img, in_g, in_icb);
    } else if (!p->subsampled) {
        int64_t lo, hi;
        const int64_t shared = bdnn_cost_share(p->n_items, dc_plain_cost, p, t, nt, &lo, &hi);
        for (int64_t item = lo; item < hi; ++item)
            dc_plain_item(c, p, &x, src, item, in_img, in_g, in_icb);
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t item = shared; item < p->n_items; ++item)
            dc_plain_item(c, p, &x, src, item, in_img, in_g, in_icb);
    } else {
        for (int64_t item = t; item < p->n_items; item += nt) {
            int64_t n, g, qs, pt0, pt1;
            sub_item(p, item, &n, &g, &qs, &pt0, &pt1);
            char *buf = p->bufs + esz * t * p->buf_floats;
            dc_gather_points(p, src, n, g, pt0, pt1, buf);
            const int64_t q0 = qs * p->qs_len, q1 = min64(p->n_ocg, q0 + p->qs_len);
            dc_ahead_t ah;
            const int ahead = item + nt < p->n_items
                              && dc_ahead_of(p, src, item + nt, n, g, pt0, pt1, q0, q1, &ah);
            for (int64_t q = q0; q < q1; ++q)
                dc_group_rows(c, p, &x, n, g, q, pt0, pt1, buf, (pt1 - pt0) * B, pt0,
                              ahead ? &ah : NULL);
        }
    }
    if (x.stream) bdnn_stream_fence();
    }
}

int bdnn_dc_is_flat(const void *plan) {
    const dc_plan_t *p = plan;
    return p && p->flat && !p->bwd && !p->subsampled && p->d.g == 1 && !p->lp;
}

void bdnn_dc_pad_bias(const void *plan, const float *bias, float *out) {
    const dc_plan_t *p = plan;
    const int64_t OCG = p->d.oc / p->d.g;
    for (int64_t oc = 0; oc < p->OCB * p->B; ++oc) out[oc] = oc < OCG ? bias[oc] : 0.0f;
}

int bdnn_dc_flat_points(const struct bdnn_conv *c, const void *plan, const float *src_img,
                        const float *wei, const float *bias, float *dst, int64_t d_ocb,
                        int64_t p0, int64_t n) {
    const dc_plan_t *p = plan;
    const bdnn_conv_desc_t *d = &p->d;
    if (!bdnn_dc_is_flat(plan)) return 0;
    const dc_ker_t *k = p->ker;
    const int64_t B = p->B, ISP = d->id * d->ih * d->iw, OCG = d->oc;
    const bdnn_post_op_t *relu = fusable_relu(c, 0);   /* (a fused 1x1 step has no sum) */
    const int has_eltwise = c->n_post_ops > 0 && !relu;
    const int64_t tail = p->OCB * B - OCG;
    const float tail_v = c->fault == BDNN_FAULT_PADDING_GARBAGE ? 1.0f : 0.0f;
    for (int64_t q = 0; q < p->n_ocg; ++q) {
        const int64_t nq = ocb_of(p, q), ob0 = q * p->ocb, urm = p->urm[nq];
        const float *wq = wei + ob0 * p->wblk;
        float *dst_q = dst + ob0 * d_ocb;
        dc_call_t a = {0};
        a.s_icb = ISP * B;
        a.s_pt = B;
        a.d_pt = B;
        a.w_icb = nq * B * B;
        a.d_ocb = d_ocb;
        a.bias = bias ? bias + ob0 * B : NULL;
        a.nkd = a.nkh = a.nkw = 1;
        const dc_split_t sp = dc_split(n, urm);
        for (int64_t c0 = 0; c0 < p->ICB; c0 += p->icc) {
            a.n_icb = min64(p->icc, p->ICB - c0);
            a.last_ic = c0 + a.n_icb == p->ICB ? d->ic - (p->ICB - 1) * B : B;
            a.mode = c0 ? DC_ACC : DC_BIAS;
            a.relu = relu && c0 + a.n_icb == p->ICB;
            a.relu_alpha = relu ? relu->alpha : 0.0f;
            const float *src_c = src_img + c0 * ISP * B + p0 * B;
            const float *w_c = wq + c0 * a.w_icb;
            for (int64_t i = 0, j = 0; i < sp.calls; j += dc_len(sp, i++))
                k->fn[nq][dc_len(sp, i)][DC_ONE_TAP](src_c + j * B, w_c, dst_q + j * B, &a);
        }
        for (int64_t o = 0; o < nq; ++o) {
            float *blk = dst_q + o * d_ocb;
            const int last = ob0 + o == p->OCB - 1;
            const int64_t cols = last ? B - tail : B;
            if (has_eltwise) bdnn_post_ops_eltwise(c, blk, B, n, cols);
            if (last && tail)
                for (int64_t pt = 0; pt < n; ++pt)
                    for (int64_t i = cols; i < B; ++i) blk[pt * B + i] = tail_v;
        }
    }
    return 1;
}

/* The gemm_conv_blocked_bf16 and _int8 rows: the forward direction on the row's dc_ker_t
 * (pack > 1),
 * where the epilogue is the bias, a sum without zero point and eltwise entries (no scales
 * or zero points), into an output type the kernel stores. */
static int dc_lp_init(struct bdnn_conv *c) {
    const dc_ker_t *ker = c->impl->kernel;
    const bdnn_conv_attr_t *at = &c->attr;
    if (c->dir != BDNN_DIR_FWD || ker->pack < 2 || !(ker->store_dts & (1u << c->out_dt))
            || !bdnn_post_ops_row_store(c))
        return BDNN_STATUS_UNIMPLEMENTED;
    /* an s8 source would need the +128 shift and its compensation (the plain rows') */
    if (ker->s32 && at->src_dt != BDNN_DT_U8) return BDNN_STATUS_UNIMPLEMENTED;
    if (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SUM_SCALE_DROPPED
            && c->fault != BDNN_FAULT_CRASH && c->fault != BDNN_FAULT_PADDING_GARBAGE)
        return BDNN_STATUS_UNIMPLEMENTED;
    const int st = dc_init(c, ker, &c->plan);
    if (st == BDNN_STATUS_OK && ker->exact) c->variant = &((dc_plan_t *)c->plan)->variant;
    return st;
}

static size_t dc_lp_weights_bytes(const struct bdnn_conv *c) {
    return bdnn_dc_weights_bytes(c, c->plan);
}

static void dc_lp_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    bdnn_dc_pack_weights(c, c->plan, wei, packed);
}

static void dc_lp_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    bdnn_dc_execute(c, c->plan, a);
}

static void dc_lp_fini(struct bdnn_conv *c) { bdnn_dc_fini(c->plan); }

const conv_impl_ops_t bdnn_conv_dc_lp_ops = {
    dc_lp_init, dc_lp_weights_bytes, dc_lp_pack_weights, dc_lp_execute, dc_lp_fini, NULL,
};
