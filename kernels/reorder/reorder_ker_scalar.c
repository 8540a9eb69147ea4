/* Portable instantiation (plain loops; the compiler may use the target's baseline SIMD). */
#include "reorder_impl.h"
#define REORDER_NAME(x) reorder_##x##_scalar
#define REORDER_OBJ bdnn_reorder_ker_scalar
#include "reorder_ker.inc"
