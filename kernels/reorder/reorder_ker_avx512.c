/* AVX-512 instantiation: 16 x 16 in-register transposes (zmm), 16-wide conversions. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "reorder_impl.h"
#define REORDER_AVX512 1
#define REORDER_NAME(x) reorder_##x##_avx512
#define REORDER_OBJ bdnn_reorder_ker_avx512
#include "reorder_ker.inc"
