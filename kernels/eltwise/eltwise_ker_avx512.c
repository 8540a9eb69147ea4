/* AVX-512 instantiation: the branch-free loops vectorize 16 wide (f64: 8). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "eltwise_impl.h"
#define DT_VEC_AVX512
#define ELT_NAME(x) elt_##x##_avx512
#define ELT_OBJ bdnn_elt_ker_avx512
#include "eltwise_ker.inc"
