/* AVX2 instantiation of the low-precision epilogue (8 lanes per stage). */
#pragma GCC target("avx2")
#define EPI_FN bdnn_conv_epilogue_avx2
#define EPI_VL 8
#include "conv_epilogue.inc"
