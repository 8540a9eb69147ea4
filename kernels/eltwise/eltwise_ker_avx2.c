/* AVX2 instantiation: the branch-free loops vectorize 8 wide (f64: 4). */
#pragma GCC target("avx2,fma,f16c")
#include "eltwise_impl.h"
#define DT_VEC_F16C
#define ELT_NAME(x) elt_##x##_avx2
#define ELT_OBJ bdnn_elt_ker_avx2
#include "eltwise_ker.inc"
