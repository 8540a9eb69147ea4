/* int8 dot-product micro-kernel (contract: conv_dp_ukr_fn in conv_impl.h, PACK 4): a 12 x 32
 * s32 tile in 24 zmm accumulators; per quad of k, two B loads (u8), twelve broadcasts of
 * an A quad (s8), 24 vpdpbusd (four u8 x s8 products summed into each s32 lane, without
 * saturation).
 *
 * The accumulators are 24 named variables, not an array: with __m512i acc[12][2], GCC 12
 * moved them between registers and stored them to the stack on every k step (the k loop
 * then ran at a fraction of the vpdpbusd rate). */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni")
#include <immintrin.h>

#include "conv_impl.h"
#include "conv_store_avx512.h"

enum { MR = 12, NR = 32 };

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define ACC_ZERO(r) __m512i c##r##a = _mm512_setzero_si512(), c##r##b = _mm512_setzero_si512();
#define ACC_STEP(r)                                                                         \
    {                                                                                       \
        const __m512i av = _mm512_set1_epi32(ak[r]);                                        \
        c##r##a = _mm512_dpbusd_epi32(c##r##a, b0, av);                                     \
        c##r##b = _mm512_dpbusd_epi32(c##r##b, b1, av);                                     \
    }
#define ACC_STORE(r)                                                                        \
    {                                                                                       \
        int32_t *cr = c + r * ldc;                                                          \
        if (accumulate) {                                                                   \
            c##r##a = _mm512_add_epi32(c##r##a, _mm512_loadu_si512(cr));                    \
            c##r##b = _mm512_add_epi32(c##r##b, _mm512_loadu_si512(cr + 16));               \
        }                                                                                   \
        _mm512_storeu_si512(cr, c##r##a);                                                   \
        _mm512_storeu_si512(cr + 16, c##r##b);                                              \
    }
#define ACC_SPILL(r)                                                                        \
    _mm512_storeu_si512(tile[r], c##r##a);                                                  \
    _mm512_storeu_si512(tile[r] + 16, c##r##b);

/* One 12 x 32 tile over a chain of k blocks (conv_dp_chain_fn); dp_fn is its one-block
 * case. */
#define ACC_LOAD(r)                                                                         \
    if (r < mr) {                                                                           \
        c##r##a = _mm512_maskz_loadu_epi32(m0, acc_in + r * ld_acc);                        \
        c##r##b = _mm512_maskz_loadu_epi32(m1, acc_in + r * ld_acc + 16);                   \
    }
/* conv_dp_chain_store_fn's row r: minus the compensation (exact in s32), to f32, plus the
 * bias, converted and stored (columns past nr masked off); without a bias, into u8 or s8,
 * saturated as integers (the same values). */
#define ACC_OUT(r)                                                                          \
    if (r < mr) {                                                                           \
        const __m512i k = _mm512_set1_epi32(st->comp ? st->comp[r] : 0);                    \
        const __m512i s0 = _mm512_sub_epi32(c##r##a, k), s1 = _mm512_sub_epi32(c##r##b, k); \
        void *row = (char *)c_ + esz * (size_t)(r * ldc);                                   \
        if (s32_bytes) {                                                                    \
            bdnn_store_s32_i8x16(st->out_dt, s0, row, m0);                                  \
            if (m1) bdnn_store_s32_i8x16(st->out_dt, s1, (int8_t *)row + 16, m1);           \
        } else {                                                                            \
            __m512 v0 = _mm512_cvtepi32_ps(s0), v1 = _mm512_cvtepi32_ps(s1);                \
            if (st->bias) {                                                                 \
                const __m512 bv = _mm512_set1_ps(st->bias[r]);                              \
                v0 = _mm512_add_ps(v0, bv), v1 = _mm512_add_ps(v1, bv);                     \
            }                                                                               \
            bdnn_epi_store16(st->out_dt, v0, row, 0, m0);                                   \
            if (m1) bdnn_epi_store16(st->out_dt, v1, row, 16, m1);                          \
        }                                                                                   \
    }

static inline void tile_int8_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                   void *c_, int64_t ldc, int64_t mr, int64_t nr,
                                   int accumulate, const int32_t *acc_in, int64_t ld_acc,
                                   const conv_dp_store_t *st) {
    int32_t *c = c_;
    __mmask16 m0, m1;
    bdnn_tile_masks32(nr, &m0, &m1);
    ROWS(ACC_ZERO)
    if (acc_in) { ROWS(ACC_LOAD) }   /* an earlier chain's partial sums */
    for (int64_t i = 0; i < nblk; ++i) {
        const int8_t *a = blk[i].a;
        const uint8_t *b = blk[i].b;
        for (int64_t k = 0; k < blk[i].kcp / 4; ++k) {
            const __m512i b0 = _mm512_loadu_si512(b + k * ldb);
            const __m512i b1 = _mm512_loadu_si512(b + k * ldb + 64);
            const int32_t *ak = (const int32_t *)(a + k * MR * 4);
            ROWS(ACC_STEP)
        }
    }
    if (st && st->nseg) {
        int32_t tile[MR][NR];
        ROWS(ACC_SPILL)
        bdnn_epi_store_segments(tile, NR, 1, mr, st, c_, ldc);
        return;
    }
    if (st) {
        const size_t esz = bdnn_dt_size(st->out_dt);
        const int s32_bytes = !st->bias && (st->out_dt == BDNN_DT_U8 || st->out_dt == BDNN_DT_S8);
        ROWS(ACC_OUT)
        return;
    }
    if (mr == MR && nr == NR) {
        ROWS(ACC_STORE)
        return;
    }
    int32_t tile[MR][NR];
    ROWS(ACC_SPILL)
    bdnn_dp_edge_s32(&tile[0][0], NR, c, ldc, mr, nr, accumulate);
}

static void ukr_int8_12x32(int64_t kcp, const void *a, const void *b, int64_t ldb, void *c,
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    const conv_dp_block_t blk = {kcp, a, b};
    tile_int8_12x32(1, &blk, ldb, c, ldc, mr, nr, accumulate, NULL, 0, NULL);
}

static void chain_int8_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, void *c,
                             int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    tile_int8_12x32(nblk, blk, ldb, c, ldc, mr, nr, accumulate, NULL, 0, NULL);
}

static void store_int8_12x32(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                             const void *acc, int64_t ld_acc, void *out, int64_t ld_out,
                             int64_t mr, int64_t nr, const conv_dp_store_t *st) {
    tile_int8_12x32(nblk, blk, ldb, out, ld_out, mr, nr, 0, acc, ld_acc, st);
}

const conv_gemm_ukr_t bdnn_gemm_ukr_int8_avx512_vnni = {
    .mr = MR, .nr = NR, .dp_fn = ukr_int8_12x32, .pack = 4, .dp_chain_fn = chain_int8_12x32,
    .dp_store_fn = store_int8_12x32, .store_dts = BDNN_EPI_STORE_DTS};
