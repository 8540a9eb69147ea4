/* AVX-512 instance of the pointwise backward-weights kernel (contract: conv_pointwise.h):
 * vectors of 16 input channels (src), 8 output channels (diff_dst) broadcast. A vector's
 * sums are 16 consecutive weights of one row, so each is stored (or added) as it is: no
 * transpose, and from a block's first channel on a whole line. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include <immintrin.h>

#include "conv_pointwise.h"

/* read_ahead's distance: a line is asked for 16 points (of up to 24 multiply-adds each)
 * before it is read (4 and 8 points hid less of L2's latency) */
enum { PW512_NX = 8, PW512_AHEAD = 16 };

/* The call on nb vectors (a constant where it is inlined: the sums stay in registers). */
static inline __attribute__((always_inline)) void pw_tile(const int nb, const pw_call_t *k) {
    __m512 acc[PW_MAX_NB][PW512_NX];
#pragma GCC unroll 3
    for (int j = 0; j < nb; ++j)
#pragma GCC unroll 8
        for (int i = 0; i < PW512_NX; ++i) acc[j][i] = _mm512_setzero_ps();
    const int64_t vp = k->vs.pt, xp = k->xs.pt, points = k->points;
    for (int64_t n = 0; n < k->imgs; ++n)   /* images */
    for (int64_t r = 0; r < k->rows; ++r) {   /* rows */
        const int64_t vo = n * k->vs.img + r * k->vs.row;
        const float *x = k->x + n * k->xs.img + r * k->xs.row, *s0 = k->v[0] + vo,
                    *s1 = k->v[nb > 1] + vo, *s2 = k->v[nb > 2 ? 2 : 0] + vo;
        for (int64_t p = 0; p < points; ++p) {   /* points */
            if (k->read_ahead) {   /* each stream's line PW512_AHEAD points on, into L1 */
                _mm_prefetch((const char *)(s0 + (p + PW512_AHEAD) * vp), _MM_HINT_T0);
                if (nb > 1) _mm_prefetch((const char *)(s1 + (p + PW512_AHEAD) * vp), _MM_HINT_T0);
                if (nb > 2) _mm_prefetch((const char *)(s2 + (p + PW512_AHEAD) * vp), _MM_HINT_T0);
                _mm_prefetch((const char *)(x + (p + PW512_AHEAD) * xp), _MM_HINT_T0);
            }
            /* (the vectors past nb: never read) */
            const __m512 s[PW_MAX_NB] = {
                _mm512_loadu_ps(s0 + p * vp),
                nb > 1 ? _mm512_loadu_ps(s1 + p * vp) : _mm512_setzero_ps(),
                nb > 2 ? _mm512_loadu_ps(s2 + p * vp) : _mm512_setzero_ps()};
#pragma GCC unroll 8
            for (int i = 0; i < PW512_NX; ++i) {   /* output channels */
                const __m512 d = _mm512_set1_ps(x[p * xp + i]);
#pragma GCC unroll 3
                for (int j = 0; j < nb; ++j) acc[j][i] = _mm512_fmadd_ps(s[j], d, acc[j][i]);
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < PW512_NX; ++i)   /* weight rows */
#pragma GCC unroll 3
        for (int j = 0; j < nb; ++j) {
            float *w = k->w + i * k->ldw + 16 * j;
            if (k->stream)
                _mm512_stream_ps(w, acc[j][i]);
            else
                _mm512_storeu_ps(w, k->accumulate ? _mm512_add_ps(_mm512_loadu_ps(w), acc[j][i])
                                                  : acc[j][i]);
        }
}

static void pw_avx512(const pw_call_t *k) {
    switch (k->nb) {
    case 3: pw_tile(3, k); break;
    case 2: pw_tile(2, k); break;
    default: pw_tile(1, k);
    }
}

const conv_pw_ker_t bdnn_pw_ker_avx512 = {.fn = pw_avx512, .vl = 16, .nx = PW512_NX,
                                          .lanes_ic = 1, .streams = 1};
