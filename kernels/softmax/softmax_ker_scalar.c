/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "softmax_impl.h"
#define SMX_NAME(x) smx_##x##_scalar
#define SMX_OBJ bdnn_smx_ker_scalar
#include "softmax_ker.inc"
