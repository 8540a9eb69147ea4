/* AVX2 instances of the blocked direct convolution kernels (conv_dblk.inc): nChw8c, one
 * ymm per 8-channel block; 16 registers hold UR x OCB accumulators (12 x 1, 6 x 2, 3 x 3,
 * 2 x 4), OCB weight vectors and one broadcast. */
#pragma GCC target("avx2,fma")
typedef float vf __attribute__((vector_size(32)));
typedef float vfu __attribute__((vector_size(32), aligned(4)));
#define VLEN 8
#define DC_OBJ bdnn_dc_ker_avx2
#define DC_PREF 2
#define DC_UR1 12
#define DC_UR2 6
#define DC_UR3 3
#define DC_UR4 2
/* FMA latency 4 cycles x 2 FMAs per cycle; 16 ymm registers */
#define DC_KSPLIT 8
#define DC_NREG 16
#include <immintrin.h>
#define DC_BCAST(x) _mm256_set1_ps(*(x))
#define DC_STREAM(p, v) _mm256_stream_ps((p), (__m256)(v))
#include "conv_dblk.inc"
