/* Forward convolution on AMX tiles (the tile_conv_nhwc_bf16 and tile_conv_nhwc_int8 rows):
 * bf16 x bf16 into f32 sums (tdpbf16ps), or u8 x s8 into s32 sums (tdpbusd), on
 * channels-last activations. kernels/conv/README.md, "tile_conv_nhwc".
 *
 * Contract. An item is 32 output points x 32 output channels: two A tiles of 16 points
 * each (a tile row is one point's next 64 bytes of input channels: 32 bf16 or 64 u8, kc),
 * two B tiles of 16 channels each (row k holds the 16 channels' weights of input channels
 * kc * kb + PACK * k .. + PACK - 1, PACK = 2 bf16, 4 u8), four C tiles of sums. Every tap
 * and every kc block of input channels is one step of four tile products; the sums are
 * then stored to the thread's 32 x 32 block, finished in f32 (bias, a sum post-op, the
 * eltwise entries) and converted into dst.
 *
 * Point i of an item reads its input at a + i * lda + tap_off[t] + kb * 64 (bytes), for
 * one of four walks of the output points:
 *   GEMM  1x1 without padding: the points of every image in a row, each reading one input
 *         point: src itself (unit stride, input channels a multiple of kc; the last item's
 *         points past the end read a staged copy), else a dense copy of the points read,
 *         channels zero-padded to kc.
 *   FLAT  unit stride: a zero-padded copy of each image (channels padded to kc), wb
 *         points wide, in which output point (oh, ow) is point q = oh * wb + ow and tap
 *         (kh, kw) sits kh * dh * wb + kw * dw points further; q runs over every column
 *         of the copy, and the columns past OW are computed and dropped.
 *   ROWS  strided: the same copy, an item being up to 32 points of one output row, lda
 *         the stride's points; a strided 1x1 without padding whose input channels are a
 *         multiple of kc reads src itself so (where its rows fill the items: init), an
 *         item whose dropped points would read past src's end from a stage of its points.
 *   FOLD  as ROWS, where folding the kw taps into the channels takes fewer kc blocks (few
 *         input channels: ResNet's first layer, 3 channels and 7 taps, in one block):
 *         the copy's point (b, ow) holds the inputs of the KW taps of output column ow
 *         on row b, one after another (zero outside), so an item's points are
 *         consecutive, and the taps left are the kh rows. Where folding kh too takes
 *         fewer kc blocks (3 channels and 7x7 taps: 5 bf16 blocks or 3 u8, not 7),
 *         and no tap is dilated along w, the copy is instead the zero-padded input
 *         rows (a point's kw taps one run of its row, no channel padding), and each
 *         item's points (32 consecutive output points of the image, across its rows)
 *         are gathered, their kh rows' runs one after another, into a block of the
 *         thread's, and the item is one tap of those blocks; a thread gathers its next
 *         item into a second block between the current one's tile products.
 * Points past the end of the walk read the copy's slack (zeroed) or the next image, and
 * their sums are dropped: a tile row's sums depend on that row alone. */
#pragma GCC target("amx-tile,amx-bf16,amx-int8,prfchw,avx512f,avx512vl,avx512bw,avx512dq,avx512bf16")
#include <immintrin.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "amx_tiles.h"
#include "conv_impl.h"
#include "conv_store_avx512.h"
#include "dt.h"

enum { AMX_PTS = 32, AMX_OCS = 32, AMX_ROWB = BDNN_AMX_ROW_BYTES, AMX_BTILE = 1024 };
enum { WALK_GEMM, WALK_FLAT, WALK_ROWS, WALK_FOLD };
/* The input bytes one block of items should stay within (their A rows re-read for each
 * chunk of output channels, from L2); weights up to AMX_W_CACHED_BYTES stay in L2 for
 * every point item, whose channel chunks then run one after another (an item's dst rows
 * filled whole: chunk by chunk, each 32-channel piece of a row was written apart from the
 * rest of its cache lines). */
enum { AMX_A_BLOCK_BYTES = 256 * 1024, AMX_W_CACHED_BYTES = 512 * 1024 };
/* FLAT, ROWS, FOLD: the copy of one pass's images stays within this (in cache when its
 * items read it), and holds as many images as fit (each pass's copy and items end in a
 * barrier: small images one at a time spent more time there than in the tile unit). */
enum { AMX_PASS_COPY_BYTES = 2 * 1024 * 1024 };
/* Where a thread's share of dst is at least this (half of L2), its lines are not in
 * cache when the finish writes them, and each 32-channel piece of a row (a part of its
 * lines) waited for its lines to be read in: the thread asks for the next point item's
 * dst lines, for writing, while this one's channel chunks compute (a 1/occ share per
 * chunk). Below it, dst stays in L2 from one execution to the next and the requests only
 * cost instructions. The same holds for src read in place by the GEMM walk: past that
 * share the next point item's A rows are asked for (into L2), where they are at most
 * AMX_SRC_PF_ITEM_BYTES (wider rows, already many lines in flight per item, lost as
 * much). */
enum { AMX_PF_SHARE_BYTES = 1024 * 1024, AMX_SRC_PF_ITEM_BYTES = 8 * 1024 };

typedef struct {
    int walk;
    int s32;                 /* int8: s32 sums */
    int64_t esz, kc;         /* element bytes; channels per 64-byte tile row */
    int64_t icp, nkb;        /* channels per point of the operand read; kc blocks per tap */
    int copy;                /* the A operand is the copy in buf (else src) */
    int64_t kw;              /* the taps along w the walk runs (FOLD: 1) */
    int64_t col_step;        /* ROWS, FOLD: the copy's points per output column */
    int64_t hb, wb;          /* the copy's rows and columns per image (GEMM: 1, OH * OW) */
    int64_t imgs;            /* FLAT, ROWS, FOLD: images per pass (copied one after another) */
    int64_t ntaps;
    int64_t tap_off[64];     /* bytes; ntaps of them (kh * kw <= 64, init) */
    int64_t lda;             /* bytes between an item's consecutive points */
    int64_t occ;             /* chunks of AMX_OCS output channels */
    int64_t m_per_img;       /* FLAT, ROWS, FOLD: point items per image; GEMM: in all */
    int64_t m_items;         /* point items in all */
    int64_t m_block;         /* point items per block of the item order */
    int64_t q;               /* FLAT: walk points per image; GEMM: in all */
    int64_t owc;             /* ROWS, FOLD: items per output row */
    int64_t slack_pts;       /* points of zeros after the copy */
    char *buf;               /* scratch: the copy, then its slack */
    char *stage;             /* scratch, per thread: from src (GEMM, ROWS), the points of an
                                item that would read past src's end */
    float *acc;              /* scratch: per thread, two blocks of AMX_PTS x AMX_OCS sums */
    float *bias;             /* scratch: occ * AMX_OCS, f32 */
    /* FOLD with the kh taps folded too (fold_kh): the copy is the padded input rows
     * (icp = IC, col_step = SW); item m of an image is its output points m * AMX_PTS ..
     * + AMX_PTS - 1 (oh * OW + ow), each gathered from the copy, the kh rows' runs of
     * kw * ic channels one after another (seg bytes each), into one of the thread's two
     * gather blocks (AMX_PTS points of lda bytes, zero past kh * seg) */
    int fold_kh;
    int64_t seg;
    int64_t row_off[16];     /* bytes: the copy's kh rows from an output row's first */
    int64_t gbytes;          /* one gather block */
    char *gbuf;              /* scratch: two gather blocks per thread */
} amx_plan_t;


static void amx_store_sums(void *acc) {
    char *c = acc;
    _tile_stored(0, c, 4 * AMX_OCS);
    _tile_stored(1, c + 64, 4 * AMX_OCS);
    _tile_stored(2, c + 16 * 4 * AMX_OCS, 4 * AMX_OCS);
    _tile_stored(3, c + 16 * 4 * AMX_OCS + 64, 4 * AMX_OCS);
}

/* 16 values of an out_dt row at element j (lanes m), as f32: the prior dst of a sum. */
static inline __m512 amx_load16(int dt, const void *row, int64_t j, __mmask16 m) {
    switch (dt) {
    case BDNN_DT_BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)row + j)), 16));
    case BDNN_DT_U8:
        return _mm512_cvtepi32_ps(
            _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, (const uint8_t *)row + j)));
    case BDNN_DT_S8:
        return _mm512_cvtepi32_ps(
            _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, (const int8_t *)row + j)));
    case BDNN_DT_S32:
        return _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, (const int32_t *)row + j));
    default:
        return _mm512_maskz_loadu_ps(m, (const float *)row + j);
    }
}

/* 32 values (lo's lanes m0, then hi's m1) stored as bf16 at out, as bdnn_epi_store16 would:
 * one vcvtne2ps2bf16 for both where that gives its bits (bdnn_bf16_cvtne_exact), else
 * bdnn_epi_store16 per vector. */
static inline void amx_store_bf16x32(__m512 lo, __m512 hi, void *out, int64_t j, __mmask16 m0,
                                     __mmask16 m1, int stream) {
    if (!bdnn_bf16_cvtne_exact(lo) || !bdnn_bf16_cvtne_exact(hi)) {
        bdnn_epi_store16(BDNN_DT_BF16, lo, out, j, m0);
        if (m1) bdnn_epi_store16(BDNN_DT_BF16, hi, out, j + 16, m1);
        return;
    }
    const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    if (stream) _mm512_stream_si512((void *)((uint16_t *)out + j), h);
    else _mm512_mask_storeu_epi16((uint16_t *)out + j, (__mmask32)m0 | (__mmask32)m1 << 16, h);
}

typedef struct {
    const struct bdnn_conv *c;
    char *dst;
    int has_sum, has_eltwise, has_bias;
    float sum_scale;
    int stream;   /* non-temporal stores (bf16 dst past the caches, every chunk whole) */
} amx_out_t;

/* An item's sums (acc) into dst: pix[i] the dst point of sum row i (-1: dropped), the
 * channels oc0 .. oc0 + 31 (those below OC). f32 first: s32 converted, the bias, the
 * sum post-op's scale times the prior dst; then the eltwise entries; then dst's type.
 * Without eltwise entries that is one pass, each vector stored as it is finished.
 * Instanced per dst type, sum type and bias (constants here: no branch per vector). */
static inline __attribute__((always_inline)) void
amx_finish_as(const amx_plan_t *p, const amx_out_t *x, float *acc, const int64_t *pix,
              int64_t oc0, int i0, int i1, const int dt, const int s32, const int sum,
              const int eltwise, const int bias_on) {
    const struct bdnn_conv *c = x->c;
    const int64_t OC = c->d.oc;
    __mmask16 m[2];
    bdnn_tile_masks32(OC - oc0, &m[0], &m[1]);
    const int halves = m[1] ? 2 : 1;
    const __m512 bias[2] = {_mm512_loadu_ps(p->bias + oc0), _mm512_loadu_ps(p->bias + oc0 + 16)};
    const __m512 scale = _mm512_set1_ps(x->sum_scale);
    if ((dt == BDNN_DT_U8 || dt == BDNN_DT_S8) && !eltwise) {
        /* two points' rows (consecutive in acc) per pack, each half stored to its point;
         * s32 sums with no bias or sum saturate as integers (bdnn_store_s32_i8x16's
         * reason: the values of the f32 path, without its conversions) */
        const __mmask32 m32 = (__mmask32)m[0] | (__mmask32)m[1] << 16;
        for (int i = i0; i < i1; i += 2) {
            if (pix[i] < 0 && pix[i + 1] < 0) continue;
            const float *r = acc + i * AMX_OCS;
            __m512i s[4];
            for (int k = 0; k < 4; ++k) {
                if (s32 && !bias_on && !sum) {
                    s[k] = _mm512_loadu_si512(r + 16 * k);
                    continue;
                }
                __m512 v = s32 ? _mm512_cvtepi32_ps(_mm512_loadu_si512(r + 16 * k))
                               : _mm512_loadu_ps(r + 16 * k);
                if (bias_on) v = _mm512_add_ps(v, bias[k & 1]);
                if (sum) {   /* a dropped point's prior dst: nothing read */
                    const int64_t q = pix[i + k / 2];
                    v = _mm512_fmadd_ps(amx_load16(dt, x->dst, (q < 0 ? 0 : q * OC) + oc0 + 16 * (k & 1),
                                                   q < 0 ? 0 : m[k & 1]), scale, v);
                }
                s[k] = bdnn_epi_round_packed(dt, v);
            }
            const __m512i b = bdnn_pack_s32_i8x64(dt, s[0], s[1], s[2], s[3]);
            if (pix[i] >= 0)
                _mm256_mask_storeu_epi8((int8_t *)x->dst + pix[i] * OC + oc0, m32,
                                        _mm512_castsi512_si256(b));
            if (pix[i + 1] >= 0)
                _mm256_mask_storeu_epi8((int8_t *)x->dst + pix[i + 1] * OC + oc0, m32,
                                        _mm512_extracti64x4_epi64(b, 1));
        }
        return;
    }
    for (int i = i0; i < i1; ++i) {
        if (pix[i] < 0) continue;
        float *r = acc + i * AMX_OCS;
        const int64_t at = pix[i] * OC + oc0;
        if (dt == BDNN_DT_BF16 && !eltwise) {
            /* both halves in one conversion and one store */
            __m512 v[2];
            for (int h = 0; h < 2; ++h) {
                v[h] = s32 ? _mm512_cvtepi32_ps(_mm512_loadu_si512(r + 16 * h))
                           : _mm512_loadu_ps(r + 16 * h);
                if (bias_on) v[h] = _mm512_add_ps(v[h], bias[h]);
                if (sum)
                    v[h] = _mm512_fmadd_ps(amx_load16(dt, x->dst, at + 16 * h, m[h]), scale, v[h]);
            }
            amx_store_bf16x32(v[0], v[1], x->dst, at, m[0], m[1], x->stream);
            continue;
        }
        for (int h = 0; h < halves; ++h) {
            __m512 v = s32 ? _mm512_cvtepi32_ps(_mm512_loadu_si512(r + 16 * h))
                           : _mm512_loadu_ps(r + 16 * h);
            if (bias_on) v = _mm512_add_ps(v, bias[h]);
            if (sum) v = _mm512_fmadd_ps(amx_load16(dt, x->dst, at + 16 * h, m[h]), scale, v);
            if (eltwise) _mm512_storeu_ps(r + 16 * h, v);
            else bdnn_epi_store16(dt, v, x->dst, at + 16 * h, m[h]);
        }
    }
    if (!eltwise) return;
    bdnn_post_ops_eltwise(c, acc + i0 * AMX_OCS, AMX_OCS, i1 - i0, AMX_OCS);
    for (int i = i0; i < i1; ++i) {
        if (pix[i] < 0) continue;
        for (int h = 0; h < halves; ++h)
            bdnn_epi_store16(dt, _mm512_loadu_ps(acc + i * AMX_OCS + 16 * h), x->dst,
                             pix[i] * OC + oc0 + 16 * h, m[h]);
    }
}

typedef void (*amx_finish_fn)(const amx_plan_t *p, const amx_out_t *x, float *acc,
                              const int64_t *pix, int64_t oc0, int i0, int i1);
#define AMX_FINISH(dt, s32)                                                                \
    static void amx_finish_##dt##_##s32(const amx_plan_t *p, const amx_out_t *x,            \
                                        float *acc, const int64_t *pix, int64_t oc0,       \
                                        int i0, int i1) {                                  \
        const int dt_ = BDNN_DT_##dt;                                                     \
        if (x->has_eltwise)                                                                \
            amx_finish_as(p, x, acc, pix, oc0, i0, i1, dt_, s32, x->has_sum, 1, 1);        \
        else if (x->has_sum) amx_finish_as(p, x, acc, pix, oc0, i0, i1, dt_, s32, 1, 0, 1); \
        else if (x->has_bias) amx_finish_as(p, x, acc, pix, oc0, i0, i1, dt_, s32, 0, 0, 1); \
        else amx_finish_as(p, x, acc, pix, oc0, i0, i1, dt_, s32, 0, 0, 0);                \
    }
AMX_FINISH(F32, 0)
AMX_FINISH(BF16, 0)
AMX_FINISH(F32, 1)
AMX_FINISH(BF16, 1)
AMX_FINISH(S32, 1)
AMX_FINISH(S8, 1)
AMX_FINISH(U8, 1)

static amx_finish_fn amx_finish_for(int dt, int s32) {
    switch (dt) {
    case BDNN_DT_F32: return s32 ? amx_finish_F32_1 : amx_finish_F32_0;
    case BDNN_DT_BF16: return s32 ? amx_finish_BF16_1 : amx_finish_BF16_0;
    case BDNN_DT_S32: return amx_finish_S32_1;
    case BDNN_DT_S8: return amx_finish_S8_1;
    default: return amx_finish_U8_1;
    }
}

/* The previous item's finish, done in slices of rows between this item's tile products
 * (end: 0, none; rows: per step of products, enough to cover the block over the steps). */
typedef struct {
    amx_finish_fn fn;
    const amx_plan_t *p;
    const amx_out_t *x;
    float *acc;
    const int64_t *pix;
    int64_t oc0;
    int end, rows;
    /* fold_kh: point item gm's points g0 .. g1 - 1 gathered (from the pass's copy at
     * gcopy) into gdst, in slices of grows per step */
    const char *gcopy;
    char *gdst;
    int64_t gm;
    int g0, g1, grows;
} amx_pending_t;

static void amx_gather_kh(const amx_plan_t *p, const struct bdnn_conv *c, const char *copy,
                          int64_t m, char *g, int i0, int i1);

/* One item's sums into C tiles 0 to 3 (points 0-15 and 16-31 x channels 0-15 and 16-31),
 * from A tiles 4 and 5 and B tiles 6 and 7; w: the chunk's packed weights,
 * [tap][kb][2][16 rows][64 bytes]. amx_store_sums then stores them to acc (AMX_PTS rows
 * of AMX_OCS, f32 or s32): in between, the thread finishes the previous item (f) while
 * the tile unit computes. */
#define AMX_ITEM(name, DP)                                                                 \
    static void name(const char *a, int64_t lda, const int64_t *tap_off, int64_t ntaps,    \
                     int64_t nkb, const char *w, const amx_pending_t *f) {                 \
        int i0 = 0, g0 = f->g0;                                                            \
        _tile_zero(0);                                                                     \
        _tile_zero(1);                                                                     \
        _tile_zero(2);                                                                     \
        _tile_zero(3);                                                                     \
        const char *a1 = a + 16 * lda;                                                     \
        for (int64_t t = 0; t < ntaps; ++t) {                                              \
            for (int64_t kb = 0; kb < nkb; ++kb, w += 2 * AMX_BTILE) {                     \
                const int64_t at = tap_off[t] + kb * AMX_ROWB;                             \
                _tile_loadd(4, a + at, lda);                                               \
                _tile_loadd(6, w, AMX_ROWB);                                               \
                DP(0, 4, 6);                                                               \
                _tile_loadd(7, w + AMX_BTILE, AMX_ROWB);                                   \
                DP(1, 4, 7);                                                               \
                _tile_loadd(5, a1 + at, lda);                                              \
                DP(2, 5, 6);                                                               \
                DP(3, 5, 7);                                                               \
                if (i0 < f->end) {                                                         \
                    const int i1 = i0 + f->rows < f->end ? i0 + f->rows : f->end;          \
                    f->fn(f->p, f->x, f->acc, f->pix, f->oc0, i0, i1);                     \
                    i0 = i1;                                                               \
                }                                                                          \
                if (g0 < f->g1) {                                                          \
                    const int g1 = g0 + f->grows < f->g1 ? g0 + f->grows : f->g1;          \
                    amx_gather_kh(f->p, f->x->c, f->gcopy, f->gm, f->gdst, g0, g1);        \
                    g0 = g1;                                                               \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
#define DP_BF16(c, a, b) _tile_dpbf16ps(c, a, b)
#define DP_INT8(c, a, b) _tile_dpbusd(c, a, b)
AMX_ITEM(amx_item_bf16, DP_BF16)
AMX_ITEM(amx_item_int8, DP_INT8)

static int amx_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const bdnn_conv_attr_t *at = &c->attr;
    const int s32 = c->operands == OPERANDS_INT8;
    const unsigned dts = s32 ? (1u << BDNN_DT_U8) | (1u << BDNN_DT_S8) | (1u << BDNN_DT_S32)
                                   | (1u << BDNN_DT_F32) | (1u << BDNN_DT_BF16)
                             : (1u << BDNN_DT_F32) | (1u << BDNN_DT_BF16);
    if (c->dir != BDNN_DIR_FWD || d->g != 1 || d->kd != 1 || d->id != 1 || d->od != 1
            || !(dts & (1u << c->out_dt)) || !bdnn_post_ops_row_store(c)
            || d->kh * d->kw > 64)
        return BDNN_STATUS_UNIMPLEMENTED;
    /* an s8 source would need the +128 shift and its compensation (the plain rows') */
    if (s32 && at->src_dt != BDNN_DT_U8) return BDNN_STATUS_UNIMPLEMENTED;
    if (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SUM_SCALE_DROPPED
            && c->fault != BDNN_FAULT_CRASH)
        return BDNN_STATUS_UNIMPLEMENTED;
    amx_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    p->s32 = s32;
    p->esz = s32 ? 1 : 2;
    p->kc = AMX_ROWB / p->esz;
    const int64_t dh1 = d->dh + 1, dw1 = d->dw + 1;
    const int one = d->kh == 1 && d->kw == 1 && bdnn_reads_no_padding(d);
    const int fold = !one && bdnn_div_up(d->kw * d->ic, p->kc) < d->kw * bdnn_div_up(d->ic, p->kc);
    /* a strided 1x1 whose points' channels fill whole tile rows reads src itself by output
     * rows (ROWS, no copy) where those leave at most an eighth of the items' points empty:
     * the GEMM walk's dense copy of the points cost more than that (its strided reads of
     * src, then its own writes and reads) */
    const int64_t owc = bdnn_div_up(d->ow, AMX_PTS);
    const int strided_rows = one && (d->sh > 1 || d->sw > 1) && d->ic % p->kc == 0
        && 8 * (owc * AMX_PTS - d->ow) <= owc * AMX_PTS;
    p->walk = one && !strided_rows ? WALK_GEMM : fold ? WALK_FOLD
            : d->sh == 1 && d->sw == 1 ? WALK_FLAT : WALK_ROWS;
    p->copy = !(strided_rows || (one && d->sh == 1 && d->sw == 1 && d->ic % p->kc == 0));
    const int64_t kw = p->kw = fold ? 1 : d->kw;
    const int64_t kh_ch = bdnn_div_up(d->kh * d->kw * d->ic, p->kc) * p->kc;
    p->fold_kh = fold && d->kw * d->ic * p->esz <= AMX_ROWB && d->kh > 1 && d->kh <= 16
              && kh_ch / p->kc < d->kh && d->dw == 0;   /* (dilated kw: no run) */
    p->icp = !p->copy || p->fold_kh ? d->ic : bdnn_div_up(d->kw / kw * d->ic, p->kc) * p->kc;
    p->nkb = p->icp / p->kc;
    const int64_t pt = p->icp * p->esz;   /* bytes per point of the operand read */
    p->ntaps = d->kh * kw;
    /* folding kh too where it takes fewer kc blocks than the kh rows (the gather's cost
     * is repaid by those blocks and by items that run across output rows: none half
     * empty at a row's end); its copy is the padded input rows, a point's kw taps one
     * run of its row (FOLD's 64-byte slot per point is 64 / (SW * IC * esz) times the
     * input: ResNet's first layer's took a pass per image) */
    if (p->walk == WALK_GEMM) {
        p->hb = 1, p->wb = d->oh * d->ow;
        p->q = d->mb * p->wb;
        p->m_items = p->m_per_img = bdnn_div_up(p->q, AMX_PTS);
        p->lda = pt;
        p->slack_pts = AMX_PTS;
    } else {
        p->hb = !p->copy ? d->ih : (d->oh - 1) * d->sh + (d->kh - 1) * dh1 + 1;
        const int slots = fold && !p->fold_kh;
        p->col_step = slots ? 1 : d->sw;
        p->wb = !p->copy ? d->iw : slots ? d->ow : (d->ow - 1) * d->sw + (d->kw - 1) * dw1 + 1;
        if (p->walk == WALK_FLAT) {
            p->q = (d->oh - 1) * p->wb + d->ow;
            p->m_per_img = bdnn_div_up(p->q, AMX_PTS);
        } else {
            p->owc = bdnn_div_up(d->ow, AMX_PTS);
            p->m_per_img = p->fold_kh ? bdnn_div_up(d->oh * d->ow, AMX_PTS) : d->oh * p->owc;
        }
        p->m_items = d->mb * p->m_per_img;
        p->lda = p->col_step * pt;
        p->slack_pts = AMX_PTS * p->col_step;
    }
    for (int64_t t = 0; t < p->ntaps; ++t)
        p->tap_off[t] = (t / kw * dh1 * p->wb + t % kw * dw1) * pt;
    if (p->fold_kh) {   /* the tile kernel's walk: one tap of kh_ch channels */
        p->seg = d->kw * d->ic * p->esz;
        for (int64_t t = 0; t < d->kh; ++t) p->row_off[t] = p->tap_off[t];
        p->ntaps = 1;
        p->tap_off[0] = 0;
        p->nkb = kh_ch / p->kc;
        p->lda = kh_ch * p->esz;
        p->gbytes = AMX_PTS * kh_ch * p->esz + AMX_ROWB;   /* (the last slot's overrun) */
        if (conv_scratch((void **)&p->gbuf, (size_t)(c->nthr * 2 * p->gbytes)))
            return BDNN_STATUS_OUT_OF_MEMORY;
    }
    p->occ = bdnn_div_up(d->oc, AMX_OCS);
    const int64_t a_item = AMX_PTS * pt * d->kh * d->sw;
    const int64_t w_bytes = p->occ * p->ntaps * p->nkb * 2 * AMX_BTILE;
    p->m_block = a_item >= AMX_A_BLOCK_BYTES || w_bytes <= AMX_W_CACHED_BYTES || p->fold_kh
               ? 1 : AMX_A_BLOCK_BYTES / a_item;   /* (fold_kh: an item's chunks in a row) */
    p->imgs = 1;
    if (p->copy && p->walk != WALK_GEMM) {
        const int64_t img_bytes = p->hb * p->wb * pt;
        p->imgs = AMX_PASS_COPY_BYTES / img_bytes < 1 ? 1 : AMX_PASS_COPY_BYTES / img_bytes;
        if (p->imgs > d->mb && d->mb > 0) p->imgs = d->mb;
    }
    if (p->copy) {   /* GEMM: every image's points; else one pass's images */
        const int64_t imgs = p->walk == WALK_GEMM ? d->mb : p->imgs;
        const size_t bytes = (size_t)((imgs * p->hb * p->wb + p->slack_pts) * pt);
        if (conv_scratch((void **)&p->buf, bytes)) return BDNN_STATUS_OUT_OF_MEMORY;
    } else if (conv_scratch((void **)&p->stage, (size_t)(c->nthr * AMX_PTS * pt))) {
        return BDNN_STATUS_OUT_OF_MEMORY;
    }
    if (conv_scratch((void **)&p->acc, sizeof(float) * (size_t)(c->nthr * 2 * AMX_PTS * AMX_OCS))
            || conv_scratch((void **)&p->bias, sizeof(float) * (size_t)(p->occ * AMX_OCS)))
        return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

static size_t amx_weights_bytes(const struct bdnn_conv *c) {
    const amx_plan_t *p = c->plan;
    return (size_t)(p->occ * p->ntaps * p->nkb * 2 * AMX_BTILE);
}

/* [occ][tap][kb][half][k][16 channels][PACK]: the B tiles in the order an item reads
 * them; channels past OC and input channels past IC are zero. Folded, the walk's tap is
 * kh and its input channel v is channel v % IC of tap (kh, v / IC). */
static void amx_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {
    const amx_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t pack = 4 / p->esz, IC = d->ic, OC = d->oc, taps = p->ntaps;
    const int64_t kw = p->kw, icf = d->kw / kw * IC;
    const int64_t per_occ = taps * p->nkb * 2 * AMX_BTILE;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t o = 0; o < p->occ; ++o) {
        char *out = (char *)packed + o * per_occ;
        for (int64_t t = 0; t < taps; ++t)
            for (int64_t kb = 0; kb < p->nkb; ++kb)
                for (int64_t h = 0; h < 2; ++h)
                    for (int64_t k = 0; k < 16; ++k)
                        for (int64_t n = 0; n < 16; ++n)
                            for (int64_t r = 0; r < pack; ++r, out += p->esz) {
                                const int64_t oc = o * AMX_OCS + h * 16 + n;
                                const int64_t v = kb * p->kc + k * pack + r;
                                const int64_t ic = v % IC, tw = kw == 1 ? v / IC % d->kw : t % kw;
                                const int64_t th = p->fold_kh ? v / icf : t / kw;
                                const int64_t at = ((oc * IC + ic) * d->kh + th) * d->kw + tw;
                                if (oc >= OC || v >= (p->fold_kh ? d->kh * icf : icf))
                                    memset(out, 0, (size_t)p->esz);
                                else memcpy(out, (const char *)wei + at * p->esz, (size_t)p->esz);
                            }
    }
}

/* The copy's row b of image n (FLAT, ROWS, FOLD: input row b - ph, zero outside, into
 * the pass's image slot j; GEMM: the input points of output row b), channels
 * zero-padded to icp (fold_kh: the input row as ROWS copies it, icp = IC). */
static void amx_copy_row(const struct bdnn_conv *c, const amx_plan_t *p, const char *src,
                         int64_t n, int64_t j, int64_t b) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t pt = p->icp * p->esz, in_pt = d->ic * p->esz;
    const char *img = src + n * d->ih * d->iw * in_pt;
    if (p->walk == WALK_GEMM) {
        char *out = p->buf + (n * d->oh + b) * d->ow * pt;
        for (int64_t ow = 0; ow < d->ow; ++ow, out += pt) {
            memcpy(out, img + (b * d->sh * d->iw + ow * d->sw) * in_pt, (size_t)in_pt);
            memset(out + in_pt, 0, (size_t)(pt - in_pt));
        }
        return;
    }
    char *out = p->buf + (j * p->hb + b) * p->wb * pt;
    const int64_t ih = b - d->ph;
    if (ih < 0 || ih >= d->ih) {
        memset(out, 0, (size_t)(p->wb * pt));
        return;
    }
    const char *row = img + ih * d->iw * in_pt;
    if (p->walk == WALK_FOLD && !p->fold_kh) {
        /* point ow: the inputs of its KW taps, zero outside */
        const int64_t run = d->kw * in_pt;   /* undilated and inside: one run of the row */
        const __mmask64 m = run >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << run) - 1;
        for (int64_t ow = 0; ow < d->ow; ++ow, out += pt) {
            const int64_t iw0 = ow * d->sw - d->pw;
            if (d->dw == 0 && pt == 64 && iw0 >= 0 && iw0 + d->kw <= d->iw) {
                _mm512_storeu_si512(out, _mm512_maskz_loadu_epi8(m, row + iw0 * in_pt));
                continue;
            }
            memset(out, 0, (size_t)pt);
            for (int64_t kw = 0; kw < d->kw; ++kw) {
                const int64_t iw = iw0 + kw * (d->dw + 1);
                if (iw >= 0 && iw < d->iw)
                    memcpy(out + kw * in_pt, row + iw * in_pt, (size_t)in_pt);
            }
        }
        return;
    }
    /* columns [x0, x1) are inside the input: one run when no channel is padded */
    const int64_t x0 = d->pw < p->wb ? d->pw : p->wb;
    const int64_t x1 = d->pw + d->iw < p->wb ? d->pw + d->iw : p->wb;
    memset(out, 0, (size_t)(x0 * pt));
    if (pt == in_pt) {
        memcpy(out + x0 * pt, row, (size_t)((x1 - x0) * pt));
    } else {
        for (int64_t x = x0; x < x1; ++x) {
            memcpy(out + x * pt, row + (x - d->pw) * in_pt, (size_t)in_pt);
            memset(out + x * pt + in_pt, 0, (size_t)(pt - in_pt));
        }
    }
    memset(out + x1 * pt, 0, (size_t)((p->wb - x1) * pt));
}

/* fold_kh: points i0 .. i1 - 1 of the pass's point item m (its image's output points q0
 * .. q0 + 31, from that image's copy in the pass's copy; those past the image's last repeat
 * it, and are dropped) into g, each the kh rows' runs one seg after another (a masked load
 * of the run, zero past it, 32 or 64 bytes); a run's zeros past seg land where the next
 * row's run, or the next point, is stored after it, and the bytes past the last one's
 * zeros (up to the block's end) were zeroed before. */
static void amx_gather_kh(const amx_plan_t *p, const struct bdnn_conv *c, const char *copy,
                          int64_t m, char *g, int i0, int i1) {
    const int64_t OW = c->d.ow, last = c->d.oh * OW - 1, cpt = c->d.ic * p->esz;
    const char *img = copy + m / p->m_per_img * p->hb * p->wb * cpt;
    const int64_t q0 = m % p->m_per_img * AMX_PTS;
    const __mmask64 run = p->seg >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << p->seg) - 1;
    int64_t q = q0 + i0 < last ? q0 + i0 : last, oh = q / OW, ow = q % OW;
    g += i0 * p->lda;
    for (int i = i0; i < i1; ++i, g += p->lda) {
        const char *pt0 = img + (oh * c->d.sh * p->wb + ow * c->d.sw) * cpt;
        if (p->seg <= 32) {   /* (a 32-byte store splits across lines half as often) */
            for (int64_t t = 0; t < c->d.kh; ++t)
                _mm256_storeu_si256((__m256i *)(g + t * p->seg),
                                    _mm256_maskz_loadu_epi8((__mmask32)run, pt0 + p->row_off[t]));
        } else {
            for (int64_t t = 0; t < c->d.kh; ++t)
                _mm512_storeu_si512(g + t * p->seg, _mm512_maskz_loadu_epi8(run, pt0 + p->row_off[t]));
        }
        if (q < last && (++q, ++ow == OW)) ow = 0, ++oh;
    }
}

/* Chunk o's share (of occ) of the cache lines holding bytes at .. at + bytes - 1, those
 * before end: asked for, into L2 (write: into L1, for writing). */
static inline void amx_ask_share(const char *at, int64_t bytes, int64_t o, int64_t occ,
                                 const char *end, int write) {
    const char *l0 = (const char *)((uintptr_t)at & ~(uintptr_t)63);
    const int64_t lines = (at - l0 + bytes + 63) / 64;
    for (int64_t l = lines * o / occ; l < lines * (o + 1) / occ; ++l) {
        if (l0 + l * 64 >= end) break;
        if (write) __builtin_prefetch(l0 + l * 64, 1, 3);
        else _mm_prefetch(l0 + l * 64, _MM_HINT_T1);
    }
}

static void amx_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const amx_plan_t *p = c->plan;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t pt = p->icp * p->esz;
    amx_out_t x = {.c = c, .dst = a->dst, .has_bias = a->bias != NULL};
    x.sum_scale = bdnn_post_ops_sum_scale(c, &x.has_sum);
    x.has_eltwise = c->n_post_ops > (x.has_sum ? 1 : 0);
    const int64_t row_bytes = d->oc * (int64_t)bdnn_dt_size(c->out_dt);
    const int64_t dst_bytes = d->mb * d->oh * d->ow * row_bytes;
    x.stream = c->out_dt == BDNN_DT_BF16 && !x.has_sum && !x.has_eltwise && d->oc % AMX_OCS == 0
            && bdnn_streams_output(a->dst, (size_t)dst_bytes, 64);
    const amx_finish_fn finish = amx_finish_for(c->out_dt, p->s32);
    /* rows of the previous item finished per step of tile products: all of them over the
     * steps (an even count: the 8-bit stores take rows in pairs) */
    const int64_t steps = p->ntaps * p->nkb;
    const int slice = (int)(bdnn_div_up(AMX_PTS, steps) + 1) & ~1;
    memset(p->bias, 0, sizeof(float) * (size_t)(p->occ * AMX_OCS));
    if (a->bias) bdnn_cvt_to_f32(c->attr.bia_dt, a->bias, p->bias, d->oc);
    /* GEMM, and any walk on src itself: one pass over every item (GEMM: the points of all
     * images in a row); the other walks copy and compute p->imgs images at a time, so the
     * copy is still in cache when its items read it (the whole batch's copy went to memory
     * and back) */
    const int per_image = p->copy && p->walk != WALK_GEMM;
    const int64_t passes = per_image ? bdnn_div_up(d->mb, p->imgs) : 1;
    const int64_t per_occ = p->ntaps * p->nkb * 2 * AMX_BTILE;
    const int64_t slack_at = (per_image ? p->imgs : d->mb) * p->hb * p->wb * pt;
    const int64_t src_bytes = d->mb * d->ih * d->iw * d->ic * p->esz;
    /* (streamed stores read no line in; blocks of several point items write a row's
     * pieces far apart) */
    const int pf_dst = p->m_block == 1 && !x.stream && dst_bytes / c->nthr >= AMX_PF_SHARE_BYTES;
    const int pf_src = p->m_block == 1 && p->walk == WALK_GEMM && !p->copy
                    && src_bytes / c->nthr >= AMX_PF_SHARE_BYTES
                    && AMX_PTS * p->lda <= AMX_SRC_PF_ITEM_BYTES;
#pragma omp parallel num_threads(c->nthr)
    {
        bdnn_amx_configure();
        float *acc = p->acc + omp_get_thread_num() * 2 * AMX_PTS * AMX_OCS;
        char *gbuf = p->fold_kh ? p->gbuf + omp_get_thread_num() * 2 * p->gbytes : NULL;
        if (gbuf) memset(gbuf, 0, (size_t)(2 * p->gbytes));
        int gcur = 0;
        const char *A = p->copy ? p->buf : (const char *)a->src;
        /* two items in flight: one's sums in the tiles, the last one's in its block */
        int64_t pixes[2][AMX_PTS], prev_oc0 = -1;
        int cur = 0;
        const char *staged = NULL;   /* the src points in this thread's stage */
        for (int64_t n = 0; n < passes; ++n) {
            /* the pass's images n0 .. n0 + ni - 1, in slots 0 .. ni - 1 of the copy; the
             * points past an image's read the next slot (in a pass of fewer images, an
             * earlier pass's) or the slack, and are dropped */
            const int64_t n0 = n * p->imgs, ni = d->mb - n0 < p->imgs ? d->mb - n0 : p->imgs;
            const int64_t m_pass = per_image ? ni * p->m_per_img : p->m_items;
            const int64_t rows = per_image ? ni * p->hb : d->mb * d->oh;   /* copy rows */
            const int64_t n_blk = bdnn_div_up(m_pass, p->m_block);
            /* fold_kh: the point item in gbuf block gcur; the next one's (this thread's
             * next item in the pass: m + 1) first nready points gathered, during the last
             * item's steps, into the other block */
            int64_t gm = -1;
            int nready = 0;
            if (p->copy) {
#pragma omp for schedule(static) nowait
                for (int64_t r = 0; r < rows; ++r) {
                    if (per_image) amx_copy_row(c, p, a->src, n0 + r / p->hb, r / p->hb, r % p->hb);
                    else amx_copy_row(c, p, a->src, r / d->oh, 0, r % d->oh);
                }
                if (n == 0) {
#pragma omp single nowait
                    memset(p->buf + slack_at, 0, (size_t)(p->slack_pts * pt));
                }
#pragma omp barrier
            }
            /* items: blocks of m_block point items, each with every channel chunk (the
             * loop's barrier: the next image's copy overwrites this one's) */
            const int64_t n_it = n_blk * p->occ * p->m_block;
            const int64_t it1 = n_it * (omp_get_thread_num() + 1) / omp_get_num_threads();
            for (int64_t it = n_it * omp_get_thread_num() / omp_get_num_threads(); it < it1; ++it) {
                const int64_t blk = it / (p->occ * p->m_block), rest = it % (p->occ * p->m_block);
                const int64_t o = rest / p->m_block, m = blk * p->m_block + rest % p->m_block;
                if (m >= m_pass) continue;
                const char *base;
                int64_t lda = p->lda;
                int64_t *pix = pixes[cur];
                if (p->walk == WALK_GEMM) {
                    const int64_t p0 = m * AMX_PTS;
                    base = A + p0 * pt;
                    for (int i = 0; i < AMX_PTS; ++i) pix[i] = p0 + i < p->q ? p0 + i : -1;
                } else if (p->walk == WALK_FLAT) {
                    const int64_t j = m / p->m_per_img, q0 = m % p->m_per_img * AMX_PTS;
                    base = A + (j * p->hb * p->wb + q0) * pt;
                    /* (one division: the columns then step, wrapping at wb) */
                    int64_t oh = q0 / p->wb, ow = q0 % p->wb;
                    const int64_t o_img = (n0 + j) * d->oh;
                    for (int i = 0; i < AMX_PTS; ++i) {
                        pix[i] = q0 + i < p->q && ow < d->ow ? (o_img + oh) * d->ow + ow : -1;
                        if (++ow == p->wb) ow = 0, ++oh;
                    }
                } else if (gbuf) {   /* gathered once for all the item's channel chunks */
                    const int64_t j = m / p->m_per_img, q0 = m % p->m_per_img * AMX_PTS;
                    const int64_t npt = d->oh * d->ow;
                    for (int i = 0; i < AMX_PTS; ++i)
                        pix[i] = q0 + i < npt ? (n0 + j) * npt + q0 + i : -1;
                    if (gm != m) {   /* (the rest of) its points into the other block */
                        amx_gather_kh(p, c, A, m, gbuf + (gcur ^ 1) * p->gbytes, nready, AMX_PTS);
                        gcur ^= 1, gm = m, nready = 0;
                    }
                    base = gbuf + gcur * p->gbytes;
                } else {
                    const int64_t j = m / p->m_per_img, mm = m % p->m_per_img;
                    const int64_t oh = mm / p->owc, ow0 = mm % p->owc * AMX_PTS;
                    base = A + ((j * p->hb + oh * d->sh) * p->wb + ow0 * p->col_step) * pt;
                    for (int i = 0; i < AMX_PTS; ++i)
                        pix[i] = ow0 + i < d->ow ? ((n0 + j) * d->oh + oh) * d->ow + ow0 + i : -1;
                }
                if (pf_src)   /* the next point item's rows follow this one's (in src) */
                    amx_ask_share(base + AMX_PTS * p->lda, AMX_PTS * p->lda, o, p->occ,
                                  A + src_bytes, 0);
                if (!p->copy && (base - A) + (AMX_PTS - 1) * p->lda + pt > src_bytes) {
                    /* src itself, and the item's dropped points would read past its end:
                     * its points from a thread's stage, one after another, zeros after;
                     * staged once for the point item's channel chunks (they come in a
                     * row, or alternate with the block's other items, which need none) */
                    char *st = p->stage + omp_get_thread_num() * AMX_PTS * pt;
                    if (staged != base) {
                        int i = 0;
                        for (; i < AMX_PTS && pix[i] >= 0; ++i)
                            memcpy(st + i * pt, base + i * p->lda, (size_t)pt);
                        memset(st + i * pt, 0, (size_t)((AMX_PTS - i) * pt));
                        staged = base;
                    }
                    base = st;
                    lda = pt;
                }
                if (pf_dst) {   /* the next point item's points follow this one's last */
                    int i = AMX_PTS - 1;
                    while (i > 0 && pix[i] < 0) --i;
                    amx_ask_share(x.dst + (pix[i] + 1) * row_bytes, AMX_PTS * row_bytes,
                                  o, p->occ, x.dst + dst_bytes, 1);
                }
                const char *w = (const char *)a->wei + o * per_occ;
                amx_pending_t f = {.fn = finish, .p = p, .x = &x,
                                   .acc = acc + (cur ^ 1) * AMX_PTS * AMX_OCS,
                                   .pix = pixes[cur ^ 1], .oc0 = prev_oc0,
                                   .end = prev_oc0 >= 0 ? AMX_PTS : 0,
                                   .rows = slice};
                if (gbuf && m + 1 < m_pass && (m + 1) * p->occ < it1) {
                    /* the next point item is this thread's: a share of its points
                     * gathered between this chunk's steps */
                    f.gcopy = A;
                    f.gm = m + 1;
                    f.gdst = gbuf + (gcur ^ 1) * p->gbytes;
                    f.g0 = nready;
                    f.g1 = (int)((o + 1) * AMX_PTS / p->occ);
                    f.grows = (int)bdnn_div_up(f.g1 - f.g0, steps);
                    nready = f.g1 > f.g0 ? f.g1 : f.g0;
                }
                if (p->s32) amx_item_int8(base, lda, p->tap_off, p->ntaps, p->nkb, w, &f);
                else amx_item_bf16(base, lda, p->tap_off, p->ntaps, p->nkb, w, &f);
                amx_store_sums(acc + cur * AMX_PTS * AMX_OCS);
                prev_oc0 = o * AMX_OCS;
                cur ^= 1;
            }
#pragma omp barrier
        }
        if (prev_oc0 >= 0)
            finish(p, &x, acc + (cur ^ 1) * AMX_PTS * AMX_OCS, pixes[cur ^ 1], prev_oc0, 0,
                   AMX_PTS);
        if (x.stream) bdnn_stream_fence();
        _tile_release();
    }
}

static void amx_fini(struct bdnn_conv *c) {
    amx_plan_t *p = c->plan;
    if (!p) return;
    free(p->gbuf);
    free(p->buf);
    free(p->stage);
    free(p->acc);
    free(p->bias);
    free(p);
}

const conv_impl_ops_t bdnn_conv_amx_ops = {
    amx_init, amx_weights_bytes, amx_pack_weights, amx_execute, amx_fini, NULL,
};
