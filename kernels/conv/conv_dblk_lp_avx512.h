/* What the AVX-512 low-precision instances of the blocked direct kernels share
 * (conv_dblk_bf16_avx512_bf16.c, conv_dblk_int8_avx512_vnni.c): the f32 AVX-512
 * instances' vector and register blocking (28 x 1, 13 x 2, 8 x 3, 6 x 4 accumulators),
 * the broadcast of one 32-bit lane of channels, and the conversion of finished f32 sums
 * (dc_ker_t.store). Include after a target pragma with avx512f, avx512vl, avx512bw and
 * avx512dq; the including file then defines DC_PACK, DC_T, DC_OBJ, DC_BCAST_PART, DC_FMA,
 * DC_OUT_BLOCK and DC_STORE_DTS (and DC_S32, DC_SUMS_TO_F32) and includes conv_dblk.inc. */
#ifndef BDNN_CONV_DBLK_LP_AVX512_H
#define BDNN_CONV_DBLK_LP_AVX512_H
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "conv_dblk.h"
#include "conv_store_avx512.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DC_PREF 4
#define DC_UR1 28
#define DC_UR2 13
#define DC_UR3 8
#define DC_UR4 6
/* one 32-bit lane in every lane: by memcpy, one load whatever its alignment (on
 * channels-last src a bf16 pair starts wherever a point of odd channels puts it) */
static inline __m512i dc_bcast_lane(const void *x) {
    int32_t v;
    memcpy(&v, x, sizeof(v));
    return _mm512_set1_epi32(v);
}
#define DC_BCAST(x) ((vf)dc_bcast_lane(x))

__attribute__((unused))   /* (the kernel object's: DC_PART 1 has none) */
static void dc_store_lp(int out_dt, const float *acc, void *out, int64_t n) {
    for (int64_t i = 0; i < n; i += VLEN)
        bdnn_epi_store16(out_dt, _mm512_loadu_ps(acc + i), out, i, (__mmask16)0xffff);
}
#define DC_STORE dc_store_lp
#endif
