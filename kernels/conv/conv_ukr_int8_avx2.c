/* AVX2 instantiation of the portable int8 micro-kernel: 4 x 16 tile. */
#pragma GCC target("avx2,fma")
#include "conv_impl.h"

#define MR 4
#define NR 16
#define UKR_FN gemm_ukr_int8_avx2_4x16
#define UKR_OBJ bdnn_gemm_ukr_int8_avx2
#include "conv_ukr_int8.inc"
