/* AVX2 + FMA instantiation of the f64 convolution loops: 4 doubles a vector. */
#pragma GCC target("avx2,fma")
#include "conv_f64.h"
#define F64_NAME(x) f64_##x##_avx2
#define F64_OBJ bdnn_f64_ker_avx2
#include "conv_f64.inc"
