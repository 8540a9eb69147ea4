/* AVX-512 instantiation: the conversions and the scale vectorize 16 wide. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "concat_impl.h"
#define DT_VEC_AVX512
#define CAT_NAME(x) cat_##x##_avx512
#define CAT_OBJ bdnn_concat_ker_avx512
#include "concat_ker.inc"
