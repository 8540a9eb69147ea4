/* AVX2 GEMM micro-kernel for the channel-blocked rows (gemm_conv_blocked): a 12 x 8 tile,
 * one ymm of columns, so a tile's row is exactly one 8-wide channel block of an nChw8c
 * point (conv_gemm_nhwc.c). 12 accumulators, one B vector, one broadcast of A. */
#pragma GCC target("avx2,fma")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(32)));
typedef float vfu __attribute__((vector_size(32), aligned(4)));
#define VLEN 8
#define MR 12
#define NRV 1
#define UKR_ROW_STEP 4
#define UKR_FN gemm_ukr_blk_avx2_12x8
#define UKR_OBJ bdnn_gemm_ukr_blk_avx2
#define UKR_BWT_ON_PLAIN_TILE bdnn_gemm_ukr_avx2
#include "conv_ukr.inc"
