/* AVX2 + FMA instance of the pointwise backward-weights kernel (contract:
 * conv_pointwise.h): vectors of 8 output channels (diff_dst), 4 input channels (src)
 * broadcast. */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "conv_pointwise.h"

/* One block's sums, a vector of 8 output channels per input channel (r0..r3), into rows
 * w[o * ldw] of 4 input channels each: transposed in registers, 4 x 8 into 8 x 4. */
static inline __attribute__((always_inline)) void pw_store(__m256 r0, __m256 r1, __m256 r2,
                                                           __m256 r3, float *w, int64_t ldw,
                                                           int accumulate) {
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    /* u[o]: output channel o in the low half, o + 4 in the high half */
    const __m256 u[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                         _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
    for (int o = 0; o < 4; ++o) {
        __m128 lo = _mm256_castps256_ps128(u[o]), hi = _mm256_extractf128_ps(u[o], 1);
        float *p = w + o * ldw, *q = w + (o + 4) * ldw;
        if (accumulate) lo = _mm_add_ps(_mm_loadu_ps(p), lo), hi = _mm_add_ps(_mm_loadu_ps(q), hi);
        _mm_storeu_ps(p, lo);
        _mm_storeu_ps(q, hi);
    }
}

/* Where both tensors' points are PW2_LINE floats apart (unit stride on 8-channel blocks)
 * the points go in steps of PW2_UNROLL, their addresses constant offsets from one index
 * (the reasons are AVX-512's: conv_pointwise_avx512.c). */
enum { PW2_LINE = 8, PW2_UNROLL = 7 };

/* Point p of a tile: nb block loads, 4 broadcasts, nb x 4 multiply-adds into acc (the
 * blocks past nb: never read). */
#define PW2_POINT(p)                                                                          \
    do {                                                                                      \
        const __m256 dv[PW_MAX_NB] = {                                                        \
            _mm256_loadu_ps(d0 + (p) * vp),                                                   \
            nb > 1 ? _mm256_loadu_ps(d1 + (p) * vp) : _mm256_setzero_ps(),                    \
            nb > 2 ? _mm256_loadu_ps(d2 + (p) * vp) : _mm256_setzero_ps()};                   \
        _Pragma("GCC unroll 4") for (int i = 0; i < 4; ++i) {   /* input channels */          \
            const __m256 xb = _mm256_broadcast_ss(s + (p) * xp + i);                          \
            _Pragma("GCC unroll 3") for (int j = 0; j < nb; ++j)                              \
                acc[j][i] = _mm256_fmadd_ps(dv[j], xb, acc[j][i]);                            \
        }                                                                                     \
    } while (0)

/* The call on nb blocks (nb and line constants where it is inlined: the sums stay in
 * registers). line: both tensors' points are PW2_LINE floats apart. */
static inline __attribute__((always_inline)) void pw_tile(const pw_call_t *k, const int nb,
                                                          const int line) {
    __m256 acc[PW_MAX_NB][4];
#pragma GCC unroll 3
    for (int j = 0; j < nb; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) acc[j][i] = _mm256_setzero_ps();
    const int64_t vp = line ? PW2_LINE : k->vs.pt, xp = line ? PW2_LINE : k->xs.pt,
                  points = k->points;
    for (int64_t n = 0; n < k->imgs; ++n)   /* images */
    for (int64_t r = 0; r < k->rows; ++r) {   /* rows */
        const int64_t vo = n * k->vs.img + r * k->vs.row;
        const float *s = k->x + n * k->xs.img + r * k->xs.row, *d0 = k->v[0] + vo,
                    *d1 = k->v[nb > 1] + vo, *d2 = k->v[nb > 2 ? 2 : 0] + vo;
        int64_t p = 0;
        if (line)
            for (; p + PW2_UNROLL <= points; p += PW2_UNROLL)   /* steps of points */
#pragma GCC unroll 7
                for (int u = 0; u < PW2_UNROLL; ++u) PW2_POINT(p + u);
        for (; p < points; ++p) PW2_POINT(p);   /* points */
    }
#pragma GCC unroll 3
    for (int j = 0; j < nb; ++j)
        pw_store(acc[j][0], acc[j][1], acc[j][2], acc[j][3], k->w + 8 * j * k->ldw, k->ldw,
                 k->accumulate);
}
#undef PW2_POINT

static void pw_avx2(const pw_call_t *k) {
    if (k->vs.pt == PW2_LINE && k->xs.pt == PW2_LINE)
        switch (k->nb) {
        case 3: pw_tile(k, 3, 1); break;
        case 2: pw_tile(k, 2, 1); break;
        default: pw_tile(k, 1, 1);
        }
    else
        switch (k->nb) {
        case 3: pw_tile(k, 3, 0); break;
        case 2: pw_tile(k, 2, 0); break;
        default: pw_tile(k, 1, 0);
        }
}

const conv_pw_ker_t bdnn_pw_ker_avx2 = {.fn = pw_avx2, .vl = 8, .nx = 4, .lanes_ic = 0,
                                        .streams = 0};
