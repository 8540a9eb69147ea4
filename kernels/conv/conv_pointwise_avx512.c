/* AVX-512 instance of the pointwise backward-weights kernel (contract: conv_pointwise.h):
 * vectors of 16 input channels (src), 8 output channels (diff_dst) broadcast. A vector's
 * sums are 16 consecutive weights of one row, so each is stored (or added) as it is: no
 * transpose, and from a block's first channel on a whole line. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#include <immintrin.h>

#include "conv_pointwise.h"

enum { PW512_NX = 8 };
#define PW_VEC __m512
#define PW_NX PW512_NX
#define PW_LINE 16
/* read_ahead's distance: a line is asked for 16 points (of up to 24 multiply-adds each)
 * before it is read (4 and 8 points hid less of L2's latency) */
#define PW_AHEAD 16
#define PW_ZERO() _mm512_setzero_ps()
#define PW_LOAD(p) _mm512_loadu_ps(p)
#define PW_BCAST(p) _mm512_set1_ps(*(p))
#define PW_FMA(acc, v, b) ((acc) = _mm512_fmadd_ps((v), (b), (acc)))
#include "conv_pointwise.inc"

/* The call on nb vectors: its sums (pw_sums), then each vector's run of a weights row
 * stored whole. */
static inline __attribute__((always_inline)) void pw_tile(const pw_call_t *k, const int nb,
                                                          const int line) {
    __m512 acc[PW_MAX_NB][PW512_NX];
    pw_sums(k, nb, line, acc);
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

static void pw_avx512(const pw_call_t *k) { PW_DISPATCH(pw_tile, k); }

const conv_pw_ker_t bdnn_pw_ker_avx512 = {.fn = pw_avx512, .vl = 16, .nx = PW512_NX,
                                          .lanes_ic = 1, .streams = 1};
