/* scalar instantiation of the Winograd F(4x4, 3x3) transforms (conv_wino.inc), paired with
 * the scalar GEMM micro-kernel (its 4-row tile: 4 tiles per input-transform call). */
#include "conv_impl.h"

#define WVLEN 4
#define WMR 4
#define WINO_OBJ bdnn_wino_ker_scalar
#define WINO_UKR bdnn_gemm_ukr_scalar
#define WINO_SRC_FN wino_src_tf_scalar
#define WINO_DST_FN wino_dst_tf_scalar
#define WINO_GATHER_FN wino_gather_scalar
#include "conv_wino.inc"
