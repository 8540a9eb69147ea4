/*
 * bdnn_binary.h -- the binary primitive of the kernel core: dst = OP(scale0 src0,
 * scale1 src1), then a post-op chain; or dst = src2 ? src0 : src1 (select).
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * dst is dense: its dims are given in its memory order, outermost first, and element i of
 * dst is the i-th of that order. Each source is read through its own strides over those
 * dims (in elements, 0 along a dim it is broadcast over, any plain layout), so sources
 * broadcast along any dims and in any plain layout run without a copy. src2 (select's
 * condition, s8) shares src0's dims and strides. Sources widen exactly to f32 (s32 beyond
 * 2^24 rounds, as oneDNN's f32 computation does); OP runs in f32 (the comparisons give 1
 * or 0); the chain's entries follow in f32; the store rounds to nearest even, integers
 * saturated first. Types: f32, bf16, f16, s32, s8, u8 for src0, src1 and dst. dst may be
 * src0's memory (in place) when src0 is dense in dst's order and of dst's type; no other
 * overlap is allowed.
 *
 * The chain (bdnn.h, bdnn_post_chain_t) takes eltwise, binary, prelu and sum entries; a
 * sum is x + scale * (prior - zero_point), prior being dst's value before the execution
 * (read as sum_dt when it is set: a type of dst's size; every sum entry reads the same). Its binary and prelu entries locate each
 * element through the chain's geometry: dst must then be stored [mb][c][d][h][w] or
 * (channels_last) [mb][d][h][w][c].
 */
#ifndef BDNN_BINARY_H
#define BDNN_BINARY_H

#include "bdnn.h"

/* CDEF BEGIN */
/* Deliberate defects of these kernels (tests only), numbered apart from the others'. */
enum {
    BDNN_BINARY_FAULT_SRC1_INNER_FIXED = 801   /* src1 read at the start of each run of
                                                  dst's innermost dim, as if broadcast */
};

/* The algorithms beyond bdnn.h's BDNN_BIN_*, which binary shares with the post-op. */
enum { BDNN_BINARY_SELECT = 12 };   /* dst = src2 != 0 ? src0 : src1 */

enum { BDNN_BINARY_MAX_NDIMS = 12 };

typedef struct {
    int alg;                        /* BDNN_BIN_* or BDNN_BINARY_SELECT */
    int src0_dt, src1_dt, dst_dt;   /* BDNN_DT_*; src2 is s8 */
    float scale0, scale1;           /* applied to each source before OP (not select's) */
    int ndims;                      /* 1 to BDNN_BINARY_MAX_NDIMS */
    int64_t dims[12];               /* dst's dims in its memory order, outermost first */
    int64_t src0_strides[12];       /* over dims, in elements; 0: broadcast */
    int64_t src1_strides[12];
} bdnn_binary_desc_t;

/* A fixed table, in order of preference; an entry is usable when its ISA is supported. */
int bdnn_binary_impl_count(void);
const char *bdnn_binary_impl_name(int impl);
int bdnn_binary_impl_isa(int impl);
int bdnn_binary_impl_operands(int impl);

/* BDNN_STATUS_OK when the row runs the description and chain (po: NULL, or a chain as
 * above) here; _UNIMPLEMENTED for an ISA this CPU lacks, a type binary does not take, or
 * a dw entry; _INVALID for a bad algorithm, type, dim, stride or chain field. */
int bdnn_binary_status(int impl, const bdnn_binary_desc_t *d, const bdnn_post_chain_t *po);

/* Executes on all OpenMP threads, each owning one contiguous chunk of dst. src2: select's
 * condition, else NULL. fault: 0, BDNN_BINARY_FAULT_SRC1_INNER_FIXED, or bdnn.h's
 * BDNN_FAULT_TRUNCATE_DST or BDNN_FAULT_SRC1_CHANNEL0 (tests only). */
int bdnn_binary(int impl, const bdnn_binary_desc_t *d, const bdnn_post_chain_t *po,
                const void *src0, const void *src1, const void *src2, void *dst, int fault);
/* CDEF END */

#endif /* BDNN_BINARY_H */
