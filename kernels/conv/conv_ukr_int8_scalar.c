/* Portable instantiation of the int8 micro-kernel (baseline x86-64 or any CPU): 4 x 8 tile. */
#include "conv_impl.h"

#define MR 4
#define NR 8
#define UKR_FN gemm_ukr_int8_scalar_4x8
#define UKR_OBJ bdnn_gemm_ukr_int8_scalar
#include "conv_ukr_int8.inc"
