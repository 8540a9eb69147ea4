/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "eltwise_impl.h"
#define ELT_NAME(x) elt_##x##_scalar
#define ELT_OBJ bdnn_elt_ker_scalar
#include "eltwise_ker.inc"
