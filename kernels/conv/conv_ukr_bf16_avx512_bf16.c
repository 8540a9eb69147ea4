/* bf16 dot-product micro-kernel (contract: conv_dp_ukr_fn in conv_impl.h, PACK 2): a 12 x 32
 * f32 tile in 24 zmm accumulators; per pair of k, two B loads, twelve broadcasts of an A
 * pair, 24 vdpbf16ps (each multiplies two bf16 pairs exactly and adds them in f32). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512bf16")
#include <immintrin.h>

#include "conv_impl.h"
#include "conv_store_avx512.h"

enum { MR = 12, NR = 32 };

/* One 12 x 32 tile over a chain of k blocks (conv_dp_chain_fn); dp_fn is its one-block
 * case. */
static inline void tile_bf16_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                   void *c_, int64_t ldc, int64_t mr, int64_t nr,
                                   int accumulate, const float *acc_in, int64_t ld_acc,
                                   const conv_dp_store_t *st) {
    float *c = c_;
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    if (acc_in) {   /* an earlier chain's partial sums (rows past mr, columns past nr: 0) */
        __mmask16 m0, m1;
        bdnn_tile_masks32(nr, &m0, &m1);
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r)
            if (r < mr) {
                acc[r][0] = _mm512_maskz_loadu_ps(m0, acc_in + r * ld_acc);
                acc[r][1] = _mm512_maskz_loadu_ps(m1, acc_in + r * ld_acc + 16);
            }
    }
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
    if (st && st->nseg) {
        float tile[MR][NR];
        for (int r = 0; r < MR; ++r) {
            _mm512_storeu_ps(tile[r], acc[r][0]);
            _mm512_storeu_ps(tile[r] + 16, acc[r][1]);
        }
        bdnn_epi_store_segments(tile, NR, 0, mr, st, c, ldc);
        return;
    }
    if (st) {   /* conv_dp_chain_store_fn: bias, conversion, masked stores of mr x nr */
        __mmask16 m0, m1;
        bdnn_tile_masks32(nr, &m0, &m1);
        const size_t esz = bdnn_dt_size(st->out_dt);
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            if (r >= mr) break;
            __m512 v0 = acc[r][0], v1 = acc[r][1];
            if (st->bias) {
                const __m512 b = _mm512_set1_ps(st->bias[r]);
                v0 = _mm512_add_ps(v0, b), v1 = _mm512_add_ps(v1, b);
            }
            void *row = (char *)c + esz * (size_t)(r * ldc);
            bdnn_epi_store16(st->out_dt, v0, row, 0, m0);
            if (m1) bdnn_epi_store16(st->out_dt, v1, row, 16, m1);
        }
        return;
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
    bdnn_dp_edge_f32(&tile[0][0], NR, c, ldc, mr, nr, accumulate);
}

static void ukr_bf16_12x32(int64_t kcp, const void *a, const void *b, int64_t ldb, void *c,
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    const conv_dp_block_t blk = {kcp, a, b};
    tile_bf16_12x32(1, &blk, ldb, c, ldc, mr, nr, accumulate, NULL, 0, NULL);
}

static void chain_bf16_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, void *c,
                             int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    tile_bf16_12x32(nblk, blk, ldb, c, ldc, mr, nr, accumulate, NULL, 0, NULL);
}

static void store_bf16_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                             const void *acc, int64_t ld_acc, void *out, int64_t ld_out,
                             int64_t mr, int64_t nr, const conv_dp_store_t *st) {
    tile_bf16_12x32(nblk, blk, ldb, out, ld_out, mr, nr, 0, acc, ld_acc, st);
}

const conv_gemm_ukr_t bdnn_gemm_ukr_bf16_avx512_bf16 = {
    .mr = MR, .nr = NR, .dp_fn = ukr_bf16_12x32, .pack = 2, .dp_chain_fn = chain_bf16_12x32,
    .dp_store_fn = store_bf16_12x32, .store_dts = (1u << BDNN_DT_BF16) | (1u << BDNN_DT_F32)};
