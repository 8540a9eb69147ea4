/* Deterministic input fills (benchdnn_py/fill.py holds the contract; benchdnn reference
 * 6.2 to 6.4). Element i of stream (kind, n, stream) is
 *
 *   splitmix64(i ^ splitmix64(kind * 0x1000003 + n * 0x10001 + stream * 0x7F4A7C15))
 *
 * in wrapping 64-bit arithmetic: a pure function of the triple and the index, so the
 * values do not depend on threads or chunking, and no state is carried between calls.
 * A uniform double in [0, 1) is the top 53 bits times 2^-53 (both steps exact).
 *
 * Real fills round once per operation, as the contract's NumPy statement does: this file
 * is built for the baseline ISA, which has no fused multiply-add for the compiler to
 * contract lo + width * u into. The integer fill also has an AVX-512 loop
 * (fill_avx512.c), taken where that level runs (bdnn_isa_supported), which computes the
 * same bits. */
#include <math.h>
#include "bdnn.h"
#include "fill.h"

enum { STREAM_INT = 1, STREAM_KEEP = 2, STREAM_FIRST = 3, STREAM_REAL = 4, STREAM_CHOICE = 5 };

/* Below this many elements a fill runs on one thread (forking costs more than it saves). */
#define FILL_PARALLEL_MIN 65536

static uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t stream_key(int kind, int64_t n, int stream) {
    return splitmix64((uint64_t)kind * 0x1000003ull + (uint64_t)n * 0x10001ull
                      + (uint64_t)stream * 0x7F4A7C15ull);
}

static double unit_double(uint64_t bits) {
    return (double)(bits >> 11) * (1.0 / 9007199254740992.0);   /* top 53 bits x 2^-53 */
}

void bdnn_fill_int_scalar(int64_t first, int64_t count, uint64_t key_value,
                          uint64_t key_keep, int64_t lo, uint64_t span, double density,
                          float *out) {
    for (int64_t i = first; i < first + count; ++i) {
        const int64_t value = lo + (int64_t)(splitmix64((uint64_t)i ^ key_value) % span);
        const int keep = unit_double(splitmix64((uint64_t)i ^ key_keep)) < density;
        /* a mask, not a branch: at density 0.5 a branch mispredicts every other element */
        out[i] = (float)(value & -(int64_t)keep);
    }
}

/* Elements per piece of the threads' share: whole vectors, each piece one call. */
enum { FILL_PIECE = 1 << 14 };

void bdnn_fill_int(int kind, int64_t n, int64_t lo, int64_t hi, double density, float *out) {
    if (n <= 0) return;
    const uint64_t key_value = stream_key(kind, n, STREAM_INT);
    const uint64_t key_keep = stream_key(kind, n, STREAM_KEEP);
    const uint64_t span = (uint64_t)(hi - lo + 1);
    /* the vector loop where the CPU has it and its exactness argument holds (the range
     * and the values small enough for doubles) */
    const int vec = span <= FILL_VEC_MAX_SPAN && lo > -FILL_VEC_MAX_LO && lo < FILL_VEC_MAX_LO
        && bdnn_isa_supported(BDNN_ISA_AVX512);
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i += FILL_PIECE) {
        const int64_t count = n - i < FILL_PIECE ? n - i : FILL_PIECE;
        (vec ? bdnn_fill_int_avx512 : bdnn_fill_int_scalar)(i, count, key_value, key_keep, lo,
                                                            span, density, out);
    }
    if (hi >= 1) {   /* element 0 strictly positive: no output is identically zero */
        const int64_t positive_lo = lo > 1 ? lo : 1;
        out[0] = (float)(positive_lo + (int64_t)(splitmix64(stream_key(kind, 1, STREAM_FIRST))
                                                 % (uint64_t)(hi - positive_lo + 1)));
    }
}

void bdnn_fill_real(int kind, int64_t n, double lo, double hi, float *out) {
    const uint64_t key = stream_key(kind, n, STREAM_REAL);
    const double width = hi - lo;
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t i = 0; i < n; ++i) {
        const double scaled = width * unit_double(splitmix64((uint64_t)i ^ key));
        const float v = (float)(lo + scaled);
        /* a value just below hi can round up to it in f32: keep the range half-open */
        out[i] = v < hi ? v : nextafterf((float)hi, -INFINITY);
    }
}

void bdnn_fill_choice(int kind, int64_t n, const float *values, int64_t count, float *out) {
    const uint64_t key = stream_key(kind, n, STREAM_CHOICE);
#pragma omp parallel for schedule(static) if (n >= FILL_PARALLEL_MIN)
    for (int64_t i = 0; i < n; ++i)
        out[i] = values[splitmix64((uint64_t)i ^ key) % (uint64_t)count];
}
