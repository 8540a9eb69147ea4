/* The AVX2 output conversions of the low-precision epilogue, shared by the epilogue
 * (conv_epilogue_avx2.c) and the AVX2 int8 blocked kernels' direct store
 * (conv_dblk_int8_avx2.c): one definition, so both give dt.h's bits. Include after a
 * target pragma with avx2. */
#ifndef BDNN_CONV_STORE_AVX2_H
#define BDNN_CONV_STORE_AVX2_H
#include <immintrin.h>

#include "bdnn.h"

/* Saturation to [lo, hi] with NaN giving 0, then rounding to nearest even (dt.h). */
static inline __m256i bdnn_epi_sat_round8(__m256 v, __m256 lo, __m256 hi) {
    const __m256 ordered = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
    return _mm256_cvtps_epi32(_mm256_round_ps(_mm256_min_ps(_mm256_max_ps(ordered, lo), hi),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* 8 s32 to u8 or s8 (out_dt), saturated by the packs (s32 -> s16 -> 8 bits, signed
 * first so that sums past the s16 range still saturate to the type's ends): the low 8
 * bytes of the result. */
static inline __m128i bdnn_epi_bytes8(int out_dt, __m256i s) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return out_dt == BDNN_DT_U8 ? _mm_packus_epi16(w, _mm_setzero_si128())
                                : _mm_packs_epi16(w, _mm_setzero_si128());
}
#endif
