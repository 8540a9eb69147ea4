/* gemm_conv_nhwc / gemm_conv_blocked's direct route in backward weights (rows
 * <family>:<isa>:direct): the weight gradient by direct convolution, no GEMM (the kernels
 * and their contract: conv_dbw.h). Preconditions (init refuses others): an ISA with dbw
 * kernels; 2D, one group, unit stride, 2 to DBW_MAX_KW taps along w; channels last with
 * whole vectors of output channels and whole calls of input channels (a call reads that
 * many channels of a point; blocks hold their padded tail); the sizes below.
 *
 * Work items are (VLEN output channels, DBW_ICB input channels), each with all of its
 * weights' sums, [DBW_ICB ic][kh][kw][VLEN oc], in the thread's scratch. Threads own
 * contiguous ranges of items, output channels outermost (a thread's items then share
 * diff_dst's lines). Images go in blocks (their tensors within DBW_IMGS_BYTES), every
 * item of the thread running over a block before the next; inside an item, per image,
 * output rows go in chunks whose diff_dst stays in L1 while every (ic call, kh) pass over
 * them runs: a pass reads the chunk's rows once and their kh-th input rows. After the
 * last block an item's sums are transposed into the user's [oc][ic][kh][kw]. Both tensors
 * are read in place, except channels last with wide points (DBW_PACK_MIN_PT_BYTES): the
 * thread then copies each image's channel blocks of that tensor (src's every block,
 * diff_dst's of its items) before its items run over the image, one image a block. */
#include "conv_dbw.h"
#include "conv_gemm_nhwc.h"

enum { DBW_ICB = 16, DBW_CHUNK_BYTES = 16 * 1024, DBW_MIN_CHUNK_POINTS = 64,
       DBW_IMGS_BYTES = 1024 * 1024, DBW_IMG_MAX_BYTES = 2 * 1024 * 1024,
       DBW_SUMS_MAX_BYTES = 3 * 512 * 1024 };
/* A channels-last tensor whose points lie this far apart or more (256 channels) is read
 * through dense copies of its channel blocks, an image at a time (dbw_pack): walked in
 * place, a page every four points, its lines fall in four of L1's sets, which the rows a
 * pass reads overflow, so that every pass took them from L2 again. */
enum { DBW_PACK_MIN_PT_BYTES = 1024 };

typedef struct bdnn_dbw_plan {
    const conv_dbw_ker_t *k;   /* the ISA's kernels: KW's is k->fn[KW], its ICS k->ics[KW] */
    int64_t ocb, icb, items;
    int64_t x_lo, x_hi;     /* output columns whose taps all lie inside the input */
    int64_t chunk;          /* output rows per chunk */
    int64_t imgs;           /* images per block (their tensors within DBW_IMGS_BYTES) */
    int pack_s, pack_d;     /* src, diff_dst read through dense copies (dbw_pack) */
    float **sums;           /* per thread: its items' sums, DBW_ICB * taps * vlen each */
} dbw_plan_t;

/* The row's f32 micro-kernel names its ISA; the dbw kernels of that ISA. */
static const conv_dbw_ker_t *dbw_ker(const conv_gemm_ukr_t *u) {
    if (u == &bdnn_gemm_ukr_avx512 || u == &bdnn_gemm_ukr_blk_avx512)
        return &bdnn_dbw_ker_avx512;
    return NULL;
}

/* Thread t's items [*it0, *it1) and the output-channel blocks [*ocb0, *ocb1) they cover. */
static void dbw_items_of(const dbw_plan_t *q, int64_t t, int64_t nthr, int64_t *it0,
                         int64_t *it1, int64_t *ocb0, int64_t *ocb1) {
    *it0 = q->items * t / nthr, *it1 = q->items * (t + 1) / nthr;
    *ocb0 = *it0 / q->icb, *ocb1 = *it1 > *it0 ? (*it1 - 1) / q->icb + 1 : *ocb0;
}

/* The copies' geometry as a blocked layout (act_t, as the in-place reads use): src in
 * blocks of DBW_ICB channels, diff_dst's ocbs blocks of the thread in blocks of vlen;
 * img is the copy's floats, 0 where the plan makes none (pack_s, pack_d). */
static act_t dbw_src_copy(const dbw_plan_t *q, const bdnn_conv_desc_t *d) {
    return (act_t){d->ic, in_points(d), DBW_ICB, q->pack_s ? q->icb * DBW_ICB * in_points(d) : 0};
}
static act_t dbw_dd_copy(const dbw_plan_t *q, const bdnn_conv_desc_t *d, int64_t ocbs) {
    const int64_t vlen = q->k->vlen;
    return (act_t){ocbs * vlen, out_points(d), vlen, q->pack_d ? ocbs * vlen * out_points(d) : 0};
}

void bdnn_nhwc_dbw_fini(dbw_plan_t *q, int nthr) {
    if (!q) return;
    for (int t = 0; t < nthr && q->sums; ++t) free(q->sums[t]);
    free(q->sums);
    free(q);
}

int bdnn_nhwc_dbw_init(struct bdnn_conv *c, dbw_plan_t **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_dbw_ker_t *k = dbw_ker(ukr_of(c));
    if (!k || c->dir != BDNN_DIR_BWD_WEIGHTS || d->g != 1 || d->kd != 1 || d->id != 1
            || d->od != 1 || d->kw < 2 || d->kw > DBW_MAX_KW || d->sh != 1 || d->sw != 1
            || d->ow < 1)
        return BDNN_STATUS_UNIMPLEMENTED;
    /* An image's src and diff_dst stay in L2 while the items run over it (every item
     * reads its channels of both again), and a thread's sums too (an image block's
     * items each load and store theirs). Past either, and strided, the taps route's
     * GEMM ran faster. */
    const int64_t img_bytes = (d->ih * d->iw * d->ic + d->oh * d->ow * d->oc)
                            * (int64_t)sizeof(float);
    const int64_t sums_bytes = d->oc * d->ic * d->kh * d->kw * (int64_t)sizeof(float) / c->nthr;
    if (img_bytes > DBW_IMG_MAX_BYTES || sums_bytes > DBW_SUMS_MAX_BYTES)
        return BDNN_STATUS_UNIMPLEMENTED;
    const int64_t vlen = k->vlen, ics = k->ics[d->kw], taps = d->kh * d->kw;
    /* channels last: a vector of output channels and a call's input channels are read
     * whole at every point (the last point's would run past the tensor) */
    if (c->attr.layout == BDNN_LAYOUT_NHWC && (d->oc % vlen || d->ic % ics))
        return BDNN_STATUS_UNIMPLEMENTED;
    dbw_plan_t *q = calloc(1, sizeof(*q));
    if (!q) return BDNN_STATUS_OUT_OF_MEMORY;
    *out = q;
    q->k = k;
    q->ocb = bdnn_div_up(d->oc, vlen), q->icb = bdnn_div_up(d->ic, DBW_ICB);
    q->items = q->ocb * q->icb;
    bdnn_interior(d->ow, d->kw, d->dw, d->sw, d->pw, d->iw, &q->x_lo, &q->x_hi);
    const int64_t row_bytes = d->ow * vlen * (int64_t)sizeof(float);
    q->chunk = DBW_CHUNK_BYTES / row_bytes;
    if (q->chunk * d->ow < DBW_MIN_CHUNK_POINTS)
        q->chunk = bdnn_div_up(DBW_MIN_CHUNK_POINTS, d->ow);   /* (also where 0 fit) */
    q->imgs = DBW_IMGS_BYTES / img_bytes < 1 ? 1 : DBW_IMGS_BYTES / img_bytes;   /* (> 0) */
    const int nhwc = c->attr.layout == BDNN_LAYOUT_NHWC;
    q->pack_s = nhwc && d->ic * (int64_t)sizeof(float) >= DBW_PACK_MIN_PT_BYTES;
    q->pack_d = nhwc && d->oc * (int64_t)sizeof(float) >= DBW_PACK_MIN_PT_BYTES;
    /* copies of one image at a time: src's every channel block, diff_dst's the thread's */
    if (q->pack_s || q->pack_d) q->imgs = 1;
    q->sums = calloc((size_t)c->nthr, sizeof(float *));
    if (!q->sums) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {   /* its items' sums, then its copies */
        int64_t it0, it1, ocb0, ocb1;
        dbw_items_of(q, t, c->nthr, &it0, &it1, &ocb0, &ocb1);
        const int64_t copies = dbw_src_copy(q, d).img + dbw_dd_copy(q, d, ocb1 - ocb0).img;
        if (conv_scratch((void **)&q->sums[t], sizeof(float)
                         * (size_t)((it1 - it0) * DBW_ICB * taps * vlen + copies)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

/* The output rows [lo, hi) whose kh-th tap row lies inside the input. */
static void dbw_rows(const bdnn_conv_desc_t *d, int64_t kh, int64_t *lo, int64_t *hi) {
    const int64_t off = kh * (d->dh + 1) - d->ph;   /* ih = oh * sh + off */
    *lo = off >= 0 ? 0 : bdnn_div_up(-off, d->sh);
    *hi = d->ih - off <= 0 ? 0 : bdnn_div_up(d->ih - off, d->sh);
    if (*hi > d->oh) *hi = d->oh;
    if (*lo > *hi) *lo = *hi;
}

/* Item (ocb, icb)'s sums into the user's weights: rows r = (ic, kh, kw) of the buffer
 * ([r][vlen]) are, per output channel, one run of the user's row from the item's first
 * input channel; each 16 of them transposed into a tile, then copied. */
static void dbw_store(const struct bdnn_conv *c, const dbw_plan_t *q, int64_t ocb, int64_t icb,
                      const float *buf, float *diff_wei) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t vlen = q->k->vlen, taps = d->kh * d->kw;
    const int64_t oc0 = ocb * vlen, ic0 = icb * DBW_ICB;
    const int64_t noc = min64(vlen, d->oc - oc0), rows = min64(DBW_ICB, d->ic - ic0) * taps;
    float tile[DBW_ICB * DBW_ICB];
    for (int64_t r0 = 0; r0 < rows; r0 += DBW_ICB) {
        const int64_t nr = min64(DBW_ICB, rows - r0);
        q->k->tr(buf + r0 * vlen, vlen, nr, noc, tile, DBW_ICB);
        float *w = diff_wei + (oc0 * d->ic + ic0) * taps + r0;
        if (nr == DBW_ICB) {   /* (a constant size: vector moves, not a string copy) */
            for (int64_t o = 0; o < noc; ++o)
                memcpy(w + o * d->ic * taps, tile + o * DBW_ICB, sizeof(float) * DBW_ICB);
        } else {
            for (int64_t o = 0; o < noc; ++o)
                memcpy(w + o * d->ic * taps, tile + o * DBW_ICB, sizeof(float) * (size_t)nr);
        }
    }
}

/* Channels [c0, c0 + n) of each of an image's points of a channels-last tensor (C
 * channels a point) into out, ld floats a point. */
static void dbw_pack(const float *img, int64_t C, int64_t points, int64_t c0, int64_t n,
                     float *out, int64_t ld) {
    const float *x = img + c0;
    if (n == 16) {   /* (a constant size: vector moves, not a call) */
        for (int64_t p = 0; p < points; ++p) memcpy(out + p * ld, x + p * C, 16 * sizeof(float));
    } else {
        for (int64_t p = 0; p < points; ++p)
            memcpy(out + p * ld, x + p * C, (size_t)n * sizeof(float));
    }
}

/* An image's copies (the plan's pack_s, pack_d): src's every channel block into ps,
 * diff_dst's blocks [ocb0, ocb1) into pd (geometries ss, sd: dbw_src_copy, dbw_dd_copy). */
static void dbw_copy_image(const struct bdnn_conv *c, const dbw_plan_t *q, const float *src,
                           const float *diff_dst, int64_t ocb0, const act_t *ss, float *ps,
                           const act_t *sd, float *pd) {
    const bdnn_conv_desc_t *d = &c->d;
    for (int64_t c0 = 0; q->pack_s && c0 < ss->C; c0 += ss->B)
        dbw_pack(src, d->ic, ss->points, c0, min64(ss->B, ss->C - c0), ps + at(ss, c0, 0),
                 ss->B);
    for (int64_t c0 = 0; q->pack_d && c0 < sd->C; c0 += sd->B)
        dbw_pack(diff_dst, d->oc, sd->points, ocb0 * sd->B + c0, sd->B, pd + at(sd, c0, 0),
                 sd->B);
}

void bdnn_nhwc_bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias);

void bdnn_nhwc_run_dbw(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                       float *diff_wei, float *diff_bias) {
    const dbw_plan_t *q = ((const nhwc_plan_t *)c->plan)->dbw;
    const bdnn_conv_desc_t *d = &c->d;
    const act_t ts = act_of(c, d->ic, in_points(d)), td = act_of(c, d->oc, out_points(d));
    const int64_t taps = d->kh * d->kw, vlen = q->k->vlen, ics = q->k->ics[d->kw];
    const int64_t blk = DBW_ICB * taps * vlen;
    const dbw_fn fn = q->k->fn[d->kw];
#pragma omp parallel num_threads(c->nthr)
    {
        for (int tid = omp_get_thread_num(); tid < c->nthr; tid += omp_get_num_threads()) {
            int64_t it0, it1, ocb0, ocb1;
            dbw_items_of(q, tid, c->nthr, &it0, &it1, &ocb0, &ocb1);
            float *sums = q->sums[tid];
            /* the copies, if any, after the sums; the kernels read them, or the tensors in
             * place, through one geometry each (rs, rd), from channel 0 or ocb0's */
            const act_t ss = dbw_src_copy(q, d), sd = dbw_dd_copy(q, d, ocb1 - ocb0);
            float *ps = sums + (it1 - it0) * blk, *pd = ps + ss.img;
            const act_t rs = q->pack_s ? ss : ts, rd = q->pack_d ? sd : td;
            const int64_t dd_ch0 = q->pack_d ? ocb0 * vlen : 0;
            dbw_call_t k = {.dd_row = d->ow * rd.B, .dd_pt = rd.B,
                            .s_row = d->sh * d->iw * rs.B, .s_pt = rs.B,
                            .ow = d->ow, .iw_n = d->iw, .sw = d->sw, .pw = d->pw,
                            .dwk = d->dw + 1, .x_lo = q->x_lo, .x_hi = q->x_hi,
                            .acc_ic = taps * vlen};
            /* image blocks (one, empty, at mb 0: the weights are then zeros) */
            for (int64_t n0 = 0; n0 < (d->mb > 0 ? d->mb : 1); n0 += q->imgs)
            for (int64_t it = it0; it < it1; ++it) {                   /* items */
                const int64_t ocb = it / q->icb, icb = it % q->icb;
                const int64_t ic_end = min64(d->ic, (icb + 1) * DBW_ICB);
                float *acc = sums + (it - it0) * blk;
                if (n0 == 0) memset(acc, 0, sizeof(float) * (size_t)blk);
                if (it == it0 && n0 < d->mb && (q->pack_s || q->pack_d))   /* (imgs 1) */
                    dbw_copy_image(c, q, src + n0 * ts.img, diff_dst + n0 * td.img, ocb0, &ss,
                                   ps, &sd, pd);
                for (int64_t n = n0; n < min64(d->mb, n0 + q->imgs); ++n) {
                    const float *dd = q->pack_d ? pd : diff_dst + n * td.img;
                    const float *s = q->pack_s ? ps : src + n * ts.img;
                    for (int64_t r0 = 0; r0 < d->oh; r0 += q->chunk) { /* row chunks */
                        const int64_t r1 = min64(d->oh, r0 + q->chunk);
                        for (int64_t i0 = icb * DBW_ICB; i0 < ic_end; i0 += ics)
                            for (int64_t kh = 0; kh < d->kh; ++kh) {   /* passes */
                                int64_t lo, hi;
                                dbw_rows(d, kh, &lo, &hi);
                                lo = lo > r0 ? lo : r0, hi = min64(hi, r1);
                                if (lo >= hi) continue;
                                const int64_t ih = lo * d->sh + kh * (d->dh + 1) - d->ph;
                                k.rows = hi - lo;
                                k.dd = dd + at(&rd, ocb * vlen - dd_ch0, lo * d->ow);
                                k.s = s + at(&rs, i0, ih * d->iw);
                                k.acc = acc + ((i0 - icb * DBW_ICB) * taps + kh * d->kw) * vlen;
                                fn(&k);
                            }
                    }
                }
                /* the last image block: the item's sums are whole (and in L1) */
                if (n0 + q->imgs >= d->mb) dbw_store(c, q, ocb, icb, acc, diff_wei);
            }
        }
        if (diff_bias) bdnn_nhwc_bias_sums(c, diff_dst, diff_bias);
    }
}
