/* avx512 instantiation of the Winograd F(4x4, 3x3) transforms (conv_wino.inc), paired with
 * the avx512 GEMM micro-kernel (its 12-row tile: 12 tiles per input-transform call). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "conv_impl.h"

#define WVLEN 16
#define WMR 12
#define WINO_OBJ bdnn_wino_ker_avx512
#define WINO_UKR bdnn_gemm_ukr_avx512
#define WINO_SRC_FN wino_src_tf_avx512
#define WINO_DST_FN wino_dst_tf_avx512
#define WINO_GATHER_FN wino_gather_avx512
#include "conv_wino.inc"

/* and of the channel-block kernel for few input channels (conv_wino_blk.inc): vectors of
 * 16 floats, the nChw16c block */
#define WB_VL 16
#define WB_QS 4
#define WB_OBJ bdnn_wino_blk_ker_avx512
#define WB_CHUNK_FN wino_blk_chunk_avx512
#define WB_STREAM(p, x) _mm512_stream_ps((p), (__m512)(x))
#include "conv_wino_blk.inc"
