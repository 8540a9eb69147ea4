/* Post-ops in f32: the eltwise formulas (oneDNN's forward definitions) and the epilogue
 * that applies a chain to an output tile. Each algorithm has its own tight loop, selected
 * once per call, so the simple ones (relu, linear, clip, ...) vectorize. */
#include <math.h>

#include "conv_impl.h"
#include "dt.h"

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

/* Binary and prelu entries: x[k] = x[k] OP b[k] over a run of the written tensor, one
 * tight loop per algorithm (selected once per call, so each vectorizes); b is one value
 * (a run along which src1 is broadcast) or n values. */
__attribute__((optimize("no-trapping-math")))
__attribute__((target_clones("avx512f", "avx2", "default")))
static void src1_apply(int kind, int alg, float *restrict x, const float *restrict b,
                       int64_t bstep, int64_t n) {
#define SRC1_LOOP(EXPR)                                                                    \
    do {                                                                                   \
        if (bstep) for (int64_t k = 0; k < n; ++k) { const float v = b[k]; x[k] = (EXPR); } \
        else { const float v = b[0]; for (int64_t k = 0; k < n; ++k) x[k] = (EXPR); }      \
    } while (0)
    if (kind == BDNN_POST_PRELU) {
        SRC1_LOOP(x[k] > 0 ? x[k] : x[k] * v);
        return;
    }
    switch (alg) {
    case BDNN_BIN_ADD: SRC1_LOOP(x[k] + v); break;
    case BDNN_BIN_SUB: SRC1_LOOP(x[k] - v); break;
    case BDNN_BIN_MUL: SRC1_LOOP(x[k] * v); break;
    case BDNN_BIN_DIV: SRC1_LOOP(x[k] / v); break;
    case BDNN_BIN_MAX: SRC1_LOOP(x[k] > v ? x[k] : v); break;
    case BDNN_BIN_MIN: SRC1_LOOP(x[k] < v ? x[k] : v); break;
    case BDNN_BIN_GE: SRC1_LOOP(x[k] >= v ? 1.0f : 0.0f); break;
    case BDNN_BIN_GT: SRC1_LOOP(x[k] > v ? 1.0f : 0.0f); break;
    case BDNN_BIN_LE: SRC1_LOOP(x[k] <= v ? 1.0f : 0.0f); break;
    case BDNN_BIN_LT: SRC1_LOOP(x[k] < v ? 1.0f : 0.0f); break;
    case BDNN_BIN_EQ: SRC1_LOOP(x[k] == v ? 1.0f : 0.0f); break;
    case BDNN_BIN_NE: SRC1_LOOP(x[k] != v ? 1.0f : 0.0f); break;
    default: break;
    }
#undef SRC1_LOOP
}

/* src1 values are converted in chunks of this many (a stack buffer): short enough to
 * stay in L1 beside the row, long enough for the loops to run whole vectors. */
enum { SRC1_CHUNK = 256 };

void bdnn_post_op_src1(const struct bdnn_conv *c, int i, float *x, int64_t off, int64_t n) {
    const bdnn_conv_desc_t *d = &c->d;
    const int bwd = c->dir == BDNN_DIR_BWD_DATA;   /* the written tensor is diff_src */
    const int64_t C = bwd ? d->ic : d->oc, D = bwd ? d->id : d->od, H = bwd ? d->ih : d->oh,
                  W = bwd ? d->iw : d->ow, SP = D * H * W;
    const bdnn_post_op_t *op = &c->post_ops[i];
    const int64_t *st = op->src1_strides;
    const int dt = op->src1_dt;
    const void *s1 = c->post_src[i];
    const int64_t s_c = c->fault == BDNN_FAULT_SRC1_CHANNEL0 ? 0 : st[1];
    float buf[SRC1_CHUNK];
    /* a run never crosses a channel's spatial plane: (mb, c) is fixed along it */
    while (n > 0) {
        const int64_t plane = off / SP, sp = off % SP, len = n < SP - sp ? n : SP - sp;
        const int64_t base = plane / C * st[0] + plane % C * s_c;
        if (st[2] == 0 && st[3] == 0 && st[4] == 0) {          /* constant along the run */
            buf[0] = bdnn_load_f32(s1, dt, base);
            src1_apply(op->kind, op->alg, x, buf, 0, len);
        } else if (st[4] == 1 && st[3] == W && st[2] == H * W) {   /* dense along it */
            for (int64_t k0 = 0; k0 < len; k0 += SRC1_CHUNK) {
                const int64_t m = len - k0 < SRC1_CHUNK ? len - k0 : SRC1_CHUNK;
                bdnn_cvt_to_f32(dt, (const char *)s1 + (size_t)(base + sp + k0)
                                                       * bdnn_dt_size(dt), buf, m);
                src1_apply(op->kind, op->alg, x + k0, buf, 1, m);
            }
        } else {                                  /* some spatial dims broadcast: gather */
            for (int64_t k0 = 0; k0 < len; k0 += SRC1_CHUNK) {
                const int64_t m = len - k0 < SRC1_CHUNK ? len - k0 : SRC1_CHUNK;
                for (int64_t k = 0; k < m; ++k) {
                    const int64_t p = sp + k0 + k, w = p % W, h = p / W % H, dd = p / (W * H);
                    buf[k] = bdnn_load_f32(s1, dt, base + dd * st[2] + h * st[3] + w * st[4]);
                }
                src1_apply(op->kind, op->alg, x + k0, buf, 1, m);
            }
        }
        x += len, off += len, n -= len;
    }
}
