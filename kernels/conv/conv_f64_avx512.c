/* AVX-512 instantiation of the f64 convolution loops: 8 doubles a vector. */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx2,fma")
#include "conv_f64.h"
#define F64_NAME(x) f64_##x##_avx512
#define F64_OBJ bdnn_f64_ker_avx512
#include "conv_f64.inc"
