/* dw_conv_nhwc and dw_conv_blocked: forward depthwise convolution (g = ic = oc) on the
 * layouts that put channels in a vector's lanes: channels last ([mb][d][h][w][C]) and
 * channel blocks ([mb][C/B][d][h][w][B], B = 8 or 16, padded). Both are one code, as in
 * conv_gemm_nhwc.c: channels last is one block as wide as all the channels (B = C), and
 * channel c of pixel p of an image sits at (c / B) * pixels * B + p * B + c % B.
 *
 * A channel vector is VLEN consecutive channels inside one block (the row's VLEN divides
 * B; the AVX-512 rows do not take nChw8c), so a tap is one multiply-add of VLEN channels'
 * weights with the input pixel's vector, the output row computed straight into dst by
 * the ISA's row kernel (conv_dwl_row_fn, conv_dw_lanes.inc). Unlike dw_conv_fwd on the
 * plain layout, nothing is copied: the padding is handled by dropping tap rows outside
 * the input here and by checked edge pixels in the row kernel.
 *
 * Work items, across threads in contiguous ranges: (image, chunk of channels, output
 * depth, output row), so a thread walks down the rows of one chunk and its input rows
 * stay in cache from one output row to the next. A chunk is one block (blocked) or a
 * run of channel vectors (channels last: all of them, unless the rows are too few to keep
 * the threads busy). Bias and the sum post-op are applied in the row kernel's store,
 * the eltwise entries to the chunk's finished row, in cache. The padded tail of the last
 * block is written as zeros; that of the input is never read.
 *
 * Weights are packed per channel vector: [C/VLEN][tap][VLEN], f32, zero past the
 * channels. f32 without scales or zero points; and bf16 (the _bf16 rows), whose inputs
 * the row kernel widens as it reads them, with the chain the f32 path takes (a sum
 * first, then eltwise entries), into an f32 or bf16 dst. The row kernel stores a bf16
 * dst itself when the chain has no eltwise entry; otherwise the chunk's row is computed
 * in f32 in the thread's row buffer (the prior dst there first when the chain sums), the
 * eltwise entries run on it, and one conversion writes it into dst. Of the test defects,
 * the sum-scale, padding-garbage, skipped-last-tap and skipped-input-channel ones (and
 * slow-gemm, which is gemm_conv's: a no-op here, as on dw_conv_fwd). */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"
#include "dt.h"

typedef struct {
    int64_t B, vlen, nvec;        /* channels per block; channel vectors of vlen */
    int64_t vec_per_chunk, nchunk;
    int64_t taps;
    int64_t esz;                  /* bytes per src element (4 f32, 2 bf16) */
    dwl_geom_t geom;
    float *rows;                  /* dst not f32: per thread, a row [ow][B] in f32 */
    int64_t row_floats;
    float *bias;                  /* a bias not in f32: in f32, C values */
    int64_t *kw_range;            /* geom's kw_lo and kw_hi, KW each */
} dwl_plan_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void dwl_fini(struct bdnn_conv *c) {
    dwl_plan_t *p = c->plan;
    if (!p) return;
    free(p->rows);
    free(p->bias);
    free(p->kw_range);
    free(p);
    c->plan = NULL;
}

/* bf16 operands: what the row kernel and the f32 row buffer serve. bf16 src and weights,
 * an f32 or bf16 dst, and a chain the row store takes. */
static int bf16_serves(const struct bdnn_conv *c) {
    const bdnn_conv_attr_t *at = &c->attr;
    return at->src_dt == BDNN_DT_BF16 && at->wei_dt == BDNN_DT_BF16
        && (c->out_dt == BDNN_DT_BF16 || c->out_dt == BDNN_DT_F32) && bdnn_post_ops_row_store(c);
}

static int dwl_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_dwl_ker_t *k = c->impl->kernel;
    if (c->dir != BDNN_DIR_FWD || c->operands != c->impl->operands
            || (c->operands == OPERANDS_F32 ? c->lp
                                            : c->operands != OPERANDS_BF16 || !bf16_serves(c)))
        return BDNN_STATUS_UNIMPLEMENTED;
    if (d->ic != d->g || d->oc != d->g) return BDNN_STATUS_UNIMPLEMENTED;
    switch (c->fault) {   /* (SLOW_GEMM is gemm_conv's alone: here it changes nothing) */
    case BDNN_FAULT_NONE: case BDNN_FAULT_SUM_SCALE_DROPPED: case BDNN_FAULT_CRASH:
    case BDNN_FAULT_PADDING_GARBAGE: case BDNN_FAULT_SKIP_LAST_IC: case BDNN_FAULT_SKIP_LAST_TAP:
    case BDNN_FAULT_SLOW_GEMM:
        break;
    default: return BDNN_STATUS_UNIMPLEMENTED;
    }
    const int layout = c->attr.layout;
    const int64_t C = d->g;
    const int64_t B = bdnn_layout_block(layout) ? bdnn_layout_block(layout) : (C > 0 ? C : 1);
    if (layout != BDNN_LAYOUT_NHWC && B % k->vlen) return BDNN_STATUS_UNIMPLEMENTED;
    dwl_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->B = B;
    p->vlen = k->vlen;
    p->esz = (int64_t)bdnn_dt_size(c->attr.src_dt);
    /* blocked: every vector of the padded blocks (those wholly in the tail get zeros) */
    p->nvec = layout == BDNN_LAYOUT_NHWC ? bdnn_div_up(C, k->vlen)
                                          : bdnn_div_up(C, B) * (B / k->vlen);
    p->taps = d->kd * d->kh * d->kw;
    if (layout == BDNN_LAYOUT_NHWC) {
        /* all channels per item, unless that leaves fewer than 4 items per thread */
        const int64_t rows = d->mb * d->od * d->oh, want = 4 * (int64_t)c->nthr;
        const int64_t split = rows >= want || rows == 0 ? 1 : min64(p->nvec, bdnn_div_up(want, rows));
        p->vec_per_chunk = bdnn_div_up(p->nvec, split > 0 ? split : 1);
    } else {
        p->vec_per_chunk = B / k->vlen;
    }
    if (p->vec_per_chunk < 1) p->vec_per_chunk = 1;
    p->nchunk = bdnn_div_up(p->nvec, p->vec_per_chunk);
    dwl_geom_t *g = &p->geom;
    *g = (dwl_geom_t){.ow = d->ow, .iw = d->iw, .kw = d->kw, .sw = d->sw, .dw = d->dw + 1,
                      .pw = d->pw, .in_ps = B, .out_ps = B, .ih = d->ih, .sh = d->sh,
                      .ph = d->ph, .dh = d->dh + 1, .in_ys = d->iw * B};
    /* tap kw reaches pixel ow when ow*SW - PW + kw*DW is inside [0, IW) */
    p->kw_range = malloc(sizeof(int64_t) * (size_t)(2 * (d->kw > 0 ? d->kw : 1)));
    if (!p->kw_range) return BDNN_STATUS_OUT_OF_MEMORY;
    int64_t *lo = p->kw_range, *hi = p->kw_range + d->kw;
    for (int64_t kw = 0; kw < d->kw; ++kw) {
        const int64_t off = kw * g->dw - d->pw;
        hi[kw] = bdnn_floor_div(d->iw - 1 - off, d->sw) + 1;
        hi[kw] = hi[kw] < 0 ? 0 : min64(hi[kw], d->ow);
        lo[kw] = min64(off >= 0 ? 0 : bdnn_div_up(-off, d->sw), hi[kw]);
    }
    g->kw_lo = lo;
    g->kw_hi = hi;
    if (c->with_bias && c->attr.bia_dt != BDNN_DT_F32
            && conv_scratch((void **)&p->bias, sizeof(float) * (size_t)(C > 0 ? C : 1)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    if (c->out_dt != BDNN_DT_F32) {
        p->row_floats = d->ow * B;
        if (conv_scratch((void **)&p->rows, sizeof(float) * (size_t)(c->nthr * p->row_floats)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    return BDNN_STATUS_OK;
}

static size_t dwl_weights_bytes(const struct bdnn_conv *c) {
    const dwl_plan_t *p = c->plan;
    return sizeof(float) * (size_t)(p->nvec * p->taps * p->vlen);
}

static void dwl_pack_weights(const struct bdnn_conv *c, const void *wei_v, void *packed_v) {
    const dwl_plan_t *p = c->plan;
    const int wdt = c->attr.wei_dt;   /* [C][1][1][kd][kh][kw], f32 or bf16 */
    float *packed = packed_v;
    const int64_t C = c->d.g, T = p->taps, V = p->vlen;
    for (int64_t v = 0; v < p->nvec; ++v)
        for (int64_t t = 0; t < T; ++t)
            for (int64_t l = 0; l < V; ++l) {
                const int64_t ch = v * V + l;
                const int dropped = c->fault == BDNN_FAULT_SKIP_LAST_IC   /* ic/g = 1 */
                                 || (c->fault == BDNN_FAULT_SKIP_LAST_TAP && t == T - 1);
                packed[(v * T + t) * V + l] =
                    ch < C && !dropped ? bdnn_load_f32(wei_v, wdt, ch * T + t) : 0.0f;
            }
}

/* What every output row of one chunk shares, found once per run of its rows: on a
 * narrow row (MobileNet's 7-pixel rows) finding it again took as long as a good part of
 * the row's taps. */
typedef struct {
    int64_t chunk;
    conv_dwl_row_fn row_fn;
    float sum_scale;
    int has_sum;
    float *frow;       /* where the row is computed when not in dst (f32 rows), else NULL */
    int64_t v0, v1;    /* the chunk's channel vectors */
    int64_t blk;       /* its block (blocked), or 0 (channels last: one block) */
    int64_t c0, nch;   /* its first channel and channels */
    int64_t lanes, lane0;   /* the lanes it writes in its block, from lane0 */
} dwl_chunk_t;

/* The bias of a convolution without one (the row kernel reads a vector's). */
static const float dwl_zeros[16] __attribute__((aligned(64)));

/* The chunk's shared part; frow: the thread's row buffer (dst not f32), else NULL. */
static void dwl_chunk_of(const struct bdnn_conv *c, int64_t chunk, float *frow, dwl_chunk_t *k) {
    const dwl_plan_t *p = c->plan;
    const conv_dwl_ker_t *ker = c->impl->kernel;
    const int64_t C = c->d.g, B = p->B, V = p->vlen;
    const int zero_tail = c->attr.layout != BDNN_LAYOUT_NHWC;
    k->chunk = chunk;
    k->sum_scale = bdnn_post_ops_sum_scale(c, &k->has_sum);
    /* a bf16 dst without eltwise entries: stored by the row kernel itself, rounded in its
     * registers (the row buffer and its conversion pass took a third of a narrow row's
     * time) */
    if (frow && c->out_dt == BDNN_DT_BF16 && c->n_post_ops == (k->has_sum ? 1 : 0)
            && c->fault != BDNN_FAULT_PADDING_GARBAGE)
        frow = NULL;
    k->frow = frow;
    k->row_fn = c->operands != OPERANDS_BF16 ? ker->fn
              : c->out_dt == BDNN_DT_BF16 && !frow ? ker->fn_bf16_out
                                                   : ker->fn_bf16;
    k->v0 = chunk * p->vec_per_chunk, k->v1 = min64(k->v0 + p->vec_per_chunk, p->nvec);
    /* the chunk's lanes, c0 .. c0 + lanes - 1 of its block: whole vectors where the block
     * is padded (their tail is written), else its channels. A chunk lies in one block: a
     * block is a chunk (blocked), or all channels are one block (channels last). */
    k->blk = zero_tail ? chunk : 0;
    k->c0 = k->v0 * V, k->nch = min64(k->v1 * V, C) - k->c0;   /* > 0: a block holds one */
    k->lanes = zero_tail ? (k->v1 - k->v0) * V : k->nch;
    k->lane0 = k->c0 - k->blk * B;
}

/* noh output rows of the chunk k (noh > 1 only where k->frow is NULL: rows computed in
 * dst), from nrows tap rows: row r's pixel 0 of channel 0 at row0[r] for the first output
 * row, in_rs elements further per output row after it (channel blocks in_blk elements
 * apart), its first tap row_tap[r]; or (oh0 >= 0) rows oh0 .. of a plane run, row0[r]
 * the plane's first input row (conv_dwl_row_fn); out: the first output row's pixel 0 of
 * channel 0
 * (blocks out_blk elements apart; the rows follow each other), of dst's type; bias: f32,
 * C values, or NULL. Bias and the sum in the row kernel's store, then the eltwise entries
 * on the chunk's rows, the padded tail zero, and a low-precision dst converted from the
 * row buffer. */
static void dwl_chunk_row(const struct bdnn_conv *c, const dwl_chunk_t *k, int64_t nrows,
                          const void *const *row0, const int64_t *row_tap, int64_t in_blk,
                          int64_t noh, int64_t in_rs, const float *wei, const float *bias,
                          void *out0, int64_t out_blk, int64_t oh0) {
    const dwl_plan_t *p = c->plan;
    const conv_dwl_ker_t *ker = c->impl->kernel;
    const int64_t C = c->d.g, B = p->B, V = p->vlen, T = p->taps, OW = c->d.ow;
    const int64_t NPX = noh * OW;   /* the rows' pixels, B elements apart */
    const int zero_tail = c->attr.layout != BDNN_LAYOUT_NHWC;
    float *frow = k->frow;
    const void *in_row[nrows > 0 ? nrows : 1];
    const float *wrow[nrows > 0 ? nrows : 1];
    float bv[16] __attribute__((aligned(64)));   /* a partial vector's bias */
    const size_t osz = bdnn_dt_size(c->out_dt);
    char *out = (char *)out0 + osz * (size_t)(k->blk * out_blk);   /* the chunk's block */
    /* the row computed: [ow][B], lane c % B of channel c, in frow (f32) or in dst */
    char *row_at = frow ? (char *)frow : out;
    const size_t rsz = frow ? sizeof(float) : osz;
    float *row = (float *)row_at;   /* (f32 rows only: eltwise entries, the garbage defect) */
    const int64_t lanes = k->lanes, lane0 = k->lane0;
    if (frow && k->has_sum) {   /* the prior dst, for the row kernel's store to scale */
        if (lanes == B)
            ker->to_f32(c->out_dt, out, row, OW * B);
        else
            for (int64_t ow = 0; ow < OW; ++ow)
                ker->to_f32(c->out_dt, out + osz * (size_t)(ow * B + lane0),
                            row + ow * B + lane0, lanes);
    }
    for (int64_t v = k->v0; v < k->v1; ++v) {
        const int64_t cv = v * V, nv = min64(V, C - cv), lane = cv - k->blk * B;
        const int64_t at = k->blk * in_blk + lane;
        char *o = row_at + rsz * (size_t)lane;
        if (nv <= 0) {   /* a vector of the padded tail */
            for (int64_t px = 0; px < NPX; ++px)
                memset(o + rsz * (size_t)(px * B), 0, rsz * (size_t)V);
            continue;
        }
        for (int64_t r = 0; r < nrows; ++r) {
            in_row[r] = (const char *)row0[r] + p->esz * at;
            wrow[r] = wei + (v * T + row_tap[r]) * V;
        }
        if (bias && nv < V)   /* the last channels: the lanes past them read zero */
            for (int64_t l = 0; l < V; ++l) bv[l] = l < nv ? bias[cv + l] : 0.0f;
        k->row_fn(&p->geom, nrows, in_row, wrow, !bias ? dwl_zeros : nv == V ? bias + cv : bv,
                  k->sum_scale, k->has_sum, o, nv, noh, in_rs, OW * B, zero_tail, oh0);
    }
    if (c->n_post_ops > (k->has_sum ? 1 : 0))
        bdnn_post_ops_eltwise(c, row + lane0, B, NPX, k->nch);
    if (zero_tail && c->fault == BDNN_FAULT_PADDING_GARBAGE && k->c0 + k->nch == C && C % B)
        for (int64_t px = 0; px < NPX; ++px)
            for (int64_t l = C % B; l < B; ++l) row[px * B + l] = 1.0f;
    if (!frow) return;
    if (lanes == B)   /* the row is one run of dst */
        ker->from_f32(c->out_dt, row, out, OW * B, 0);
    else
        for (int64_t ow = 0; ow < OW; ++ow)
            ker->from_f32(c->out_dt, row + ow * B + lane0, out + osz * (size_t)(ow * B + lane0),
                          lanes, 0);
}

void bdnn_dwl_row(const struct bdnn_conv *c, int64_t nrows, const float *const *row0,
                  const int64_t *row_tap, int64_t in_blk, const float *wei, const float *bias,
                  float *out0, int64_t out_blk) {
    for (int64_t chunk = 0; chunk < ((const dwl_plan_t *)c->plan)->nchunk; ++chunk) {
        dwl_chunk_t k;
        dwl_chunk_of(c, chunk, NULL, &k);
        dwl_chunk_row(c, &k, nrows, (const void *const *)row0, row_tap, in_blk, 1, 0, wei,
                      bias, out0, out_blk, -1);
    }
}

static void dwl_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const bdnn_conv_desc_t *d = &c->d;
    const dwl_plan_t *p = c->plan;
    const int64_t B = p->B, in_px = d->id * d->ih * d->iw, out_px = d->od * d->oh * d->ow;
    const int64_t nblk = bdnn_div_up(d->g, B), in_img = nblk * B * in_px, out_img = nblk * B * out_px;
    const int64_t items = d->mb * p->nchunk * d->od * d->oh, KDH = d->kd * d->kh;
    const char *src = a->src;
    const size_t osz = bdnn_dt_size(c->out_dt);
    const float *bias = a->bias;   /* in f32: as given, or converted once here */
    if (a->bias && c->attr.bia_dt != BDNN_DT_F32) {
        bdnn_cvt_to_f32(c->attr.bia_dt, a->bias, p->bias, d->g);
        bias = p->bias;
    }
    /* The output rows whose every kh tap row is inside the input, [oh_lo, oh_hi): their
     * tap rows are one set moved sh input rows on per output row, so a run of them is one
     * row kernel call (computed in dst: without a row buffer). On MobileNet's 7x7 images
     * the calls and their setup took as long as the taps. */
    int64_t oh_lo, oh_hi;
    bdnn_interior(d->oh, d->kh, d->dh, d->sh, d->ph, d->ih, &oh_lo, &oh_hi);
    /* A 2D plane's rows go to the row kernel as one plane run, border rows included (each
     * row leaves out its tap rows in the padding): a 7x7 plane is then one call, not 3,
     * where the calls' setup took as long as a third of the taps. */
    const int plane_runs = d->kd == 1 && d->id == 1 && d->od == 1
        && d->kh <= DWL_PLANE_MAX_KH;
    /* each thread a contiguous range of items, walked by incrementing (oh, od, chunk, n):
     * an item of a narrow row is a few dozen multiply-adds, and decoding its index by
     * division cost as much */
#pragma omp parallel num_threads(c->nthr)
    {
        const int64_t nthr = omp_get_num_threads(), ithr = omp_get_thread_num();
        const int64_t start = items * ithr / nthr, end = items * (ithr + 1) / nthr;
        float *frow = p->rows ? p->rows + ithr * p->row_floats : NULL;
        dwl_chunk_t ck = {.chunk = -1};   /* the chunk of the item before */
        int64_t rest = start;
        int64_t oh = rest % d->oh; rest /= d->oh > 0 ? d->oh : 1;
        int64_t od = rest % d->od; rest /= d->od > 0 ? d->od : 1;
        int64_t chunk = rest % p->nchunk, n = rest / p->nchunk;
        for (int64_t item = start; item < end;) {
            /* the (kd, kh) tap rows inside the input: their pixel 0 and first taps */
            int64_t nrows = 0, row_tap[KDH > 0 ? KDH : 1];
            const void *row0[KDH > 0 ? KDH : 1];
            char *out0 = (char *)a->dst
                       + osz * (size_t)(n * out_img + (od * d->oh + oh) * d->ow * B);
            if (ck.chunk != chunk) dwl_chunk_of(c, chunk, frow, &ck);
            if (plane_runs && !ck.frow) {   /* this row and the plane's rows after it */
                const int64_t noh = min64(d->oh - oh, end - item);
                for (int64_t kh = 0; kh < d->kh; ++kh) {
                    row0[kh] = src + p->esz * (n * in_img);
                    row_tap[kh] = kh * d->kw;
                }
                dwl_chunk_row(c, &ck, d->kh, row0, row_tap, in_px * B, noh, 0, a->wei, bias,
                              out0, out_px * B, oh);
                item += noh;
                if ((oh += noh) == d->oh) {
                    oh = 0;
                    if (++chunk == p->nchunk) chunk = 0, ++n;
                }
                continue;
            }
            for (int64_t kd = 0; kd < d->kd; ++kd) {
                const int64_t id = od * d->sd - d->pd + kd * (d->dd + 1);
                if (id < 0 || id >= d->id) continue;
                for (int64_t kh = 0; kh < d->kh; ++kh) {
                    const int64_t ih = oh * d->sh - d->ph + kh * (d->dh + 1);
                    if (ih < 0 || ih >= d->ih) continue;
                    row0[nrows] = src + p->esz * (n * in_img + (id * d->ih + ih) * d->iw * B);
                    row_tap[nrows++] = (kd * d->kh + kh) * d->kw;
                }
            }
            /* this row and the interior ones after it in the item range */
            const int64_t noh = !ck.frow && oh >= oh_lo && oh < oh_hi
                              ? min64(oh_hi - oh, end - item) : 1;
            dwl_chunk_row(c, &ck, nrows, row0, row_tap, in_px * B, noh, d->sh * d->iw * B,
                          a->wei, bias, out0, out_px * B, -1);
            item += noh;
            if ((oh += noh) == d->oh) {
                oh = 0;
                if (++od == d->od) {
                    od = 0;
                    if (++chunk == p->nchunk) chunk = 0, ++n;
                }
            }
        }
    }
}

/* The rows dw_conv_nhwc and dw_conv_blocked, and their _bf16 forms (conv_api.c names
 * each one's layouts). */
const conv_impl_ops_t bdnn_conv_dw_lanes_ops = {
    dwl_init, dwl_weights_bytes, dwl_pack_weights, dwl_execute, dwl_fini, NULL,
};
