/* AVX-512 instantiation of the low-precision epilogue (16 lanes per stage). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq")
#define EPI_FN bdnn_conv_epilogue_avx512
#define EPI_VL 16
#include "conv_epilogue.inc"
