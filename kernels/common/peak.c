/* The machine's measured limits: what every perf line is compared with (%eff%, info).
 *
 * Compute peak: every thread of one parallel region runs PEAK_CHAINS independent
 * accumulator chains of one instruction (FMA, vdpbf16ps or vpdpbusd) for a fixed count,
 * all operands in registers. Twelve chains cover the latency x issue width of every core
 * these kernels target (4-cycle FMA x 2 pipes needs 8; 12 leaves room for 5-6 cycles), so
 * the loop runs at the instruction's throughput, not its latency. The rate is counted over
 * the region's wall time, so it is what all threads achieve together, as a convolution
 * does. Operands are chosen so that the values stay finite and normal: a denormal would
 * take a slow microcode path on some cores and understate the peak.
 *
 * Memory bandwidth: a multi-threaded copy between two buffers far larger than any cache,
 * counted as bytes read plus bytes written, as the perf lines' %bw% counts them.
 *
 * Cache probe (the perf guard's, with the compute peak): each thread streams a buffer of
 * its own that fits its core's L2 through FMAs, and the slowest thread's read rate is the
 * answer. On a shared virtual machine a neighbour's traffic can halve what one of our
 * cores gets from its caches while the register-only FMA loop above reads whole: this
 * probe sees such a slowdown of the kernels where the compute probe does not.
 *
 * Every function returns the best of `repeats` runs (the machine is shared: the best run
 * is the one least disturbed), in operations (or bytes) per second, or 0 when the CPU
 * cannot run the instruction. */
#include <immintrin.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "amx_tiles.h"
#include "bdnn.h"

#define PEAK_CHAINS 12

/* Sums the chains into one value the caller stores, so no chain is dead code. */
#define FOLD_INTO(sink, acc, add) \
    do { for (int c_ = 1; c_ < PEAK_CHAINS; ++c_) acc[0] = add(acc[0], acc[c_]); \
         sink = acc[0]; } while (0)

static volatile float g_sink_f;
static volatile int g_sink_i;

__attribute__((target("avx512f")))
static void run_f32_avx512(int64_t iters) {
    __m512 acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_set1_ps(1.0f + c);
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
    for (int64_t i = 0; i < iters; ++i)
        for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    __m512 s; FOLD_INTO(s, acc, _mm512_add_ps);
    g_sink_f = _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma")))
static void run_f32_avx2(int64_t iters) {
    __m256 acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm256_set1_ps(1.0f + c);
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-3f);
    for (int64_t i = 0; i < iters; ++i)
        for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    __m256 s; FOLD_INTO(s, acc, _mm256_add_ps);
    float out[8]; _mm256_storeu_ps(out, s);
    g_sink_f = out[0];
}

__attribute__((target("avx512f,avx512bf16")))
static void run_bf16_avx512(int64_t iters) {
    __m512 acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_set1_ps((float)c);
    /* bf16 0x3c00 = 2^-7: each step adds 2 * 2^-14 per lane, far from overflow. */
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3c00);
    for (int64_t i = 0; i < iters; ++i)
        for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, a);
    __m512 s; FOLD_INTO(s, acc, _mm512_add_ps);
    g_sink_f = _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512vnni")))
static void run_int8_avx512_vnni(int64_t iters) {
    __m512i acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_set1_epi32(c);
    const __m512i a = _mm512_set1_epi8(1);   /* 4 per lane per step: no s32 overflow */
    for (int64_t i = 0; i < iters; ++i)
        for (int c = 0; c < PEAK_CHAINS; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, a);
    __m512i s; FOLD_INTO(s, acc, _mm512_add_epi32);
    g_sink_i = _mm512_reduce_add_epi32(s);
}

/* AVX2 has no int8 dot product. The fastest AVX2 kernel (conv_ukr_int8_avx2.c's deepest
 * bounded tile, on executions whose 16-bit sums cannot overflow) multiplies u8 x s8 bytes
 * into s16 pair sums with two vpmaddubsw (two quads of k), adds them with vpaddw, widens
 * into s32 with vpmaddwd by ones and accumulates with vpaddd: 64 multiply-adds per five
 * instructions. (The exact tile, for data whose pairs would saturate, runs 16 per two:
 * vpmaddwd on widened pairs, then vpaddd.) Written in asm: as intrinsics, the compiler
 * computes one product for all chains (same operands) or, given distinct ones, spills
 * the chains to the stack; either way the loop would not run at the instructions'
 * throughput. Eight chains of vpaddd (latency 1) fed by independent products. */
#define INT8_AVX2_CHAINS 8
#define MADD_ADD(i)                                                                         \
    "vpmaddubsw %[x], %[y], %%ymm15\n\tvpmaddubsw %[y], %[x], %%ymm14\n\t"                   \
    "vpaddw %%ymm14, %%ymm15, %%ymm15\n\tvpmaddwd %%ymm15, %[one], %%ymm15\n\t"             \
    "vpaddd %%ymm15, %[a" #i "], %[a" #i "]\n\t"
__attribute__((target("avx2")))
static void run_int8_avx2(int64_t iters) {
    __m256i a0 = _mm256_set1_epi32(0), a1 = _mm256_set1_epi32(1), a2 = _mm256_set1_epi32(2),
            a3 = _mm256_set1_epi32(3), a4 = _mm256_set1_epi32(4), a5 = _mm256_set1_epi32(5),
            a6 = _mm256_set1_epi32(6), a7 = _mm256_set1_epi32(7);
    const __m256i x = _mm256_set1_epi8(3), y = _mm256_set1_epi8(-5);
    const __m256i one = _mm256_set1_epi16(1);
    for (int64_t i = 0; i < iters; ++i)
        __asm__ volatile(MADD_ADD(0) MADD_ADD(1) MADD_ADD(2) MADD_ADD(3)
                         MADD_ADD(4) MADD_ADD(5) MADD_ADD(6) MADD_ADD(7)
                         : [a0] "+x"(a0), [a1] "+x"(a1), [a2] "+x"(a2), [a3] "+x"(a3),
                           [a4] "+x"(a4), [a5] "+x"(a5), [a6] "+x"(a6), [a7] "+x"(a7)
                         : [x] "x"(x), [y] "x"(y), [one] "x"(one)
                         : "xmm14", "xmm15");
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1),
                                                        _mm256_add_epi32(a2, a3)),
                                       _mm256_add_epi32(_mm256_add_epi32(a4, a5),
                                                        _mm256_add_epi32(a6, a7)));
    g_sink_i = _mm256_extract_epi32(s, 0);
}
#undef MADD_ADD

/* AMX: four independent C tiles (16 x 16 sums each) fed by two A and two B tiles loaded
 * once, four tile products per iteration: throughput-bound, as the tile rows' items are
 * (conv_amx.c). bf16 2^-7 (0x3c00) operands keep the sums small and normal; u8 1 x s8 1
 * adds 64 per s32 lane per product. */
__attribute__((target("amx-tile")))
static void amx_tiles_load(const void *ab) {
    bdnn_amx_configure();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ab, 64);
    _tile_loadd(5, ab, 64);
    _tile_loadd(6, ab, 64);
    _tile_loadd(7, ab, 64);
}

__attribute__((target("amx-tile")))
static void amx_tiles_release(void) {
    float out[256];
    _tile_stored(0, out, 64);
    g_sink_f = out[0];
    _tile_release();
}

__attribute__((target("amx-tile,amx-bf16")))
static void run_bf16_amx(int64_t iters) {
    uint16_t ab[512];
    for (int i = 0; i < 512; ++i) ab[i] = 0x3c00;
    amx_tiles_load(ab);
    for (int64_t i = 0; i < iters; ++i) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    amx_tiles_release();
}

__attribute__((target("amx-tile,amx-int8")))
static void run_int8_amx(int64_t iters) {
    uint8_t ab[1024];
    memset(ab, 1, sizeof(ab));
    amx_tiles_load(ab);
    for (int64_t i = 0; i < iters; ++i) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    amx_tiles_release();
}

typedef struct {
    int kind, isa;
    void (*run)(int64_t);
    double ops_per_iter;   /* per thread, per loop iteration */
} peak_variant_t;

/* ops per iteration: chains x lanes x multiply-adds per lane x 2 (a multiply and an add);
 * AMX: 4 products x 16 x 16 sums x 32 (bf16) or 64 (int8) multiply-adds x 2. */
static const peak_variant_t PEAK_VARIANTS[] = {
    {BDNN_PEAK_BF16, BDNN_ISA_AVX512_AMX, run_bf16_amx, 4 * 16 * 16 * 32 * 2},
    {BDNN_PEAK_INT8, BDNN_ISA_AVX512_AMX, run_int8_amx, 4 * 16 * 16 * 64 * 2},
    {BDNN_PEAK_F32, BDNN_ISA_AVX512, run_f32_avx512, PEAK_CHAINS * 16 * 1 * 2},
    {BDNN_PEAK_F32, BDNN_ISA_AVX2, run_f32_avx2, PEAK_CHAINS * 8 * 1 * 2},
    {BDNN_PEAK_BF16, BDNN_ISA_AVX512_BF16, run_bf16_avx512, PEAK_CHAINS * 16 * 2 * 2},
    {BDNN_PEAK_INT8, BDNN_ISA_AVX512_VNNI, run_int8_avx512_vnni, PEAK_CHAINS * 16 * 4 * 2},
    {BDNN_PEAK_INT8, BDNN_ISA_AVX2, run_int8_avx2, INT8_AVX2_CHAINS * 8 * 8 * 2},
};

static double timed_region(void (*run)(int64_t), int64_t iters) {
    double t0 = omp_get_wtime();
#pragma omp parallel
    run(iters);
    return omp_get_wtime() - t0;
}

double bdnn_peak_ops(int kind, int isa, double seconds, int repeats) {
    const peak_variant_t *v = NULL;
    for (size_t i = 0; i < sizeof PEAK_VARIANTS / sizeof *PEAK_VARIANTS; ++i)
        if (PEAK_VARIANTS[i].kind == kind && PEAK_VARIANTS[i].isa == isa) v = &PEAK_VARIANTS[i];
    if (!v || !bdnn_isa_supported(isa)) return 0.0;
    /* Calibrate the count so that one run lasts about `seconds` (after a warm-up that also
     * brings the cores to their working clock). */
    int64_t iters = 1 << 16;
    double t = timed_region(v->run, iters);
    while (t < seconds / 8) { iters *= 2; t = timed_region(v->run, iters); }
    iters = (int64_t)(iters * (seconds / t)) + 1;
    double best = 0.0;
    for (int r = 0; r < (repeats > 0 ? repeats : 1); ++r) {
        t = timed_region(v->run, iters);
        double rate = v->ops_per_iter * (double)iters * omp_get_max_threads() / t;
        if (rate > best) best = rate;
    }
    return best;
}

double bdnn_peak_copy_bandwidth(int64_t bytes, int repeats) {
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) { free(src); free(dst); return 0.0; }
    const int nt = omp_get_max_threads();
    const int64_t chunk = (bytes / nt) & ~(int64_t)63;
    /* First touch by the thread that copies the same chunk later (page placement). */
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        const int64_t len = t == nt - 1 ? bytes - chunk * t : chunk;
        memset(src + chunk * t, 1, len);
        memset(dst + chunk * t, 0, len);
    }
    double best = 0.0;
    for (int r = 0; r < (repeats > 0 ? repeats : 1) + 1; ++r) {   /* +1: a warm-up */
        double t0 = omp_get_wtime();
#pragma omp parallel
        {
            const int t = omp_get_thread_num();
            const int64_t len = t == nt - 1 ? bytes - chunk * t : chunk;
            memcpy(dst + chunk * t, src + chunk * t, len);
        }
        double rate = 2.0 * (double)bytes / (omp_get_wtime() - t0);
        if (r > 0 && rate > best) best = rate;
    }
    g_sink_i = dst[bytes - 1];
    free(src); free(dst);
    return best;
}

/* One thread's passes over its buffer: four independent FMA chains, each fed by a load, so
 * the loop runs at the core's load rate from L2, not at the FMA latency. n: floats, a
 * multiple of 64. */
__attribute__((target("avx512f")))
static float stream_avx512(const float *buf, int64_t n, int passes) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const __m512 w = _mm512_set1_ps(0.5f);
    for (int p = 0; p < passes; ++p)
        for (int64_t i = 0; i < n; i += 64) {
            a0 = _mm512_fmadd_ps(_mm512_load_ps(buf + i), w, a0);
            a1 = _mm512_fmadd_ps(_mm512_load_ps(buf + i + 16), w, a1);
            a2 = _mm512_fmadd_ps(_mm512_load_ps(buf + i + 32), w, a2);
            a3 = _mm512_fmadd_ps(_mm512_load_ps(buf + i + 48), w, a3);
        }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

__attribute__((target("avx2,fma")))
static float stream_avx2(const float *buf, int64_t n, int passes) {
    __m256 a[8];
    for (int c = 0; c < 8; ++c) a[c] = _mm256_setzero_ps();
    const __m256 w = _mm256_set1_ps(0.5f);
    for (int p = 0; p < passes; ++p)
        for (int64_t i = 0; i < n; i += 64)
            for (int c = 0; c < 8; ++c)
                a[c] = _mm256_fmadd_ps(_mm256_load_ps(buf + i + 8 * c), w, a[c]);
    for (int c = 1; c < 8; ++c) a[0] = _mm256_add_ps(a[0], a[c]);
    float out[8]; _mm256_storeu_ps(out, a[0]);
    return out[0];
}

static float stream_scalar(const float *buf, int64_t n, int passes) {
    float a[4] = {0, 0, 0, 0};
    for (int p = 0; p < passes; ++p)
        for (int64_t i = 0; i < n; i += 4)
            for (int c = 0; c < 4; ++c) a[c] += buf[i + c] * 0.5f;
    return a[0] + a[1] + a[2] + a[3];
}

double bdnn_probe_cache(int64_t bytes, int passes) {
    float (*stream)(const float *, int64_t, int) =
        bdnn_isa_supported(BDNN_ISA_AVX512) ? stream_avx512
        : bdnn_isa_supported(BDNN_ISA_AVX2) ? stream_avx2 : stream_scalar;
    const int64_t n = (bytes / (int64_t)sizeof(float)) & ~(int64_t)63;
    if (n <= 0 || passes <= 0) return 0.0;
    double slowest = -1.0;
    int missing = 0;
#pragma omp parallel
    {
        float *buf = aligned_alloc(64, (size_t)n * sizeof(float));
        if (buf)
            for (int64_t i = 0; i < n; ++i) buf[i] = 1e-3f * (float)(i & 7);
        float sink = buf ? stream(buf, n, 1) : 0.0f;   /* a warm pass: the buffer in L2 */
        /* every thread starts its timed passes together, as the threads of a case run */
#pragma omp barrier
        double t0 = omp_get_wtime();
        if (buf) sink += stream(buf, n, passes);
        const double rate = (double)n * sizeof(float) * passes / (omp_get_wtime() - t0);
#pragma omp critical
        {
            if (!buf) missing = 1;
            else if (slowest < 0.0 || rate < slowest) slowest = rate;
            g_sink_f = sink;
        }
        free(buf);
    }
    return missing || slowest < 0.0 ? 0.0 : slowest;
}

double bdnn_probe_core_round_trip(double seconds) {
    if (omp_get_max_threads() < 2) return 0.0;
    /* Thread 0 writes 2i + 1 and waits for 2i + 2, thread 1 the other way round; thread 0
     * ends the turns (-1) once the time is up, checked every 16 round trips. */
    static _Alignas(64) atomic_llong line;
    atomic_store(&line, 0);
    double elapsed = 0.0;
    long long rounds = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            const double t0 = omp_get_wtime();
            double t = t0;
            for (long long i = 0; t - t0 < seconds; ++i) {
                atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
                while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {}
                rounds = i + 1;
                if ((i & 15) == 15) t = omp_get_wtime();
            }
            elapsed = omp_get_wtime() - t0;
            atomic_store_explicit(&line, -1, memory_order_release);
        } else {
            for (long long i = 0;; ++i) {
                long long v;
                while ((v = atomic_load_explicit(&line, memory_order_acquire)) != 2 * i + 1
                       && v != -1) {}
                if (v == -1) break;
                atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
            }
        }
    }
    return rounds > 0 ? elapsed / (double)rounds : 0.0;
}
