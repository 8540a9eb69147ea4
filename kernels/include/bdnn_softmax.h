/*
 * bdnn_softmax.h -- the softmax primitive of the kernel core: softmax and log-softmax,
 * forward and backward data, over one axis of a dense tensor.
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 * Formulas (oneDNN's; kernels/softmax/README.md): over each line of the axis, with m the
 * line's maximum and s = sum exp(x - m),
 *   softmax      dst = exp(x - m) / s            diff_src = dst (diff_dst - sum(diff_dst dst))
 *   log-softmax  dst = x - m - log(s)            diff_src = diff_dst - exp(dst) sum(diff_dst)
 * Forward then scales by src_scale, applies dropout and the post-op chain, and scales by
 * 1 / dst_scale, before the store.
 *
 * Tensors are dense, all in one memory order, described as outer x axis x inner: element
 * (o, a, i) is at (o * axis + a) * inner + i. Source and destination may differ in type
 * (BDNN_DT_*: f32, bf16, f16, s8, u8, f8_e5m2, f8_e4m3, f64); inputs are widened exactly,
 * and stores round to nearest even (integers saturated first). A row computes in f32, or
 * in double where either tensor is f64 (such rows take no dropout or post-ops). In place
 * (dst == src, diff_src == diff_dst, same type) is allowed; other overlaps are not.
 */
#ifndef BDNN_SOFTMAX_H
#define BDNN_SOFTMAX_H

#include "bdnn.h"
#include "bdnn_eltwise.h"

/* CDEF BEGIN */
enum {
    BDNN_SOFTMAX_ACCURATE = 0,  /* softmax */
    BDNN_SOFTMAX_LOG = 1        /* log-softmax */
};

/* Deliberate defects of these kernels (tests only), numbered apart from the others'. */
enum {
    BDNN_SMX_FAULT_NO_MAX = 501,        /* forward: the line's maximum is not subtracted */
    BDNN_SMX_FAULT_SUM_SHORT = 502      /* the line's sum leaves out its last element */
};

/* A fixed table, in order of preference; an entry is usable when its ISA is supported and
 * its operand class (BDNN_OPERANDS_F32: computes in f32; _F64: in double) is the one the
 * pair of types needs. */
int bdnn_smx_impl_count(void);
const char *bdnn_smx_impl_name(int impl);
int bdnn_smx_impl_isa(int impl);
int bdnn_smx_impl_operands(int impl);

/* Whether the row runs these types in that direction here: BDNN_STATUS_OK, or
 * _UNIMPLEMENTED (an ISA this CPU lacks, the other operand class, a type without
 * softmax: s32, the 4-bit ones; integer types backward), or _INVALID (no such type). */
int bdnn_smx_status(int impl, int src_dt, int dst_dt, int backward);

/* Executes on all OpenMP threads, each owning whole lines. dropout (NULL: none): its
 * offsets are the elements' in dst's memory; po (NULL: none): eltwise, binary and prelu
 * entries over the elements as its geometry lays them out. fault: 0, a BDNN_SMX_FAULT_*,
 * BDNN_ELT_FAULT_DROPOUT_WORD0, or bdnn.h's BDNN_FAULT_TRUNCATE_DST or
 * BDNN_FAULT_SRC1_CHANNEL0 (tests only). */
int bdnn_smx_fwd(int impl, int alg, int src_dt, int dst_dt, float src_scale,
                 float dst_scale, const bdnn_dropout_t *dropout,
                 const bdnn_post_chain_t *po, const void *src, void *dst, int64_t outer,
                 int64_t axis, int64_t inner, int fault);
/* Backward data: dst and diff_dst of dst_dt, diff_src of src_dt. */
int bdnn_smx_bwd(int impl, int alg, int src_dt, int dst_dt, const void *dst,
                 const void *diff_dst, void *diff_src, int64_t outer, int64_t axis,
                 int64_t inner, int fault);
/* CDEF END */

#endif /* BDNN_SOFTMAX_H */
