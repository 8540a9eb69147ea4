/* AVX-512 instantiation of the depthwise plane kernel. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DW_FN bdnn_dw_plane_avx512
#define DW_OBJ bdnn_dw_ker_avx512
/* Rows of at most 8 outputs (MobileNet's 7x7 layers) on 256-bit vectors: a 512-bit
 * vector would be half empty, and on cores that split 512-bit operations in two
 * (AMD Zen 4) the 256-bit kernel does the same rows in half the cycles. */
#define DW_NARROW bdnn_dw_plane_avx2
#define DW_NARROW_VLEN 8
#include "conv_dw.inc"
/* and the row kernel on channels in lanes, on the same vectors: bf16 inputs, then f32;
 * with the conversions of a low-precision dst */
#define DT_VEC_AVX512
#define DT_VEC(x) bdnn_dwl_##x##_avx512
#include "dt_vec.inc"
/* rows run in segments of this many pixels, each held in registers (of 32) */
#define DWL_ROW_MAX 16
/* plane runs: two rows of at most 8 pixels at once (16 accumulators of 32 registers) */
#define DWL_PAIR_MAX 8
/* the last channels' n lanes (conv_dw_lanes.inc): masked loads and stores */
#include "conv_dw_lanes_avx512.h"
#define DWL_SRC_BF16
#define DWL_BF16_WIDEN(p) \
    ((vf)_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define DWL_FN bdnn_dwl_row_bf16_avx512
#include "conv_dw_lanes.inc"
#undef DWL_FN
#define DWL_OUT_BF16
#define DWL_FN bdnn_dwl_row_bf16_out_avx512
#include "conv_dw_lanes.inc"
#undef DWL_OUT_BF16
#undef DWL_SRC_BF16
#undef DWL_FN
#define DWL_FN_BF16 bdnn_dwl_row_bf16_avx512
#define DWL_FN_BF16_OUT bdnn_dwl_row_bf16_out_avx512
#define DWL_FN bdnn_dwl_row_avx512
#define DWL_OBJ bdnn_dwl_ker_avx512
#include "conv_dw_lanes.inc"
