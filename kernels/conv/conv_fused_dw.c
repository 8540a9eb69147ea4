/* fused_dw: a 2D forward 1x1 convolution followed by its dw post-op (a depthwise
 * convolution of the 1x1 output; bdnn.h, BDNN_POST_DW), in one pass, on the plain layouts
 * or on channel blocks (nChw16c, nChw8c; not channels last, where a block of channels is
 * a strided slice of dst).
 *
 * Each depthwise output plane depends only on the same channel's 1x1 output plane. The
 * work is split by (image, block of output channels): a thread computes the 1x1 output
 * planes of its block (a row block of the 1x1 GEMM) into its own buffer (sized by
 * FDW_*BUFFER_BYTES), with the pre-dw post-ops and the rounding to the 1x1 output type a
 * stored output would get; then it runs the depthwise step on those planes straight into
 * dst. The 1x1 output never goes to memory beyond that buffer, and one parallel region
 * covers both steps. On channel blocks a block of channels is whole layout blocks, so
 * its planes are one contiguous run of the buffer, of the step's output and of dst; and
 * where an image's 1x1 output would not stay in L2 and every thread has an image of its
 * own, channel blocks go row by row instead (fdw_execute_rows).
 *
 * Both steps are existing implementations, created per thread with one thread each
 * (bdnn_conv_create_single: the first row of the table at this row's ISA or under that
 * accepts the step in this layout, so bf16 and int8 take their low-precision paths on
 * the plain layouts); a block's 1x1 weights are a contiguous slice of the user's [oc][ic]
 * rows and are packed per block, with the depthwise weights and bias, into the one
 * packed buffer. The primitive's name names the steps that run:
 * fused_dw:avx512(gemm_conv:avx512+dw_conv_fwd:avx512), or on nChw16c
 * fused_dw:avx512(gemm_conv_blocked:avx512+dw_conv_blocked:avx512). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_dblk.h"
#include "conv_impl.h"
#include "dt.h"

/* Bytes of a thread's 1x1 output buffer, by layout.
 * Plain: half of a core's L2 (1 MiB here), leaving room for the source panel and the
 * depthwise step's padded plane (bands of rows instead of whole planes would compute the
 * halo rows twice and gather the source rows per band).
 * Channel blocks: a share of L3, so that at mb1 each thread takes one block of oc/nthr
 * channels. The 1x1 step's direct kernel multiplies each source value by up to 4 layout
 * blocks of weights in registers; L2-sized blocks (one or two layout blocks on large
 * planes) would leave it one or two. */
enum { FDW_BUFFER_BYTES = 512 * 1024, FDW_BLOCKED_BUFFER_BYTES = 4 * 1024 * 1024 };

/* Channel blocks row by row (fdw_execute_rows) where an image's 1x1 output would not
 * stay in a core's L2 (1 MiB here) and there is an image for every thread: the rows keep
 * the 1x1 output in cache between the steps. Smaller planes take channel blocks (each
 * 1x1 row of a few points would stream all the weights once more), and so do fewer images
 * than threads (bands of rows per thread would compute the rows they share twice). */
enum { FDW_ROWS_MIN_BYTES = 1024 * 1024 };
/* The rows route computes the 1x1 rows in aligned groups of at least this many points
 * (two 56-wide rows), so that the direct kernel's calls read each weight group for as
 * many points as the separate convolution's runs do. */
enum { ROW_CALL_POINTS = 112 };

typedef struct {
    int by_rows;                 /* row by row, an image per thread (fdw_execute_rows) */
    int64_t ring_rows;           /* 1x1 rows a thread's ring holds */
    int64_t group;               /* 1x1 rows computed per call (aligned groups) */
    float *bias1;                /* by rows: the 1x1 bias padded to whole blocks */
    int64_t bs[2];               /* channels per block: full blocks, the last block */
    int64_t nblk;
    bdnn_conv_t **step1, **step2; /* [thread][0 full, 1 last]: 1x1 and depthwise steps */
    void **buf;                  /* per thread: bs[0] 1x1 output planes */
    size_t *wei_off, *dw_off;    /* per block: its packed 1x1 and depthwise weights */
    size_t bias_off, total;      /* the depthwise bias (copied as given), packed bytes */
    /* binary and prelu entries: each step's entry j is the primitive's entry from[j] */
    int from1[BDNN_MAX_POST_OPS], from2[BDNN_MAX_POST_OPS];
    char name[192];
} fdw_plan_t;

static void fdw_fini(struct bdnn_conv *c) {
    fdw_plan_t *p = c->plan;
    if (!p) return;
    for (int t = 0; t < 2 * c->nthr; ++t) {
        if (p->step1) bdnn_conv_destroy(p->step1[t]);
        if (p->step2) bdnn_conv_destroy(p->step2[t]);
    }
    for (int t = 0; p->buf && t < c->nthr; ++t) free(p->buf[t]);
    free(p->step1);
    free(p->step2);
    free(p->buf);
    free(p->wei_off);
    free(p->dw_off);
    free(p->bias1);
    free(p);
    c->plan = NULL;
    c->name = NULL;
}

static int64_t blk_of(const fdw_plan_t *p, int64_t b) { return b == p->nblk - 1 ? 1 : 0; }

/* The two steps' descriptors and attributes for a block of ch channels; from1 and from2
 * (or NULL) get the primitive's index of each step's entries. */
static void step_problems_from(const struct bdnn_conv *c, int64_t ch, bdnn_conv_desc_t *d1,
                               bdnn_conv_attr_t *a1, bdnn_conv_desc_t *d2,
                               bdnn_conv_attr_t *a2, int *from1, int *from2) {
    const bdnn_conv_desc_t *d = &c->d;
    const bdnn_conv_attr_t *a = &c->attr;
    const int idw = bdnn_dw_post_op(a);
    const bdnn_post_op_t *dw = &a->post_ops[idw];
    *d1 = *d;
    d1->mb = 1;
    d1->oc = ch;
    *d2 = (bdnn_conv_desc_t){.g = ch, .mb = 1, .ic = ch, .oc = ch, .id = 1, .ih = d->oh,
                             .iw = d->ow, .od = 1, .oh = (d->oh + 2 * dw->dw_p - dw->dw_k) / dw->dw_s + 1,
                             .ow = (d->ow + 2 * dw->dw_p - dw->dw_k) / dw->dw_s + 1,
                             .kd = 1, .kh = dw->dw_k, .kw = dw->dw_k, .sd = 1, .sh = dw->dw_s,
                             .sw = dw->dw_s, .pd = 0, .ph = dw->dw_p, .pw = dw->dw_p};
    *a1 = *a;
    a1->wei_scales = c->wei_scales;   /* per block: overwritten with the block's own */
    a1->wei_scales_per_oc = 1;
    *a2 = (bdnn_conv_attr_t){.src_dt = a->dst_dt, .wei_dt = dw->dw_wei_dt,
                             .dst_dt = dw->dw_dst_dt, .bia_dt = dw->dw_bia_dt,
                             .scales = BDNN_SCALES_NONE, .layout = a->layout};
    if (a->scales == BDNN_SCALES_ARGS) {
        /* oneDNN 3.x: the depthwise step reads the 1x1 output, so its src scale is the
         * 1x1 step's dst scale; its weights and dst take the dw post-op's own */
        a2->scales = BDNN_SCALES_ARGS;
        a2->src_scale = a->dst_scale;
        a2->dst_scale = a->dw_dst_scale;
        a2->wei_scales = c->dw_wei_scales;   /* per block: overwritten with the block's own */
        a2->wei_scales_per_oc = 1;
    }
    /* Entries before the dw entry go to the 1x1 step, those after it to the depthwise
     * one (the deliberate defect swaps the two lists). */
    const int swap = c->fault == BDNN_FAULT_DW_PRE_POST_SWAPPED;
    bdnn_conv_attr_t *pre = swap ? a2 : a1, *post = swap ? a1 : a2;
    int *pre_from = swap ? from2 : from1, *post_from = swap ? from1 : from2;
    pre->n_post_ops = 0;
    post->n_post_ops = 0;
    for (int i = 0; i < a->n_post_ops; ++i)
        if (i != idw) {
            bdnn_conv_attr_t *to = i < idw ? pre : post;
            int *from = i < idw ? pre_from : post_from;
            if (from) from[to->n_post_ops] = i;
            to->post_ops[to->n_post_ops++] = a->post_ops[i];
        }
}

static void step_problems(const struct bdnn_conv *c, int64_t ch, bdnn_conv_desc_t *d1,
                          bdnn_conv_attr_t *a1, bdnn_conv_desc_t *d2, bdnn_conv_attr_t *a2) {
    step_problems_from(c, ch, d1, a1, d2, a2, NULL, NULL);
}

/* Binary and prelu entries read their input at each output's position in the tensor they
 * apply to (the 1x1 output before the dw entry, dst after it): a step computing channels
 * [ch0, ch0 + its oc) of image n reads it from that point on, at the same strides. */
static void point_step_inputs(const struct bdnn_conv *c, bdnn_conv_t *step, const int *from,
                              int64_t n, int64_t ch0) {
    for (int j = 0; j < step->n_post_ops; ++j) {
        const bdnn_post_op_t *op = &step->post_ops[j];
        if (op->kind != BDNN_POST_BINARY && op->kind != BDNN_POST_PRELU) continue;
        const int64_t at = n * op->src1_strides[0] + ch0 * op->src1_strides[1];
        step->post_src[j] = (const char *)c->post_src[from[j]]
                          + (size_t)at * bdnn_dt_size(op->src1_dt);
    }
}

/* Channels per layout block: 1 on the plain layouts (channels last is not taken: a block
 * of channels would be a strided slice of dst, which the depthwise step does not write). */
static int64_t lay_block(const struct bdnn_conv *c) {
    const int64_t b = bdnn_layout_block(c->attr.layout);
    return b ? b : 1;
}

/* The GEMM tile's rows of the step the 1x1 convolution runs on (1 if not a GEMM): channel
 * blocks of whole tiles waste no rows of the micro-kernel. */
static int64_t tile_rows(const struct bdnn_conv *c) {
    bdnn_conv_desc_t d1, d2;
    bdnn_conv_attr_t a1, a2;
    step_problems(c, c->d.oc, &d1, &a1, &d2, &a2);
    bdnn_conv_t *probe = NULL;
    int64_t mr = 1;
    void *book = conv_book_suspend();   /* a probe: destroyed below, so none of its slots */
    if (bdnn_conv_create_single(&d1, c->impl->isa, c->with_bias, &a1, BDNN_FAULT_NONE, &probe)
            == BDNN_STATUS_OK && probe->impl->flags & CONV_ROW_GEMM)
        mr = ((const conv_gemm_ukr_t *)probe->impl->kernel)->mr;
    bdnn_conv_destroy(probe);
    conv_book_resume(book);
    return mr;
}

/* Channels per block: as many whole tiles as fit the buffer (all channels if they fit;
 * one tile at least, even past the buffer: a partial tile wastes micro-kernel rows; on
 * channel blocks a tile is a layout block, so that a block of channels is a contiguous
 * run of the buffer and of dst),
 * then at least one block per thread when the images are fewer than the threads, the
 * blocks equal but for the last. */
static int64_t block_size(const struct bdnn_conv *c, int64_t plane_bytes) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t mr = lay_block(c) > 1 ? lay_block(c) : tile_rows(c);
    const int64_t buffer = lay_block(c) > 1 ? FDW_BLOCKED_BUFFER_BYTES : FDW_BUFFER_BYTES;
    int64_t bs = buffer / (plane_bytes > 0 ? plane_bytes : 1);
    bs = bs >= d->oc ? d->oc : bs >= mr ? bs / mr * mr : mr < d->oc ? mr : d->oc;
    int64_t nblk = bdnn_div_up(d->oc, bs);
    const int64_t want = bdnn_div_up(c->nthr, d->mb > 0 ? d->mb : 1);
    if (nblk < want) nblk = want < d->oc ? want : d->oc;
    bs = bdnn_div_up(d->oc, nblk);
    if (bs > mr && bs % mr && bdnn_div_up(d->oc, bdnn_div_up(bs, mr) * mr) >= nblk)
        bs = bdnn_div_up(bs, mr) * mr;   /* whole tiles, when that keeps the blocks */
    if (lay_block(c) > 1 && bs < d->oc)   /* channel blocks: whole layout blocks, always */
        bs = bdnn_div_up(bs, mr) * mr;
    /* never past the channels: a single block rounded up to whole tiles would create a
     * step wider than the convolution (reading past its per-channel scales) */
    return bs < d->oc ? bs : d->oc;
}

/* Whether the pair runs row by row: on channel blocks, a 1x1 step the blocked
 * direct kernel computes point by point (unit stride, no padding: bdnn_dc_flat_points)
 * and a dw_conv_blocked depthwise step (probed: both created for all channels). */
static int rows_serve(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t out_bytes = bdnn_div_up(d->oc, lay_block(c)) * lay_block(c) * d->oh * d->ow
                            * (int64_t)bdnn_dt_size(c->attr.dst_dt);
    /* (binary and prelu entries: the row kernels do not know the rows' positions) */
    if (lay_block(c) == 1 || d->sh != 1 || d->sw != 1 || d->ph != 0 || d->pw != 0
            || d->oh != d->ih || d->ow != d->iw || out_bytes < FDW_ROWS_MIN_BYTES
            || d->mb < c->nthr || bdnn_has_src1_post_op(&c->attr))
        return 0;
    bdnn_conv_desc_t d1, d2;
    bdnn_conv_attr_t a1, a2;
    step_problems(c, d->oc, &d1, &a1, &d2, &a2);
    const int inner_fault = c->fault == BDNN_FAULT_DW_PRE_POST_SWAPPED ? BDNN_FAULT_NONE
                                                                       : c->fault;
    bdnn_conv_t *s1 = NULL, *s2 = NULL;
    void *book = conv_book_suspend();   /* probes: destroyed below, so none of their slots */
    int ok = bdnn_conv_create_single(&d1, c->impl->isa, c->with_bias, &a1, inner_fault, &s1)
                 == BDNN_STATUS_OK
          && bdnn_conv_create_single(&d2, c->impl->isa, c->with_bias, &a2, inner_fault, &s2)
                 == BDNN_STATUS_OK
          && bdnn_dc_is_flat(bdnn_blocked_dc_plan(s1)) && s2->impl->flags & CONV_ROW_DW_LANES;
    bdnn_conv_destroy(s1);
    bdnn_conv_destroy(s2);
    conv_book_resume(book);
    return ok;
}

static int fdw_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const bdnn_conv_attr_t *a = &c->attr;
    const int idw = bdnn_dw_post_op(a);
    if (c->dir != BDNN_DIR_FWD || idw < 0 || c->attr.layout == BDNN_LAYOUT_NHWC)
        return BDNN_STATUS_UNIMPLEMENTED;
    /* The spec's support matrix: a 2D 1x1 convolution, eltwise entries beside one dw
     * (and, as oneDNN runs them, binary and prelu entries; never a sum). */
    if (d->g != 1 || d->kd != 1 || d->kh != 1 || d->kw != 1 || d->id != 1 || d->od != 1)
        return BDNN_STATUS_UNIMPLEMENTED;
    for (int i = 0; i < a->n_post_ops; ++i)
        if (i != idw && a->post_ops[i].kind != BDNN_POST_ELTWISE
                && a->post_ops[i].kind != BDNN_POST_BINARY
                && a->post_ops[i].kind != BDNN_POST_PRELU)
            return BDNN_STATUS_UNIMPLEMENTED;
    const bdnn_post_op_t *dw = &a->post_ops[idw];
    if (dw->dw_k <= 0 || dw->dw_s <= 0 || dw->dw_p < 0 || dw->dw_p >= dw->dw_k
            || d->oh + 2 * dw->dw_p < dw->dw_k || d->ow + 2 * dw->dw_p < dw->dw_k)
        return BDNN_STATUS_INVALID;
    const size_t mid_sz = bdnn_dt_size(a->dst_dt);
    const size_t dww_sz = bdnn_dt_size(dw->dw_wei_dt), dwb_sz = bdnn_dt_size(dw->dw_bia_dt);
    if (!mid_sz || !dww_sz || !bdnn_dt_size(dw->dw_dst_dt) || (c->with_bias && !dwb_sz))
        return BDNN_STATUS_INVALID;

    const int64_t plane = d->oh * d->ow * (int64_t)mid_sz, B = lay_block(c);
    fdw_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->by_rows = rows_serve(c);
    p->bs[0] = p->by_rows ? d->oc : block_size(c, plane);
    p->nblk = bdnn_div_up(d->oc, p->bs[0]);
    p->bs[1] = d->oc - (p->nblk - 1) * p->bs[0];
    p->step1 = calloc(2 * (size_t)c->nthr, sizeof(bdnn_conv_t *));
    p->step2 = calloc(2 * (size_t)c->nthr, sizeof(bdnn_conv_t *));
    p->buf = calloc((size_t)c->nthr, sizeof(void *));
    p->wei_off = calloc((size_t)p->nblk, sizeof(size_t));
    p->dw_off = calloc((size_t)p->nblk, sizeof(size_t));
    if (!p->step1 || !p->step2 || !p->buf || !p->wei_off || !p->dw_off)
        return BDNN_STATUS_OUT_OF_MEMORY;
    const int inner_fault = c->fault == BDNN_FAULT_DW_PRE_POST_SWAPPED ? BDNN_FAULT_NONE
                                                                       : c->fault;
    p->group = bdnn_div_up(ROW_CALL_POINTS, d->ow > 0 ? d->ow : 1);
    p->ring_rows = bdnn_div_up(dw->dw_k + p->group - 1, p->group) * p->group;
    for (int t = 0; t < c->nthr; ++t) {
        for (int k = 0; k < 2; ++k) {
            bdnn_conv_desc_t d1, d2;
            bdnn_conv_attr_t a1, a2;
            step_problems_from(c, p->bs[k], &d1, &a1, &d2, &a2, p->from1, p->from2);
            int st = bdnn_conv_create_single(&d1, c->impl->isa, c->with_bias, &a1, inner_fault,
                                             &p->step1[2 * t + k]);
            if (st == BDNN_STATUS_OK)
                st = bdnn_conv_create_single(&d2, c->impl->isa, c->with_bias, &a2,
                                             inner_fault, &p->step2[2 * t + k]);
            if (st != BDNN_STATUS_OK) return st;
        }
        /* by rows: a ring of 1x1 output rows, every channel (fdw_execute_rows) */
        const size_t ring = (size_t)(p->ring_rows * bdnn_div_up(d->oc, B) * B * d->ow) * mid_sz;
        if (conv_scratch((void **)&p->buf[t],
                         p->by_rows ? ring : (size_t)(bdnn_div_up(p->bs[0], B) * B * plane)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    size_t off = 0;
    for (int64_t b = 0; b < p->nblk; ++b) {
        const int k = (int)blk_of(p, b);
        p->wei_off[b] = off;
        off += (bdnn_conv_weights_bytes(p->step1[k]) + 63) / 64 * 64;
        p->dw_off[b] = off;
        off += (bdnn_conv_weights_bytes(p->step2[k]) + 63) / 64 * 64;
    }
    p->bias_off = off;
    p->total = off + (c->with_bias ? (size_t)d->oc * dwb_sz : 0);
    if (p->by_rows) {
        if (conv_scratch((void **)&p->bias1, sizeof(float) * (size_t)(bdnn_div_up(d->oc, B) * B)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    snprintf(p->name, sizeof(p->name), "%s(%s+%s)", c->impl->name,
             bdnn_conv_name(p->step1[0]), bdnn_conv_name(p->step2[0]));
    c->name = p->name;
    return BDNN_STATUS_OK;
}

static size_t fdw_weights_bytes(const struct bdnn_conv *c) {
    return ((const fdw_plan_t *)c->plan)->total;
}

static void fdw_pack_weights_dw(const struct bdnn_conv *c, const void *wei, const void *dw_wei,
                                const void *dw_bias, void *packed) {
    const fdw_plan_t *p = c->plan;
    const bdnn_post_op_t *dw = &c->attr.post_ops[bdnn_dw_post_op(&c->attr)];
    const int64_t ic = c->d.ic, taps = (int64_t)dw->dw_k * dw->dw_k;
    const size_t wei_sz = bdnn_dt_size(c->attr.wei_dt), dww_sz = bdnn_dt_size(dw->dw_wei_dt);
    char *out = packed;
    for (int64_t b = 0; b < p->nblk; ++b) {
        const int k = (int)blk_of(p, b);
        const int64_t ch0 = b * p->bs[0];
        p->step1[k]->impl->ops->pack_weights(
            p->step1[k], (const char *)wei + (size_t)(ch0 * ic) * wei_sz, out + p->wei_off[b]);
        p->step2[k]->impl->ops->pack_weights(
            p->step2[k], (const char *)dw_wei + (size_t)(ch0 * taps) * dww_sz,
            out + p->dw_off[b]);
    }
    if (c->with_bias)
        memcpy(out + p->bias_off, dw_bias, p->total - p->bias_off);
}

static void fdw_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    (void)c, (void)wei, (void)packed;   /* never called: bdnn_conv_pack_weights refuses */
}

/* Row by row (f32, channel blocks; rows_serve): each thread takes whole images and walks
 * down an image's depthwise output rows, computing each 1x1 output row, every channel, as
 * the depthwise rows come to need it, into a ring of R rows: row r in slot r % R, computed
 * in aligned groups of G rows (R a multiple of G, at least dw_k + G - 1: the rows live at
 * once are the dw_k a depthwise output row reads and the rest of the last one's group, so
 * a new row only overwrites one no longer read). The 1x1 rows stay in L1/L2 between the
 * two steps, the 1x1 step runs on its widest register tiles (every output block), and no
 * 1x1 row is computed twice. */
static void fdw_execute_rows(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const bdnn_conv_desc_t *d = &c->d;
    const fdw_plan_t *p = c->plan;
    const bdnn_post_op_t *dw = &c->attr.post_ops[bdnn_dw_post_op(&c->attr)];
    const int64_t B = lay_block(c), OCp = bdnn_div_up(d->oc, B) * B, OW = d->ow;
    const int64_t K = dw->dw_k, S = dw->dw_s, P = dw->dw_p, R = p->ring_rows, G = p->group;
    const bdnn_conv_desc_t *d2 = &p->step2[0]->d;
    const int64_t OH2 = d2->oh, OW2 = d2->ow;
    const int64_t in_image = bdnn_div_up(d->ic, B) * B * d->ih * d->iw;
    const int64_t out_image = OCp * OH2 * OW2;
    const char *packed = a->wei;
    const float *wei1 = (const float *)(packed + p->wei_off[0]);
    const float *wei2 = (const float *)(packed + p->dw_off[0]);
    const float *bias2 = c->with_bias ? (const float *)(packed + p->bias_off) : NULL;
    if (a->bias) bdnn_dc_pad_bias(bdnn_blocked_dc_plan(p->step1[0]), a->bias, p->bias1);
    const float *bias1 = a->bias ? p->bias1 : NULL;
#pragma omp parallel num_threads(c->nthr)
    {
        const int t = omp_get_thread_num();
        const bdnn_conv_t *s1 = p->step1[2 * t], *s2 = p->step2[2 * t];
        const void *dc = bdnn_blocked_dc_plan(s1);
        float *ring = p->buf[t];
        const float *row0[K > 0 ? K : 1];
        int64_t row_tap[K > 0 ? K : 1];
#pragma omp for schedule(static)
        for (int64_t n = 0; n < d->mb; ++n) {
            const float *src_img = (const float *)a->src + n * in_image;
            float *dst_img = (float *)a->dst + n * out_image;
            int64_t next = 0;   /* the next 1x1 row to compute (a multiple of G) */
            for (int64_t oh2 = 0; oh2 < OH2; ++oh2) {
                const int64_t lo = oh2 * S - P;   /* the rows [lo, lo + K) it reads */
                const int64_t clo = lo > 0 ? lo : 0, chi = lo + K < d->oh ? lo + K : d->oh;
                if (next < clo) next = clo / G * G;   /* rows no output reads (S > K) */
                for (; next < chi; next += G)   /* slots next % R .. + G - 1: no wrap */
                    bdnn_dc_flat_points(s1, dc, src_img, wei1, bias1,
                                        ring + (next % R) * OW * B, R * OW * B, next * OW,
                                        (next + G < d->oh ? G : d->oh - next) * OW);
                for (int64_t r = clo; r < chi; ++r) {
                    row0[r - clo] = ring + (r % R) * OW * B;
                    row_tap[r - clo] = (r - lo) * K;
                }
                bdnn_dwl_row(s2, chi > clo ? chi - clo : 0, row0, row_tap, R * OW * B, wei2,
                             bias2, dst_img + oh2 * OW2 * B, OH2 * OW2 * B);
            }
        }
    }
}

static void fdw_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    if (((const fdw_plan_t *)c->plan)->by_rows) {
        fdw_execute_rows(c, a);
        return;
    }
    const bdnn_conv_desc_t *d = &c->d;
    const fdw_plan_t *p = c->plan;
    const bdnn_post_op_t *dw = &c->attr.post_ops[bdnn_dw_post_op(&c->attr)];
    const size_t src_sz = bdnn_dt_size(c->attr.src_dt), bia_sz = bdnn_dt_size(c->attr.bia_dt);
    const size_t dst_sz = bdnn_dt_size(dw->dw_dst_dt), dwb_sz = bdnn_dt_size(dw->dw_bia_dt);
    /* images' channels padded to the layout's block (B = 1: plain); a block of channels
     * starts at a block boundary, so its planes are contiguous in either layout */
    const int64_t B = lay_block(c);
    const int64_t in_image = bdnn_div_up(d->ic, B) * B * d->ih * d->iw;
    const int64_t out_image_ch = bdnn_div_up(d->oc, B) * B;
    const bdnn_conv_desc_t *d2 = &p->step2[0]->d;
    const int64_t out_plane = d2->oh * d2->ow, items = d->mb * p->nblk;
    const char *packed = a->wei;
#pragma omp parallel num_threads(c->nthr)
    {
        const int t = omp_get_thread_num();
#pragma omp for schedule(static)
        for (int64_t item = 0; item < items; ++item) {
            const int64_t n = item / p->nblk, b = item % p->nblk, ch0 = b * p->bs[0];
            const int k = (int)blk_of(p, b);
            bdnn_conv_t *s1 = p->step1[2 * t + k], *s2 = p->step2[2 * t + k];
            point_step_inputs(c, s1, p->from1, n, ch0);
            point_step_inputs(c, s2, p->from2, n, ch0);
            if (s1->wei_scales)   /* this block's channels' scales */
                memcpy(s1->wei_scales, c->wei_scales + ch0, sizeof(float) * (size_t)p->bs[k]);
            if (s2->wei_scales && c->dw_wei_scales)
                memcpy(s2->wei_scales, c->dw_wei_scales + ch0,
                       sizeof(float) * (size_t)p->bs[k]);
            const bdnn_conv_args_t a1 = {
                .src = (const char *)a->src + (size_t)(n * in_image) * src_sz,
                .wei = packed + p->wei_off[b],
                .bias = a->bias ? (const char *)a->bias + (size_t)ch0 * bia_sz : NULL,
                .dst = p->buf[t]};
            s1->impl->ops->execute(s1, &a1);
            const bdnn_conv_args_t a2 = {
                .src = p->buf[t], .wei = packed + p->dw_off[b],
                .bias = c->with_bias ? packed + p->bias_off + (size_t)ch0 * dwb_sz : NULL,
                .dst = (char *)a->dst + (size_t)((n * out_image_ch + ch0) * out_plane) * dst_sz};
            s2->impl->ops->execute(s2, &a2);
        }
    }
}

const conv_impl_ops_t bdnn_conv_fused_dw_ops = {
    fdw_init, fdw_weights_bytes, fdw_pack_weights, fdw_execute, fdw_fini, fdw_pack_weights_dw,
};
