/* AVX-512 instantiation of the GEMM micro-kernel: 12 x 32 tile (24 zmm accumulators). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define MR 12
#define NRV 2
#define UKR_ROW_STEP 2
#define UKR_FN gemm_ukr_avx512_12x32
#define UKR_OBJ bdnn_gemm_ukr_avx512
#define UKR_STREAM_STORE(p, v) _mm512_stream_ps((float *)(p), (__m512)(v))
#define UKR_RUN_MASK_T __mmask16
#define UKR_RUN_MASK(lane, len) ((__mmask16)(((1u << (len)) - 1u) << (lane)))
#define UKR_RUN_LOAD(at, mask) _mm512_maskz_loadu_ps((mask), (at))
#include "conv_ukr.inc"
