/* The int8 dot route's kernel (contract: conv_dot_fn in conv_impl.h), AVX-512 VNNI: 64
 * bytes a step, vpdpbusd (u8 x s8 quads into s32 lanes, without saturation) for the
 * products and, with a vector of ones, for the weights' sum; two accumulator pairs to
 * hide vpdpbusd's latency; the tail by masked loads. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni")
#include <immintrin.h>

#include "conv_impl.h"

static void dot_avx512_vnni(const uint8_t *x, const int8_t *w, int64_t n, int flip,
                            uint32_t *dot, uint32_t *wsum) {
    const __m512i mask = _mm512_set1_epi8(flip ? (char)0x80 : 0);
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, s0 = a0, s1 = a0;
    int64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        const __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(x + i), mask);
        const __m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(x + i + 64), mask);
        const __m512i w0 = _mm512_loadu_si512(w + i), w1 = _mm512_loadu_si512(w + i + 64);
        a0 = _mm512_dpbusd_epi32(a0, x0, w0);
        a1 = _mm512_dpbusd_epi32(a1, x1, w1);
        s0 = _mm512_dpbusd_epi32(s0, ones, w0);
        s1 = _mm512_dpbusd_epi32(s1, ones, w1);
    }
    for (; i < n; i += 64) {
        const int64_t left = n - i;
        const __mmask64 k = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
        /* masked-off weights load as 0: whatever x reads there adds nothing */
        const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, x + i), mask);
        const __m512i wv = _mm512_maskz_loadu_epi8(k, w + i);
        a0 = _mm512_dpbusd_epi32(a0, xv, wv);
        s0 = _mm512_dpbusd_epi32(s0, ones, wv);
    }
    *dot = (uint32_t)_mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1));
    *wsum = (uint32_t)_mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
}

const conv_dot_ker_t bdnn_dot_ker_avx512_vnni = {dot_avx512_vnni};
