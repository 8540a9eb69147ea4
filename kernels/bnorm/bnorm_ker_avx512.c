/* AVX-512 instantiation: the reductions and the elementwise loops vectorize 16 wide. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "bnorm_impl.h"
#define DT_VEC_AVX512
#define BN_NAME(x) bn_##x##_avx512
#define BN_OBJ bdnn_bn_ker_avx512
#include "bnorm_ker.inc"
