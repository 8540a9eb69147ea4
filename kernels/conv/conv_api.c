/* The implementation table and the public primitive API of bdnn.h.
 *
 * Registration lives here and only here: one row per (algorithm, ISA), in order of
 * preference. Python walks the rows, skips those the CPU cannot run or the user filtered
 * out, and takes the first whose create() accepts the problem. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"

static const conv_impl_entry_t impls[] = {
    {"dw_conv_fwd:avx512", BDNN_ISA_AVX512, &bdnn_conv_dw_ops, &bdnn_dw_ker_avx512},
    {"dw_conv_fwd:avx2", BDNN_ISA_AVX2, &bdnn_conv_dw_ops, &bdnn_dw_ker_avx2},
    {"dw_conv_fwd:scalar", BDNN_ISA_SCALAR, &bdnn_conv_dw_ops, &bdnn_dw_ker_scalar},
    {"gemm_conv:avx512", BDNN_ISA_AVX512, &bdnn_conv_gemm_ops, &bdnn_gemm_ukr_avx512},
    {"gemm_conv:avx2", BDNN_ISA_AVX2, &bdnn_conv_gemm_ops, &bdnn_gemm_ukr_avx2},
    {"gemm_conv:scalar", BDNN_ISA_SCALAR, &bdnn_conv_gemm_ops, &bdnn_gemm_ukr_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

void *bdnn_aligned_alloc(size_t bytes) {
    const size_t align = 64;
    return aligned_alloc(align, (bytes + align - 1) / align * align);
}

int bdnn_conv_impl_count(void) { return N_IMPLS; }
const char *bdnn_conv_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_conv_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }

/* The checks every implementation relies on; the Python side validates the descriptor
 * first, this keeps the C boundary safe on its own. */
static int desc_ok(const bdnn_conv_desc_t *d) {
    const int64_t pos[] = {d->g, d->ic, d->oc, d->id, d->ih, d->iw, d->od, d->oh, d->ow,
                           d->kd, d->kh, d->kw, d->sd, d->sh, d->sw};
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); ++i)
        if (pos[i] <= 0) return 0;
    if (d->mb < 0 || d->dd < 0 || d->dh < 0 || d->dw < 0) return 0;
    return d->ic % d->g == 0 && d->oc % d->g == 0;
}

int bdnn_conv_create(int impl, const bdnn_conv_desc_t *d, int dir, int with_bias,
                     const bdnn_post_op_t *post_ops, int n_post_ops, int fault,
                     bdnn_conv_t **out) {
    *out = NULL;
    if (!bdnn_post_ops_supported(post_ops, n_post_ops)) return BDNN_STATUS_UNIMPLEMENTED;
    if (n_post_ops > 0 && dir == BDNN_DIR_BWD_WEIGHTS) return BDNN_STATUS_UNIMPLEMENTED;
    if (impl < 0 || impl >= N_IMPLS) return BDNN_STATUS_INVALID;
    if (dir != BDNN_DIR_FWD && dir != BDNN_DIR_BWD_DATA && dir != BDNN_DIR_BWD_WEIGHTS)
        return BDNN_STATUS_INVALID;
    if (!desc_ok(d)) return BDNN_STATUS_INVALID;
    if (!bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    bdnn_conv_t *c = calloc(1, sizeof(*c));
    if (!c) return BDNN_STATUS_OUT_OF_MEMORY;
    c->d = *d;
    c->dir = dir;
    c->with_bias = with_bias;
    c->fault = fault;
    c->n_post_ops = n_post_ops;
    for (int i = 0; i < n_post_ops; ++i) c->post_ops[i] = post_ops[i];
    c->nthr = omp_get_max_threads();
    c->impl = &impls[impl];
    const int st = c->impl->ops->init(c);
    if (st != BDNN_STATUS_OK) {
        bdnn_conv_destroy(c);
        return st;
    }
    *out = c;
    return BDNN_STATUS_OK;
}

size_t bdnn_conv_weights_bytes(const bdnn_conv_t *c) { return c->impl->ops->weights_bytes(c); }

int bdnn_conv_pack_weights(const bdnn_conv_t *c, const float *wei, float *wei_packed) {
    c->impl->ops->pack_weights(c, wei, wei_packed);
    return BDNN_STATUS_OK;
}

/* Runs the implementation; the slow-gemm defect repeats the (idempotent) work. */
static void run_impl(const bdnn_conv_t *c, const bdnn_conv_args_t *a) {
    c->impl->ops->execute(c, a);
    if (c->fault == BDNN_FAULT_SLOW_GEMM && c->impl->ops == &bdnn_conv_gemm_ops)
        c->impl->ops->execute(c, a);
}

int bdnn_conv_execute(const bdnn_conv_t *c, const float *src, const float *wei_packed,
                      const float *bias, float *dst) {
    if (c->dir != BDNN_DIR_FWD || (c->with_bias && !bias)) return BDNN_STATUS_INVALID;
    if (c->d.mb == 0) return BDNN_STATUS_OK;
    if (c->fault == BDNN_FAULT_CRASH && c->d.ic == 3 && c->d.oc == 5) raise(SIGSEGV);
    const bdnn_conv_args_t a = {.src = src, .wei = wei_packed,
                                .bias = c->with_bias ? bias : NULL, .dst = dst};
    run_impl(c, &a);
    return BDNN_STATUS_OK;
}

int bdnn_conv_execute_bwd_data(const bdnn_conv_t *c, const float *diff_dst,
                               const float *wei_packed, const float *bias, float *diff_src) {
    if (c->dir != BDNN_DIR_BWD_DATA || (c->with_bias && !bias)) return BDNN_STATUS_INVALID;
    if (c->d.mb == 0) return BDNN_STATUS_OK;
    const bdnn_conv_args_t a = {.diff_dst = diff_dst, .wei = wei_packed,
                                .bias = c->with_bias ? bias : NULL, .diff_src = diff_src};
    run_impl(c, &a);
    return BDNN_STATUS_OK;
}

int bdnn_conv_execute_bwd_weights(const bdnn_conv_t *c, const float *src,
                                  const float *diff_dst, float *diff_wei, float *diff_bias) {
    if (c->dir != BDNN_DIR_BWD_WEIGHTS || (c->with_bias && !diff_bias))
        return BDNN_STATUS_INVALID;
    const bdnn_conv_args_t a = {.src = src, .diff_dst = diff_dst, .diff_wei = diff_wei};
    run_impl(c, &a);
    if (c->with_bias)
        bdnn_bias_grad(diff_dst, c->d.mb, c->d.oc, c->d.od * c->d.oh * c->d.ow, diff_bias);
    return BDNN_STATUS_OK;
}

/* Sums per channel. Each thread owns whole channels, so the sums need no reduction across
 * threads; the inner loop over a contiguous plane vectorizes. */
int bdnn_bias_grad(const float *x, int64_t mb, int64_t channels, int64_t spatial, float *out) {
#pragma omp parallel for schedule(static)
    for (int64_t ch = 0; ch < channels; ++ch) {
        float acc = 0.0f;
        for (int64_t n = 0; n < mb; ++n) {
            const float *plane = x + (n * channels + ch) * spatial;
            for (int64_t p = 0; p < spatial; ++p) acc += plane[p];
        }
        out[ch] = acc;
    }
    return BDNN_STATUS_OK;
}

const char *bdnn_conv_name(const bdnn_conv_t *c) { return c->impl->name; }

void bdnn_conv_destroy(bdnn_conv_t *c) {
    if (!c) return;
    if (c->impl && c->impl->ops->fini) c->impl->ops->fini(c);
    free(c);
}
