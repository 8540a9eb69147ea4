/* The f64 convolution (rows conv_f64:<isa>; conv_f64.c has the driver, conv_f64.inc the
 * per-ISA loops): every tensor f64, products and sums in double, on plain and
 * channels-last layouts, every direction, a bias; no post-ops, scales or zero points
 * (oneDNN's CPU has no f64 convolution; benchdnn runs f64 without post-ops).
 *
 * Contract of the loops (one ISA each, conv_f64_ker_t):
 *   fwd_row:     dst at every ow of output row (n, g, od, oh), every channel of group g:
 *                bias (or 0) + the sum over the taps inside the input and the group's
 *                input channels of src * wei, in that order; wei packed [g][tap][ic][oc].
 *   bwd_data_row: diff_src at every iw of input row (n, g, id, ih): bias (or 0: a
 *                deconvolution's forward adds one per input channel) + the sum over the
 *                taps that reach an output and the group's output channels of
 *                diff_dst * wei; wei packed [g][tap][oc][ic].
 *   bwd_weights: diff_wei (plain [g][oc][ic][tap]) of one (g, tap, oc) and input channels
 *                [ic0, ic0 + n): the sum over mb and the outputs whose tap lands inside
 *                the input of diff_dst * src.
 * Channels are walked in blocks of F64_BLOCK accumulators held on the stack; activations
 * are addressed through f64_act_t, so one loop serves both layouts. */
#ifndef BDNN_CONV_F64_H
#define BDNN_CONV_F64_H

#include "conv_impl.h"

enum { F64_BLOCK = 64 };

/* Element (n, c, point) of an activation at n * sn + c * sc + point * sp. */
typedef struct {
    int64_t sn, sc, sp;
} f64_act_t;

/* One execution: the tensors a direction reads (src, wei, bias forward; diff_dst, wei
 * backward data; src, diff_dst backward weights) and the one it writes (dst, diff_src or
 * diff_wei), with the strides of the src side's and the dst side's activations. */
typedef struct {
    const bdnn_conv_desc_t *d;
    f64_act_t at_src, at_dst;
    const double *src, *wei, *bias, *diff_dst;
    double *out;
    int truncate;   /* BDNN_FAULT_TRUNCATE_DST (tests only): results stored at f32's
                       precision, truncated toward zero */
} f64_args_t;

typedef struct {
    void (*fwd_row)(const f64_args_t *a, int64_t n, int64_t g, int64_t od, int64_t oh);
    void (*bwd_data_row)(const f64_args_t *a, int64_t n, int64_t g, int64_t id, int64_t ih);
    void (*bwd_weights)(const f64_args_t *a, int64_t g, int64_t tap, int64_t oc, int64_t ic0,
                        int64_t n_ic);
} conv_f64_ker_t;

extern const conv_f64_ker_t bdnn_f64_ker_scalar, bdnn_f64_ker_avx2, bdnn_f64_ker_avx512;
extern const conv_impl_ops_t bdnn_conv_f64_ops;

#endif /* BDNN_CONV_F64_H */
