/* AVX2 instantiation: the reductions and the exp loops vectorize 8 wide. */
#pragma GCC target("avx2,fma,f16c")
#include "softmax_impl.h"
#define DT_VEC_F16C
#define SMX_NAME(x) smx_##x##_avx2
#define SMX_OBJ bdnn_smx_ker_avx2
#include "softmax_ker.inc"
