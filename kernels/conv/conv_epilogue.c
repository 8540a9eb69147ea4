/* The low-precision epilogue (contract in conv_impl.h): everything between the GEMM's
 * accumulators and the stored output, one row of a finished tile at a time while it is in
 * cache. The spec's order: scales and bias, then the post-ops in the order given, all in
 * f32; the conversion to the output type comes last, just before the store. The stages
 * are in conv_epilogue.inc, compiled per vector width; this file picks the one of the
 * implementation's ISA (so --isa caps it too) and holds the defects' stores. */
#include "conv_impl.h"
#include "dt.h"

/* The deliberate defects: a store that truncates instead of rounding, or wraps instead of
 * saturating. */
void bdnn_conv_store_faulty(void *out, int dt, int64_t i, float v, int fault) {
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
    const int isa = c->impl ? c->impl->isa : BDNN_ISA_SCALAR;
    void (*fn)(const struct bdnn_conv *, const void *, int64_t, int64_t, int64_t, int64_t,
               const void *, const int32_t *, void *, int64_t, int64_t, float *) =
        isa >= BDNN_ISA_AVX512 ? bdnn_conv_epilogue_avx512
        : isa == BDNN_ISA_AVX2 ? bdnn_conv_epilogue_avx2 : bdnn_conv_epilogue_scalar;
    fn(c, acc, ld_acc, rows, cols, ch0, bias, comp, out, out_off, ld_out, tmp);
}
