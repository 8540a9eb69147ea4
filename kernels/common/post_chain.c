/* Post-op entries with an extra input (binary, prelu) and the chains of the memory-bound
 * primitives (contract: post_chain.h). Each algorithm is its own tight loop, selected once
 * per run, so that each vectorizes; src1 is converted to f32 a chunk at a time. */
#include "post_chain.h"
#include "dt.h"

/* x[k] = x[k] OP b[k] (bstep 1) or x[k] OP b[0] (bstep 0), k < n. */
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
 * stay in L1 beside the run, long enough for the loops to run whole vectors. */
enum { SRC1_CHUNK = 256 };

/* A run along which src1 is read at base + k * step (k < len): one value, a dense
 * conversion, or a gather. */
static void run_strided(const bdnn_post_op_t *op, const void *s1, int64_t base, int64_t step,
                        float *x, int64_t len) {
    float buf[SRC1_CHUNK];
    if (step == 0) {
        buf[0] = bdnn_load_f32(s1, op->src1_dt, base);
        src1_apply(op->kind, op->alg, x, buf, 0, len);
        return;
    }
    for (int64_t k0 = 0; k0 < len; k0 += SRC1_CHUNK) {
        const int64_t m = len - k0 < SRC1_CHUNK ? len - k0 : SRC1_CHUNK;
        if (step == 1)
            bdnn_cvt_to_f32(op->src1_dt, (const char *)s1 + (size_t)(base + k0)
                                                        * bdnn_dt_size(op->src1_dt), buf, m);
        else
            for (int64_t k = 0; k < m; ++k)
                buf[k] = bdnn_load_f32(s1, op->src1_dt, base + (k0 + k) * step);
        src1_apply(op->kind, op->alg, x + k0, buf, 1, m);
    }
}

void bdnn_src1_run(const bdnn_post_op_t *op, const void *s1, int64_t C, int64_t D,
                   int64_t H, int64_t W, int channels_last, int channel0, float *x,
                   int64_t off, int64_t n) {
    const int64_t *st = op->src1_strides, SP = D * H * W;
    const int64_t s_c = channel0 ? 0 : st[1];
    float buf[SRC1_CHUNK];
    while (n > 0) {
        if (channels_last) {
            /* a run is the channels of one point (mb, sp) */
            const int64_t pt = off / C, c = off % C, len = n < C - c ? n : C - c;
            const int64_t mb = pt / SP, sp = pt % SP;
            const int64_t w = sp % W, h = sp / W % H, dd = sp / (W * H);
            run_strided(op, s1, mb * st[0] + dd * st[2] + h * st[3] + w * st[4] + c * s_c,
                        s_c, x, len);
            x += len, off += len, n -= len;
            continue;
        }
        /* a run never crosses a channel's spatial plane: (mb, c) is fixed along it */
        const int64_t plane = off / SP, sp = off % SP, len = n < SP - sp ? n : SP - sp;
        const int64_t base = plane / C * st[0] + plane % C * s_c;
        if (st[2] == 0 && st[3] == 0 && st[4] == 0) {
            run_strided(op, s1, base, 0, x, len);                /* constant along it */
        } else if ((W == 1 || st[4] == 1) && (H == 1 || st[3] == W)
                   && (D == 1 || st[2] == H * W)) {              /* dense along it (a */
            run_strided(op, s1, base + sp, 1, x, len);           /* size-1 dim: any) */
        } else {                                  /* some spatial dims broadcast: gather */
            for (int64_t k0 = 0; k0 < len; k0 += SRC1_CHUNK) {
                const int64_t m = len - k0 < SRC1_CHUNK ? len - k0 : SRC1_CHUNK;
                for (int64_t k = 0; k < m; ++k) {
                    const int64_t p = sp + k0 + k, w = p % W, h = p / W % H, dd = p / (W * H);
                    buf[k] = bdnn_load_f32(s1, op->src1_dt,
                                           base + dd * st[2] + h * st[3] + w * st[4]);
                }
                src1_apply(op->kind, op->alg, x + k0, buf, 1, m);
            }
        }
        x += len, off += len, n -= len;
    }
}

int bdnn_src1_entry_ok(const bdnn_post_op_t *op) {
    if (op->src1_dt < BDNN_DT_F32 || op->src1_dt > BDNN_DT_U8) return 0;
    if (op->kind == BDNN_POST_BINARY && (op->alg < BDNN_BIN_ADD || op->alg > BDNN_BIN_NE))
        return 0;
    for (int k = 0; k < 5; ++k)
        if (op->src1_strides[k] < 0) return 0;
    return 1;
}

static int chain_status(const bdnn_post_chain_t *ch, int sums_allowed) {
    if (!ch || ch->n == 0) return BDNN_STATUS_OK;
    if (ch->n < 0 || ch->n > BDNN_MAX_POST_OPS || ch->c <= 0 || ch->d <= 0 || ch->h <= 0
            || ch->w <= 0)
        return BDNN_STATUS_INVALID;
    for (int i = 0; i < ch->n; ++i) {
        const bdnn_post_op_t *op = &ch->ops[i];
        switch (op->kind) {
        case BDNN_POST_ELTWISE:
            if (op->alg < BDNN_ELT_ABS || op->alg > BDNN_ELT_TANH) return BDNN_STATUS_INVALID;
            break;
        case BDNN_POST_BINARY:
        case BDNN_POST_PRELU:
            if (!ch->src1[i] || !bdnn_src1_entry_ok(op)) return BDNN_STATUS_INVALID;
            break;
        case BDNN_POST_SUM:
            if (sums_allowed-- <= 0) return BDNN_STATUS_UNIMPLEMENTED;
            if (op->sum_dt >= 0 && !bdnn_dt_bits(op->sum_dt)) return BDNN_STATUS_INVALID;
            break;
        default:
            return BDNN_STATUS_UNIMPLEMENTED;   /* dw: the convolutions' */
        }
    }
    return BDNN_STATUS_OK;
}

int bdnn_post_chain_status(const bdnn_post_chain_t *ch) { return chain_status(ch, 0); }
int bdnn_post_chain_status_sum(const bdnn_post_chain_t *ch) {
    return chain_status(ch, BDNN_MAX_POST_OPS);
}

int bdnn_post_chain_has_sum(const bdnn_post_chain_t *ch) {
    for (int i = 0; ch && i < ch->n; ++i)
        if (ch->ops[i].kind == BDNN_POST_SUM) return 1;
    return 0;
}

/* x[k] += scale * (prior[k] - zero_point), each step rounded to f32 as the reference's
 * (no contraction into an FMA). */
__attribute__((optimize("fp-contract=off")))
__attribute__((target_clones("avx512f", "avx2", "default")))
static void sum_apply(const bdnn_post_op_t *op, float *restrict x,
                      const float *restrict prior, int64_t n) {
    const float s = op->scale, z = (float)op->zero_point;
    for (int64_t k = 0; k < n; ++k) x[k] += s * (prior[k] - z);
}

void bdnn_post_chain_run(const bdnn_post_chain_t *ch, float *x, int64_t off, int64_t n,
                         int fault) {
    bdnn_post_chain_run_prior(ch, x, NULL, off, n, fault);
}

void bdnn_post_chain_run_prior(const bdnn_post_chain_t *ch, float *x, const float *prior,
                               int64_t off, int64_t n, int fault) {
    for (int i = 0; i < ch->n; ++i) {
        const bdnn_post_op_t *op = &ch->ops[i];
        if (op->kind == BDNN_POST_ELTWISE)
            bdnn_eltwise_fwd(op, x, n);
        else if (op->kind == BDNN_POST_SUM)
            sum_apply(op, x, prior, n);
        else
            bdnn_src1_run(op, ch->src1[i], ch->c, ch->d, ch->h, ch->w, ch->channels_last,
                          fault == BDNN_FAULT_SRC1_CHANNEL0, x, off, n);
    }
}
