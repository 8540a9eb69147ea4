/* AVX-512 instances of the blocked direct convolution kernels (conv_dblk.inc): nChw16c,
 * one zmm per 16-channel block; up to 28 accumulators (UR x OCB: 28 x 1, 13 x 2, 8 x 3,
 * 6 x 4) beside OCB weight vectors and two broadcasts. */
/* The instances of OCB 2 to 4 and the kernel object; conv_dblk_avx512_ocb1.c
 * compiles the OCB 1 instances of this file beside it (DC_PART, conv_dblk.inc). */
#ifndef DC_PART
#define DC_PART 2
#endif
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DC_OBJ bdnn_dc_ker_avx512
#define DC_PREF 4
#define DC_UR1 28
#define DC_UR2 13
#define DC_UR3 8
#define DC_UR4 6
#include <immintrin.h>
#define DC_BCAST(x) _mm512_set1_ps(*(x))
#define DC_FMA(A, X, W)                                                                    \
    __asm__("vfmadd231ps %[xv], %[wv], %[av]" : [av] "+v"(A) : [xv] "v"(X), [wv] "v"(W))
#define DC_FMA_BCAST(A, P, W)                                                              \
    __asm__("vfmadd231ps %[x]%{1to16%}, %[wv], %[av]" : [av] "+v"(A) : [x] "m"(*(P)), [wv] "v"(W))
#define DC_STREAM(p, v) _mm512_stream_ps((p), (__m512)(v))
#include "conv_dblk.inc"
