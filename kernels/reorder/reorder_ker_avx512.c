/* AVX-512 instantiation: the same 8 x 8 transposes (ymm), compiled for AVX-512 so the
 * compiler may use its wider moves and masks around them. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "reorder_impl.h"
#define REORDER_AVX 1
#define REORDER_NAME(x) reorder_##x##_avx512
#define REORDER_OBJ bdnn_reorder_ker_avx512
#include "reorder_ker.inc"
