/* The int8 dot route's kernel (contract: conv_dot_fn in conv_impl.h), portable C: one
 * multiply-add per byte, sums in uint32 (wrapping, as s32 sums do, without C's signed
 * overflow). */
#include "conv_impl.h"

static void dot_scalar(const uint8_t *x, const int8_t *w, int64_t n, int flip, uint32_t *dot,
                       uint32_t *wsum) {
    const uint8_t mask = flip ? 0x80 : 0x00;
    uint32_t acc = 0, ws = 0;
    for (int64_t i = 0; i < n; ++i) {
        acc += (uint32_t)((int32_t)(uint8_t)(x[i] ^ mask) * (int32_t)w[i]);
        ws += (uint32_t)(int32_t)w[i];
    }
    *dot = acc;
    *wsum = ws;
}

const conv_dot_ker_t bdnn_dot_ker_scalar = {dot_scalar};
