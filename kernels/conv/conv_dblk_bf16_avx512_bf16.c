/* AVX512_BF16 instances of the blocked direct convolution kernels (conv_dblk.inc, PACK 2):
 * bf16 nChw16c, a lane of two channels per broadcast, vdpbf16ps (each pair multiplied
 * exactly and added in f32) into f32 accumulators; the same register blocking as the f32
 * AVX-512 instances (conv_dblk_lp_avx512.h), each instruction doing twice their work. */
/* The instances of OCB 2 to 4 and the kernel object; conv_dblk_bf16_avx512_bf16_ocb1.c
 * compiles the OCB 1 instances of this file beside it (DC_PART, conv_dblk.inc). */
#ifndef DC_PART
#define DC_PART 2
#endif
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512bf16,avx2,fma")
#include "conv_dblk_lp_avx512.h"

#define DC_PACK 2
#define DC_T uint16_t
#define DC_OBJ bdnn_dc_ker_bf16_avx512_bf16
#define DC_BCAST_PART(x, n) ((vf)_mm512_set1_epi32(*(const uint16_t *)(x)))   /* n is 1 */
/* one in-place instruction, as the f32 FMA: the accumulators keep their registers */
#define DC_FMA(A, X, W)                                                                    \
    __asm__("vdpbf16ps %[xv], %[wv], %[av]" : [av] "+v"(A) : [xv] "v"(X), [wv] "v"(W))

/* vcvtne2ps2bf16 gives dt.h's bits but for denormals (it flushes them; NaNs it quiets
 * alike), and a sum vdpbf16ps left is never one: the instruction flushes its denormal
 * results (DAZ and FTZ always, whatever MXCSR says). So the call's sums need a class test
 * only where one may have skipped it (a call without products: every tap or channel
 * clipped, its sums the bias or the partial sums it started from) or been scaled after
 * it (a leaky relu's alpha). */
static inline int dc_sums_flushed(const dc_call_t *a) {
    return a->n_icb > 0 && a->last_ic > 0 && a->nkd > 0 && a->nkh > 0 && a->nkw > 0
        && !(a->relu && a->relu_alpha != 0.0f);
}

/* The direct store (conv_dblk.inc's DC_OUT_BLOCK): bias and relu are already in the f32
 * sums; a bf16 output's points B apart go two to a conversion and store. */
static __attribute__((noinline)) void dc_out_block_bf16(const vf *fin, const dc_call_t *a,
                                                        void *out, int UR, int OCB,
                                                        int64_t opt) {
    const int dt = a->out_dt, flushed = dt == BDNN_DT_BF16 && dc_sums_flushed(a);
    for (int o = 0; o < OCB; ++o) {
        const vf *f = fin + o * UR;
        const int64_t at = o * a->o_ocb;
        int j = 0;
        for (; flushed && j < UR; ++j)   /* (the points a row apart of a border column) */
            bdnn_store_bf16x16_cvtne((__m512)f[j], (uint16_t *)out + at + j * opt);
        if (dt == BDNN_DT_BF16) {
            for (; opt == VLEN && j + 2 <= UR; j += 2)
                bdnn_store_bf16x32((__m512)f[j], (__m512)f[j + 1], (uint16_t *)out + at + j * VLEN);
            for (; j < UR; ++j) bdnn_store_bf16x16((__m512)f[j], (uint16_t *)out + at + j * opt);
        }
        for (; j < UR; ++j)
            bdnn_epi_store16(dt, (__m512)f[j], out, at + j * opt, (__mmask16)0xffff);
    }
}
#define DC_OUT_BLOCK dc_out_block_bf16
/* ... and its common case inline (DC_OUT_INLINE): a bf16 output whose points lie B apart,
 * with sums that vcvtne2ps2bf16 converts to dt.h's bits, two points to a conversion and
 * store: the sums then never go through memory, a round trip that few input channels (few
 * products per sum) do not amortize; each sum class-tested only where dc_sums_flushed
 * does not hold. Anything else takes dc_out_block_bf16. */
#define DC_OUT_INLINE(acc, a, out, UR, OCB, opt)                                            \
    do {                                                                                    \
        if ((a)->out_dt != BDNN_DT_BF16 || (opt) != VLEN) break;                            \
        if (!dc_sums_flushed(a)) {                                                          \
            __mmask16 inexact = 0;                                                          \
            _Pragma("GCC unroll 4") for (int o = 0; o < (OCB); ++o)                         \
            _Pragma("GCC unroll 28") for (int j = 0; j < (UR); ++j)                         \
                inexact |= bdnn_bf16_cvtne_inexact((__m512)(acc)[j][o]);                     \
            if (inexact) break;                                                             \
        }                                                                                   \
        _Pragma("GCC unroll 4") for (int o = 0; o < (OCB); ++o) {                           \
            uint16_t *row = (uint16_t *)(out) + o * (a)->o_ocb;                             \
            _Pragma("GCC unroll 14") for (int j = 0; j + 1 < (UR); j += 2)                  \
                bdnn_store_bf16x32_cvtne((__m512)(acc)[j][o], (__m512)(acc)[j + 1][o],      \
                                         row + j * VLEN);                                   \
            if ((UR) % 2)                                                                   \
                bdnn_store_bf16x16_cvtne((__m512)(acc)[(UR) - 1][o], row + ((UR) - 1) * VLEN); \
        }                                                                                   \
        dc_stored = 1;                                                                      \
    } while (0)
#define DC_STORE_DTS ((1u << BDNN_DT_BF16) | (1u << BDNN_DT_F32))

#include "conv_dblk.inc"
