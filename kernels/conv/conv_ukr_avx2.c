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
#define UKR_RUN_MASK_T __m256i
#define UKR_RUN_MASK(lane, len)                                                             \
    _mm256_and_si256(                                                                       \
        _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((lane) + (len))),                        \
                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),                      \
        _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),                       \
                           _mm256_set1_epi32((int)(lane) - 1)))
#define UKR_RUN_LOAD(at, mask) _mm256_maskload_ps((const float *)(at), (mask))
#include "conv_ukr.inc"
