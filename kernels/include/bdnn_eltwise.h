/*
 * bdnn_eltwise.h -- the eltwise primitive of the kernel core (forward and backward; f32,
 * bf16, f16, f8_e5m2, f8_e4m3, f64, and s8/u8/s32 forward).
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * Algorithms are bdnn.h's BDNN_ELT_* codes (the post-op table); the formulas are
 * oneDNN's (kernels/eltwise/README.md lists them).
 *
 * Tensors are dense arrays of n elements of one data type dt (BDNN_DT_*), in any layout
 * (element-wise: the layout does not matter). Forward: dst = f(src). Backward data:
 * diff_src = diff_dst * f'(x), where x is src, or dst for the _dst variants (from_dst = 1).
 * In-place (dst == src, diff_src == diff_dst) is allowed; any other overlap is not.
 * Other types than f32 and f64 are widened exactly to f32, computed in f32 like f32
 * tensors, and rounded to nearest even (integers: saturated first) on the store
 * (common/dt.h). f64 is computed in double throughout (alpha and beta widened from f32)
 * and takes no post-ops. Integer types have no backward.
 */
#ifndef BDNN_ELTWISE_H
#define BDNN_ELTWISE_H

#include "bdnn.h"

/* CDEF BEGIN */
/* Deliberate defects of these kernels (tests only), numbered apart from bdnn.h's. */
enum {
    BDNN_ELT_FAULT_TAIL_DROPPED = 201,  /* the last element of every thread's chunk is left
                                           unwritten */
    BDNN_ELT_FAULT_DROPOUT_WORD0 = 202  /* dropout: every element of a block of four takes
                                           the block's first draw */
};

/* Dropout (oneDNN's attribute), forward: after f and before the post-ops, element i (its
 * offset in dst's memory) is kept when the Philox4x32-10 draw for (seed, offset, i)
 * exceeds p * (2^32 - 1), in double (common/dropout.h defines the draw), and then scaled
 * by 1 / (1 - p) computed in the computation's type (0 when p = 1); a dropped element
 * becomes 0. mask (NULL: not written): one byte per element, at the same offsets as dst's,
 * 1 kept and 0 dropped. */
typedef struct {
    float p;              /* in [0, 1] */
    int64_t seed;
    int64_t offset;       /* the generator's stream; 0 when the user gives none */
    uint8_t *mask;
} bdnn_dropout_t;

/* A fixed table, in order of preference; an entry is usable when its ISA is supported and
 * its operand class (BDNN_OPERANDS_*, bdnn.h) is the data type's. */
int bdnn_elt_impl_count(void);
const char *bdnn_elt_impl_name(int impl);
int bdnn_elt_impl_isa(int impl);
int bdnn_elt_impl_operands(int impl);

/* BDNN_STATUS_UNIMPLEMENTED for an algorithm without a formula in that direction
 * (round has no backward). */
int bdnn_elt_supported(int alg, int backward);

/* Executes on all OpenMP threads (each thread owns one contiguous chunk).
 * BDNN_STATUS_UNIMPLEMENTED when the row does not take dt in that direction, or for f64
 * with post-op entries. Forward's dropout (NULL: none) applies before po (NULL: none):
 * eltwise, binary and prelu entries over the n elements as its geometry describes them (n
 * a whole number of images), applied a tile at a time in f32 before the store. fault: 0,
 * BDNN_ELT_FAULT_TAIL_DROPPED, or bdnn.h's BDNN_FAULT_TRUNCATE_DST or
 * BDNN_FAULT_SRC1_CHANNEL0 (tests only). */
int bdnn_elt_fwd(int impl, int alg, int dt, float alpha, float beta,
                 const bdnn_dropout_t *dropout, const bdnn_post_chain_t *po,
                 const void *src, void *dst, int64_t n, int fault);
int bdnn_elt_bwd(int impl, int alg, int from_dst, int dt, float alpha, float beta,
                 const void *x, const void *diff_dst, void *diff_src, int64_t n, int fault);
/* CDEF END */

#endif /* BDNN_ELTWISE_H */
