/* The exact twin of conv_dblk_int8_avx2.c's bounded kernels (dc_ker_t.exact), compiled
 * beside them. */
#define DC_INT8_AVX2_EXACT 1
#include "conv_dblk_int8_avx2.c"
