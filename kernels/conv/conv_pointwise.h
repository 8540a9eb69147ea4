/* Backward weights of a pointwise convolution (1x1, unit stride, no padding: every output
 * point reads the input point at its own place) on channel blocks: the pointwise route of
 * gemm_conv_blocked (conv_pointwise.c drives it; the kernels are conv_pointwise_<isa>.c).
 * Each weight is a sum over every (n, point):
 *   diff_wei[oc][ic] = sum over n, p of diff_dst[n][oc][p] * src[n][ic][p]
 * and a channel block holds its points as one run of [point][B] floats, so along the
 * reduction both tensors are unit-stride streams: read in place, no packing. A call keeps
 * the sums of nb blocks of 8 output channels x 4 input channels in registers over all its
 * points: per point nb vector loads of diff_dst, 4 broadcasts of src, 4 * nb multiply-adds.
 *
 * Contract (conv_pw_fn): for j < nb (1 to PW_MAX_NB), o < 8, i < 4:
 *   w[(8j + o) * ldw + i] = (accumulate ? w[(8j + o) * ldw + i] : 0)
 *       + sum over n < imgs, p < points of dd[j][n * dd_img + p * pt + o]
 *                                          * s[n * s_img + p * pt + i]
 * the products added in that order (images in order, points in order) into an f32 sum
 * that starts at 0, then added to w. pt: floats from one point to the next (the block
 * width B, 8 or 16); dd[j] points at output channel 8j's lane of the first point. */
#ifndef BDNN_CONV_POINTWISE_H
#define BDNN_CONV_POINTWISE_H

#include <stdint.h>

#include "conv_impl.h"

/* (3 blocks x 4 input channels: 12 of AVX2's 16 registers hold sums, 3 diff_dst vectors
 * and a broadcast the rest) */
enum { PW_MAX_NB = 3 };

typedef struct {
    int nb, accumulate;
    const float *dd[PW_MAX_NB];
    const float *s;
    int64_t pt, points, imgs, dd_img, s_img;
    float *w;
    int64_t ldw;
} pw_call_t;

typedef void (*conv_pw_fn)(const pw_call_t *k);

typedef struct {
    conv_pw_fn fn;
} conv_pw_ker_t;

extern const conv_pw_ker_t bdnn_pw_ker_avx2;

#endif
