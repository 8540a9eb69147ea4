/* AVX2 instances of the blocked direct convolution kernels (conv_dblk.inc, PACK 4): u8 src
 * x s8 weights on nChw8c, one ymm of eight s32 sums per output block, a lane of four input
 * channels per broadcast. AVX2 has no vpdpbusd; two forms stand in for it:
 *   bounded (bdnn_dc_ker_int8_avx2, the row's): vpmaddubsw multiplies a broadcast u8
 *     quad by each output channel's s8 quad into two s16 pair sums; a block's two lanes'
 *     sums are added in s16 (DC_DOT2) and vpmaddwd by ones widens them into s32: 3
 *     multiplies per 64 products. The s16 sums saturate or wrap past 32767, so this form
 *     is exact only on weights whose pairs |w0| + |w1| stay within 64 (pair_depth 2:
 *     bdnn_pairs16_exact(255, 2 * pair)); the packing measures them and execute picks
 *     the form (dc_ker_t.exact);
 *   exact (bdnn_dc_ker_int8_avx2_exact, this file compiled again with
 *     DC_INT8_AVX2_EXACT): the quads split into their even bytes (b0, b2) and odd bytes
 *     (b1, b3) as s16 pairs, u8 zero-extended, s8 sign-extended, each half one vpmaddwd:
 *     4 multiplies per 64 products and the splitting besides.
 * Register blocking, one output block per call: up to 9 points' sums, the lane pair's two
 * weight vectors and two broadcasts, the ones and two products (a 7-wide row in one call;
 * two blocks of 5 points ran slower); the exact twin shares it (the plan is made for the
 * row's kernel) and spills where its halves do not fit. s32 sums wrap as the plain rows'
 * do; the driver turns them into f32 (dc_sums_to_f32) before the post-ops and stores with
 * saturation (dc_store_lp). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include <stdint.h>

#include "conv_dblk.h"
#include "conv_store_avx2.h"
#include "dt.h"

typedef float vf __attribute__((vector_size(32)));
typedef float vfu __attribute__((vector_size(32), aligned(4)));
#define VLEN 8
#define DC_PACK 4
#define DC_T uint8_t
/* one output block per call (ocb_pref 1): the instances of more blocks are never called,
 * so they are one point each, the fewest the table takes */
#define DC_PREF 1
#define DC_UR1 9
#define DC_UR2 1
#define DC_UR3 1
#define DC_UR4 1

/* one 32-bit lane in every lane (the row reads blocked src only: a lane lies inside its
 * block, so reading it whole stays inside src); _PART: its n low channels, the rest 0 */
#define DC_BCAST(x) ((vf)_mm256_broadcast_ss((const float *)(const void *)(x)))
#define DC_BCAST_PART(x, n)                                                                 \
    ((vf)_mm256_set1_epi32((int32_t)(*(const uint32_t *)(x) & ((1u << (8 * (n))) - 1u))))

#ifndef DC_INT8_AVX2_EXACT
/* acc += the quads' dot products: u8 (the broadcast) first, as vpmaddubsw takes it. In
 * one asm with its one temporary: from intrinsics GCC computed a broadcast's OCB products
 * before adding any and spilled accumulators to make room for them. */
static inline __attribute__((always_inline)) vf dc_dot(vf acc, vf x, vf w) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i t;
    __asm__("vpmaddubsw %[w], %[x], %[t]\n\t"
            "vpmaddwd %[ones], %[t], %[t]\n\t"
            "vpaddd %[t], %[acc], %[acc]"
            : [acc] "+x"(acc), [t] "=&x"(t)
            : [x] "x"(x), [w] "x"(w), [ones] "x"(ones));
    return acc;
}
static inline __attribute__((always_inline)) vf dc_dot2(vf acc, vf x, vf w, vf x1, vf w1) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i t, t1;
    __asm__("vpmaddubsw %[w], %[x], %[t]\n\t"
            "vpmaddubsw %[w1], %[x1], %[t1]\n\t"
            "vpaddw %[t1], %[t], %[t]\n\t"
            "vpmaddwd %[ones], %[t], %[t]\n\t"
            "vpaddd %[t], %[acc], %[acc]"
            : [acc] "+x"(acc), [t] "=&x"(t), [t1] "=&x"(t1)
            : [x] "x"(x), [w] "x"(w), [x1] "x"(x1), [w1] "x"(w1), [ones] "x"(ones));
    return acc;
}
#define DC_DOT2(A, X, W, X1, W1) ((A) = dc_dot2((A), (X), (W), (X1), (W1)))
#define DC_OBJ bdnn_dc_ker_int8_avx2
#define DC_EXACT (&bdnn_dc_ker_int8_avx2_exact)
#define DC_PAIR_DEPTH 2
#define DC_VARIANT "pairs16x2"
#else
/* the same sums exactly: even bytes (b0, b2) against (w0, w2), odd (b1, b3) against (w1, w3),
 * each an s16 pair per 32-bit lane */
static inline vf dc_dot(vf acc, vf x, vf w) {
    const __m256i xi = (__m256i)x, wi = (__m256i)w;
    const __m256i x_even = _mm256_and_si256(xi, _mm256_set1_epi16(0x00ff));
    const __m256i x_odd = _mm256_srli_epi16(xi, 8);
    const __m256i w_even = _mm256_srai_epi16(_mm256_slli_epi16(wi, 8), 8);
    const __m256i w_odd = _mm256_srai_epi16(wi, 8);
    const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(x_even, w_even),
                                         _mm256_madd_epi16(x_odd, w_odd));
    return (vf)_mm256_add_epi32((__m256i)acc, sum);
}
#define DC_OBJ bdnn_dc_ker_int8_avx2_exact
#define DC_VARIANT "exact"
#endif
#define DC_FMA(A, X, W) ((A) = dc_dot((A), (X), (W)))

/* dst's types (DC_STORE_DTS): f32, s32, u8 and s8, converted by the epilogue's own
 * conversions (conv_store_avx2.h); f32 as it is. Others take the plain rows. */
#define DC_STORE_DTS                                                                        \
    ((1u << BDNN_DT_F32) | (1u << BDNN_DT_S32) | (1u << BDNN_DT_U8) | (1u << BDNN_DT_S8))
/* eight s32 in u8's or s8's range, or to saturate there, to eight bytes at o */
static inline void dc_put_bytes(int out_dt, __m256i s, void *o) {
    _mm_storel_epi64((__m128i *)o, bdnn_epi_bytes8(out_dt, s));
}
/* eight f32 values v to out_dt at o */
static inline void dc_put8(int out_dt, __m256 v, void *o) {
    switch (out_dt) {
    case BDNN_DT_F32: _mm256_storeu_ps((float *)o, v); break;
    case BDNN_DT_S32:   /* 2147483520: the largest f32 below 2^31 */
        _mm256_storeu_si256((__m256i *)o,
                            bdnn_epi_sat_round8(v, _mm256_set1_ps(-2147483648.0f),
                                                _mm256_set1_ps(2147483520.0f)));
        break;
    default: {
        const int u8 = out_dt == BDNN_DT_U8;
        dc_put_bytes(out_dt, bdnn_epi_sat_round8(v, _mm256_set1_ps(u8 ? 0.0f : -128.0f),
                                                 _mm256_set1_ps(u8 ? 255.0f : 127.0f)), o);
    }
    }
}

#ifndef DC_INT8_AVX2_EXACT
__attribute__((visibility("hidden"))) void bdnn_dc_int8_avx2_store(int out_dt, const float *acc,
                                                                   void *out, int64_t n) {
    const size_t esz = bdnn_dt_size(out_dt);
    for (int64_t i = 0; i < n; i += VLEN)
        dc_put8(out_dt, _mm256_loadu_ps(acc + i), (char *)out + esz * (size_t)i);
}
__attribute__((visibility("hidden"))) void bdnn_dc_int8_avx2_sums_to_f32(float *acc,
                                                                         const float *bias,
                                                                         int64_t npt) {
    const __m256 b = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    for (int64_t pt = 0; pt < npt; ++pt) {
        const __m256i s = _mm256_loadu_si256((const __m256i *)(acc + pt * VLEN));
        const __m256 v = _mm256_cvtepi32_ps(s);
        _mm256_storeu_ps(acc + pt * VLEN, bias ? _mm256_add_ps(v, b) : v);
    }
}
/* The direct store (conv_dblk.h) of a call's s32 sums fin[o * UR + j]: (float)acc + bias,
 * relu, the conversion; without a bias and with relu's slope 0 if any, u8 and s8 saturate
 * the sums as integers instead, the same values (a float's rounding of a sum past 2^24
 * is far outside those ranges), relu's floor before an s8 store only. */
__attribute__((visibility("hidden"))) void
bdnn_dc_int8_avx2_out_block(const vf *fin, const dc_call_t *a, void *out, int UR, int OCB,
                            int64_t opt) {
    const int dt = a->out_dt, relu = a->out_relu;
    const size_t esz = bdnn_dt_size(dt);
    const int direct = (dt == BDNN_DT_U8 || dt == BDNN_DT_S8) && !a->out_bias
                       && (!relu || a->relu_alpha == 0.0f);
    const __m256 alpha = _mm256_set1_ps(a->relu_alpha);
    for (int o = 0; o < OCB; ++o) {
        const float *bias = a->out_bias ? a->out_bias + o * VLEN : NULL;
        char *at = (char *)out + esz * (size_t)(o * a->o_ocb);
        for (int j = 0; j < UR; ++j) {
            const __m256i s = (__m256i)fin[o * UR + j];
            char *to = at + esz * (size_t)(j * opt);
            if (direct) {
                const int floor0 = relu && dt == BDNN_DT_S8;
                dc_put_bytes(dt, floor0 ? _mm256_max_epi32(s, _mm256_setzero_si256()) : s, to);
                continue;
            }
            __m256 v = _mm256_cvtepi32_ps(s);
            if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
            if (relu)   /* a zero stays +0 */
                v = _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha),
                                     _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
            dc_put8(dt, v, to);
        }
    }
}
#else   /* (the bounded file's) */
#define DC_HIDDEN __attribute__((visibility("hidden")))
DC_HIDDEN void bdnn_dc_int8_avx2_store(int out_dt, const float *acc, void *out, int64_t n);
DC_HIDDEN void bdnn_dc_int8_avx2_sums_to_f32(float *acc, const float *bias, int64_t npt);
DC_HIDDEN void bdnn_dc_int8_avx2_out_block(const vf *fin, const dc_call_t *a, void *out,
                                           int UR, int OCB, int64_t opt);
#endif
#define DC_STORE bdnn_dc_int8_avx2_store
#define DC_S32 1
#define DC_SUMS_TO_F32 bdnn_dc_int8_avx2_sums_to_f32
#define DC_OUT_BLOCK bdnn_dc_int8_avx2_out_block

#include "conv_dblk.inc"
