/*
 * bdnn_bnorm.h -- the batch normalization primitive of the kernel core: forward
 * (training and inference) and backward (data, and data with scale and shift).
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * Formulas (oneDNN's; kernels/bnorm/README.md), per channel c over its N = outer * inner
 * points, with mean m, variance v (biased: divided by N), r = 1 / sqrt(v + eps), scale g
 * (1 without the scale flag) and shift b (0 without the shift flag):
 *   forward   y = g (x - m) r + b [+ src1] [relu], then the post-op chain
 *   backward  dd' = diff_dst where the relu kept the point (workspace 1), else 0
 *             diff_shift = sum dd'       diff_scale = sum dd' (x - m) r
 *             diff_src = g r (dd' - (diff_shift + (x - m) r diff_scale) / N)
 *             (global stats: diff_src = g r dd'); diff_src1 = dd' (add + relu)
 *
 * Tensors are dense, all in one memory order, described as outer x channels x inner:
 * element (o, c, i) is at (o * channels + c) * inner + i. Data tensors share one type
 * (BDNN_DT_*: f32, bf16, f16, s8); mean, variance, scale, shift and their gradients are
 * f32 arrays of `channels`; the workspace is one byte per element (1: the relu kept it).
 * Statistics accumulate in double (README: blocks combined by Chan's formula); every
 * other step computes in f32. In place (dst == src, diff_src == diff_dst) is allowed.
 * Without points (outer or inner 0) the statistics and the gradients' sums are 0.
 */
#ifndef BDNN_BNORM_H
#define BDNN_BNORM_H

#include "bdnn.h"

/* CDEF BEGIN */
/* The flags (oneDNN's normalization flags, benchdnn's letters). */
enum {
    BDNN_BNORM_GLOBAL_STATS = 1,    /* G: mean and variance are inputs */
    BDNN_BNORM_SCALE = 2,           /* C: scale (gamma) */
    BDNN_BNORM_SHIFT = 4,           /* H: shift (beta) */
    BDNN_BNORM_RELU = 8,            /* R: relu on the result */
    BDNN_BNORM_ADD_RELU = 16        /* A: src1 added, then relu */
};

/* Deliberate defects of these kernels (tests only), numbered apart from the others'. */
enum {
    BDNN_BNORM_FAULT_LAST_CHANNEL = 1001,  /* the last channel's reductions are skipped */
    BDNN_BNORM_FAULT_SUM_SHORT = 1002     /* each reduction leaves out a point per block */
};

typedef struct {
    int dt;                  /* BDNN_DT_* of every data tensor */
    unsigned flags;          /* BDNN_BNORM_* */
    int training;            /* forward: write the workspace when there is a relu */
    float eps;
    int64_t outer, channels, inner;
} bdnn_bnorm_desc_t;

/* A fixed table, in order of preference: one row per ISA (operands BDNN_OPERANDS_F32). */
int bdnn_bnorm_impl_count(void);
const char *bdnn_bnorm_impl_name(int impl);
int bdnn_bnorm_impl_isa(int impl);
int bdnn_bnorm_impl_operands(int impl);

/* Whether the row runs the type in that direction here: BDNN_STATUS_OK, or _UNIMPLEMENTED
 * (an ISA this CPU lacks, a type without batch normalization, s8 backward), or _INVALID
 * (no such type). */
int bdnn_bnorm_status(int impl, int dt, int backward);

/* Forward, on all OpenMP threads. Without GLOBAL_STATS the statistics are computed and
 * written to mean and variance unless NULL; with it they are read. scale and shift are
 * read when their flag is set, src1 with ADD_RELU; ws (NULL: none) is written in training
 * with RELU or ADD_RELU. po (NULL: none): eltwise, binary and prelu entries over the
 * elements as its geometry lays them out (channels first or last). fault: 0, a
 * BDNN_BNORM_FAULT_*, bdnn.h's BDNN_FAULT_TRUNCATE_DST or BDNN_FAULT_SRC1_CHANNEL0. */
int bdnn_bnorm_fwd(int impl, const bdnn_bnorm_desc_t *d, const bdnn_post_chain_t *po,
                   const void *src, const void *src1, void *dst, float *mean,
                   float *variance, const float *scale, const float *shift, uint8_t *ws,
                   int fault);
/* Backward: src, mean, variance, diff_dst (and scale with SCALE, ws with RELU or
 * ADD_RELU) in; diff_src out, diff_src1 with ADD_RELU, diff_scale and diff_shift when
 * not NULL. */
int bdnn_bnorm_bwd(int impl, const bdnn_bnorm_desc_t *d, const void *src,
                   const float *mean, const float *variance, const void *diff_dst,
                   const float *scale, const uint8_t *ws, void *diff_src, void *diff_src1,
                   float *diff_scale, float *diff_shift, int fault);
/* CDEF END */

#endif /* BDNN_BNORM_H */
