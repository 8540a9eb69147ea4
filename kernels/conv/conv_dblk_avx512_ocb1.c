/* The one-block (OCB 1) instances of conv_dblk_avx512.c, compiled beside it. */
#define DC_PART 1
#include "conv_dblk_avx512.c"
