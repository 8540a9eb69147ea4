/* AVX2 instantiation: the conversions and the accumulation vectorize 8 wide. */
#pragma GCC target("avx2,fma,f16c")
#include "sum_impl.h"
#define DT_VEC_F16C
#define SUM_NAME(x) sum_##x##_avx2
#define SUM_OBJ bdnn_sum_ker_avx2
#include "sum_ker.inc"
