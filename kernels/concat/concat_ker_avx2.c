/* AVX2 instantiation: the conversions and the scale vectorize 8 wide. */
#pragma GCC target("avx2,fma,f16c")
#include "concat_impl.h"
#define DT_VEC_F16C
#define CAT_NAME(x) cat_##x##_avx2
#define CAT_OBJ bdnn_concat_ker_avx2
#include "concat_ker.inc"
