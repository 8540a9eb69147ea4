/* The AVX-512 output conversions of the low-precision epilogue, shared by the epilogue
 * (conv_epilogue_avx512.c) and the dot-product micro-kernels that store their last chain
 * straight into the output (conv_dp_chain_store_fn): one definition, so both give dt.h's
 * bits. Include after a target pragma with avx512f, avx512vl, avx512bw and avx512dq. */
#ifndef BDNN_CONV_STORE_AVX512_H
#define BDNN_CONV_STORE_AVX512_H
#include <immintrin.h>
#include <stdint.h>

#include "bdnn.h"
#include "conv_impl.h"
#include "dt.h"

/* The lane masks of a 32-column tile's two vectors for its first nr columns. */
static inline void bdnn_tile_masks32(int64_t nr, __mmask16 *m0, __mmask16 *m1) {
    *m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    *m1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1u);
}

/* Saturation to [lo, hi] with NaN giving 0, then rounding to nearest even (dt.h). */
static inline __m512i bdnn_epi_sat_round(__m512 v, __m512 lo, __m512 hi) {
    const __m512 ordered = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
    return _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_max_ps(ordered, lo), hi),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* dt.h's bdnn_f32_to_bf16: NaN quieted, else rounded to nearest even in the integer bits
 * (denormals kept: vcvtneps2bf16 would flush them). */
static inline __m256i bdnn_epi_bf16(__m512 v) {
    const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                             _mm512_and_si512(hi, _mm512_set1_epi32(1)))), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_cvtepi32_epi16(
        _mm512_mask_or_epi32(rounded, nan, hi, _mm512_set1_epi32(0x40)));
}

#ifdef __AVX512BF16__
/* vcvtneps2bf16 (and vcvtne2ps2bf16) give bdnn_epi_bf16's bits for a vector without a
 * denormal: they round to nearest even and quiet NaNs alike (sign and high payload bits
 * kept, the quiet bit set) but flush denormals. One class test decides, against the
 * integer path's eight operations: the lanes that need the integer path (NaNs too, which
 * costs nothing in the same test). */
static inline __mmask16 bdnn_bf16_cvtne_inexact(__m512 v) {
    return _mm512_fpclass_ps_mask(v, 0xa1);   /* QNaN | denormal | SNaN */
}
static inline int bdnn_bf16_cvtne_exact(__m512 v) { return !bdnn_bf16_cvtne_inexact(v); }
/* The conversions alone, for vectors a class test has passed: 16 values, and 32 (two
 * vectors' 16 each, consecutive) in one vcvtne2ps2bf16, stored as bf16 at out. */
static inline void bdnn_store_bf16x16_cvtne(__m512 v, uint16_t *out) {
    _mm256_storeu_si256((__m256i *)out, (__m256i)_mm512_cvtneps_pbh(v));
}
static inline void bdnn_store_bf16x32_cvtne(__m512 v0, __m512 v1, uint16_t *out) {
    _mm512_storeu_si512(out, (__m512i)_mm512_cvtne2ps_pbh(v1, v0));
}

/* 16 values stored as bf16 at out, dt.h's bits. */
static inline void bdnn_store_bf16x16(__m512 v, uint16_t *out) {
    if (bdnn_bf16_cvtne_exact(v)) bdnn_store_bf16x16_cvtne(v, out);
    else _mm256_storeu_si256((__m256i *)out, bdnn_epi_bf16(v));
}

/* 32 values, two vectors' 16 each, stored as consecutive bf16 at out, dt.h's bits: one
 * vcvtne2ps2bf16 where neither vector needs the integer path, else each as 16. */
static inline void bdnn_store_bf16x32(__m512 v0, __m512 v1, uint16_t *out) {
    if (bdnn_bf16_cvtne_exact(v0) && bdnn_bf16_cvtne_exact(v1)) {
        bdnn_store_bf16x32_cvtne(v0, v1, out);
        return;
    }
    bdnn_store_bf16x16(v0, out);
    bdnn_store_bf16x16(v1, out + 16);
}
#endif

/* 64 s32 values, four vectors' 16 each, as 64 consecutive u8 (out_dt BDNN_DT_U8) or s8
 * (v0's first), saturated by packs (s32 to s16, then s16 to 8 bits) instead of four
 * narrowing conversions. The packs work within 128-bit lanes: lane L holds elements
 * 4L .. 4L+3 of v0, v1, v2, v3 as four dwords; the permutation puts each vector's back
 * in order. */
static inline __m512i bdnn_pack_s32_i8x64(int out_dt, __m512i v0, __m512i v1, __m512i v2,
                                          __m512i v3) {
    const __m512i ab = _mm512_packs_epi32(v0, v1), cd = _mm512_packs_epi32(v2, v3);
    const __m512i bytes = out_dt == BDNN_DT_U8 ? _mm512_packus_epi16(ab, cd)
                                               : _mm512_packs_epi16(ab, cd);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_epi32(order, bytes);
}

/* The same stored at out in one store instead of four narrowing ones. */
static inline void bdnn_store_s32_i8x64(int out_dt, __m512i v0, __m512i v1, __m512i v2,
                                        __m512i v3, void *out) {
    _mm512_storeu_si512(out, bdnn_pack_s32_i8x64(out_dt, v0, v1, v2, v3));
}

/* 16 f32 values as s32 for bdnn_pack_s32_i8x64 to an out_dt of u8 or s8, so that the
 * packs give the bytes bdnn_epi_store16 stores. s8: saturated and rounded in s32
 * (bdnn_epi_sat_round: every value then in range, so the packs are exact). u8: clamped
 * only to 255 before rounding, three operations fewer, since the packs saturate what the
 * rest of the clamp did: min(255, v) keeps a NaN (vminps returns its second operand),
 * which converts, as does anything below INT_MIN, to INT_MIN, and packs to 0. */
static inline __m512i bdnn_epi_round_packed(int out_dt, __m512 v) {
    if (out_dt == BDNN_DT_U8)
        return _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_set1_ps(255.0f), v),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return bdnn_epi_sat_round(v, _mm512_set1_ps(-128.0f), _mm512_set1_ps(127.0f));
}

/* 16 s32 sums (lanes m) saturated to u8 or s8 (out_dt) at out, as integers: (float)x
 * rounds only past 2^24, keeping its sign, where 8 bits saturate anyway, so the values
 * are those of the f32 path (bdnn_epi_store16 of (float)x), without its conversions.
 * (vpmovusdb reads its lanes unsigned: negatives go to 0 first.) */
static inline void bdnn_store_s32_i8x16(int out_dt, __m512i x, void *out, __mmask16 m) {
    if (out_dt == BDNN_DT_U8)
        _mm512_mask_cvtusepi32_storeu_epi8(out, m, _mm512_max_epi32(x, _mm512_setzero_si512()));
    else
        _mm512_mask_cvtsepi32_storeu_epi8(out, m, x);
}

/* 16 values (lanes m) stored at element j of an out_dt row; 0: a type not handled. The
 * limits are the epilogue's (s32: 2147483520, the largest f32 below 2^31). */
static inline int bdnn_epi_store16(int out_dt, __m512 v, void *row, int64_t j, __mmask16 m) {
    switch (out_dt) {
    case BDNN_DT_U8:
        _mm512_mask_cvtusepi32_storeu_epi8((uint8_t *)row + j, m,
            bdnn_epi_sat_round(v, _mm512_set1_ps(0.0f), _mm512_set1_ps(255.0f)));
        return 1;
    case BDNN_DT_S8:
        _mm512_mask_cvtsepi32_storeu_epi8((int8_t *)row + j, m,
            bdnn_epi_sat_round(v, _mm512_set1_ps(-128.0f), _mm512_set1_ps(127.0f)));
        return 1;
    case BDNN_DT_S32:
        _mm512_mask_storeu_epi32((int32_t *)row + j, m,
            bdnn_epi_sat_round(v, _mm512_set1_ps(-2147483648.0f), _mm512_set1_ps(2147483520.0f)));
        return 1;
    case BDNN_DT_BF16:
        _mm256_mask_storeu_epi16((uint16_t *)row + j, m, bdnn_epi_bf16(v));
        return 1;
    case BDNN_DT_F32:
        _mm512_mask_storeu_ps((float *)row + j, m, v);
        return 1;
    default:
        return 0;
    }
}

/* conv_dp_chain_store_fn with segments: the tile, spilled to tile[MR][ld_tile] (f32, or
 * s32 with s32 set), stored row by row, segment by segment (contract in conv_impl.h). */
static inline void bdnn_epi_store_segments(const void *tile, int64_t ld_tile, int s32,
                                           int64_t mr, const conv_dp_store_t *st,
                                           void *out, int64_t ld_out) {
    const size_t esz = bdnn_dt_size(st->out_dt);
    for (int64_t r = 0; r < mr; ++r) {
        const __m512i k = _mm512_set1_epi32(s32 && st->comp ? st->comp[r] : 0);
        const __m512 b = _mm512_set1_ps(st->bias ? st->bias[r] : 0.0f);
        char *row = (char *)out + esz * (size_t)(r * ld_out);
        for (int i = 0; i < st->nseg; ++i) {
            const conv_dp_seg_t *sg = &st->seg[i];
            for (int32_t t = 0; t < sg->len; t += 16) {
                const int32_t n = sg->len - t < 16 ? sg->len - t : 16;
                const __mmask16 m = (__mmask16)((1u << n) - 1u);
                const int64_t at = r * ld_tile + sg->col + t;
                __m512 v = s32 ? _mm512_cvtepi32_ps(_mm512_sub_epi32(
                                     _mm512_maskz_loadu_epi32(m, (const int32_t *)tile + at), k))
                               : _mm512_maskz_loadu_ps(m, (const float *)tile + at);
                if (st->bias) v = _mm512_add_ps(v, b);
                bdnn_epi_store16(st->out_dt, v, row, sg->off + t, m);
            }
        }
    }
}

/* The store types of bdnn_epi_store16, as a mask of (1 << dt). */
#define BDNN_EPI_STORE_DTS                                                                  \
    ((1u << BDNN_DT_U8) | (1u << BDNN_DT_S8) | (1u << BDNN_DT_S32) | (1u << BDNN_DT_BF16)     \
     | (1u << BDNN_DT_F32))
#endif
