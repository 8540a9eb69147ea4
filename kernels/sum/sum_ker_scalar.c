/* Portable instantiation (no ISA-specific code; the compiler may use the target's baseline SIMD). */

#include "sum_impl.h"
#define SUM_NAME(x) sum_##x##_scalar
#define SUM_OBJ bdnn_sum_ker_scalar
#include "sum_ker.inc"
