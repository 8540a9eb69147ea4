/* Post-ops in f32: the eltwise formulas (oneDNN's forward definitions) and the epilogue
 * that applies a chain to an output tile. Each algorithm has its own tight loop, selected
 * once per call, so the simple ones (relu, linear, clip, ...) vectorize. */
#include <math.h>

#include "conv_impl.h"
#include "dt.h"
#include "post_chain.h"

static inline float logistic(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ln(1 + e^x) without overflow for large x. */
static inline float soft_plus(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

/* no-trapping-math: under the default, GCC may not turn the conditional selects of relu,
 * clip and friends into vector blends (a comparison or product it would evaluate for
 * every lane could raise a floating-point exception flag), and the epilogue ran scalar:
 * relu cost 5x the convolution it followed. Nothing here reads exception flags, and the
 * option changes no value (unlike -ffast-math, which this core never uses). */
__attribute__((optimize("no-trapping-math")))
__attribute__((target_clones("avx512f", "avx2", "default")))   /* chosen by CPU at load */
void bdnn_eltwise_fwd(const bdnn_post_op_t *op, float *x, int64_t n) {
    const float a = op->alpha, b = op->beta;
    switch (op->alg) {
    case BDNN_ELT_ABS: for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : -x[i]; break;
    case BDNN_ELT_CLIP:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > b ? b : (x[i] <= a ? a : x[i]);
        break;
    case BDNN_ELT_CLIP_V2:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= b ? b : (x[i] <= a ? a : x[i]);
        break;
    case BDNN_ELT_ELU:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : a * expm1f(x[i]);
        break;
    case BDNN_ELT_EXP: for (int64_t i = 0; i < n; ++i) x[i] = expf(x[i]); break;
    /* Both gelu forms are evaluated without the cancellation of 1 + erf(...) and
     * 1 + tanh(...) for negative inputs: 1 + erf(z) = erfc(-z), 1 + tanh(z) = 2/(1+e^-2z). */
    case BDNN_ELT_GELU_ERF:
        for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * erfcf(-x[i] * (float)M_SQRT1_2);
        break;
    case BDNN_ELT_GELU_TANH: {
        const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
        for (int64_t i = 0; i < n; ++i) {
            const float v = x[i];
            x[i] = v / (1.0f + expf(-2.0f * k * (v + 0.044715f * v * v * v)));
        }
        break;
    }
    case BDNN_ELT_HARDSIGMOID:
        for (int64_t i = 0; i < n; ++i) x[i] = fmaxf(0.0f, fminf(1.0f, a * x[i] + b));
        break;
    case BDNN_ELT_HARDSWISH:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] * fmaxf(0.0f, fminf(1.0f, a * x[i] + b));
        break;
    case BDNN_ELT_LINEAR: for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b; break;
    case BDNN_ELT_LOG: for (int64_t i = 0; i < n; ++i) x[i] = logf(x[i]); break;
    case BDNN_ELT_LOGISTIC: for (int64_t i = 0; i < n; ++i) x[i] = logistic(x[i]); break;
    case BDNN_ELT_MISH: for (int64_t i = 0; i < n; ++i) x[i] = x[i] * tanhf(soft_plus(x[i])); break;
    case BDNN_ELT_POW: for (int64_t i = 0; i < n; ++i) x[i] = a * powf(x[i], b); break;
    case BDNN_ELT_RELU: for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : a * x[i]; break;
    case BDNN_ELT_ROUND: for (int64_t i = 0; i < n; ++i) x[i] = nearbyintf(x[i]); break;
    case BDNN_ELT_SOFT_RELU:
        for (int64_t i = 0; i < n; ++i) x[i] = soft_plus(a * x[i]) / a;
        break;
    case BDNN_ELT_SQRT: for (int64_t i = 0; i < n; ++i) x[i] = sqrtf(x[i]); break;
    case BDNN_ELT_SQUARE: for (int64_t i = 0; i < n; ++i) x[i] = x[i] * x[i]; break;
    case BDNN_ELT_SWISH: for (int64_t i = 0; i < n; ++i) x[i] = x[i] * logistic(a * x[i]); break;
    case BDNN_ELT_TANH: for (int64_t i = 0; i < n; ++i) x[i] = tanhf(x[i]); break;
    default: break;
    }
    if (op->scale != 1.0f)
        for (int64_t i = 0; i < n; ++i) x[i] *= op->scale;
}

void bdnn_post_ops_eltwise(const struct bdnn_conv *c, float *tile, int64_t ld, int64_t rows,
                           int64_t cols) {
    /* rows that follow each other in memory are one run: one call, not one per row (a
     * channel-blocked block's rows are 16 floats each) */
    if (cols == ld) cols *= rows, rows = 1;
    for (int i = 0; i < c->n_post_ops; ++i) {
        const bdnn_post_op_t *op = &c->post_ops[i];
        if (op->kind != BDNN_POST_ELTWISE) continue;   /* the sum is folded into the write */
        for (int64_t r = 0; r < rows; ++r) bdnn_eltwise_fwd(op, tile + r * ld, cols);
    }
}

float bdnn_post_ops_sum_scale(const struct bdnn_conv *c, int *has_sum) {
    *has_sum = c->n_post_ops > 0 && c->post_ops[0].kind == BDNN_POST_SUM;
    if (!*has_sum) return 0.0f;
    return c->fault == BDNN_FAULT_SUM_SCALE_DROPPED ? 1.0f : c->post_ops[0].scale;
}

int bdnn_post_ops_row_store(const struct bdnn_conv *c) {
    const bdnn_conv_attr_t *at = &c->attr;
    if (at->scales != BDNN_SCALES_NONE || at->src_zp || at->dst_zp || c->src_zps || c->dst_zps)
        return 0;
    for (int i = 0; i < c->n_post_ops; ++i) {
        const bdnn_post_op_t *op = &c->post_ops[i];
        if (op->kind == BDNN_POST_SUM ? i > 0 || op->zero_point
                                        || (op->sum_dt >= 0 && op->sum_dt != c->out_dt)
                                      : op->kind != BDNN_POST_ELTWISE || op->scale != 1.0f)
            return 0;
    }
    return 1;
}

void bdnn_post_op_src1(const struct bdnn_conv *c, int i, float *x, int64_t off, int64_t n) {
    const bdnn_conv_desc_t *d = &c->d;
    const int bwd = c->dir == BDNN_DIR_BWD_DATA;   /* the written tensor is diff_src */
    bdnn_src1_run(&c->post_ops[i], c->post_src[i], bwd ? d->ic : d->oc, bwd ? d->id : d->od,
                  bwd ? d->ih : d->oh, bwd ? d->iw : d->ow, 0,
                  c->fault == BDNN_FAULT_SRC1_CHANNEL0, x, off, n);
}
