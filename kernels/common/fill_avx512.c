/* bdnn_fill_int's contract (fill.c) eight elements at a time, on AVX-512 with DQ: the
 * same bits as the scalar loop, which the tests hold it to.
 *
 * SplitMix64 is three 64-bit multiplies (vpmullq). The remainder of a 64-bit hash x by
 * the range's width s has no vector instruction; it is built from exact steps in double:
 *   x mod s = ((x_hi mod s) * (2^32 mod s) + x_lo mod s) mod s,   x = x_hi * 2^32 + x_lo,
 * each `a mod s` as a - floor(a * (1/s)) * s, corrected by one s up or down. For a below
 * 2^50 the rounded quotient is off by at most one (its error is under a * 2^-52), its
 * product with s and the difference are integers below 2^53 (exact), and s <= 2^24 keeps
 * the middle sum below 2^49: FILL_VEC_MAX_SPAN. The keep test, unit_double(y) < density,
 * is the exact (double)(y >> 11) < density * 2^53 (both sides scaled by a power of two). */
#pragma GCC target("avx512f,avx512dq,avx512vl")
#include <immintrin.h>

#include "fill.h"

static inline __m512i splitmix64_x8(__m512i x) {
    __m512i z = _mm512_add_epi64(x, _mm512_set1_epi64((long long)0x9E3779B97F4A7C15ull));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                           _mm512_set1_epi64((long long)0xBF58476D1CE4E5B9ull));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                           _mm512_set1_epi64((long long)0x94D049BB133111EBull));
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* a mod s for integers 0 <= a < 2^50 held in doubles (inv: 1/s rounded) */
static inline __m512d mod_x8(__m512d a, __m512d s, __m512d inv) {
    const __m512d q = _mm512_roundscale_pd(_mm512_mul_pd(a, inv),
                                           _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(q, s, a);
    r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_LT_OQ), r, s);
    return _mm512_mask_sub_pd(r, _mm512_cmp_pd_mask(r, s, _CMP_GE_OQ), r, s);
}

void bdnn_fill_int_avx512(int64_t first, int64_t count, uint64_t key_value,
                          uint64_t key_keep, int64_t lo, uint64_t span, double density,
                          float *out) {
    const __m512d s = _mm512_set1_pd((double)span), inv = _mm512_set1_pd(1.0 / (double)span);
    const __m512d wrap = _mm512_set1_pd((double)((1ull << 32) % span));   /* 2^32 mod s */
    const __m512d lo_d = _mm512_set1_pd((double)lo);
    const __m512d keep_below = _mm512_set1_pd(density * 9007199254740992.0);   /* x 2^53 */
    const __m512i kv = _mm512_set1_epi64((long long)key_value);
    const __m512i kk = _mm512_set1_epi64((long long)key_keep);
    const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFFll);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    int64_t i = first;
    for (; i + 8 <= first + count; i += 8) {
        const __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(i), lane);
        const __m512i x = splitmix64_x8(_mm512_xor_si512(idx, kv));
        const __m512i y = splitmix64_x8(_mm512_xor_si512(idx, kk));
        const __m512d hi = mod_x8(_mm512_cvtepu64_pd(_mm512_srli_epi64(x, 32)), s, inv);
        const __m512d lw = mod_x8(_mm512_cvtepu64_pd(_mm512_and_si512(x, low32)), s, inv);
        const __m512d r = mod_x8(_mm512_fmadd_pd(hi, wrap, lw), s, inv);
        const __mmask8 keep = _mm512_cmp_pd_mask(
            _mm512_cvtepu64_pd(_mm512_srli_epi64(y, 11)), keep_below, _CMP_LT_OQ);
        const __m512d v = _mm512_maskz_add_pd(keep, lo_d, r);   /* exact: |lo| + s < 2^53 */
        _mm256_storeu_ps(out + i, _mm512_cvtpd_ps(v));
    }
    if (i < first + count)
        bdnn_fill_int_scalar(i, first + count - i, key_value, key_keep, lo, span, density, out);
}
