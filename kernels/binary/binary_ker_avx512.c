/* AVX-512 instantiation: the conversions and the algorithm loops vectorize 16 wide. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "binary_impl.h"
#define DT_VEC_AVX512
#define BIN_NAME(x) binary_##x##_avx512
#define BIN_OBJ bdnn_binary_ker_avx512
#include "binary_ker.inc"
