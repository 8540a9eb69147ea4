/* AVX512_VNNI instances of the blocked direct convolution kernels (conv_dblk.inc, PACK 4):
 * u8 src x s8 weights on nChw16c, a lane of four channels per broadcast, vpdpbusd (four
 * exact products added to an s32 lane) into s32 accumulators; the register blocking of
 * the f32 AVX-512 instances (conv_dblk_lp_avx512.h), each instruction doing four times
 * their work. s32 sums wrap as the instruction's do (the plain rows' too); the
 * driver turns them into f32 (dc_sums_to_f32) before the post-ops and stores with
 * saturation (dc_store_lp). */
/* The instances of OCB 2 to 4 and the kernel object; conv_dblk_int8_avx512_vnni_ocb1.c
 * compiles the OCB 1 instances of this file beside it (DC_PART, conv_dblk.inc). */
#ifndef DC_PART
#define DC_PART 2
#endif
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,avx2,fma")
#include "conv_dblk_lp_avx512.h"

#define DC_PACK 4
#define DC_T uint8_t
#define DC_OBJ bdnn_dc_ker_int8_avx512_vnni
/* (reading the whole lane stays inside the 16-channel block: this row takes no
 * channels-last src, whose points' lanes would lie against the next point or src's end;
 * reading those bytes alone ran slower on first layers) */
#define DC_BCAST_PART(x, n)                                                                \
    ((vf)_mm512_set1_epi32((int32_t)(*(const uint32_t *)(x) & ((1u << (8 * (n))) - 1u))))
/* u8 operand (the broadcast) first in Intel order, the s8 weights second */
#define DC_FMA(A, X, W)                                                                    \
    __asm__("vpdpbusd %[wv], %[xv], %[av]" : [av] "+v"(A) : [xv] "v"(X), [wv] "v"(W))

__attribute__((unused))   /* (the kernel object's: DC_PART 1 has none) */
static void dc_sums_to_f32(float *acc, const float *bias, int64_t npt) {
    const __m512 b = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
    for (int64_t pt = 0; pt < npt; ++pt) {
        const __m512 v = _mm512_cvtepi32_ps(_mm512_loadu_si512(acc + pt * VLEN));
        _mm512_storeu_ps(acc + pt * VLEN, bias ? _mm512_add_ps(v, b) : v);
    }
}
/* s32 sums as the epilogue takes them: (float)acc + bias (NULL: none), then relu (a zero
 * stays +0) */
static inline __m512 dc_sums_f32(vf acc, const float *bias, int relu, __m512 alpha) {
    __m512 v = _mm512_cvtepi32_ps((__m512i)acc);
    if (bias) v = _mm512_add_ps(v, _mm512_loadu_ps(bias));
    if (relu) v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ),
                                     v, alpha);
    return v;
}
/* The direct store of s32 sums: the epilogue's (float)acc + bias, relu, conversion.
 * Without a bias, and with relu's slope 0 if any, a u8 or s8 output's sums saturate as
 * integers instead (dc_s32_direct; bdnn_store_s32_i8x16: the same values; a negative
 * sum's relu is 0 either way), at a third of the instructions (no conversion, clamp or
 * rounding per vector); dc_s32_of is the sum as the packs take it: relu's floor before an
 * s8 store only (u8's saturation already takes negatives to 0). */
static inline int dc_s32_direct(const dc_call_t *a) {
    return (a->out_dt == BDNN_DT_U8 || a->out_dt == BDNN_DT_S8) && !a->out_bias
           && (!a->out_relu || a->relu_alpha == 0.0f);
}
static inline __m512i dc_s32_of(vf acc, int floor0) {
    return floor0 ? _mm512_max_epi32((__m512i)acc, _mm512_setzero_si512()) : (__m512i)acc;
}
/* conv_dblk.inc's DC_OUT_BLOCK: s32 and f32 outputs, and points not B apart, a vector at
 * a time (u8 and s8 outputs whose points lie B apart store from the registers instead:
 * DC_OUT_INLINE below). */
static __attribute__((noinline)) void dc_out_block_int8(const vf *fin, const dc_call_t *a,
                                                        void *out, int UR, int OCB,
                                                        int64_t opt) {
    const int dt = a->out_dt, relu = a->out_relu;
    const __m512 alpha = _mm512_set1_ps(a->relu_alpha);
    const int floor0 = relu && dt == BDNN_DT_S8, direct = dc_s32_direct(a);
    for (int o = 0; o < OCB; ++o) {
        const vf *f = fin + o * UR;
        const float *bias = a->out_bias ? a->out_bias + o * VLEN : NULL;
        const int64_t at = o * a->o_ocb;   /* (u8, s8: bytes) */
        for (int j = 0; j < UR; ++j) {
            if (direct)
                bdnn_store_s32_i8x16(dt, dc_s32_of(f[j], floor0), (char *)out + at + j * opt,
                                     0xffff);
            else
                bdnn_epi_store16(dt, dc_sums_f32(f[j], bias, relu, alpha), out, at + j * opt,
                                 (__mmask16)0xffff);
        }
    }
}
#define DC_OUT_BLOCK dc_out_block_int8
/* ... and its u8 and s8 cases from the registers (DC_OUT_INLINE), for an output whose
 * points lie B apart, four points to a 64-byte store: the integer store, or the f32 path
 * (bias, relu of any slope) rounded in s32 first as the packs need them
 * (bdnn_epi_round_packed); the sums then never go through memory, a round trip that few
 * input channels (few products per sum) do not amortize.
 * DC_OUT_BYTES stores block o's points, each vector's s32 values S32(x, o), from the
 * locals DC_OUT_INLINE takes out of a first (the byte stores could alias its fields, which
 * would then be read again after each store). */
#define DC_OUT_BYTES(acc, UR, OCB, S32)                                                     \
    _Pragma("GCC unroll 4") for (int o = 0; o < (OCB); ++o) {                               \
        int8_t *at_ = out_ + o * o_ocb_;                                                    \
        _Pragma("GCC unroll 7") for (int j = 0; j + 4 <= (UR); j += 4)                      \
            bdnn_store_s32_i8x64(dt_, S32((acc)[j][o], o), S32((acc)[j + 1][o], o),         \
                                 S32((acc)[j + 2][o], o), S32((acc)[j + 3][o], o),          \
                                 at_ + j * VLEN);                                           \
        _Pragma("GCC unroll 3") for (int j = (UR) / 4 * 4; j < (UR); ++j)                   \
            bdnn_store_s32_i8x16(dt_, S32((acc)[j][o], o), at_ + j * VLEN, 0xffff);         \
    }
#define DC_OUT_INLINE(acc, a, out, UR, OCB, opt)                                            \
    do {                                                                                    \
        const int dt_ = (a)->out_dt;                                                        \
        if ((dt_ != BDNN_DT_U8 && dt_ != BDNN_DT_S8) || (opt) != VLEN) break;               \
        int8_t *const out_ = (int8_t *)(out);                                               \
        const int64_t o_ocb_ = (a)->o_ocb;                                                  \
        if (dc_s32_direct(a)) {                                                             \
            const int floor0_ = (a)->out_relu && dt_ == BDNN_DT_S8;                         \
            DC_OUT_BYTES(acc, UR, OCB, DC_S32_DIRECT)                                       \
            dc_stored = 1;                                                                  \
            break;                                                                          \
        }                                                                                   \
        const int relu_ = (a)->out_relu, u_ = dt_ == BDNN_DT_U8;                            \
        const float *bias_ = (a)->out_bias;                                                 \
        const __m512 alpha_ = _mm512_set1_ps((a)->relu_alpha);                              \
        if (u_) {   /* (each branch's type a constant: no test per vector) */             \
            const int rdt_ = BDNN_DT_U8;                                                    \
            DC_OUT_BYTES(acc, UR, OCB, DC_S32_ROUNDED)                                      \
        } else {                                                                            \
            const int rdt_ = BDNN_DT_S8;                                                    \
            DC_OUT_BYTES(acc, UR, OCB, DC_S32_ROUNDED)                                      \
        }                                                                                   \
        dc_stored = 1;                                                                      \
    } while (0)
#define DC_S32_DIRECT(x, o) dc_s32_of(x, floor0_)
#define DC_S32_ROUNDED(x, o)                                                                \
    bdnn_epi_round_packed(rdt_,                                                             \
                          dc_sums_f32(x, bias_ ? bias_ + (o) * VLEN : NULL, relu_, alpha_))
#define DC_STORE_DTS BDNN_EPI_STORE_DTS
#define DC_S32 1
#define DC_SUMS_TO_F32 dc_sums_to_f32

#include "conv_dblk.inc"
