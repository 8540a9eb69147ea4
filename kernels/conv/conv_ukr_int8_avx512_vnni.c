/* int8 dot-product micro-kernel (contract: conv_dp_ukr_fn in conv_impl.h, PACK 4): a 12 x 32
 * s32 tile in 24 zmm accumulators; per quad of k, two B loads (u8), twelve broadcasts of
 * an A quad (s8), 24 vpdpbusd (four u8 x s8 products summed into each s32 lane, without
 * saturation). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni")
#include <immintrin.h>

#include "conv_impl.h"

enum { MR = 12, NR = 32 };

static void ukr_int8_12x32(int64_t kcp, const void *a_, const void *b_, int64_t ldb, void *c_,
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    const int8_t *a = a_;
    const uint8_t *b = b_;
    int32_t *c = c_;
    __m512i acc[MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    for (int64_t k = 0; k < kcp / 4; ++k) {
        const __m512i b0 = _mm512_loadu_si512(b + k * ldb);
        const __m512i b1 = _mm512_loadu_si512(b + k * ldb + 64);
        const int32_t *ak = (const int32_t *)(a + k * MR * 4);
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            const __m512i av = _mm512_set1_epi32(ak[r]);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, av);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, av);
        }
    }
    if (mr == MR && nr == NR) {
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            int32_t *cr = c + r * ldc;
            if (accumulate) {
                acc[r][0] = _mm512_add_epi32(acc[r][0], _mm512_loadu_si512(cr));
                acc[r][1] = _mm512_add_epi32(acc[r][1], _mm512_loadu_si512(cr + 16));
            }
            _mm512_storeu_si512(cr, acc[r][0]);
            _mm512_storeu_si512(cr + 16, acc[r][1]);
        }
        return;
    }
    int32_t tile[MR][NR];
    for (int r = 0; r < MR; ++r) {
        _mm512_storeu_si512(tile[r], acc[r][0]);
        _mm512_storeu_si512(tile[r] + 16, acc[r][1]);
    }
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            c[r * ldc + j] = (int32_t)((uint32_t)(accumulate ? c[r * ldc + j] : 0)
                                       + (uint32_t)tile[r][j]);
}

const conv_gemm_ukr_t bdnn_gemm_ukr_int8_avx512_vnni = {MR, NR, NULL, ukr_int8_12x32, 4, NULL, 0, NULL};
