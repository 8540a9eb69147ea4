/* AVX2 + FMA instantiation of the depthwise plane kernel. */
#pragma GCC target("avx2,fma")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(32)));
typedef float vfu __attribute__((vector_size(32), aligned(4)));
#define VLEN 8
#define DW_FN bdnn_dw_plane_avx2
#define DW_OBJ bdnn_dw_ker_avx2
#include "conv_dw.inc"
/* and the row kernel on channels in lanes, on the same vectors: bf16 inputs, then f32;
 * with the conversions of a low-precision dst */
#define DT_VEC(x) bdnn_dwl_##x##_avx2
#include "dt_vec.inc"
/* rows run in segments of this many pixels, each held in registers (of 16) */
#define DWL_ROW_MAX 8
#define DWL_SRC_BF16
#define DWL_BF16_WIDEN(p) \
    ((vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define DWL_FN bdnn_dwl_row_bf16_avx2
#include "conv_dw_lanes.inc"
#undef DWL_FN
#define DWL_OUT_BF16
#define DWL_FN bdnn_dwl_row_bf16_out_avx2
#include "conv_dw_lanes.inc"
#undef DWL_OUT_BF16
#undef DWL_SRC_BF16
#undef DWL_FN
#define DWL_FN_BF16 bdnn_dwl_row_bf16_avx2
#define DWL_FN_BF16_OUT bdnn_dwl_row_bf16_out_avx2
#define DWL_FN bdnn_dwl_row_avx2
#define DWL_OBJ bdnn_dwl_ker_avx2
#include "conv_dw_lanes.inc"
