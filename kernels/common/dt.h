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
    case BDNN_DT_S8: case BDNN_DT_U8: case BDNN_DT_F8_E5M2: case BDNN_DT_F8_E4M3: return 1;
    case BDNN_DT_F64: return 8;
    default: return 0;   /* the 4-bit types: two to a byte (bdnn_dt_bits) */
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

/* The operand class (BDNN_OPERANDS_*) of kernels that take one type for every tensor and
 * compute in f32 (eltwise, pooling): integers of any width share one class; -1 for an
 * unknown type. */
static inline int bdnn_dt_operands(int dt) {
    switch (dt) {
    case BDNN_DT_F32: return BDNN_OPERANDS_F32;
    case BDNN_DT_BF16: return BDNN_OPERANDS_BF16;
    case BDNN_DT_F16: return BDNN_OPERANDS_F16;
    case BDNN_DT_S32: case BDNN_DT_S8: case BDNN_DT_U8: return BDNN_OPERANDS_INT8;
    case BDNN_DT_F8_E5M2: case BDNN_DT_F8_E4M3: return BDNN_OPERANDS_F8;
    case BDNN_DT_F64: return BDNN_OPERANDS_F64;
    default: return -1;
    }
}

/* -- narrow types (the reorder's generic route, bdnn_dt_convert) ------------------------
 * As oneDNN defines them (src/common/float8.cpp, float4.cpp, int4.hpp and its reorders):
 *   f8_e5m2: f32 -> f16 (nearest even), then f16 -> e5m2 nearest even on the bits; the
 *            two share their exponent, so overflow rounds to Inf; NaN stays NaN, quieted.
 *   f8_e4m3: f32 -> f16, then nearest even; no Inf: past 464 (the tie above 448) and NaN
 *            give NaN (0x7f with the sign); 2^-10 and below give a signed zero.
 *   f4_e2m1: f32 nearest even among 0, 0.5, 1, 1.5, 2, 3, 4, 6 (a tie takes the even
 *            code), saturating at 6; Inf and NaN give 6 with their sign.
 *   s4, u4:  saturate to [-8, 7] or [0, 15], then nearest even (like s8); NaN gives 0.
 * Widening is exact. 4-bit elements are packed two to a byte, element 2k in the low nibble
 * of byte k: a store changes its own nibble only (not thread-safe within a byte). */
static inline float bdnn_f8_e5m2_to_f32(uint8_t b) {
    if ((b & 0x7cu) == 0x7cu && (b & 0x03u)) b |= 0x02u;   /* quiet a signalling NaN */
    return bdnn_f16_to_f32((uint16_t)(b << 8));
}

static inline uint8_t bdnn_f32_to_f8_e5m2(float f) {
    const uint16_t h = bdnn_f32_to_f16(f);
    if ((h & 0x7c00u) == 0x7c00u)                           /* Inf as is, NaN quieted */
        return (uint8_t)((h >> 8) | ((h & 0x3ffu) ? 0x02u : 0u));
    return (uint8_t)((h + 0x7fu + ((h >> 8) & 1u)) >> 8);
}

static inline float bdnn_f8_e4m3_to_f32(uint8_t b) {
    const float sign = b & 0x80u ? -1.0f : 1.0f;
    const int e = (b >> 3) & 0xf, m = b & 0x7;
    if (e == 0xf && m == 0x7) return copysignf(NAN, sign);
    if (e == 0) return copysignf(ldexpf((float)m, -9), sign);   /* -0 stays -0 */
    return sign * ldexpf((float)(8 + m), e - 10);
}

static inline uint8_t bdnn_f32_to_f8_e4m3(float f) {
    const uint16_t h = bdnn_f32_to_f16(f), a = h & 0x7fffu;
    const uint8_t sign = (uint8_t)((h >> 8) & 0x80u);
    if (a > 0x5f40u) return sign | 0x7fu;                   /* past 464, Inf, NaN */
    if (a <= 0x1400u) return sign;                          /* 2^-10 and below */
    const int e16 = a >> 10;
    if (e16 > 8) {                                          /* a normal e4m3 */
        const uint32_t r = a + 0x3fu + ((a >> 7) & 1u);     /* 7 bits off, nearest even */
        return sign | (uint8_t)((r >> 7) - (8u << 3));
    }
    /* a denormal e4m3: units of 2^-9, nearest even */
    const uint32_t mant = 0x400u | (a & 0x3ffu), shift = 16u - (uint32_t)e16;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | (uint8_t)q;
}

static inline float bdnn_f4_e2m1_to_f32(uint8_t code) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    return code & 0x8u ? -mag[code & 0x7u] : mag[code & 0x7u];
}

static inline uint8_t bdnn_f32_to_f4_e2m1(float f) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    const uint8_t sign = (bdnn_f32_bits(f) >> 28) & 0x8u;
    if (f != f || fabsf(f) >= 6.0f) return sign | 0x7u;
    const float a = fabsf(f);
    uint8_t best = 0;
    for (uint8_t k = 1; k < 8; ++k) {
        const float dk = fabsf(mag[k] - a), db = fabsf(mag[best] - a);
        if (dk < db || (dk == db && !(k & 1u))) best = k;
    }
    return sign | best;
}

static inline int bdnn_dt_bits(int dt) {
    switch (dt) {
    case BDNN_DT_F8_E5M2: case BDNN_DT_F8_E4M3: return 8;
    case BDNN_DT_S4: case BDNN_DT_U4: case BDNN_DT_F4_E2M1: return 4;
    default: return 8 * (int)bdnn_dt_size(dt);
    }
}

/* Any type, the narrow ones included (slower than bdnn_load_f32: kept apart so the hot
 * kernels' switch stays small). i counts elements (nibbles for the 4-bit types). */
static inline float bdnn_load_any_f32(const void *p, int dt, int64_t i) {
    const uint8_t *b = (const uint8_t *)p;
#define BDNN_NIBBLE ((uint8_t)((b[i >> 1] >> ((i & 1) * 4)) & 0xfu))
    switch (dt) {
    case BDNN_DT_F8_E5M2: return bdnn_f8_e5m2_to_f32(b[i]);
    case BDNN_DT_F8_E4M3: return bdnn_f8_e4m3_to_f32(b[i]);
    case BDNN_DT_S4: return (float)((int)BDNN_NIBBLE - (BDNN_NIBBLE & 0x8u ? 16 : 0));
    case BDNN_DT_U4: return (float)BDNN_NIBBLE;
    case BDNN_DT_F4_E2M1: return bdnn_f4_e2m1_to_f32(BDNN_NIBBLE);
#undef BDNN_NIBBLE
    default: return bdnn_load_f32(p, dt, i);
    }
}

static inline void bdnn_store_nibble(void *p, int64_t i, uint8_t code) {
    uint8_t *b = (uint8_t *)p + (i >> 1);
    const int shift = (int)(i & 1) * 4;
    *b = (uint8_t)((*b & ~(0xfu << shift)) | ((code & 0xfu) << shift));
}

static inline void bdnn_store_any_f32(void *p, int dt, int64_t i, float v) {
    switch (dt) {
    case BDNN_DT_F8_E5M2: ((uint8_t *)p)[i] = bdnn_f32_to_f8_e5m2(v); break;
    case BDNN_DT_F8_E4M3: ((uint8_t *)p)[i] = bdnn_f32_to_f8_e4m3(v); break;
    case BDNN_DT_S4: bdnn_store_nibble(p, i, (uint8_t)(int)bdnn_sat_round(v, -8.f, 7.f)); break;
    case BDNN_DT_U4: bdnn_store_nibble(p, i, (uint8_t)(int)bdnn_sat_round(v, 0.f, 15.f)); break;
    case BDNN_DT_F4_E2M1: bdnn_store_nibble(p, i, bdnn_f32_to_f4_e2m1(v)); break;
    default: bdnn_store_f32(p, dt, i, v); break;
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
    case BDNN_DT_F8_E5M2: case BDNN_DT_F8_E4M3: {   /* the neighbour toward zero */
        uint8_t b = dt == BDNN_DT_F8_E5M2 ? bdnn_f32_to_f8_e5m2(v) : bdnn_f32_to_f8_e4m3(v);
        const float r = dt == BDNN_DT_F8_E5M2 ? bdnn_f8_e5m2_to_f32(b) : bdnn_f8_e4m3_to_f32(b);
        if (r == r && fabsf(r) > fabsf(v) && (b & 0x7fu)) --b;
        ((uint8_t *)p)[i] = b;
        return;
    }
    default: break;
    }
    bdnn_store_f32(p, dt, i, v);
}

/* Bulk conversions (dt.c): the F16C instructions for f16 when the CPU has them. */
/* Whether the CPU runs AVX2 with F16C (the AVX2 rows' f16 instructions). */
int bdnn_cpu_f16c(void);
void bdnn_cvt_to_f32(int dt, const void *in, float *out, int64_t n);
void bdnn_cvt_from_f32(int dt, const float *in, void *out, int64_t n);

/* A memory-bound kernel (reorder, softmax, binary, sum, concat, bnorm) writing an output of
 * at least this many bytes streams its stores past the caches (dt_vec.inc's stream_f32, as
 * the C library's memcpy does large copies): a store then costs no read of the old line,
 * a third of a one-source pass's traffic. Below it (a convolution route's scratch, a few
 * MiB) the result stays in cache for the consumer next to it. Never where a sum reads the
 * old output: its lines are read anyway. */
enum { BDNN_STREAM_OUT_MIN_BYTES = 8 * 1024 * 1024 };

/* Orders a thread's non-temporal stores before whatever it does next: called by each
 * thread that streamed, before the barrier (or the join) after which its output is read.
 * sfence is baseline x86-64, so every ISA's row may call it. */
static inline void bdnn_stream_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#endif
}

#endif /* BDNN_DT_H */
