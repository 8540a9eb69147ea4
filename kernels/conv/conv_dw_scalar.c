/* Portable instantiation of the depthwise plane kernel: generic 4-float vectors, which the
 * compiler maps to the baseline target (SSE2 on x86-64, scalar code elsewhere). */
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(16)));
typedef float vfu __attribute__((vector_size(16), aligned(4)));
#define VLEN 4
#define DW_FN bdnn_dw_plane_scalar
#define DW_OBJ bdnn_dw_ker_scalar
#include "conv_dw.inc"
/* and the row kernel on channels in lanes, on the same vectors: bf16 inputs, then f32;
 * with the conversions of a low-precision dst */
#define DT_VEC(x) bdnn_dwl_##x##_scalar
#include "dt_vec.inc"
/* rows run in segments of this many pixels, each held in registers (of 16) */
#define DWL_ROW_MAX 8
#define DWL_SRC_BF16
#define DWL_FN bdnn_dwl_row_bf16_scalar
#include "conv_dw_lanes.inc"
#undef DWL_FN
#define DWL_OUT_BF16
#define DWL_FN bdnn_dwl_row_bf16_out_scalar
#include "conv_dw_lanes.inc"
#undef DWL_OUT_BF16
#undef DWL_SRC_BF16
#undef DWL_FN
#define DWL_FN_BF16 bdnn_dwl_row_bf16_scalar
#define DWL_FN_BF16_OUT bdnn_dwl_row_bf16_out_scalar
#define DWL_FN bdnn_dwl_row_scalar
#define DWL_OBJ bdnn_dwl_ker_scalar
#include "conv_dw_lanes.inc"
