/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "bnorm_impl.h"
#define BN_NAME(x) bn_##x##_scalar
#define BN_OBJ bdnn_bn_ker_scalar
#include "bnorm_ker.inc"
