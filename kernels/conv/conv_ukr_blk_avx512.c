/* AVX-512 GEMM micro-kernel for the channel-blocked rows (gemm_conv_blocked): a 24 x 16
 * tile, one zmm of columns, so a tile's row is exactly one 16-wide channel block of an
 * nChw16c point and never straddles two blocks (conv_gemm_nhwc.c). 24 accumulators, one
 * B vector, A broadcast from memory. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define MR 24
#define NRV 1
#define UKR_ROW_STEP 4
#define UKR_FN gemm_ukr_blk_avx512_24x16
#define UKR_OBJ bdnn_gemm_ukr_blk_avx512
#define UKR_BWT_ON_PLAIN_TILE bdnn_gemm_ukr_avx512
#include "conv_ukr.inc"
