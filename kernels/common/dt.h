/* Data-type conversions of the kernel core (internal; the public entry point for tests is
 * bdnn_dt_convert in bdnn.h).
 *
 * Contract: every conversion to a narrower type rounds to nearest, ties to even, the IEEE
 * default; float -> integer saturates to the type's range first (NaN gives 0, which the
 * checker accepts: NaN -> int is unspecified); NaNs keep their sign and payload bits that
 * fit, with the quiet bit set (what the F16C instructions do, so the scalar and vector
 * paths agree bit for bit); denormals are kept, never flushed. Widening (bf16, f16, ints
 * -> f32) is exact. */
#ifndef BDNN_DT_H
#define BDNN_DT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bdnn.h"

static inline uint32_t bdnn_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bdnn_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float bdnn_bf16_to_f32(uint16_t h) { return bdnn_bits_f32((uint32_t)h << 16); }

static inline uint16_t bdnn_f32_to_bf16(float f) {
    uint32_t u = bdnn_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);  /* quiet */
    u += 0x7fffu + ((u >> 16) & 1u);   /* round to nearest even; Inf stays Inf */
    return (uint16_t)(u >> 16);
}

static inline float bdnn_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return bdnn_bits_f32(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0));
    if (e == 0) return bdnn_bits_f32(sign | bdnn_f32_bits((float)m * 0x1p-24f));
    return bdnn_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t bdnn_f32_to_f16(float f) {
    const uint32_t x = bdnn_f32_bits(f), ax = x & 0x7fffffffu;
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (ax > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((ax >> 13) & 0x3ffu);  /* NaN */
    if (ax >= 0x477ff000u) return sign | 0x7c00u;   /* 65520 and up round to Inf */
    if (ax >= 0x38800000u) {                        /* a normal half */
        const uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u);
        return sign | (uint16_t)((r >> 13) - (112u << 10));
    }
    if (ax <= 0x33000000u) return sign;             /* 2^-25 and below round to 0 */
    /* A denormal half: units of 2^-24, rounded to nearest even. */
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23);
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | (uint16_t)q;
}

/* Saturate to [lo, hi], then round to nearest even. hi must be exactly representable in
 * f32 (for s32 it is 2147483520, the largest float below 2^31). */
static inline float bdnn_sat_round(float v, float lo, float hi) {
    if (v != v) return 0.0f;
    v = v < lo ? lo : v > hi ? hi : v;
    return nearbyintf(v);
}

static inline int32_t bdnn_f32_to_s32(float v) {
    return (int32_t)bdnn_sat_round(v, -2147483648.0f, 2147483520.0f);
}
static inline int8_t bdnn_f32_to_s8(float v) { return (int8_t)bdnn_sat_round(v, -128.f, 127.f); }
static inline uint8_t bdnn_f32_to_u8(float v) { return (uint8_t)bdnn_sat_round(v, 0.f, 255.f); }

static inline size_t bdnn_dt_size(int dt) {
    switch (dt) {
    case BDNN_DT_F32: case BDNN_DT_S32: return 4;
    case BDNN_DT_BF16: case BDNN_DT_F16: return 2;
    case BDNN_DT_S8: case BDNN_DT_U8: return 1;
    default: return 0;
    }
}

static inline float bdnn_load_f32(const void *p, int dt, int64_t i) {
    switch (dt) {
    case BDNN_DT_F32: return ((const float *)p)[i];
    case BDNN_DT_BF16: return bdnn_bf16_to_f32(((const uint16_t *)p)[i]);
    case BDNN_DT_F16: return bdnn_f16_to_f32(((const uint16_t *)p)[i]);
    case BDNN_DT_S32: return (float)((const int32_t *)p)[i];
    case BDNN_DT_S8: return (float)((const int8_t *)p)[i];
    case BDNN_DT_U8: return (float)((const uint8_t *)p)[i];
    default: return NAN;
    }
}

static inline void bdnn_store_f32(void *p, int dt, int64_t i, float v) {
    switch (dt) {
    case BDNN_DT_F32: ((float *)p)[i] = v; break;
    case BDNN_DT_BF16: ((uint16_t *)p)[i] = bdnn_f32_to_bf16(v); break;
    case BDNN_DT_F16: ((uint16_t *)p)[i] = bdnn_f32_to_f16(v); break;
    case BDNN_DT_S32: ((int32_t *)p)[i] = bdnn_f32_to_s32(v); break;
    case BDNN_DT_S8: ((int8_t *)p)[i] = bdnn_f32_to_s8(v); break;
    case BDNN_DT_U8: ((uint8_t *)p)[i] = bdnn_f32_to_u8(v); break;
    default: break;
    }
}

/* The lowest finite value of dt, as f32 (what a maximum over nothing is, reference 9.3). */
static inline float bdnn_dt_lowest(int dt) {
    switch (dt) {
    case BDNN_DT_BF16: return bdnn_bits_f32(0xff7f0000u);   /* -(2 - 2^-7) 2^127 */
    case BDNN_DT_F16: return -65504.0f;
    case BDNN_DT_S32: return -2147483648.0f;
    case BDNN_DT_S8: return -128.0f;
    case BDNN_DT_U8: return 0.0f;
    default: return -FLT_MAX;
    }
}

/* The deliberate defect BDNN_FAULT_TRUNCATE_DST (tests only): a store that truncates
 * toward zero instead of rounding to nearest even (integers still saturate). */
static inline void bdnn_store_f32_truncated(void *p, int dt, int64_t i, float v) {
    switch (dt) {
    case BDNN_DT_BF16: ((uint16_t *)p)[i] = (uint16_t)(bdnn_f32_bits(v) >> 16); return;
    case BDNN_DT_F16:
        ((uint16_t *)p)[i] = bdnn_f32_to_f16(bdnn_bits_f32(bdnn_f32_bits(v) & ~0x1fffu));
        return;
    case BDNN_DT_S8: case BDNN_DT_U8: case BDNN_DT_S32: v = truncf(v); break;
    default: break;
    }
    bdnn_store_f32(p, dt, i, v);
}

/* The operand class (BDNN_OPERANDS_*) of kernels that take one type for every tensor and
 * compute in f32 (eltwise, pooling): integers of any width share one class; -1 for an
 * unknown type. */
static inline int bdnn_dt_operands(int dt) {
    switch (dt) {
    case BDNN_DT_F32: return BDNN_OPERANDS_F32;
    case BDNN_DT_BF16: return BDNN_OPERANDS_BF16;
    case BDNN_DT_F16: return BDNN_OPERANDS_F16;
    case BDNN_DT_S32: case BDNN_DT_S8: case BDNN_DT_U8: return BDNN_OPERANDS_INT8;
    default: return -1;
    }
}

/* Bulk conversions (dt.c): the F16C instructions for f16 when the CPU has them. */
/* Whether the CPU runs AVX2 with F16C (the AVX2 rows' f16 instructions). */
int bdnn_cpu_f16c(void);
void bdnn_cvt_to_f32(int dt, const void *in, float *out, int64_t n);
void bdnn_cvt_from_f32(int dt, const float *in, void *out, int64_t n);

#endif /* BDNN_DT_H */
