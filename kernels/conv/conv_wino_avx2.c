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

/* and of the channel-block kernel for few input channels (conv_wino_blk.inc): vectors of
 * 8 floats, the nChw8c block */
#define WB_VL 8
#define WB_QS 2
#define WB_OBJ bdnn_wino_blk_ker_avx2
#define WB_CHUNK_FN wino_blk_chunk_avx2
#define WB_STREAM(p, x) _mm256_stream_ps((p), (__m256)(x))
#include "conv_wino_blk.inc"
