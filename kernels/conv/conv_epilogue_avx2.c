/* AVX2 instantiation of the low-precision epilogue (8 lanes per stage), with the final
 * stage (dst scale and zero point, saturation, rounding, store) written out, as the
 * AVX-512 one: GCC left it scalar (a rounding, two compares and a NaN branch per value),
 * and perf had the epilogue at twice the int8 micro-kernel's samples on a 28x28 1x1. */
#pragma GCC target("avx2")
/* as conv_epilogue.inc: GCC would fuse the intrinsics' multiply and add below too */
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
#include <immintrin.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include "bdnn.h"
#include "conv_store_avx2.h"

/* Lane masks for the first n (0..8) of 8 lanes: 8 - n ones read from here. */
static const int32_t EPI_LANES[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
static inline __m256i epi_mask8(int64_t n) {
    return _mm256_loadu_si256((const __m256i *)(EPI_LANES + 8 - (n < 8 ? n : 8)));
}

/* dt.h's bdnn_f32_to_bf16: NaN quieted, else rounded to nearest even in the integer bits
 * (denormals kept). */
static inline __m128i epi_bf16_8(__m256 v) {
    const __m256i u = _mm256_castps_si256(v), hi = _mm256_srli_epi32(u, 16);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                                             _mm256_and_si256(hi, _mm256_set1_epi32(1)))), 16);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i bits = _mm256_blendv_epi8(rounded,
                                            _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}

/* n (1..8) elements of esz bytes from a vector's worth at src to dst. */
static inline void epi_put(void *dst, const void *src, int64_t n, size_t esz) {
    memcpy(dst, src, esz * (size_t)n);
}

/* The last stage over a row of cols values; LOADV(jb, n) gives the row's f32 values at jb
 * (n valid lanes, the others read as 0). Whole vectors first, with n the constant 8 (no
 * masks, no tail tests in the loop), then the row's last partial vector. */
#define EPI_STEP(LOADV, ...)                                                                \
    {                                                                                       \
        __m256 v = LOADV(jb, n);                                                            \
        if (dmode == 2) v = _mm256_add_ps(_mm256_mul_ps(v, vinv), vzp);                     \
        else if (dmode == 1) v = _mm256_add_ps(v, vzp);                                     \
        __VA_ARGS__;                                                                        \
    }
#define EPI_LOOP(LOADV, ...)                                                                \
    {                                                                                       \
        int64_t jb = 0;                                                                     \
        for (; jb + 8 <= cols; jb += 8) {                                                   \
            const int64_t n = 8;                                                            \
            EPI_STEP(LOADV, __VA_ARGS__)                                                    \
        }                                                                                   \
        if (jb < cols) {                                                                    \
            const int64_t n = cols - jb;                                                    \
            EPI_STEP(LOADV, __VA_ARGS__)                                                    \
        }                                                                                   \
    }
/* The low n (1..8) bytes of b8 at o + jb: one 8-byte store, or the tail's n bytes. */
#define EPI_PUT_BYTES(o, b8)                                                                \
    {                                                                                       \
        if (n == 8) _mm_storel_epi64((__m128i *)(o + jb), b8);                              \
        else { uint8_t buf[16]; _mm_storeu_si128((__m128i *)buf, b8); epi_put(o + jb, buf, n, 1); } \
    }
#define EPI_STORE_BYTES(o, DT)                                                              \
    {                                                                                       \
        const __m128i b8 = bdnn_epi_bytes8(DT, bdnn_epi_sat_round8(v, vlo, vhi));           \
        EPI_PUT_BYTES(o, b8)                                                                \
    }
/* Stores the row as out_dt (u8, s8, s32, bf16, f32); 0: type not handled. */
#define EPI_STORE_ROW(LOADV)                                                                \
    do {                                                                                    \
        const __m256 vinv = _mm256_set1_ps(inv), vzp = _mm256_set1_ps(zp);                  \
        __m256 vlo, vhi;                                                                    \
        switch (out_dt) {                                                                   \
        case BDNN_DT_U8: {                                                                  \
            uint8_t *o = out;                                                               \
            vlo = _mm256_set1_ps(0.0f), vhi = _mm256_set1_ps(255.0f);                       \
            EPI_LOOP(LOADV, EPI_STORE_BYTES(o, BDNN_DT_U8));                                \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_S8: {                                                                  \
            int8_t *o = out;                                                                \
            vlo = _mm256_set1_ps(-128.0f), vhi = _mm256_set1_ps(127.0f);                    \
            EPI_LOOP(LOADV, EPI_STORE_BYTES(o, BDNN_DT_S8));                                \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_S32: { /* 2147483520: the largest f32 below 2^31 */                    \
            int32_t *o = out;                                                               \
            vlo = _mm256_set1_ps(-2147483648.0f), vhi = _mm256_set1_ps(2147483520.0f);      \
            EPI_LOOP(LOADV, {   /* masked stores are microcoded on AMD: the tail only */   \
                const __m256i s32 = bdnn_epi_sat_round8(v, vlo, vhi);                       \
                if (n == 8) _mm256_storeu_si256((__m256i *)(o + jb), s32);                  \
                else _mm256_maskstore_epi32(o + jb, epi_mask8(n), s32);                     \
            });                                                                             \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_BF16: {                                                                \
            uint16_t *o = out;                                                              \
            EPI_LOOP(LOADV, {                                                               \
                const __m128i h = epi_bf16_8(v);                                            \
                if (n == 8) _mm_storeu_si128((__m128i *)(o + jb), h);                       \
                else { uint16_t buf[8]; _mm_storeu_si128((__m128i *)buf, h); epi_put(o + jb, buf, n, 2); } \
            });                                                                             \
            return 1;                                                                       \
        }                                                                                   \
        case BDNN_DT_F32: {                                                                 \
            float *o = out;                                                                 \
            EPI_LOOP(LOADV, {                                                               \
                if (n == 8) _mm256_storeu_ps(o + jb, v);                                    \
                else _mm256_maskstore_ps(o + jb, epi_mask8(n), v);                          \
            });                                                                             \
            return 1;                                                                       \
        }                                                                                   \
        default:                                                                            \
            return 0;                                                                       \
        }                                                                                   \
    } while (0)

/* tmp[0:cols] (after the post-ops; whole vectors, see conv_epilogue.inc) -> out[0:cols]. */
static inline int epi_store_avx2(int out_dt, int dmode, float inv, float zp,
                                 const float *tmp, void *out, int64_t cols) {
#define EPI_FROM_TMP(jb, n) _mm256_loadu_ps(tmp + (jb))
    EPI_STORE_ROW(EPI_FROM_TMP);
#undef EPI_FROM_TMP
}

/* A whole row without post-ops in one pass, from the accumulators (s32 minus the
 * compensation k when s32acc, else f32) to the output: the scales and bias of smode
 * (conv_epilogue.inc's stage 1, same order of operations), then the last stage. Inlined
 * into epi_row_avx2 with constant modes for the common cases: with the modes read per
 * vector, the loop ran about 25 instructions per 8 values, and perf had a 1x1 bf16
 * layer's epilogue (64 input channels) at a third of its micro-kernel's samples. */
static inline __attribute__((always_inline)) int
epi_row_body(int out_dt, int smode, int has_bias, float b, float s, int dmode, float inv,
             float zp, const void *acc, int s32acc, const int32_t *comp_k, void *out,
             int64_t cols) {
    const __m256 vb = _mm256_set1_ps(b), vs = _mm256_set1_ps(s);
    const __m256i vk = _mm256_set1_epi32(s32acc ? *comp_k : 0);
    /* whole vectors by plain loads, the tail masked */
#define EPI_X(jb, n)                                                                        \
    (s32acc ? _mm256_cvtepi32_ps(_mm256_sub_epi32(                                          \
                  n == 8 ? _mm256_loadu_si256((const __m256i *)((const int32_t *)acc + (jb))) \
                         : _mm256_maskload_epi32((const int32_t *)acc + (jb), epi_mask8(n)), \
                  vk))                                                                      \
            : n == 8 ? _mm256_loadu_ps((const float *)acc + (jb))                           \
                     : _mm256_maskload_ps((const float *)acc + (jb), epi_mask8(n)))
#define EPI_FROM_ACC(jb, n)                                                                 \
    (smode == 1   ? _mm256_mul_ps(_mm256_add_ps(EPI_X(jb, n), vb), vs)                      \
     : smode == 2 ? _mm256_add_ps(_mm256_mul_ps(EPI_X(jb, n), vs), vb)                      \
     : has_bias   ? _mm256_add_ps(EPI_X(jb, n), vb) : EPI_X(jb, n))
    EPI_STORE_ROW(EPI_FROM_ACC);
#undef EPI_X
#undef EPI_FROM_ACC
}

/* s32 sums minus k into u8 or s8 (out_dt), the packs saturating s32 -> s16 -> 8 bits; with
 * biased, (float)(x - k) + b first, rounded to nearest even. b is finite there, so no
 * NaN test, and the packs saturate to the type's range, so the one bound kept is the
 * conversion's own: a value at 2^31 or above would convert to INT_MIN (below -2^31 it
 * does too, which saturates to the type's low end as it should). */
static inline __attribute__((always_inline)) void
epi_s32_bytes_body(int out_dt, const int32_t *acc, int32_t k, const int biased, float b,
                   void *out, int64_t cols) {
    const __m256i vk = _mm256_set1_epi32(k);
    const __m256 vb = _mm256_set1_ps(b), vhi = _mm256_set1_ps(2147483520.0f);
    uint8_t *o = out;
#define EPI_SUMS(x)                                                                         \
    (biased ? _mm256_cvtps_epi32(_mm256_round_ps(                                           \
                  _mm256_min_ps(_mm256_add_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32((x), vk)), \
                                              vb), vhi),                                    \
                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))                           \
            : _mm256_sub_epi32((x), vk))
    int64_t j0 = 0;
    /* 16 values a step, in one 16-byte store where 8 took an 8-byte one (a 1x1 with few
     * input channels stores a byte per few products); the 256-bit packs work within
     * 128-bit lanes, and one permutation puts the two vectors' s16 back in order */
    for (; j0 + 16 <= cols; j0 += 16) {
        const __m256i x0 = EPI_SUMS(_mm256_loadu_si256((const __m256i *)(acc + j0)));
        const __m256i x1 = EPI_SUMS(_mm256_loadu_si256((const __m256i *)(acc + j0 + 8)));
        const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(x0, x1), 0xd8);
        const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
        _mm_storeu_si128((__m128i *)(o + j0), out_dt == BDNN_DT_U8 ? _mm_packus_epi16(lo, hi)
                                                                  : _mm_packs_epi16(lo, hi));
    }
    for (int64_t jb = j0; jb < cols; jb += 8) {
        const int64_t n = cols - jb < 8 ? cols - jb : 8;
        const __m256i x = EPI_SUMS(n == 8 ? _mm256_loadu_si256((const __m256i *)(acc + jb))
                                          : _mm256_maskload_epi32(acc + jb, epi_mask8(n)));
        const __m128i b8 = bdnn_epi_bytes8(out_dt, x);
        EPI_PUT_BYTES(o, b8);
    }
#undef EPI_SUMS
}

/* EPI_S32_BYTES_ROW (conv_epilogue.inc): five instructions per 8 values, not twelve */
static void epi_row_s32_bytes(int out_dt, const int32_t *acc, int32_t k, void *out,
                              int64_t cols) {
    epi_s32_bytes_body(out_dt, acc, k, 0, 0.0f, out, cols);
}

/* The same with a finite bias (epi_row_avx2): the generic row less its NaN test and lower
 * bound, 16 values a step */
static void epi_row_s32_bias_bytes(int out_dt, const int32_t *acc, int32_t k, float b,
                                   void *out, int64_t cols) {
    epi_s32_bytes_body(out_dt, acc, k, 1, b, out, cols);
}

static int epi_row_avx2(int out_dt, int smode, int has_bias, float b, float s, int dmode,
                        float inv, float zp, const void *acc, const int32_t *comp_k,
                        void *out, int64_t cols) {
    if (smode == 0 && dmode == 0 && has_bias && comp_k
            && (out_dt == BDNN_DT_U8 || out_dt == BDNN_DT_S8) && isfinite(b)) {
        epi_row_s32_bias_bytes(out_dt, acc, *comp_k, b, out, cols);
        return 1;
    }
    /* the cases without scales and zero points, each with the bias or without it */
#define EPI_PLAIN(DT, S32)                                                                  \
    if (out_dt == DT && !comp_k == !(S32))                                                  \
        return has_bias ? epi_row_body(DT, 0, 1, b, s, 0, inv, zp, acc, S32, comp_k, out, cols) \
                        : epi_row_body(DT, 0, 0, b, s, 0, inv, zp, acc, S32, comp_k, out, cols);
    if (smode == 0 && dmode == 0) {
        EPI_PLAIN(BDNN_DT_BF16, 0)
        EPI_PLAIN(BDNN_DT_F32, 0)
        EPI_PLAIN(BDNN_DT_U8, 1)
        EPI_PLAIN(BDNN_DT_S8, 1)
        EPI_PLAIN(BDNN_DT_F32, 1)
    }
#undef EPI_PLAIN
    return epi_row_body(out_dt, smode, has_bias, b, s, dmode, inv, zp, acc, comp_k != NULL,
                        comp_k, out, cols);
}
#undef EPI_LOOP
#undef EPI_STEP
#undef EPI_STORE_BYTES
#undef EPI_PUT_BYTES
#undef EPI_STORE_ROW

#define EPI_FN bdnn_conv_epilogue_avx2
#define EPI_VL 8
#define EPI_VEC_STORE epi_store_avx2
#define EPI_VEC_ROW epi_row_avx2
#define EPI_S32_BYTES_ROW epi_row_s32_bytes
#include "conv_epilogue.inc"
