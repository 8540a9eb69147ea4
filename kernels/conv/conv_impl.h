/* Internal contract between the convolution drivers (loops, packing, threading) and the
 * per-ISA kernels. Nothing here is part of the public API in bdnn.h. */
#ifndef BDNN_CONV_IMPL_H
#define BDNN_CONV_IMPL_H

#include "bdnn.h"

/* GEMM micro-kernel (BLIS model): one MR x NR tile of C. With bias[r] (0 when bias is
 * NULL) broadcast along row r:
 *
 *   mode UKR_WRITE:       C[0:mr, 0:nr] := bias + A * B
 *   mode UKR_ACCUMULATE:  C[0:mr, 0:nr] := C + A * B
 *   mode UKR_SUM:         C[0:mr, 0:nr] := sum_scale * C + bias + A * B   (sum post-op)
 *
 * A is a packed micro-panel of kc x MR: element (k, r) at a[k*MR + r]; rows r >= mr are 0.
 * B is a packed micro-panel of kc x NR: element (k, j) at b[k*NR + j]; columns j >= nr are
 * 0; b is 64-byte aligned. C has row stride ldc; only C[0:mr, 0:nr] is read or written. */
enum { UKR_WRITE = 0, UKR_ACCUMULATE = 1, UKR_SUM = 2 };
typedef void (*conv_gemm_ukr_fn)(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int mode,
                                 const float *bias, float sum_scale);

typedef struct {
    int mr, nr;
    conv_gemm_ukr_fn fn;
} conv_gemm_ukr_t;

/* Depthwise row kernel: for one (n, channel) plane of a convolution with one input and
 * one output channel per group, the sums of taps of output row (od, oh).
 *
 * src: the input plane [ID][IH][IW]; wei: the taps [KD][KH][KW]; row_acc: OW floats,
 * overwritten with the sums. ow_lo/ow_hi: for each kw, the output columns [lo, hi) whose
 * tap lands inside the input row (precomputed by the driver), so the inner loop needs no
 * bounds checks. Bias and post-ops are the driver's. */
typedef void (*conv_dw_row_fn)(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                               int64_t od, int64_t oh, float *row_acc,
                               const int64_t *ow_lo, const int64_t *ow_hi);

typedef struct {
    conv_dw_row_fn fn;
} conv_dw_ker_t;

/* Per-ISA kernel objects, defined in conv_ukr_<isa>.c / conv_dw_<isa>.c. */
extern const conv_gemm_ukr_t bdnn_gemm_ukr_scalar, bdnn_gemm_ukr_avx2, bdnn_gemm_ukr_avx512;
extern const conv_dw_ker_t bdnn_dw_ker_scalar, bdnn_dw_ker_avx2, bdnn_dw_ker_avx512;

/* The tensors of one execution; which are read and which written depends on the
 * direction (see bdnn.h). wei is the implementation's packed weights for the forward and
 * backward-data directions. */
typedef struct {
    const float *src, *wei, *bias, *diff_dst;
    float *dst, *diff_src, *diff_wei;
} bdnn_conv_args_t;

/* What every implementation provides; a primitive keeps a pointer to its entry. */
struct bdnn_conv;
typedef struct {
    int (*init)(struct bdnn_conv *c);  /* BDNN_STATUS_UNIMPLEMENTED if not applicable */
    size_t (*weights_bytes)(const struct bdnn_conv *c);
    void (*pack_weights)(const struct bdnn_conv *c, const float *wei, float *packed);
    void (*execute)(const struct bdnn_conv *c, const bdnn_conv_args_t *args);
    void (*fini)(struct bdnn_conv *c);
} conv_impl_ops_t;

typedef struct {
    const char *name;
    int isa;
    const conv_impl_ops_t *ops;
    const void *kernel;   /* conv_gemm_ukr_t or conv_dw_ker_t, as the ops expect */
} conv_impl_entry_t;

struct bdnn_conv {
    bdnn_conv_desc_t d;
    int dir, with_bias, fault, nthr;
    int n_post_ops;
    bdnn_post_op_t post_ops[BDNN_MAX_POST_OPS];
    const conv_impl_entry_t *impl;
    void *plan;          /* owned by the implementation (init allocates, fini frees) */
};

extern const conv_impl_ops_t bdnn_conv_gemm_ops, bdnn_conv_dw_ops;

/* Post-ops (post_ops.c). A chain is supported when a sum, if any, comes first. The sum
 * is folded into the kernels' first write of an output (UKR_SUM); the eltwise entries are
 * applied to each finished output tile while it is still in cache. */
int bdnn_post_ops_supported(const bdnn_post_op_t *ops, int n);
void bdnn_post_ops_eltwise(const struct bdnn_conv *c, float *tile, int64_t ld, int64_t rows,
                           int64_t cols);
/* The sum post-op's scale (sets *has_sum), honouring the dropped-scale defect. */
float bdnn_post_ops_sum_scale(const struct bdnn_conv *c, int *has_sum);

/* Helpers shared by the drivers. */
void *bdnn_aligned_alloc(size_t bytes);
static inline int64_t bdnn_weights_elems(const bdnn_conv_desc_t *d) {
    return d->oc * (d->ic / d->g) * d->kd * d->kh * d->kw;
}
static inline int64_t bdnn_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* floor(a / b) for b > 0 and any sign of a (C division truncates toward zero). */
static inline int64_t bdnn_floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

#endif /* BDNN_CONV_IMPL_H */
