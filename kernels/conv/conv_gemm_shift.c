/* gemm_conv's shift route (rows <family>:<isa>:shift): forward, 1D/2D, on f32 or on the
 * dot-product kernels' channel groups (bf16 pairs, int8 quads), the input copied once into
 * zero-padded planes that every tap's B reads in place, shifted. Preconditions: the
 * row's applies (bdnn_gemm_shift_applies); the padded copy within SHIFT_MAX_PAD_FLOATS
 * (init refuses past it). conv_gemm_s2d.c runs the same loops on space-to-depth phases. */
#include "conv_gemm.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Forward, shift route (f32, 1D/2D, unit stride, several taps): im2col copies every input
 * point once per tap it feeds (9x the input for 3x3). Instead the input is copied once
 * into a zero-padded buffer of Hp x Wp per channel, and the outputs are computed on the
 * padded grid (column oh*Wp + ow, the Wp - OW columns past each row's end discarded):
 * there, tap (kh, kw)'s operand is the padded plane itself shifted by kh*(DH+1)*Wp +
 * kw*(DW+1), so the micro-kernel reads B rows in place (ldb = the plane), with K ordered
 * (tap, ic) and k blocks inside one tap. A C block is computed on the padded grid, then
 * its valid columns are stored into dst with bias and post-ops. (SHIFT_MIN_ICG,
 * conv_gemm.h: the fewest input channels per group.) */
static const int64_t SHIFT_MAX_PAD_FLOATS = (int64_t)64 << 20;
/* The copy and the products run image chunk by image chunk, each chunk's planes at most
 * this many bytes (or one image): copied, then read by every tile from L2, where a whole
 * minibatch's copy (12.8 MB for mb16 at 56x56 with 256 channels) is read back from L3 or
 * memory. */
enum { SHIFT_CHUNK_BYTES = 1 << 20 };
/* Planes start on a cache line (16 floats or lanes): a tile's B row, 16 lanes of one
 * plane, then spans one line where a 7x7 or 14x14 plane's would span two. */
enum { PLANE_ALIGN = 16 };

/* bf16 (pack 2) and int8 (pack 4) take the route with the padded copy made of channel
 * groups: one 32-bit lane per point holds channels (2i, 2i+1) as bf16, or (4i .. 4i+3)
 * as u8 (an s8 source shifted by 128), the layout the dot-product kernels read, so B is
 * read in place there too, straight from the user's input (no f32 staging, no im2col,
 * no regrouping); the padding holds the source zero point (shifted), which the packed
 * weights' compensation removes, and the accumulators go through the low-precision
 * epilogue. */
int bdnn_gemm_shift_plan(struct bdnn_conv *c, gemm_plan_t *p, const conv_gemm_ukr_t *u, int s2d) {
    const bdnn_conv_desc_t *d = &c->d;
    /* the padded planes' problem: channels per image, taps, dilations (one group by s2d) */
    const int64_t s_ic = s2d ? d->ic * d->sh * d->sw : d->ic;
    const int64_t s_kh = s2d ? bdnn_div_up(d->kh, d->sh) : d->kh;
    const int64_t s_kw = s2d ? bdnn_div_up(d->kw, d->sw) : d->kw;
    const int64_t s_dh = s2d ? 0 : d->dh, s_dw = s2d ? 0 : d->dw;
    const int64_t hp = d->oh + (s_kh - 1) * (s_dh + 1);
    /* A row's taps read up to reach - 1 columns past its start. Rows may be narrower
     * than that when the excess falls on the next row's left padding: its first pw
     * columns hold the padding value too (3x3 on 7x7: 8 columns, not 9, so one discarded
     * output per row, not two). Not with space-to-depth phases or strides (their columns
     * map otherwise), nor under the right-edge defect, which writes rows' right padding. */
    const int64_t reach = d->ow + (s_kw - 1) * (s_dw + 1);
    const int shared_pad = !s2d && d->sw == 1 && c->fault != BDNN_FAULT_RIGHT_PAD_EDGE;
    const int64_t held = d->pw + d->iw < reach ? d->pw + d->iw : reach;   /* read input */
    const int64_t narrow = reach - d->pw > held ? reach - d->pw : held;
    const int64_t wp = !shared_pad ? reach : narrow > d->ow ? narrow : d->ow;
    const int pack = c->lp ? u->pack : 1;
    /* The gather route's rules for zero points (lp_init), checked before the plan moves. */
    const float shift = pack == 4 && c->attr.src_dt == BDNN_DT_S8 ? 128.0f : 0.0f;
    const int64_t pad_u8 = (int64_t)c->attr.src_zp + (int64_t)shift;
    if (c->attr.src_zp && pack != 4) return BDNN_STATUS_UNIMPLEMENTED;
    /* the padded planes' border holds one value: per-channel zero points go to gather */
    if (c->src_zps) return BDNN_STATUS_UNIMPLEMENTED;
    if (pack == 4 && (pad_u8 < 0 || pad_u8 > 255)) return BDNN_STATUS_UNIMPLEMENTED;
    /* An epilogue of only a bias and the conversion: the kernel stores each tile's result
     * itself, in place of the accumulator block and the epilogue's pass over it (see
     * shift_chains); from registers where the grid has no columns to drop (a 1x1's), else
     * run by run of real outputs from the tile spilled to L1. */
    const int direct_store = pack > 1 && u->dp_store_fn && (u->store_dts & (1u << c->out_dt))
        && c->attr.scales == BDNN_SCALES_NONE && c->attr.dst_zp == 0 && !c->dst_zps
        && c->n_post_ops == 0 && c->fault == BDNN_FAULT_NONE;
    /* A 1x1 on channel groups has no columns to drop and no tap reading past its plane:
     * the chunk's images are stacked along N, the planes of one channel group image after
     * image, unaligned, so that N is the chunk's points and tiles run on from one image
     * into the next. Only where an image alone would leave more than an eighth of its
     * points' worth of its last tile empty (a 7x7 output, 49 points, ends on a tile of
     * one column): elsewhere stacking ran slower. Not with the direct store, whose tiles
     * store within one image. */
    const int64_t points = d->oh * d->ow, empty = bdnn_div_up(points, u->nr) * u->nr - points;
    const int stacked = pack > 1 && !s2d && s_kh * s_kw == 1 && !direct_store
        && 8 * empty > points;
    /* planes of f32, or of 32-bit channel-group lanes */
    const int64_t plane = stacked ? hp * wp
                                  : (hp * wp + PLANE_ALIGN - 1) / PLANE_ALIGN * PLANE_ALIGN;
    const int64_t image_bytes = 4 * (s_ic / pack) * plane;
    int64_t chunk = SHIFT_CHUNK_BYTES / image_bytes;
    if (chunk > d->mb) chunk = d->mb;
    if (chunk < 1) chunk = 1;
    /* stacked: each group's run of planes starts on a cache line, as unstacked planes do,
     * so that every tile's B rows do (a row across two lines loads as two) */
    const int64_t gstride = stacked ? bdnn_div_up(chunk * plane, PLANE_ALIGN) * PLANE_ALIGN
                                    : plane;
    const int64_t padded = (stacked ? (s_ic / pack) * gstride : chunk * (s_ic / pack) * plane)
                         + wp + u->nr;
    if (padded > SHIFT_MAX_PAD_FLOATS) return BDNN_STATUS_UNIMPLEMENTED;
    p->shift = 1, p->hp = hp, p->wp = wp, p->plane = plane, p->chunk = chunk;
    p->stacked = stacked, p->gstride = gstride;
    p->s_ic = s_ic, p->s_icg = s2d ? s_ic : d->ic / d->g;
    p->s_kh = s_kh, p->s_kw = s_kw, p->s_dh = s_dh, p->s_dw = s_dw;
    p->s2d_h = s2d ? d->sh : 0, p->s2d_w = s2d ? d->sw : 0;
    p->M = d->oc / d->g, p->N = (stacked ? chunk : 1) * d->oh * wp;
    p->K = p->s_icg * p->s_kh * p->s_kw;
    p->pack = c->lp ? u->pack : 0;
    p->Kp = p->K;   /* k blocks are whole channel groups */
    p->b_shift = shift, p->pad = (float)c->attr.src_zp;
    p->a_panels = bdnn_div_up(p->M, u->mr);
    p->direct_store = direct_store;
    /* Work split as the gather route's, over one chunk's instances (stacked: its groups):
     * column blocks of up to NC_PANELS_MAX panels, rows split when there are too few
     * items. */
    const int64_t want = 4 * (int64_t)c->nthr, panels = bdnn_div_up(p->N, u->nr);
    const int64_t inst = (stacked ? 1 : chunk) * d->g;
    int64_t per_block = panels < NC_PANELS_MAX ? panels : NC_PANELS_MAX;
    while (per_block > 1 && inst * bdnn_div_up(panels, per_block) < want)
        per_block = bdnn_div_up(per_block, 2);
    p->nc = per_block * u->nr;
    p->n_col_blocks = bdnn_div_up(p->N, p->nc);
    int64_t row_blocks = bdnn_div_up(p->a_panels, MC_PANELS_MAX);
    if (inst * p->n_col_blocks * row_blocks < want)
        row_blocks = bdnn_div_up(want, inst * p->n_col_blocks);
    if (row_blocks > p->a_panels) row_blocks = p->a_panels;
    p->m_rows = bdnn_div_up(p->a_panels, row_blocks) * u->mr;
    p->n_row_blocks = bdnn_div_up(p->a_panels * u->mr, p->m_rows);
    p->padded = bdnn_aligned_alloc(sizeof(float) * (size_t)padded);
    if (!p->padded) return BDNN_STATUS_OUT_OF_MEMORY;
    /* Borders: zero, or int8's padding byte in each of a lane's four bytes; never
     * rewritten, since every execution copies the same positions. So the planes are the
     * primitive's own, not its scratchpad's (conv_scratch). */
    if (pack == 4) {
        uint32_t *lanes = (uint32_t *)p->padded;
        for (int64_t i = 0; i < padded; ++i) lanes[i] = 0x01010101u * (uint32_t)pad_u8;
    } else {
        memset(p->padded, 0, sizeof(float) * (size_t)padded);
    }
    if (has_pairs16(c)) c->variant = &p->variant;
    p->scratch = calloc(c->nthr, sizeof(scratch_t));
    if (!p->scratch) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < c->nthr; ++t) {
        scratch_t *s = &p->scratch[t];
        if (conv_scratch((void **)&s->cbuf, sizeof(float) * (size_t)(p->m_rows * p->nc)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (c->lp) {
            if (conv_scratch((void **)&s->tmp, sizeof(float) * (size_t)(p->nc + EPI_TMP_SLACK)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

/* The padded copy of the input (shift route); the right-edge defect fills the right
 * padding of every existing row with the row's last value. */
static void shift_pad_input(const exec_t *e, int64_t n0, int64_t n1) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int64_t hp = p->hp, wp = p->wp, IH = d->ih, IW = d->iw;
    const int edge = c->fault == BDNN_FAULT_RIGHT_PAD_EDGE;
#pragma omp parallel for num_threads(c->nthr) schedule(static)
    for (int64_t plane = 0; plane < (n1 - n0) * d->ic; ++plane) {
        const float *in = e->b_src + (n0 * d->ic + plane) * IH * IW;
        float *out = p->padded + plane * p->plane;
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
 * cost a 1x1 layer more than its dot products did. Returns the OR of the int8 lanes
 * written (0 for bf16): each byte of it bounds the bytes of its position (pairs16). */
static inline __attribute__((always_inline)) uint32_t
group_lanes_run_s(uint32_t *restrict out, const void *src, int pack, int64_t step, int64_t i,
                  int64_t n, uint32_t flip, int64_t s) {
    if (pack == 2) {
        const uint16_t *restrict h0 = (const uint16_t *)src + i, *restrict h1 = h0 + step;
        for (int64_t x = 0; x < n; ++x)
            out[x] = (uint32_t)h0[x * s] | (uint32_t)h1[x * s] << 16;
        return 0;
    }
    const uint8_t *restrict b0 = (const uint8_t *)src + i, *restrict b1 = b0 + step,
                            *restrict b2 = b1 + step, *restrict b3 = b2 + step;
    uint32_t any = 0;
    for (int64_t x = 0; x < n; ++x) {
        const uint32_t lane = ((uint32_t)b0[x * s] | (uint32_t)b1[x * s] << 8
                               | (uint32_t)b2[x * s] << 16 | (uint32_t)b3[x * s] << 24) ^ flip;
        out[x] = lane;
        any |= lane;
    }
    return any;
}
/* ... points s apart along the input row (a strided 1x1's planes); s = 1 and 2 (ResNet's
 * downsampling layers) are compiled apart, with the stride a constant to vectorize by. */
#define GROUP_LANES_RUN(NAME, ATTR)                                                         \
    ATTR static uint32_t NAME(uint32_t *out, const void *src, int pack, int64_t step,       \
                              int64_t i, int64_t n, uint32_t flip, int64_t s) {             \
        if (s == 1) return group_lanes_run_s(out, src, pack, step, i, n, flip, 1);          \
        if (s == 2) return group_lanes_run_s(out, src, pack, step, i, n, flip, 2);          \
        return group_lanes_run_s(out, src, pack, step, i, n, flip, s);                      \
    }
GROUP_LANES_RUN(group_lanes_run_base, )
#if defined(__x86_64__) || defined(__i386__)
/* ... for rows of AVX2 and up (the copy is a pass over the whole input in every
 * execution): compiled for AVX2, and int8's consecutive points (s = 1, the 1x1s' planes
 * and every unstrided row) by interleaving 32 points of the four channel rows with byte
 * and word unpacks, where the compiler widens each byte to 32 bits and shifts it. */
GROUP_LANES_RUN(group_lanes_compiled_avx2, __attribute__((target("avx2"))))
/* The OR of a vector's eight 32-bit lanes. */
__attribute__((target("avx2")))
static inline uint32_t or_lanes_avx2(__m256i v) {
    __m128i a4 = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    a4 = _mm_or_si128(a4, _mm_shuffle_epi32(a4, 0x4e));
    a4 = _mm_or_si128(a4, _mm_shuffle_epi32(a4, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(a4);
}
/* ... int8 with stride 2 (the strided 1x1s' rows, where the compiled loop left a 28-point
 * row's last 12 points lane by lane): 8 points a step, each channel row's 16 bytes from
 * the first point's on, their even bytes interleaved. A step's last byte lies one past
 * its last point's, so the steps stop short of the row's last point (the last step
 * overlapping the one before), which goes alone: nothing past the run is read. */
__attribute__((target("avx2")))
static inline __m256i s2_step_avx2(uint32_t *out, const uint8_t *b, int64_t step,
                                   __m256i vflip) {
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1,
                                       -1);
#define EVEN_BYTES(r) _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(b + (r) * step)), even)
    const __m128i p01 = _mm_unpacklo_epi8(EVEN_BYTES(0), EVEN_BYTES(1));
    const __m128i p23 = _mm_unpacklo_epi8(EVEN_BYTES(2), EVEN_BYTES(3));
#undef EVEN_BYTES
    const __m256i v = _mm256_xor_si256(
        _mm256_set_m128i(_mm_unpackhi_epi16(p01, p23), _mm_unpacklo_epi16(p01, p23)), vflip);
    _mm256_storeu_si256((__m256i *)out, v);
    return v;
}
__attribute__((target("avx2")))
static uint32_t group_lanes_s2_avx2(uint32_t *out, const uint8_t *b0, int64_t step, int64_t n,
                                    uint32_t flip) {
    const __m256i vflip = _mm256_set1_epi32((int32_t)flip);
    __m256i any = _mm256_setzero_si256();
    int64_t x = 0;
    for (; x + 9 <= n; x += 8)
        any = _mm256_or_si256(any, s2_step_avx2(out + x, b0 + 2 * x, step, vflip));
    if (n >= 9 && x < n - 1)   /* points x .. n - 2 left: a step ending at n - 2 */
        any = _mm256_or_si256(any, s2_step_avx2(out + n - 9, b0 + 2 * (n - 9), step, vflip));
    const int64_t x1 = n >= 9 ? n - 1 : 0;   /* the points left: the last, or all */
    return or_lanes_avx2(any)
         | group_lanes_compiled_avx2(out + x1, b0, 4, step, 2 * x1, n - x1, flip, 2);
}
__attribute__((target("avx2")))
static uint32_t group_lanes_run_avx2(uint32_t *out, const void *src, int pack, int64_t step,
                                     int64_t i, int64_t n, uint32_t flip, int64_t s) {
    if (pack == 4 && s == 2)
        return group_lanes_s2_avx2(out, (const uint8_t *)src + i, step, n, flip);
    if (pack != 4 || s != 1)
        return group_lanes_compiled_avx2(out, src, pack, step, i, n, flip, s);
    const uint8_t *b0 = (const uint8_t *)src + i;
    const __m256i vflip = _mm256_set1_epi32((int32_t)flip);
    __m256i any = _mm256_setzero_si256();
    int64_t x = 0;
    for (; x + 32 <= n; x += 32) {
        const __m256i r0 = _mm256_loadu_si256((const __m256i *)(b0 + x));
        const __m256i r1 = _mm256_loadu_si256((const __m256i *)(b0 + step + x));
        const __m256i r2 = _mm256_loadu_si256((const __m256i *)(b0 + 2 * step + x));
        const __m256i r3 = _mm256_loadu_si256((const __m256i *)(b0 + 3 * step + x));
        /* within each 128-bit half: channel pairs, then quads (points 0-3 | 16-19, ...) */
        const __m256i lo01 = _mm256_unpacklo_epi8(r0, r1), hi01 = _mm256_unpackhi_epi8(r0, r1);
        const __m256i lo23 = _mm256_unpacklo_epi8(r2, r3), hi23 = _mm256_unpackhi_epi8(r2, r3);
        const __m256i q0 = _mm256_unpacklo_epi16(lo01, lo23);
        const __m256i q1 = _mm256_unpackhi_epi16(lo01, lo23);
        const __m256i q2 = _mm256_unpacklo_epi16(hi01, hi23);
        const __m256i q3 = _mm256_unpackhi_epi16(hi01, hi23);
        const __m256i o[4] = {_mm256_permute2x128_si256(q0, q1, 0x20),
                              _mm256_permute2x128_si256(q2, q3, 0x20),
                              _mm256_permute2x128_si256(q0, q1, 0x31),
                              _mm256_permute2x128_si256(q2, q3, 0x31)};
        for (int t = 0; t < 4; ++t) {
            const __m256i v = _mm256_xor_si256(o[t], vflip);
            _mm256_storeu_si256((__m256i *)(out + x + 8 * t), v);
            any = _mm256_or_si256(any, v);
        }
    }
    return or_lanes_avx2(any)
         | group_lanes_compiled_avx2(out + x, src, pack, step, i + x, n - x, flip, 1);
}
#endif
typedef uint32_t (*group_lanes_fn)(uint32_t *, const void *, int, int64_t, int64_t, int64_t,
                                   uint32_t, int64_t);
static group_lanes_fn group_lanes_for(const struct bdnn_conv *c) {
#if defined(__x86_64__) || defined(__i386__)
    if (c->impl && c->impl->isa >= BDNN_ISA_AVX2) return group_lanes_run_avx2;
#endif
    return group_lanes_run_base;
}

/* The padded copy of a bf16 or int8 input as channel groups (shift route): lane (y, x)
 * of group plane i holds channels pack*i .. pack*i + pack-1 of input point
 * (y*SH - PH, x*SW - PW); an s8 source flips each byte's sign bit, which is adding 128
 * (the u8 the VNNI kernel takes). Strides other than 1 come only with one tap (1x1): the
 * plane is then the grid of output points, each lane the input point it reads (stacked:
 * image after image for each group, bdnn_gemm_shift_plan). Returns the OR of the int8
 * lanes written. */
static uint32_t shift_pad_input_groups(const exec_t *e, const void *src, int64_t n0,
                                       int64_t n1) {
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
    const group_lanes_fn group_lanes_run = group_lanes_for(c);
    /* Rows as wide in both, unit strides: the rows inside the input are one run (a 1x1's
     * whole plane), not rows of 7 to 56 points, most of them a vector loop's tail. */
    const int rows_join = SH == 1 && SW == 1 && PW == 0 && wp == IW && !edge;
    const int64_t y0 = d->ph > 0 ? d->ph : 0, y1 = IH + d->ph < hp ? IH + d->ph : hp;
    uint32_t any = 0;
#pragma omp parallel for num_threads(c->nthr) schedule(static) reduction(| : any)
    for (int64_t plane = 0; plane < (n1 - n0) * groups; ++plane) {
        const int64_t n = n0 + plane / groups, i = plane % groups;
        const char *in = (const char *)src + elt * (size_t)((n * d->ic + pack * i) * IH * IW);
        uint32_t *out = padded + (p->stacked ? i * p->gstride + (n - n0) * p->plane
                                             : plane * p->plane);
        if (rows_join) {   /* rows [y0, y1) are one run in both */
            any |= group_lanes_run(out + y0 * wp, in, pack, IH * IW, (y0 - d->ph) * IW,
                                   (y1 - y0) * wp, flip, 1);
            continue;
        }
        for (int64_t y = 0; y < hp; ++y) {
            const int64_t iy = y * SH - d->ph;
            if (iy < 0 || iy >= IH) continue;   /* a padding row, from creation */
            uint32_t *row = out + y * wp;
            any |= group_lanes_run(row + x0, in, pack, IH * IW, iy * IW + x0 * SW - PW,
                                   x1 - x0, flip, SW);
            if (edge)
                for (int64_t x = x1; x < wp; ++x)
                    any |= row[x] = group_lane(in, pack, IH * IW, iy * IW + IW - 1, flip);
        }
    }
    return any;
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
    /* No columns to drop (1x1: the padded grid is the output grid): one run per image
     * (stacked: the block's columns may span several), as long as the block, instead of
     * one per output row (7 points at 7x7, a vector's tail). */
    if (wp == OW) {
        for (int64_t j = j0; j < j0 + ncols;) {
            const int64_t img = j / OP, x = j % OP;
            const int64_t len = OP - x < j0 + ncols - j ? OP - x : j0 + ncols - j;
            bdnn_conv_epilogue(c, s->cbuf + (j - j0), p->nc, m1 - m0, len, g * p->M + m0,
                               e->bias, comp, e->out,
                               ((n + img) * d->oc + g * p->M + m0) * OP + x, OP, s->tmp);
            j += len;
        }
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
    /* a bounded tile on the s8 copy of A, or the row's tile (same mr, nr and places) */
    const conv_gemm_ukr_t *u = e->tile ? e->tile : ukr_of(c);
    const int32_t *comp = p->pack == 4   /* int8: see shift_store_lp */
        ? (const int32_t *)((const char *)e->a_packed + grouped_bytes(c)) : NULL;
    const size_t osz = bdnn_dt_size(c->out_dt);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, pack = p->pack;
    const int64_t icg = p->s_icg;
    const size_t elt = pack == 2 ? 2 : 1;
    const int64_t gstride = p->gstride;
    const int64_t ldb = (int64_t)(4 / elt) * gstride;   /* a lane row in B's elements */
    const size_t aelt = e->tile ? 1 : a_esz(c);
    const char *a_g = (const char *)e->a_packed + (e->tile ? pairs16_offset(c) : 0)
                    + aelt * (size_t)(g * p->a_panels * MR * p->Kp);
    /* per block of a chain: its k length, B rows, and A micro-panel at row m0 with the
     * step to the next row panel's (grouped weights, as bdnn_gemm_run_gather addresses
     * them), so that the blocks are set up once per column panel, not per tile: a chain
     * of many short blocks (conv1's 16 taps of 3 quads) would rebuild them per tile */
    int64_t kcs[SHIFT_CHAIN_MAX], a_steps[SHIFT_CHAIN_MAX];
    const float *bs[SHIFT_CHAIN_MAX];
    const char *as[SHIFT_CHAIN_MAX];
    conv_dp_block_t blk[SHIFT_CHAIN_MAX];
    for (int64_t pc0 = 0, pc1; pc0 < K; pc0 = pc1) {
        int64_t nb = 0, rows = 0;
        for (pc1 = pc0; pc1 < K && nb < SHIFT_CHAIN_MAX;) {
            const int64_t kc = kblock_len(p, pc1);
            if (nb > 0 && (rows + kc / pack) * NR * 4 > SHIFT_CHAIN_B_BYTES) break;
            const int64_t tap = pc1 / icg, c0 = pc1 % icg;
            const int64_t kh = tap / p->s_kw, kw = tap % p->s_kw;
            kcs[nb] = kc, a_steps[nb] = (int64_t)aelt * kc * MR;
            as[nb] = a_g + aelt * (size_t)(pc1 * p->a_panels * MR + (m0 / MR) * kc * MR);
            bs[nb] = in_ng + c0 / pack * gstride + kh * (p->s_dh + 1) * p->wp
                   + kw * (p->s_dw + 1) + j0;
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
            for (int64_t i = 0; i < nb; ++i)
                blk[i] = (conv_dp_block_t){kcs[i], as[i], bs[i] + q * NR};
            for (int64_t m = m0; m < m1; m += MR) {
                const int64_t mr = M - m < MR ? M - m : MR;
                if (m > m0)
                    for (int64_t i = 0; i < nb; ++i)
                        blk[i].a = (const char *)blk[i].a + a_steps[i];
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

/* The columns of a chunk's grid (stacked: its points, as the last chunk may hold fewer
 * images). */
static int64_t chunk_cols(const gemm_plan_t *p, int64_t n0, int64_t n1) {
    return p->stacked ? (n1 - n0) * p->plane : p->N;
}

/* An item's block of C: rows [m0, m1), columns [j0, j0 + ncols) of a grid of N columns
 * (empty where m0 >= m1 or ncols <= 0). */
typedef struct {
    int64_t m0, m1, j0, ncols;
} shift_block_t;

static shift_block_t shift_block(const gemm_plan_t *p, int64_t N, int64_t item) {
    const int64_t rb = item % p->n_row_blocks;
    const int64_t cb = (item / p->n_row_blocks) % p->n_col_blocks;
    const int64_t j0 = cb * p->nc, m0 = rb * p->m_rows;
    return (shift_block_t){m0, m0 + p->m_rows < p->M ? m0 + p->m_rows : p->M, j0,
                           N - j0 < p->nc ? N - j0 : p->nc};
}

/* An item's cost for bdnn_cost_share: per row, its columns plus NR per tile (a tile streams
 * its weights whatever its columns: one of a single column takes about half a full one's
 * time). */
typedef struct {
    const gemm_plan_t *p;
    int64_t N, nr;
} shift_cost_t;

static int64_t shift_item_cost(const void *ctx, int64_t item) {
    const shift_cost_t *k = ctx;
    const shift_block_t b = shift_block(k->p, k->N, item);
    if (b.m0 >= b.m1 || b.ncols <= 0) return 0;
    return (b.m1 - b.m0) * (b.ncols + bdnn_div_up(b.ncols, k->nr) * k->nr);
}

/* One work item of the chunk of images [n0, n1) (items split as the plan's: row block,
 * column block, instance), the chunk's planes at the buffer's start. */
static void shift_item(const exec_t *e, const scratch_t *s, int64_t n0, int64_t n1,
                       int64_t item) {
    const struct bdnn_conv *c = e->c;
    const gemm_plan_t *p = e->p;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t MR = u->mr, NR = u->nr, M = p->M, K = p->K, G = c->d.g;
    const int64_t icg = p->s_icg, plane = p->plane, pack = p->pack, gstride = p->gstride;
    const int64_t N = chunk_cols(p, n0, n1);
    const shift_block_t blk = shift_block(p, N, item);
    const int64_t j0 = blk.j0, ncols = blk.ncols, m0 = blk.m0, m1 = blk.m1;
    const int64_t inst = n0 * G + item / (p->n_row_blocks * p->n_col_blocks);
    const int64_t n = inst / G, g = inst % G;
    if (m0 >= M || ncols <= 0) return;
    /* first element (f32 or 32-bit channel-group lane) of this image and group's planes
     * (stacked: n is n0) */
    const int64_t per = pack ? pack : 1;
    const float *in_ng = p->padded + (n - n0) * (p->s_ic / per) * plane
                       + g * icg / per * gstride;
    if (pack && u->dp_chain_fn) {
        shift_chains(e, s, in_ng, n, g, j0, ncols, m0, m1);
        if (!p->direct_store) shift_store_lp(e, s, inst, m0, m1, j0, ncols);
        return;
    }
    for (int64_t pc = 0, kc; pc < K; pc += kc) {
        kc = kblock_len(p, pc);
        const int64_t tap = pc / icg, c0 = pc % icg;
        const int64_t kh = tap / p->s_kw, kw = tap % p->s_kw;
        const float *b = in_ng + c0 / per * gstride
                       + kh * (p->s_dh + 1) * p->wp + kw * (p->s_dw + 1) + j0;
        for (int64_t q = 0; q * NR < ncols; ++q)
            for (int64_t m = m0; m < m1; m += MR) {
                const int64_t mr = M - m < MR ? M - m : MR;
                const int64_t nr = ncols - q * NR < NR ? ncols - q * NR : NR;
                float *cblk = s->cbuf + (m - m0) * p->nc + q * NR;
                if (pack) {   /* grouped weights, as bdnn_gemm_run_gather addresses them */
                    const size_t elt = pack == 2 ? 2 : 1;
                    const char *a_blk = (const char *)e->a_packed + a_esz(c) * (size_t)(
                        g * p->a_panels * MR * p->Kp + pc * p->a_panels * MR
                        + (m / MR) * kc * MR);
                    /* ldb: a lane row in the B operand's elements (bf16 or bytes) */
                    u->dp_fn(kc, a_blk, b + q * NR, (int64_t)(4 / elt) * gstride, cblk,
                             p->nc, mr, nr, pc > 0);
                } else {
                    const float *a_blk = (const float *)e->a_packed
                        + g * p->a_panels * MR * K + pc * p->a_panels * MR
                        + (m / MR) * kc * MR;
                    u->fn(kc, a_blk, b + q * NR, gstride, cblk, p->nc, mr, nr,
                          pc > 0 ? UKR_ACCUMULATE : UKR_WRITE, NULL, 0.0f, 0.0f);
                }
            }
    }
    if (pack) shift_store_lp(e, s, inst, m0, m1, j0, ncols);
    else shift_store(e, s->cbuf, p->nc, inst, m0, m1, j0, ncols);
}

/* The tile an int8 chunk runs: the deepest bounded one that the OR of its lanes (the
 * padding byte added) and the weights' largest pair prove exact, else the row's (NULL).
 * Depth 2 only where each k block is whole pairs of quads (channel groups in 8s): on the
 * s2d first layer's blocks of three quads it ran slower than depth 1. */
static const conv_gemm_ukr_t *chunk_tile(const struct bdnn_conv *c, uint32_t any,
                                         int32_t w_pair) {
    const gemm_plan_t *p = c->plan;
    const uint32_t pad = (uint32_t)(int32_t)(p->pad + p->b_shift);
    const int32_t b_max = (int32_t)((any | any >> 8 | any >> 16 | any >> 24 | pad) & 0xff);
    const conv_gemm_ukr_t *tile = NULL;
    for (const conv_gemm_ukr_t *t = ukr_of(c)->pairs16; t; t = t->pairs16) {
        if (!bdnn_pairs16_exact(b_max, t->pair_depth * w_pair)) break;
        if (p->s_icg % (4 * t->pair_depth)) break;
        tile = t;
    }
    return tile;
}

/* Image chunks (SHIFT_CHUNK_BYTES): each chunk's copy, then its items. */
void bdnn_gemm_run_shift(const exec_t *e) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int pairs16 = has_pairs16(c);
    const char *variant = NULL;
    int mixed = 0;
    for (int64_t n0 = 0; n0 < d->mb; n0 += p->chunk) {
        const int64_t n1 = n0 + p->chunk < d->mb ? n0 + p->chunk : d->mb;
        uint32_t any = 0;   /* int8: the OR of the chunk's lanes */
        if (p->s2d_h) any = bdnn_gemm_s2d_pad_input(e, e->b_src, n0, n1);
        else if (p->pack) any = shift_pad_input_groups(e, e->b_src, n0, n1);
        else shift_pad_input(e, n0, n1);
        exec_t ec = *e;
        if (pairs16) {
            ec.tile = chunk_tile(c, any, *pairs16_wmax(c, e->a_packed));
            const char *ran = ec.tile ? ec.tile->variant : NULL;
            mixed |= n0 > 0 && ran != variant;
            variant = ran;
        }
        /* Each thread runs a fixed share of the items, balanced by their cost (a last column
         * block of a few columns, a last row block of fewer rows, a stacked chunk's items
         * past its points cost less): bdnn_cost_share. */
        const int64_t items = (p->stacked ? 1 : n1 - n0) * d->g * p->n_col_blocks
                            * p->n_row_blocks;
        const shift_cost_t cost = {p, chunk_cols(p, n0, n1), ukr_of(c)->nr};
#pragma omp parallel num_threads(c->nthr)
        {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            const scratch_t *s = &p->scratch[t];
            int64_t lo, hi;
            const int64_t shared = bdnn_cost_share(items, shift_item_cost, &cost, t, nt, &lo, &hi);
            for (int64_t item = lo; item < hi; ++item) shift_item(&ec, s, n0, n1, item);
#pragma omp for schedule(dynamic, 1) nowait
            for (int64_t item = shared; item < items; ++item) shift_item(&ec, s, n0, n1, item);
        }
    }
    if (pairs16)   /* the plan is the primitive's own state, as its padded planes are */
        ((gemm_plan_t *)c->plan)->variant = mixed ? "mixed" : variant;
}

int bdnn_gemm_shift_applies(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t icg = d->ic / d->g, taps = taps_of(d);
    /* f32, or bf16 / int8 on the dot-product kernels with whole channel groups (see
     * bdnn_gemm_shift_plan). */
    const int shift_types = !c->lp || (u->pack > 0 && icg % u->pack == 0);
    /* A 1x1 in bf16 or int8 takes it too: its "padded" planes are the channel-group
     * planes the dot products read in place, built straight from the user's input
     * (the gather route would widen the input to f32, pack it and regroup it). */
    const int grouped = c->lp && u->pack > 0;
    /* ... and a strided one: its planes hold the input points the outputs read. */
    const int unit_stride = d->sh == 1 && d->sw == 1;
    const int planar = d->kd == 1 && d->id == 1 && d->od == 1;
    return c->dir == BDNN_DIR_FWD && shift_types && (taps > 1 || grouped) && icg >= SHIFT_MIN_ICG
        && planar && (unit_stride || (grouped && taps == 1));
}

static int shift_route_init(struct bdnn_conv *c) {
    gemm_plan_t *p;
    const int st = bdnn_gemm_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : bdnn_gemm_shift_plan(c, p, ukr_of(c), 0);
}

const conv_impl_ops_t bdnn_conv_gemm_shift_ops = {
    shift_route_init, bdnn_gemm_weights_bytes, bdnn_gemm_pack_weights, bdnn_gemm_execute, bdnn_gemm_fini,
    NULL,
};
