/* bf16 dot-product micro-kernel (contract: conv_dp_ukr_fn in conv_impl.h, PACK 2): a 12 x 32
 * f32 tile in 24 zmm accumulators; per pair of k, two B loads, twelve broadcasts of an A
 * pair, 24 vdpbf16ps (each multiplies two bf16 pairs exactly and adds them in f32). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512bf16")
#include <immintrin.h>

#include "conv_impl.h"

enum { MR = 12, NR = 32 };

/* One 12 x 32 tile over a chain of k blocks (conv_dp_chain_fn); dp_fn is its one-block
 * case. */
static inline void tile_bf16_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                   void *c_, int64_t ldc, int64_t mr, int64_t nr,
                                   int accumulate) {
    float *c = c_;
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nblk; ++i) {
        const uint16_t *a = blk[i].a, *b = blk[i].b;
        for (int64_t k = 0; k < blk[i].kcp / 2; ++k) {
            const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + k * ldb);
            const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + k * ldb + 32);
            const int32_t *ak = (const int32_t *)(a + k * MR * 2);
#pragma GCC unroll 12
            for (int r = 0; r < MR; ++r) {
                const __m512bh av = (__m512bh)_mm512_set1_epi32(ak[r]);
                acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
            }
        }
    }
    if (mr == MR && nr == NR) {
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            float *cr = c + r * ldc;
            if (accumulate) {
                acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(cr));
                acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(cr + 16));
            }
            _mm512_storeu_ps(cr, acc[r][0]);
            _mm512_storeu_ps(cr + 16, acc[r][1]);
        }
        return;
    }
    float tile[MR][NR];
    for (int r = 0; r < MR; ++r) {
        _mm512_storeu_ps(tile[r], acc[r][0]);
        _mm512_storeu_ps(tile[r] + 16, acc[r][1]);
    }
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.0f) + tile[r][j];
}

static void ukr_bf16_12x32(int64_t kcp, const void *a, const void *b, int64_t ldb, void *c,
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    const conv_dp_block_t blk = {kcp, a, b};
    tile_bf16_12x32(1, &blk, ldb, c, ldc, mr, nr, accumulate);
}

static void chain_bf16_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, void *c,
                             int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    tile_bf16_12x32(nblk, blk, ldb, c, ldc, mr, nr, accumulate);
}

const conv_gemm_ukr_t bdnn_gemm_ukr_bf16_avx512_bf16 = {
    MR, NR, NULL, ukr_bf16_12x32, 2, NULL, 0, chain_bf16_12x32};
