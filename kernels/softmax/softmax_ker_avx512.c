/* AVX-512 instantiation: the reductions and the exp loops vectorize 16 wide. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "softmax_impl.h"
#define DT_VEC_AVX512
#define SMX_NAME(x) smx_##x##_avx512
#define SMX_OBJ bdnn_smx_ker_avx512
#include "softmax_ker.inc"
