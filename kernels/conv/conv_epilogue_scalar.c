/* Portable instantiation of the low-precision epilogue (the target's baseline SIMD). */
#define EPI_FN bdnn_conv_epilogue_scalar
#define EPI_VL 4
#include "conv_epilogue.inc"
