/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "concat_impl.h"
#define CAT_NAME(x) cat_##x##_scalar
#define CAT_OBJ bdnn_concat_ker_scalar
#include "concat_ker.inc"
