/* The int8 dot route's kernel (contract: conv_dot_fn in conv_impl.h), AVX2: 16 bytes a
 * step, widened to s16 (vpmaddubsw would saturate 255 * 127 pairs), vpmaddwd into eight
 * s32 lanes; the weights' sum by vpmaddwd with ones. The tail by the scalar kernel. */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"

static void dot_avx2(const uint8_t *x, const int8_t *w, int64_t n, int flip, uint32_t *dot,
                     uint32_t *wsum) {
    const __m128i mask = _mm_set1_epi8(flip ? (char)0x80 : 0);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc = _mm256_setzero_si256(), ws = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i xb = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x + i)), mask);
        const __m256i xv = _mm256_cvtepu8_epi16(xb);
        const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + i)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(xv, wv));
        ws = _mm256_add_epi32(ws, _mm256_madd_epi16(wv, ones));
    }
    uint32_t lanes[8], wlanes[8], a = 0, s = 0;
    _mm256_storeu_si256((__m256i *)lanes, acc);
    _mm256_storeu_si256((__m256i *)wlanes, ws);
    for (int l = 0; l < 8; ++l) a += lanes[l], s += wlanes[l];
    uint32_t ta, ts;   /* the tail: the scalar kernel's loop */
    bdnn_dot_ker_scalar.fn(x + i, w + i, n - i, flip, &ta, &ts);
    *dot = a + ta;
    *wsum = s + ts;
}

const conv_dot_ker_t bdnn_dot_ker_avx2 = {dot_avx2};
