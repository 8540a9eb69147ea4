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
/* A last lane of n < 4 channels reads those n bytes only: on channels-last src (attr.
 * src_nhwc) the rest of the lane is the next point's, or past the end of src. */
static inline int32_t dc_part_quad(const uint8_t *x, int64_t n) {
    return n == 1 ? x[0] : n == 2 ? x[0] | x[1] << 8 : x[0] | x[1] << 8 | x[2] << 16;
}
#define DC_BCAST_PART(x, n) ((vf)_mm512_set1_epi32(dc_part_quad((const uint8_t *)(x), (n))))
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
/* the direct store of s32 sums: the epilogue's (float)acc + bias, relu, conversion */
static inline __attribute__((always_inline)) void dc_out(vf acc, const dc_call_t *a, int o,
                                                         int64_t at) {
    __m512 v = _mm512_cvtepi32_ps((__m512i)acc);
    if (a->out_bias) v = _mm512_add_ps(v, _mm512_loadu_ps(a->out_bias + o * VLEN));
    if (a->out_relu)
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v,
                               _mm512_set1_ps(a->relu_alpha));   /* a zero stays +0 */
    bdnn_epi_store16(a->out_dt, v, a->out, at, (__mmask16)0xffff);
}
#define DC_OUT(v, a, o, at) dc_out((v), (a), (o), (at))
#define DC_STORE_DTS BDNN_EPI_STORE_DTS
#define DC_S32 1
#define DC_SUMS_TO_F32 dc_sums_to_f32

#include "conv_dblk.inc"
