/* AVX2 instantiation: the reductions and the elementwise loops vectorize 8 wide. */
#pragma GCC target("avx2,fma,f16c")
#include "bnorm_impl.h"
#define DT_VEC_F16C
#define BN_NAME(x) bn_##x##_avx2
#define BN_OBJ bdnn_bn_ker_avx2
#include "bnorm_ker.inc"
