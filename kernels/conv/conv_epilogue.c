/* The low-precision epilogue (contract in conv_impl.h): everything between the GEMM's
 * accumulators and the stored output, one row of a finished tile at a time while it is in
 * cache. The spec's order: scales and bias, then the post-ops in the order given, all in
 * f32; the conversion to the output type comes last, just before the store. */
#include "conv_impl.h"
#include "dt.h"

/* The deliberate defects: a store that truncates instead of rounding, or wraps instead of
 * saturating. */
static void store_faulty(void *out, int dt, int64_t i, float v, int fault) {
    if (fault == BDNN_FAULT_TRUNCATE_DST) {
        bdnn_store_f32_truncated(out, dt, i, v);
        return;
    }
    if (fault == BDNN_FAULT_WRAP_DST && v == v) {
        const int64_t w = (int64_t)nearbyintf(v);
        switch (dt) {
        case BDNN_DT_S8: ((int8_t *)out)[i] = (int8_t)(uint8_t)w; return;
        case BDNN_DT_U8: ((uint8_t *)out)[i] = (uint8_t)w; return;
        default: break;
        }
    }
    bdnn_store_f32(out, dt, i, v);
}

void bdnn_conv_epilogue(const struct bdnn_conv *c, const void *acc, int64_t ld_acc,
                        int64_t rows, int64_t cols, int64_t ch0, const void *bias,
                        const int32_t *comp, void *out, int64_t out_off, int64_t ld_out,
                        float *tmp) {
    const bdnn_conv_attr_t *a = &c->attr;
    const int out_dt = c->out_dt, faulty = c->fault == BDNN_FAULT_TRUNCATE_DST
                                         || c->fault == BDNN_FAULT_WRAP_DST;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t ch = ch0 + r, row = out_off + r * ld_out;
        if (comp) {
            const int32_t *ar = (const int32_t *)acc + r * ld_acc, k = comp[ch];
            /* Exact in s32 (what the instructions accumulate), converted once. */
            for (int64_t j = 0; j < cols; ++j) tmp[j] = (float)(int32_t)((uint32_t)ar[j] - (uint32_t)k);
        } else {
            const float *ar = (const float *)acc + r * ld_acc;
            for (int64_t j = 0; j < cols; ++j) tmp[j] = ar[j];
        }
        const float b = bias ? bdnn_load_f32(bias, a->bia_dt, ch) : 0.0f;
        switch (a->scales) {
        case BDNN_SCALES_OSCALE: {
            const float s = c->wei_scales[ch];
            for (int64_t j = 0; j < cols; ++j) tmp[j] = (tmp[j] + b) * s;
            break;
        }
        case BDNN_SCALES_ARGS: {
            const float s = a->src_scale * c->wei_scales[ch];
            for (int64_t j = 0; j < cols; ++j) tmp[j] = tmp[j] * s + b;
            break;
        }
        default:
            if (bias)
                for (int64_t j = 0; j < cols; ++j) tmp[j] += b;
        }
        for (int i = 0; i < c->n_post_ops; ++i) {
            const bdnn_post_op_t *op = &c->post_ops[i];
            if (op->kind == BDNN_POST_SUM) {
                const float s = c->fault == BDNN_FAULT_SUM_SCALE_DROPPED ? 1.0f : op->scale;
                const float zp = (float)op->zero_point;
                for (int64_t j = 0; j < cols; ++j)
                    tmp[j] += s * (bdnn_load_f32(out, out_dt, row + j) - zp);
            } else {
                bdnn_eltwise_fwd(op, tmp, cols);
            }
        }
        if (a->scales == BDNN_SCALES_ARGS) {
            const float inv = 1.0f / a->dst_scale, zp = (float)a->dst_zp;
            for (int64_t j = 0; j < cols; ++j) tmp[j] = tmp[j] * inv + zp;
        } else if (a->dst_zp) {
            const float zp = (float)a->dst_zp;
            for (int64_t j = 0; j < cols; ++j) tmp[j] += zp;
        }
        if (faulty)
            for (int64_t j = 0; j < cols; ++j) store_faulty(out, out_dt, row + j, tmp[j], c->fault);
        else if (out_dt == BDNN_DT_F32)
            for (int64_t j = 0; j < cols; ++j) ((float *)out)[row + j] = tmp[j];
        else
            bdnn_cvt_from_f32(out_dt, tmp, (char *)out + row * (int64_t)bdnn_dt_size(out_dt), cols);
    }
}
