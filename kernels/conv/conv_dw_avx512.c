/* AVX-512 instantiation of the depthwise plane kernel. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DW_FN dw_plane_avx512
#define DW_OBJ bdnn_dw_ker_avx512
#include "conv_dw.inc"
