/* AVX2 instantiation: the conversions and the algorithm loops vectorize 8 wide. */
#pragma GCC target("avx2,fma,f16c")
#include "binary_impl.h"
#define DT_VEC_F16C
#define BIN_NAME(x) binary_##x##_avx2
#define BIN_OBJ bdnn_binary_ker_avx2
#include "binary_ker.inc"
