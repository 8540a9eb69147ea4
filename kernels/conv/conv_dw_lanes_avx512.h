/* The depthwise row kernel's last channels (n < 16 lanes, conv_dw_lanes.inc's
 * DWL_PART_*) on AVX-512 masks, for the AVX-512 and AVX512_BF16 instances: loads with
 * the other lanes zero, stores of the low n lanes. Included after the file's target
 * pragma and vector type vf. */
#ifndef BDNN_CONV_DW_LANES_AVX512_H
#define BDNN_CONV_DW_LANES_AVX512_H
#include <immintrin.h>
#define DWL_LANES(n) ((__mmask16)((1u << (n)) - 1u))
#define DWL_PART_F32(p, n) ((vf)_mm512_maskz_loadu_ps(DWL_LANES(n), (p)))
#define DWL_PART_U16(p, n) ((vf)_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(DWL_LANES(n), (p))))
#define DWL_PART_ST_F32(o, v, n) _mm512_mask_storeu_ps((o), DWL_LANES(n), (__m512)(v))
#define DWL_PART_ST_U16(o, h, n) _mm256_mask_storeu_epi16((o), DWL_LANES(n), (__m256i)(h))
#endif
