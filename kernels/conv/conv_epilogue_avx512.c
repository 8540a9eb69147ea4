/* AVX-512 instantiation of the low-precision epilogue (16 lanes per stage), with the final
 * stage (dst scale and zero point, saturation, rounding, store) written out: GCC built it
 * from four-lane pieces and mask juggling, slower than the micro-kernel on short K. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq")
/* as conv_epilogue.inc: GCC would fuse the intrinsics' multiply and add below too */
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
#include <immintrin.h>
#include <stdint.h>

#include "bdnn.h"
#include "conv_store_avx512.h"

/* The last stage over a row of cols values (dst scale and zero point, saturation to the
 * type's range with NaN giving 0, rounding to nearest even, as dt.h: conv_store_avx512.h;
 * masked loads and stores touch exactly cols elements). LOADV(jb, m) gives the row's f32
 * values at jb. */
/* the first n lanes of 16 (all of them from 16 on) */
static inline __mmask16 epi_mask16(int64_t n) {
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}
#define EPI_LOOP(LOADV, ...)                                                                \
    for (int64_t jb = 0; jb < cols; jb += 16) {                                             \
        const __mmask16 m = epi_mask16(cols - jb);                                          \
        __m512 v = LOADV(jb, m);                                                            \
        if (dmode == 2) v = _mm512_add_ps(_mm512_mul_ps(v, vinv), vzp);                     \
        else if (dmode == 1) v = _mm512_add_ps(v, vzp);                                     \
        __VA_ARGS__;                                                                        \
    }
#define EPI_SAT_ROUND bdnn_epi_sat_round(v, vlo, vhi)
/* Stores the row as out_dt (u8, s8, s32, bf16, f32); 0: type not handled. */
#define EPI_STORE_ROW(LOADV)                                                                \
    do {                                                                                    \
        const __m512 vinv = _mm512_set1_ps(inv), vzp = _mm512_set1_ps(zp);                  \
        __m512 vlo, vhi;                                                                    \
        switch (out_dt) {                                                                   \
        case BDNN_DT_U8: {                                                                  \
            uint8_t *o = out;                                                               \
            vlo = _mm512_set1_ps(0.0f), vhi = _mm512_set1_ps(255.0f);                       \
            EPI_LOOP(LOADV, _mm512_mask_cvtusepi32_storeu_epi8(o + jb, m, EPI_SAT_ROUND));  \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_S8: {                                                                  \
            int8_t *o = out;                                                                \
            vlo = _mm512_set1_ps(-128.0f), vhi = _mm512_set1_ps(127.0f);                    \
            EPI_LOOP(LOADV, _mm512_mask_cvtsepi32_storeu_epi8(o + jb, m, EPI_SAT_ROUND));   \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_S32: { /* 2147483520: the largest f32 below 2^31 */                    \
            int32_t *o = out;                                                               \
            vlo = _mm512_set1_ps(-2147483648.0f), vhi = _mm512_set1_ps(2147483520.0f);      \
            EPI_LOOP(LOADV, _mm512_mask_storeu_epi32(o + jb, m, EPI_SAT_ROUND));            \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_BF16: {                                                                \
            uint16_t *o = out;                                                              \
            EPI_LOOP(LOADV, _mm256_mask_storeu_epi16(o + jb, m, bdnn_epi_bf16(v)));              \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_F32: {                                                                 \
            float *o = out;                                                                 \
            EPI_LOOP(LOADV, _mm512_mask_storeu_ps(o + jb, m, v));                           \
            return 1;                                                                       \
        }                                                                                   \
        default:                                                                            \
            return 0;                                                                       \
        }                                                                                   \
    } while (0)

/* tmp[0:cols] (after the post-ops) -> out[0:cols]. */
static inline int epi_store_avx512(int out_dt, int dmode, float inv, float zp,
                                   const float *tmp, void *out, int64_t cols) {
#define EPI_FROM_TMP(jb, m) _mm512_loadu_ps(tmp + (jb))
    EPI_STORE_ROW(EPI_FROM_TMP);
#undef EPI_FROM_TMP
}

/* EPI_S32_BYTES_ROW (conv_epilogue.inc): s32 sums minus k into u8 or s8 (out_dt). */
static void epi_row_s32_bytes(int out_dt, const int32_t *acc, int32_t k, void *out,
                              int64_t cols) {
    const __m512i vk = _mm512_set1_epi32(k);
    for (int64_t jb = 0; jb < cols; jb += 16) {
        const __mmask16 m = epi_mask16(cols - jb);
        bdnn_store_s32_i8x16(out_dt, _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, acc + jb), vk),
                             (int8_t *)out + jb, m);
    }
}

/* A whole row without post-ops in one pass, from the accumulators (s32 minus the
 * compensation k, or f32) to the output: the scales and bias of smode (conv_epilogue.inc's
 * stage 1, same order of operations), then the last stage. */
static inline int epi_row_avx512(int out_dt, int smode, int has_bias, float b, float s,
                                 int dmode, float inv, float zp, const void *acc,
                                 const int32_t *comp_k, void *out, int64_t cols) {
    const __m512 vb = _mm512_set1_ps(b), vs = _mm512_set1_ps(s);
    const __m512i vk = _mm512_set1_epi32(comp_k ? *comp_k : 0);
#define EPI_X(jb, m)                                                                        \
    (comp_k ? _mm512_cvtepi32_ps(_mm512_sub_epi32(                                          \
                  _mm512_maskz_loadu_epi32((m), (const int32_t *)acc + (jb)), vk))          \
            : _mm512_maskz_loadu_ps((m), (const float *)acc + (jb)))
#define EPI_FROM_ACC(jb, m)                                                                 \
    (smode == 1   ? _mm512_mul_ps(_mm512_add_ps(EPI_X(jb, m), vb), vs)                      \
     : smode == 2 ? _mm512_add_ps(_mm512_mul_ps(EPI_X(jb, m), vs), vb)                      \
     : has_bias   ? _mm512_add_ps(EPI_X(jb, m), vb) : EPI_X(jb, m))
    EPI_STORE_ROW(EPI_FROM_ACC);
#undef EPI_X
#undef EPI_FROM_ACC
}
#undef EPI_LOOP
#undef EPI_SAT_ROUND
#undef EPI_STORE_ROW

#define EPI_FN bdnn_conv_epilogue_avx512
#define EPI_VL 16
#define EPI_VEC_STORE epi_store_avx512
#define EPI_VEC_ROW epi_row_avx512
#define EPI_S32_BYTES_ROW epi_row_s32_bytes
#include "conv_epilogue.inc"
