/* Bulk data-type conversions (contract in dt.h). f16 goes through the F16C instructions
 * when the CPU has them (vcvtph2ps / vcvtps2ph round to nearest even and quiet NaNs exactly
 * like the scalar code); everything else is the scalar code, which the compiler
 * vectorizes. */
#include <immintrin.h>

#include "dt.h"

int bdnn_cpu_f16c(void) {
#if defined(__x86_64__) || defined(__i386__)
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    }
    return cached;
#else
    return 0;
#endif
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,f16c")))
static int64_t f16_to_f32_f16c(const uint16_t *in, float *out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    return i;
}

__attribute__((target("avx2,f16c")))
static int64_t f32_to_f16_f16c(const float *in, uint16_t *out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}
#endif

/* Compiled per vector width and picked by CPU at load (target_clones): the loops then
 * vectorize, and the round to nearest even of the integer stores is one instruction
 * (SSE4.1 and up) instead of a libm call per element. The same bits either way. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void to_f32(int dt, const void *in, float *out, int64_t n, int vector) {
    int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (dt == BDNN_DT_F16 && vector && bdnn_cpu_f16c()) i = f16_to_f32_f16c(in, out, n);
#endif
    for (; i < n; ++i) out[i] = bdnn_load_f32(in, dt, i);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void from_f32(int dt, const float *in, void *out, int64_t n, int vector) {
    int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (dt == BDNN_DT_F16 && vector && bdnn_cpu_f16c()) i = f32_to_f16_f16c(in, out, n);
#endif
    for (; i < n; ++i) bdnn_store_f32(out, dt, i, in[i]);
}

void bdnn_cvt_to_f32(int dt, const void *in, float *out, int64_t n) { to_f32(dt, in, out, n, 1); }
void bdnn_cvt_from_f32(int dt, const float *in, void *out, int64_t n) {
    from_f32(dt, in, out, n, 1);
}

int bdnn_typed_row_status(int isa, int operands, int dt, int backward) {
    if (bdnn_dt_operands(dt) < 0) return BDNN_STATUS_INVALID;
    if (!bdnn_isa_supported(isa) || operands != bdnn_dt_operands(dt))
        return BDNN_STATUS_UNIMPLEMENTED;
    if (operands == BDNN_OPERANDS_INT8 && backward) return BDNN_STATUS_UNIMPLEMENTED;
    if (operands == BDNN_OPERANDS_F16 && isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c())
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

/* bdnn_dt_convert: from this many elements on, the threads share the work, each a run
 * of whole chunks (forking costs more than converting a smaller tensor). */
enum { CONVERT_PARALLEL_MIN = 1 << 20, CONVERT_CHUNK = 1 << 16 };

int bdnn_dt_convert(int from_dt, int to_dt, const void *in, void *out, int64_t n, int isa) {
    if (!bdnn_dt_bits(from_dt) || !bdnn_dt_bits(to_dt) || n < 0) return BDNN_STATUS_INVALID;
    if (from_dt == BDNN_DT_F64 || to_dt == BDNN_DT_F64) return BDNN_STATUS_UNIMPLEMENTED;
    if (from_dt > BDNN_DT_U8 || to_dt > BDNN_DT_U8) {   /* the narrow types: scalar */
        if (from_dt == BDNN_DT_F32)
            for (int64_t i = 0; i < n; ++i)
                bdnn_store_any_f32(out, to_dt, i, ((const float *)in)[i]);
        else if (to_dt == BDNN_DT_F32)
            for (int64_t i = 0; i < n; ++i)
                ((float *)out)[i] = bdnn_load_any_f32(in, from_dt, i);
        else return BDNN_STATUS_INVALID;
        return BDNN_STATUS_OK;
    }
    if (from_dt != BDNN_DT_F32 && to_dt != BDNN_DT_F32) return BDNN_STATUS_INVALID;
    const int vector = isa != BDNN_ISA_SCALAR;
    const size_t in_sz = bdnn_dt_size(from_dt), out_sz = bdnn_dt_size(to_dt);
    /* a large tensor (a driver's inputs, up to GBs) on every thread, in equal chunks */
#pragma omp parallel for schedule(static) if (n >= CONVERT_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i += CONVERT_CHUNK) {
        const int64_t len = n - i < CONVERT_CHUNK ? n - i : CONVERT_CHUNK;
        const char *from = (const char *)in + (size_t)i * in_sz;
        char *to = (char *)out + (size_t)i * out_sz;
        if (from_dt == BDNN_DT_F32) from_f32(to_dt, (const float *)from, to, len, vector);
        else to_f32(from_dt, from, (float *)to, len, vector);
    }
    return BDNN_STATUS_OK;
}
