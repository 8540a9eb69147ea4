/* The one-block (OCB 1) instances of conv_dblk_int8_avx512_vnni.c, compiled beside it. */
#define DC_PART 1
#include "conv_dblk_int8_avx512_vnni.c"
