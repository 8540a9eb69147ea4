/* AVX512_BF16 instances of the depthwise row kernel's bf16 inputs (conv_dw_lanes.inc,
 * DWL_DP): each tap one vdpbf16ps on the input zero-extended into its lanes, where the
 * AVX-512 instance widens with a shift and multiplies in an f32 FMA (the shift is the
 * third operation per tap, on cores that split 512-bit operations in two a whole
 * extra pass). f32 inputs keep the AVX-512 instance (bdnn_dwl_row_avx512). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512bf16,avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"
#include "conv_store_avx512.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DT_VEC_AVX512
#define DT_VEC(x) bdnn_dwl_##x##_avx512_bf16
#include "dt_vec.inc"
#define DWL_ROW_MAX 16   /* as the AVX-512 instance: a segment's pixels in 16 of 32 registers */
/* plane runs: two rows of at most 8 pixels at once (16 accumulators of 32 registers) */
#define DWL_PAIR_MAX 8
/* the last channels' n lanes (conv_dw_lanes.inc): masked loads and stores */
#include "conv_dw_lanes_avx512.h"
#define DWL_SRC_BF16
#define DWL_DP
#define DWL_BF16_RAW(p) ((vf)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))))
#define DWL_BF16_WIDEN(p) ((vf)_mm512_slli_epi32((__m512i)DWL_BF16_RAW(p), 16))
#define DWL_MADD(acc, w, x) ((vf)_mm512_dpbf16_ps((__m512)(acc), (__m512bh)(x), (__m512bh)(w)))
#define DWL_FN bdnn_dwl_row_bf16_avx512_bf16
#include "conv_dw_lanes.inc"
#undef DWL_FN
#define DWL_OUT_BF16
#define DWL_BF16_STORE(v, o) bdnn_store_bf16x16((__m512)(v), (o))
#define DWL_FN bdnn_dwl_row_bf16_out_avx512_bf16
#include "conv_dw_lanes.inc"
#undef DWL_FN

const conv_dwl_ker_t bdnn_dwl_ker_avx512_bf16 = {
    bdnn_dwl_row_avx512, bdnn_dwl_row_bf16_avx512_bf16, bdnn_dwl_row_bf16_out_avx512_bf16,
    DT_VEC(to_f32), DT_VEC(from_f32), VLEN};
