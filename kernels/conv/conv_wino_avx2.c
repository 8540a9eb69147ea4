/* avx2 instantiation of the Winograd F(4x4, 3x3) transforms (conv_wino.inc), paired with
 * the avx2 GEMM micro-kernel (its 6-row tile: 6 tiles per input-transform call). */
#pragma GCC target("avx2,fma")
#include "conv_impl.h"

#define WVLEN 8
#define WMR 6
#define WINO_OBJ bdnn_wino_ker_avx2
#define WINO_UKR bdnn_gemm_ukr_avx2
#define WINO_SRC_FN wino_src_tf_avx2
#define WINO_DST_FN wino_dst_tf_avx2
#define WINO_GATHER_FN wino_gather_avx2
#include "conv_wino.inc"
