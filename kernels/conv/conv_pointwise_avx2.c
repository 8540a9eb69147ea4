/* AVX2 + FMA instances of the pointwise backward-weights kernel (contract:
 * conv_pointwise.h), two twins of 3 x 4 sums:
 *   bdnn_pw_ker_avx2 (oc8): vectors of 8 output channels (diff_dst), 4 input channels
 *     (src) broadcast; the sums, a column of the weights per vector, are transposed into
 *     rows as they are stored.
 *   bdnn_pw_ker_avx2_ic (ic8): vectors of 8 input channels (src), 4 output channels
 *     (diff_dst) broadcast; a vector's sums are 8 consecutive weights of one row, stored
 *     (or added) as they are.
 * conv_pointwise.c gives a layer the one its rule picks (PW_SHORT_CALL). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_pointwise.h"

enum { PW2_NX = 4 };
#define PW_VEC __m256
#define PW_NX PW2_NX
#define PW_LINE 8
#define PW_ZERO() _mm256_setzero_ps()
#define PW_LOAD(p) _mm256_loadu_ps(p)
#define PW_BCAST(p) _mm256_broadcast_ss(p)
#define PW_STOREU(p, v) _mm256_storeu_ps(p, v)
#define PW_ADD(a, b) _mm256_add_ps(a, b)
/* acc += v * b as one instruction on registers: with the intrinsic, GCC ran the 7-point
 * steps out of registers (12 sums, 3 vectors and a broadcast are all 16) and read the
 * vectors again from memory in place of holding them */
#define PW_FMA(acc, v, b)                                                                     \
    __asm__("vfmadd231ps %[x], %[w], %[a]" : [a] "+v"(acc) : [x] "v"(b), [w] "v"(v))
#include "conv_pointwise.inc"

/* oc8: one vector's sums, 8 output channels for each of 4 input channels (r0..r3), into
 * rows w[o * ldw] of 4 input channels each: transposed in registers, 4 x 8 into 8 x 4. */
static inline __attribute__((always_inline)) void pw_store_oc(__m256 r0, __m256 r1,
                                                              __m256 r2, __m256 r3, float *w,
                                                              int64_t ldw, int accumulate) {
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    /* u[o]: output channel o in the low half, o + 4 in the high half */
    const __m256 u[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                         _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
    for (int o = 0; o < 4; ++o) {
        __m128 lo = _mm256_castps256_ps128(u[o]), hi = _mm256_extractf128_ps(u[o], 1);
        float *p = w + o * ldw, *q = w + (o + 4) * ldw;
        if (accumulate) lo = _mm_add_ps(_mm_loadu_ps(p), lo), hi = _mm_add_ps(_mm_loadu_ps(q), hi);
        _mm_storeu_ps(p, lo);
        _mm_storeu_ps(q, hi);
    }
}

static inline __attribute__((always_inline)) void pw_tile_oc(const pw_call_t *k, const int nb,
                                                             const int line) {
    __m256 acc[PW_MAX_NB][PW2_NX];
    pw_sums(k, nb, line, acc);
#pragma GCC unroll 3
    for (int j = 0; j < nb; ++j)
        pw_store_oc(acc[j][0], acc[j][1], acc[j][2], acc[j][3], k->w + 8 * j * k->ldw, k->ldw,
                    k->accumulate);
}

static void pw_avx2_oc(const pw_call_t *k) { PW_DISPATCH(pw_tile_oc, k); }
static void pw_avx2_ic(const pw_call_t *k) { PW_DISPATCH(pw_tile_rows, k); }

const conv_pw_ker_t bdnn_pw_ker_avx2 = {.fn = pw_avx2_oc, .vl = 8, .nx = PW2_NX, .lanes_ic = 0,
                                        .streams = 0, .twin = &bdnn_pw_ker_avx2_ic,
                                        .variant = "oc8"};
const conv_pw_ker_t bdnn_pw_ker_avx2_ic = {.fn = pw_avx2_ic, .vl = 8, .nx = PW2_NX,
                                           .lanes_ic = 1, .streams = 0,
                                           .twin = &bdnn_pw_ker_avx2, .variant = "ic8"};
