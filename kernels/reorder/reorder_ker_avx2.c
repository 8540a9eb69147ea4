/* AVX2 instantiation: 8 x 8 in-register transposes of 4-byte elements. */
#pragma GCC target("avx2,fma")
#include "reorder_impl.h"
#define REORDER_AVX 1
#define REORDER_NAME(x) reorder_##x##_avx2
#define REORDER_OBJ bdnn_reorder_ker_avx2
#include "reorder_ker.inc"
