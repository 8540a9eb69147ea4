/* AVX-512 instance of the pointwise backward-weights kernel (contract: conv_pointwise.h):
 * vectors of 16 input channels (src), 8 output channels (diff_dst) broadcast. A vector's
 * sums are 16 consecutive weights of one row, so each is stored (or added) as it is: no
 * transpose, and from a block's first channel on a whole line. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include <immintrin.h>

#include "conv_pointwise.h"

/* read_ahead's distance: a line is asked for 16 points (of up to 24 multiply-adds each)
 * before it is read (4 and 8 points hid less of L2's latency). Where both tensors'
 * points are PW512_LINE floats apart (unit stride on 16-channel blocks) the points go in
 * steps of PW512_UNROLL, their addresses constant offsets from one index: the loop's test
 * and index update once a step, not once a point, which counts on a 7 x 7 image's 49-point
 * calls. 7: ResNet's and MobileNet's pointwise images (7 x 7 to 112 x 112) hold multiples
 * of 7 points, and so do most of their runs. */
enum { PW512_NX = 8, PW512_AHEAD = 16, PW512_LINE = 16, PW512_UNROLL = 7 };

/* Point p of a tile: the read-ahead hints, nb vector loads, nx broadcasts, nb x nx
 * multiply-adds into acc (the vectors past nb: never read). */
#define PW512_POINT(p)                                                                        \
    do {                                                                                      \
        if (k->read_ahead) {   /* each stream's line PW512_AHEAD points on, into L1 */        \
            _mm_prefetch((const char *)(s0 + ((p) + PW512_AHEAD) * vp), _MM_HINT_T0);         \
            if (nb > 1) _mm_prefetch((const char *)(s1 + ((p) + PW512_AHEAD) * vp), _MM_HINT_T0); \
            if (nb > 2) _mm_prefetch((const char *)(s2 + ((p) + PW512_AHEAD) * vp), _MM_HINT_T0); \
            _mm_prefetch((const char *)(x + ((p) + PW512_AHEAD) * xp), _MM_HINT_T0);          \
        }                                                                                     \
        const __m512 sv[PW_MAX_NB] = {                                                        \
            _mm512_loadu_ps(s0 + (p) * vp),                                                   \
            nb > 1 ? _mm512_loadu_ps(s1 + (p) * vp) : _mm512_setzero_ps(),                    \
            nb > 2 ? _mm512_loadu_ps(s2 + (p) * vp) : _mm512_setzero_ps()};                   \
        _Pragma("GCC unroll 8") for (int i = 0; i < PW512_NX; ++i) {   /* output channels */  \
            const __m512 d = _mm512_set1_ps(x[(p) * xp + i]);                                 \
            _Pragma("GCC unroll 3") for (int j = 0; j < nb; ++j)                              \
                acc[j][i] = _mm512_fmadd_ps(sv[j], d, acc[j][i]);                             \
        }                                                                                     \
    } while (0)

/* The call on nb vectors (nb and line constants where it is inlined: the sums stay in
 * registers). line: both tensors' points are PW512_LINE floats apart. */
static inline __attribute__((always_inline)) void pw_tile(const pw_call_t *k, const int nb,
                                                          const int line) {
    __m512 acc[PW_MAX_NB][PW512_NX];
#pragma GCC unroll 3
    for (int j = 0; j < nb; ++j)
#pragma GCC unroll 8
        for (int i = 0; i < PW512_NX; ++i) acc[j][i] = _mm512_setzero_ps();
    const int64_t vp = line ? PW512_LINE : k->vs.pt, xp = line ? PW512_LINE : k->xs.pt,
                  points = k->points;
    for (int64_t n = 0; n < k->imgs; ++n)   /* images */
    for (int64_t r = 0; r < k->rows; ++r) {   /* rows */
        const int64_t vo = n * k->vs.img + r * k->vs.row;
        const float *x = k->x + n * k->xs.img + r * k->xs.row, *s0 = k->v[0] + vo,
                    *s1 = k->v[nb > 1] + vo, *s2 = k->v[nb > 2 ? 2 : 0] + vo;
        int64_t p = 0;
        if (line)
            for (; p + PW512_UNROLL <= points; p += PW512_UNROLL)   /* steps of points */
#pragma GCC unroll 7
                for (int u = 0; u < PW512_UNROLL; ++u) PW512_POINT(p + u);
        for (; p < points; ++p) PW512_POINT(p);   /* points */
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
#undef PW512_POINT

static void pw_avx512(const pw_call_t *k) {
    if (k->vs.pt == PW512_LINE && k->xs.pt == PW512_LINE)
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

const conv_pw_ker_t bdnn_pw_ker_avx512 = {.fn = pw_avx512, .vl = 16, .nx = PW512_NX,
                                          .lanes_ic = 1, .streams = 1};
