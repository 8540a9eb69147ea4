/* Portable instantiation of the f64 convolution loops. */
#include "conv_f64.h"
#define F64_NAME(x) f64_##x##_scalar
#define F64_OBJ bdnn_f64_ker_scalar
#include "conv_f64.inc"
