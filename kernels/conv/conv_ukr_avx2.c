/* AVX2 + FMA instantiation of the GEMM micro-kernel: 6 x 16 tile (12 ymm accumulators). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"

typedef float vf __attribute__((vector_size(32)));
typedef float vfu __attribute__((vector_size(32), aligned(4)));
#define VLEN 8
#define MR 6
#define NRV 2
#define UKR_ROW_STEP 2
#define UKR_FN gemm_ukr_avx2_6x16
#define UKR_OBJ bdnn_gemm_ukr_avx2
#define UKR_STREAM_STORE(p, v) _mm256_stream_ps((float *)(p), (__m256)(v))
#include "conv_ukr.inc"
