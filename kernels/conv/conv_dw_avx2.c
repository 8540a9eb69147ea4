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
/* the last channels' n lanes (conv_dw_lanes.inc): masked loads and the f32 store (AVX2
 * masks 32-bit elements only: n bf16 are the whole pairs below n, then element n - 1
 * again, which is inside) */
#define DWL_LANES(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), \
                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define DWL_PART_F32(p, n) ((vf)_mm256_maskload_ps((p), DWL_LANES(n)))
#define DWL_PART_ST_F32(o, v, n) _mm256_maskstore_ps((o), DWL_LANES(n), (__m256)(v))
static inline __attribute__((always_inline)) __m256i dwl_part_u16_avx2(const uint16_t *p,
                                                                      int64_t n) {
    const __m128i pairs = _mm_maskload_epi32(
            (const int *)p, _mm_cmpgt_epi32(_mm_set1_epi32((int)(n / 2)), _mm_setr_epi32(0, 1, 2, 3)));
    const __m128i last = _mm_and_si128(
            _mm_set1_epi16((short)p[n - 1]),
            _mm_cmpeq_epi16(_mm_set1_epi16((short)(n - 1)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7)));
    return _mm256_cvtepu16_epi32(_mm_or_si128(pairs, last));
}
#define DWL_PART_U16(p, n) ((vf)dwl_part_u16_avx2((p), (n)))
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
