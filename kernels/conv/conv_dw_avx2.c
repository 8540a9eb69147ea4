/* AVX2 + FMA instantiation of the depthwise row kernel. */
#pragma GCC target("avx2,fma")
#include "conv_impl.h"
#define DW_FN dw_row_avx2
#define DW_OBJ bdnn_dw_ker_avx2
#include "conv_dw.inc"
