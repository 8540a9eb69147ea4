/* bf16 dot-product micro-kernel for AVX2 (contract: conv_dp_ukr_fn in conv_impl.h, PACK 2,
 * A widened): a 6 x 16 f32 tile in 12 ymm accumulators, for CPUs without AVX512_BF16.
 *
 * A bf16 is the high half of an f32, so a B lane holding the pair (k even in the low
 * half, k odd in the high) gives both values exactly: lane << 16 and lane & 0xffff0000,
 * two instructions per B vector shared by the tile's six rows. The weights come widened
 * (a_wide): each pair as two f32, broadcast from memory. Every product of two bf16 is
 * exact in f32, and the sum runs in f32 FMA as on the f32 route this replaces (there the
 * input was first widened into an f32 copy, a pass over memory per execution). Per pair
 * of k: 24 FMA, 4 operations on B, 12 broadcasts. */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"

enum { MR = 6, NR = 16 };

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define ACC_ZERO(r) __m256 c##r##a = _mm256_setzero_ps(), c##r##b = _mm256_setzero_ps();
/* element h (0: k even, 1: k odd) of row r's pair against the two B vectors' same half */
#define ACC_HALF(r, h)                                                                      \
    {                                                                                       \
        const __m256 av = _mm256_broadcast_ss(ak + 2 * (r) + (h));                          \
        c##r##a = _mm256_fmadd_ps(av, b0, c##r##a);                                         \
        c##r##b = _mm256_fmadd_ps(av, b1, c##r##b);                                         \
    }
#define ACC_EVEN(r) ACC_HALF(r, 0)
#define ACC_ODD(r) ACC_HALF(r, 1)
#define ACC_STORE(r)                                                                        \
    {                                                                                       \
        float *cr = c + r * ldc;                                                            \
        if (accumulate) {                                                                   \
            c##r##a = _mm256_add_ps(c##r##a, _mm256_loadu_ps(cr));                          \
            c##r##b = _mm256_add_ps(c##r##b, _mm256_loadu_ps(cr + 8));                      \
        }                                                                                   \
        _mm256_storeu_ps(cr, c##r##a);                                                      \
        _mm256_storeu_ps(cr + 8, c##r##b);                                                  \
    }
#define ACC_SPILL(r)                                                                        \
    _mm256_storeu_ps(tile[r], c##r##a);                                                     \
    _mm256_storeu_ps(tile[r] + 8, c##r##b);

/* One 6 x 16 tile over a chain of k blocks (conv_dp_chain_fn); dp_fn is its one-block
 * case. */
static inline void tile_bf16_6x16(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                  float *c, int64_t ldc, int64_t mr, int64_t nr,
                                  int accumulate) {
    const __m256i high = _mm256_set1_epi32((int32_t)0xffff0000u);
    ROWS(ACC_ZERO)
    for (int64_t i = 0; i < nblk; ++i) {
        const float *a = blk[i].a;
        const uint16_t *b = blk[i].b;
        for (int64_t k = 0; k < blk[i].kcp / 2; ++k) {
            const float *ak = a + k * MR * 2;
            const __m256i *bk = (const __m256i *)(b + k * ldb);
            {
                const __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_loadu_si256(bk), 16));
                const __m256 b1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_loadu_si256(bk + 1), 16));
                ROWS(ACC_EVEN)
            }
            {
                const __m256 b0 = _mm256_castsi256_ps(_mm256_and_si256(_mm256_loadu_si256(bk), high));
                const __m256 b1 = _mm256_castsi256_ps(_mm256_and_si256(_mm256_loadu_si256(bk + 1), high));
                ROWS(ACC_ODD)
            }
        }
    }
    if (mr == MR && nr == NR) {
        ROWS(ACC_STORE)
        return;
    }
    float tile[MR][NR];
    ROWS(ACC_SPILL)
    bdnn_dp_edge_f32(&tile[0][0], NR, c, ldc, mr, nr, accumulate);
}

static void ukr_bf16_6x16(int64_t kcp, const void *a, const void *b, int64_t ldb, void *c,
                          int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    const conv_dp_block_t blk = {kcp, a, b};
    tile_bf16_6x16(1, &blk, ldb, c, ldc, mr, nr, accumulate);
}

static void chain_bf16_6x16(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, void *c,
                            int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    tile_bf16_6x16(nblk, blk, ldb, c, ldc, mr, nr, accumulate);
}

const conv_gemm_ukr_t bdnn_gemm_ukr_bf16_avx2 = {
    .mr = MR, .nr = NR, .dp_fn = ukr_bf16_6x16, .pack = 2, .dp_chain_fn = chain_bf16_6x16,
    .a_wide = 1};
