/* AVX-512 instantiation: the conversions and the accumulation vectorize 16 wide. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "sum_impl.h"
#define DT_VEC_AVX512
#define SUM_NAME(x) sum_##x##_avx512
#define SUM_OBJ bdnn_sum_ker_avx512
#include "sum_ker.inc"
