/* int8 dot-product micro-kernels for AVX2 without VNNI (contract: conv_dp_ukr_fn in
 * conv_impl.h, PACK 4): 5 x 16 s32 tiles in 10 ymm accumulators. The exact tile (A
 * widened) first; its bounded twins, exact only on data that bound their 16-bit sums,
 * below.
 *
 * AVX2's one exact integer multiply-add is vpmaddwd: s16 x s16 products, pairs summed
 * into s32. (vpmaddubsw takes u8 x s8 directly but saturates its pair sums to s16:
 * 255 * 127 * 2 does not fit, so the exact tile does not use it.) A u8 quad
 * (b0 b1 b2 b3) in a 32-bit lane splits into its even bytes, lane & 0x00ff00ff = the s16
 * pair (b0, b2), and its odd bytes, lane >> 8 per 16-bit word = (b1, b3), two
 * instructions per B vector shared by the tile's five rows. The weights come widened
 * (a_wide): each quad as s16 (a0, a2, a1, a3), so the pair matching each half is one
 * 32-bit broadcast. Per quad of k:
 * 20 vpmaddwd and 20 vpaddd, 4 operations on B, 10 broadcasts; the accumulators wrap in
 * s32 as vpdpbusd's do. Five rows, not six: with twelve accumulators, the two B halves,
 * the broadcast, a product and the byte mask, GCC spilled three accumulators per step.
 * A tile of at most 8 columns (a 7x7 plane's last panel holds one) runs on the first
 * B vector alone: half the products of a full tile. */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_impl.h"

enum { MR = 5, NR = 16 };

#define ROWS(X) X(0) X(1) X(2) X(3) X(4)
/* W: the tile's B vectors, 2 (16 columns) or 1 (its first 8: the second's registers and
 * operations compile away) */
#define ACC_ZERO(r) __m256i c##r##a = _mm256_setzero_si256(), c##r##b = _mm256_setzero_si256();
/* half h (0: even bytes, 1: odd) of row r's quad against the B vectors' same half */
#define ACC_HALF(r, h)                                                                      \
    {                                                                                       \
        const __m256i av = _mm256_set1_epi32(ak[2 * (r) + (h)]);                            \
        c##r##a = _mm256_add_epi32(c##r##a, _mm256_madd_epi16(b0, av));                     \
        if (W == 2) c##r##b = _mm256_add_epi32(c##r##b, _mm256_madd_epi16(b1, av));         \
    }
#define ACC_EVEN(r) ACC_HALF(r, 0)
#define ACC_ODD(r) ACC_HALF(r, 1)
/* Ends a half: without it GCC reassociates acc + even + odd into acc + (even + odd),
 * computes every product of the step first and spills them (a third of the speed). */
#define ACC_FENCE(r)                                                                        \
    if (W == 2) __asm__("" : "+x"(c##r##a), "+x"(c##r##b));                                 \
    else __asm__("" : "+x"(c##r##a));
#define ACC_STORE(r)                                                                        \
    {                                                                                       \
        int32_t *cr = c + r * ldc;                                                          \
        if (accumulate) {                                                                   \
            c##r##a = _mm256_add_epi32(c##r##a, _mm256_loadu_si256((const __m256i *)cr));   \
            c##r##b = _mm256_add_epi32(c##r##b,                                             \
                                       _mm256_loadu_si256((const __m256i *)(cr + 8)));      \
        }                                                                                   \
        _mm256_storeu_si256((__m256i *)cr, c##r##a);                                        \
        _mm256_storeu_si256((__m256i *)(cr + 8), c##r##b);                                  \
    }
#define ACC_SPILL(r)                                                                        \
    _mm256_storeu_si256((__m256i *)tile[r], c##r##a);                                       \
    if (W == 2) _mm256_storeu_si256((__m256i *)(tile[r] + 8), c##r##b);
/* A tile's end: into C, whole or (edge tiles) through a spill. */
#define TILE_END                                                                            \
    if (W == 2 && mr == MR && nr == NR) {                                                   \
        ROWS(ACC_STORE)                                                                     \
        return;                                                                             \
    }                                                                                       \
    int32_t tile[MR][NR];                                                                   \
    ROWS(ACC_SPILL)                                                                         \
    bdnn_dp_edge_s32(&tile[0][0], NR, c, ldc, mr, nr, accumulate);

/* One 5 x 8W tile over a chain of k blocks (conv_dp_chain_fn); dp_fn is its one-block
 * case. The accumulators are named variables (see conv_ukr_int8_avx512_vnni.c). */
static inline __attribute__((always_inline)) void
tile_body(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, int32_t *c, int64_t ldc,
          int64_t mr, int64_t nr, int accumulate, const int W, const int DEPTH) {
    (void)DEPTH;   /* the exact tile has one (TILE_ENTRIES) */
    const __m256i even = _mm256_set1_epi32(0x00ff00ff);
    ROWS(ACC_ZERO)
    for (int64_t i = 0; i < nblk; ++i) {
        const int16_t *a = blk[i].a;
        const uint8_t *b = blk[i].b;
        for (int64_t k = 0; k < blk[i].kcp / 4; ++k) {
            const int32_t *ak = (const int32_t *)(a + k * MR * 4);
            const __m256i *bk = (const __m256i *)(b + k * ldb);
            const __m256i v0 = _mm256_loadu_si256(bk);
            const __m256i v1 = W == 2 ? _mm256_loadu_si256(bk + 1) : v0;
            {
                const __m256i b0 = _mm256_and_si256(v0, even), b1 = _mm256_and_si256(v1, even);
                ROWS(ACC_EVEN)
                ROWS(ACC_FENCE)
            }
            {
                const __m256i b0 = _mm256_srli_epi16(v0, 8), b1 = _mm256_srli_epi16(v1, 8);
                ROWS(ACC_ODD)
                ROWS(ACC_FENCE)
            }
        }
    }
    TILE_END
}

/* The bounded tiles (pairs16 in conv_gemm_ukr_t): A as plain s8 quads, each quad one
 * 32-bit broadcast; vpmaddubsw multiplies a B lane's four u8 by it into two s16 pair
 * sums, vpmaddwd by ones adds the pair into s32, nothing is done on B.
 *   depth 1: per quad of k, 10 vpmaddubsw, 10 vpmaddwd, 10 vpaddd and 5 broadcasts (the
 *            exact tile: 44 operations);
 *   depth 2: two quads at a time, their s16 sums for one column added (vpaddw) before one
 *            vpmaddwd: per two quads, 20 vpmaddubsw, 10 vpaddw, 10 vpmaddwd, 10 vpaddd and
 *            20 broadcasts (each row's two quads broadcast again for the second B vector:
 *            kept, they would take the accumulators' registers; GCC spilled five).
 * Exact only where the caller proved that no s16 sum saturates or wraps
 * (bdnn_pairs16_exact for depth times the largest weight pair). */
#define PAIRS_QUAD(r)                                                                       \
    {                                                                                       \
        const __m256i av = _mm256_set1_epi32(ak[r]);                                        \
        c##r##a = _mm256_add_epi32(c##r##a,                                                 \
                                   _mm256_madd_epi16(_mm256_maddubs_epi16(v0, av), ones));  \
        if (W == 2)                                                                         \
            c##r##b = _mm256_add_epi32(                                                     \
                c##r##b, _mm256_madd_epi16(_mm256_maddubs_epi16(v1, av), ones));            \
    }
/* row r's two quads (ak[r]: quad k, ak[MR + r]: quad k + 1) on B vectors V (quad k) and
 * V1 (quad k + 1), into accumulator ACC */
#define PAIRS_TWO(r, V, V1, ACC)                                                            \
    ACC = _mm256_add_epi32(                                                                 \
        ACC, _mm256_madd_epi16(                                                             \
                 _mm256_add_epi16(_mm256_maddubs_epi16(V, _mm256_set1_epi32(ak[r])),        \
                                  _mm256_maddubs_epi16(V1, _mm256_set1_epi32(ak[MR + r]))), \
                 ones));
#define PAIRS_TWO_A(r) PAIRS_TWO(r, v0, u0, c##r##a)
#define PAIRS_TWO_B(r) PAIRS_TWO(r, v1, u1, c##r##b)
static inline __attribute__((always_inline)) void
pairs_body(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, int32_t *c, int64_t ldc,
           int64_t mr, int64_t nr, int accumulate, const int W, const int DEPTH) {
    const __m256i ones = _mm256_set1_epi16(1);
    ROWS(ACC_ZERO)
    for (int64_t i = 0; i < nblk; ++i) {
        const int8_t *a = blk[i].a;
        const uint8_t *b = blk[i].b;
        const int64_t quads = blk[i].kcp / 4;
        int64_t k = 0;
        for (; DEPTH == 2 && k + 1 < quads; k += 2) {
            const int32_t *ak = (const int32_t *)(a + k * MR * 4);
            const __m256i *bk = (const __m256i *)(b + k * ldb);
            const __m256i *bk1 = (const __m256i *)(b + (k + 1) * ldb);
            {
                const __m256i v0 = _mm256_loadu_si256(bk), u0 = _mm256_loadu_si256(bk1);
                ROWS(PAIRS_TWO_A)
            }
            __asm__("" : "+r"(ak));   /* broadcast again (above) */
            if (W == 2) {
                const __m256i v1 = _mm256_loadu_si256(bk + 1), u1 = _mm256_loadu_si256(bk1 + 1);
                ROWS(PAIRS_TWO_B)
            }
        }
        for (; k < quads; ++k) {   /* depth 1; depth 2's odd last quad */
            const int32_t *ak = (const int32_t *)(a + k * MR * 4);
            const __m256i *bk = (const __m256i *)(b + k * ldb);
            const __m256i v0 = _mm256_loadu_si256(bk);
            const __m256i v1 = W == 2 ? _mm256_loadu_si256(bk + 1) : v0;
            ROWS(PAIRS_QUAD)
        }
    }
    TILE_END
}

/* A tile's entries (NAME_: BODY at DEPTH): the 8-column case (W 1) a function of its own,
 * the 16-column one inlined into the chain entry (dp_chain_fn), the one-block entry
 * (dp_fn). */
#define TILE_ENTRIES(NAME, BODY, DEPTH)                                                     \
    static void NAME##_5x8(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, int32_t *c, \
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {           \
        BODY(nblk, blk, ldb, c, ldc, mr, nr, accumulate, 1, DEPTH);                         \
    }                                                                                       \
    static void NAME##_chain(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb, void *c, \
                             int64_t ldc, int64_t mr, int64_t nr, int accumulate) {         \
        if (nr <= NR / 2) NAME##_5x8(nblk, blk, ldb, c, ldc, mr, nr, accumulate);           \
        else BODY(nblk, blk, ldb, c, ldc, mr, nr, accumulate, 2, DEPTH);                    \
    }                                                                                       \
    static void NAME##_ukr(int64_t kcp, const void *a, const void *b, int64_t ldb, void *c,  \
                           int64_t ldc, int64_t mr, int64_t nr, int accumulate) {           \
        const conv_dp_block_t blk = {kcp, a, b};                                            \
        NAME##_chain(1, &blk, ldb, c, ldc, mr, nr, accumulate);                             \
    }
TILE_ENTRIES(exact, tile_body, 0)
TILE_ENTRIES(pairs1, pairs_body, 1)
TILE_ENTRIES(pairs2, pairs_body, 2)

static const conv_gemm_ukr_t ukr_int8_pairs16x2_avx2 = {
    .mr = MR, .nr = NR, .dp_fn = pairs2_ukr, .pack = 4, .dp_chain_fn = pairs2_chain,
    .pair_depth = 2, .variant = "pairs16x2"};
static const conv_gemm_ukr_t ukr_int8_pairs16_avx2 = {
    .mr = MR, .nr = NR, .dp_fn = pairs1_ukr, .pack = 4, .dp_chain_fn = pairs1_chain,
    .pair_depth = 1, .variant = "pairs16", .pairs16 = &ukr_int8_pairs16x2_avx2};

const conv_gemm_ukr_t bdnn_gemm_ukr_int8_avx2 = {
    .mr = MR, .nr = NR, .dp_fn = exact_ukr, .pack = 4, .dp_chain_fn = exact_chain,
    .a_wide = 1, .pairs16 = &ukr_int8_pairs16_avx2};
