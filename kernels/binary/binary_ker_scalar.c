/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "binary_impl.h"
#define BIN_NAME(x) binary_##x##_scalar
#define BIN_OBJ bdnn_binary_ker_scalar
#include "binary_ker.inc"
