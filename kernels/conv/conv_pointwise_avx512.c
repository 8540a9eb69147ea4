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
#define PW_STOREU(p, v) _mm512_storeu_ps(p, v)
#define PW_ADD(a, b) _mm512_add_ps(a, b)
#define PW_STREAM(p, v) _mm512_stream_ps(p, v)
#include "conv_pointwise.inc"

static void pw_avx512(const pw_call_t *k) { PW_DISPATCH(pw_tile_rows, k); }

const conv_pw_ker_t bdnn_pw_ker_avx512 = {.fn = pw_avx512, .vl = 16, .nx = PW512_NX,
                                          .lanes_ic = 1, .streams = 1};
