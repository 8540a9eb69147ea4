/* Backward weights of a pointwise convolution (1x1, no padding: every output point reads
 * one input point, its own at unit stride) on channel blocks: the pointwise route of
 * gemm_conv_blocked (conv_pointwise.c drives it; the kernels are conv_pointwise_<isa>.c).
 * Each weight is a sum over every (n, output point o):
 *   diff_wei[oc][ic] = sum over n, o of diff_dst[n][oc][o] * src[n][ic][s * o]
 * and a channel block holds its points as one run of [point][B] floats, so along the
 * reduction both tensors are streams of fixed steps (at unit stride, unit-stride ones;
 * strided, src's points step s along a row, and its rows s rows): read in place, no
 * packing. A call keeps the sums of nb vectors x nx broadcasts in registers over all its
 * points: per point nb vector loads (vl channels each) of one tensor, nx broadcasts of
 * the other's channels, nb * nx multiply-adds. Which tensor gives the vectors is the
 * kernel's (lanes_ic):
 *   AVX2: vectors of 8 output channels (diff_dst), 4 input channels broadcast; the sums,
 *         a column of the weights per vector, are transposed into rows as they are stored.
 *         Its twin: vectors of 8 input channels (src), 4 output channels broadcast, each
 *         vector a run of a weights row, stored as it is.
 *   AVX-512: vectors of 16 input channels (src), 8 output channels broadcast; each vector
 *         is a run of a weights row, stored as it is (whole lines of 16 floats).
 *
 * Contract (conv_pw_fn): for j < nb (1 to PW_MAX_NB), l < vl, i < nx, the sum
 *   S[j][l][i] = sum over n < imgs, r < rows, p < points of
 *     v[j][n * vs.img + r * vs.row + p * vs.pt + l] * x[n * xs.img + r * xs.row + p * xs.pt + i]
 * the products added in that order (images, rows and points in order) into an f32 sum
 * that starts at 0, is written (accumulate: added) to
 *   w[(vl j + l) * ldw + i]      (lanes_ic 0: the lanes are output channels)
 *   w[i * ldw + vl j + l]        (lanes_ic 1: the lanes are input channels)
 * Steps are in floats; a point's step is a multiple of the block width B, itself a
 * multiple of vl; v[j] points at its first channel's lane of the first point. */
#ifndef BDNN_CONV_POINTWISE_H
#define BDNN_CONV_POINTWISE_H

#include <stdint.h>

#include "conv_impl.h"

/* (AVX2: 3 x 4 sums in 12 of its 16 registers, 3 vectors and a broadcast the rest;
 * AVX-512: 3 x 8 sums in 24 of its 32) */
enum { PW_MAX_NB = 3 };

/* A tensor's steps between images, rows and points (floats) */
typedef struct { int64_t img, row, pt; } pw_steps_t;

typedef struct {
    int nb, accumulate;
    const float *v[PW_MAX_NB];
    const float *x;
    int64_t imgs, rows, points;
    pw_steps_t vs, xs;
    float *w;
    int64_t ldw;
    int read_ahead;  /* the kernel may ask the caches for its streams' lines some points
                        ahead (hints only: never loads, so past a tensor's end too) */
    int stream;      /* written past the caches (streams: whole aligned lines; no accumulate) */
} pw_call_t;

typedef void (*conv_pw_fn)(const pw_call_t *k);

typedef struct conv_pw_ker {
    conv_pw_fn fn;
    int vl, nx;      /* a vector's lanes; broadcasts a call */
    int lanes_ic;    /* the lanes are input channels (src's vectors; else diff_dst's) */
    int streams;     /* takes stream (its sums are whole lines of weights rows) */
    /* the same ISA's kernel with the other tensor's channels in its lanes, which a layer
     * takes by conv_pointwise.c's rule (PW_SHORT_CALL), or NULL; where there is one, each
     * kernel's name as bdnn_conv_variant reports it */
    const struct conv_pw_ker *twin;
    const char *variant;
} conv_pw_ker_t;

extern const conv_pw_ker_t bdnn_pw_ker_avx2, bdnn_pw_ker_avx2_ic, bdnn_pw_ker_avx512;

#endif
