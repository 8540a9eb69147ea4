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

/* the direct store: bias and relu are already in the f32 sums */
#define DC_OUT(v, a, o, at) bdnn_epi_store16((a)->out_dt, (__m512)(v), (a)->out, (at), 0xffff)
#define DC_STORE_DTS ((1u << BDNN_DT_BF16) | (1u << BDNN_DT_F32))

#include "conv_dblk.inc"
