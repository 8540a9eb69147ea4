/* Post-op entries that read an extra input (binary, prelu), and whole chains of the
 * memory-bound primitives (bdnn_post_chain_t): shared by the convolution epilogue, the
 * pooling and the eltwise kernels (post_chain.c). */
#ifndef BDNN_POST_CHAIN_H
#define BDNN_POST_CHAIN_H

#include "bdnn.h"

/* Binary or prelu entry op on x[0:n]: the elements of a written tensor of dims
 * [mb][C][D][H][W] from offset off, in that order (channels_last 0) or as
 * [mb][D][H][W][C] (1); src1 is read through op->src1_strides. channel0: read channel
 * 0's value for every channel (the src1_channel0 defect, tests only). */
void bdnn_src1_run(const bdnn_post_op_t *op, const void *src1, int64_t C, int64_t D,
                   int64_t H, int64_t W, int channels_last, int channel0, float *x,
                   int64_t off, int64_t n);
/* A binary or prelu entry's own fields: its algorithm, src1_dt and strides (1: valid). */
int bdnn_src1_entry_ok(const bdnn_post_op_t *op);
/* Whether a chain is one the memory-bound primitives run: BDNN_STATUS_OK, or
 * _UNIMPLEMENTED (a sum or dw entry) or _INVALID (a bad field, a missing input). */
int bdnn_post_chain_status(const bdnn_post_chain_t *ch);
/* The same for a primitive that reads the prior dst (bdnn_post_chain_run_prior): sum
 * entries are allowed too. */
int bdnn_post_chain_status_sum(const bdnn_post_chain_t *ch);
/* Whether the chain has a sum entry (which then needs the prior dst). */
int bdnn_post_chain_has_sum(const bdnn_post_chain_t *ch);
/* The chain on x[0:n], the written tensor's elements from offset off. */
void bdnn_post_chain_run(const bdnn_post_chain_t *ch, float *x, int64_t off, int64_t n,
                         int fault);
/* The same with sum entries: x = x + scale * (prior - zero_point), prior[0:n] the written
 * tensor's values before the execution, in f32 (NULL when the chain has no sum). */
void bdnn_post_chain_run_prior(const bdnn_post_chain_t *ch, float *x, const float *prior,
                               int64_t off, int64_t n, int fault);

#endif /* BDNN_POST_CHAIN_H */
