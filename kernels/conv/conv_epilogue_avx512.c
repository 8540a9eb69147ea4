/* AVX-512 instantiation of the low-precision epilogue (16 lanes per stage), with the final
 * stage (dst scale and zero point, saturation, rounding, store) written out: GCC built it
 * from four-lane pieces and mask juggling, slower than the micro-kernel on short K. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq")
/* as conv_epilogue.inc: GCC would fuse the intrinsics' multiply and add below too */
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
#include <immintrin.h>
#include <stdint.h>

#include "bdnn.h"

/* tmp[0:cols] -> out[0:cols] as out_dt (u8, s8, s32, bf16, f32; 0: not handled). Saturates to
 * the type's range (NaN gives 0) and rounds to nearest even, as dt.h; masked stores write
 * exactly cols elements. */
#define EPI_STORE_LOOP(...)                                                                 \
    for (int64_t jb = 0; jb < cols; jb += 16) {                                             \
        const __mmask16 m = cols - jb >= 16 ? (__mmask16)0xffff                             \
                                            : (__mmask16)((1u << (cols - jb)) - 1u);        \
        __m512 v = _mm512_loadu_ps(tmp + jb);                                               \
        if (dmode == 2) v = _mm512_add_ps(_mm512_mul_ps(v, vinv), vzp);                     \
        else if (dmode == 1) v = _mm512_add_ps(v, vzp);                                     \
        __VA_ARGS__;                                                                        \
    }
#define EPI_SAT_ROUND                                                                       \
    _mm512_cvt_roundps_epi32(                                                               \
        _mm512_min_ps(_mm512_max_ps(_mm512_maskz_mov_ps(                                    \
                                        _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v), vlo), vhi), \
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
static inline int epi_store_avx512(int out_dt, int dmode, float inv, float zp,
                                   const float *tmp, void *out, int64_t cols) {
    const __m512 vinv = _mm512_set1_ps(inv), vzp = _mm512_set1_ps(zp);
    __m512 vlo, vhi;
    switch (out_dt) {
    case BDNN_DT_U8: {
        uint8_t *o = out;
        vlo = _mm512_set1_ps(0.0f), vhi = _mm512_set1_ps(255.0f);
        EPI_STORE_LOOP(_mm512_mask_cvtusepi32_storeu_epi8(o + jb, m, EPI_SAT_ROUND));
        return 1;
    }
    case BDNN_DT_S8: {
        int8_t *o = out;
        vlo = _mm512_set1_ps(-128.0f), vhi = _mm512_set1_ps(127.0f);
        EPI_STORE_LOOP(_mm512_mask_cvtsepi32_storeu_epi8(o + jb, m, EPI_SAT_ROUND));
        return 1;
    }
    case BDNN_DT_S32: {
        int32_t *o = out;
        /* 2147483520: the largest f32 below 2^31 */
        vlo = _mm512_set1_ps(-2147483648.0f), vhi = _mm512_set1_ps(2147483520.0f);
        EPI_STORE_LOOP(_mm512_mask_storeu_epi32(o + jb, m, EPI_SAT_ROUND));
        return 1;
    }
    case BDNN_DT_BF16: {
        /* dt.h's bdnn_f32_to_bf16: NaN quieted, else rounded to nearest even in the
         * integer bits (denormals kept: vcvtneps2bf16 would flush them) */
        uint16_t *o = out;
        const __m512i half = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
        const __m512i quiet = _mm512_set1_epi32(0x40);
        EPI_STORE_LOOP({
            const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
            const __m512i rounded = _mm512_srli_epi32(
                _mm512_add_epi32(u, _mm512_add_epi32(half, _mm512_and_si512(hi, one))), 16);
            const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            const __m512i h = _mm512_mask_or_epi32(rounded, nan, hi, quiet);
            _mm512_mask_cvtepi32_storeu_epi16(o + jb, m, h);
        });
        return 1;
    }
    case BDNN_DT_F32: {
        float *o = out;
        EPI_STORE_LOOP(_mm512_mask_storeu_ps(o + jb, m, v));
        return 1;
    }
    default:
        return 0;
    }
}
#undef EPI_STORE_LOOP
#undef EPI_SAT_ROUND

#define EPI_FN bdnn_conv_epilogue_avx512
#define EPI_VL 16
#define EPI_VEC_STORE epi_store_avx512
#include "conv_epilogue.inc"
