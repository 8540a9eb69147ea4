/* Machine queries: which instruction sets can run, how many threads a parallel region uses,
 * and how this core was built. Kernels never assume an ISA at compile time (no -march);
 * each variant is compiled with a target pragma and chosen here at run time. */
#include <omp.h>

#include "bdnn.h"

#ifndef BDNN_BUILD_FLAGS
#define BDNN_BUILD_FLAGS "unknown"
#endif

/* The highest level the user allows (--isa): levels above it report unsupported, so every
 * row table, and the measured peaks, stop at it. Levels are ordered as oneDNN's max ISA
 * (AVX512_BF16 above AVX512_VNNI above AVX512). */
static int max_isa = BDNN_ISA_AVX512_BF16;

void bdnn_set_max_isa(int isa) { max_isa = isa; }

int bdnn_isa_supported(int isa) {
    if (isa > max_isa) return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (isa) {
    case BDNN_ISA_SCALAR: return 1;
    case BDNN_ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case BDNN_ISA_AVX512:
        /* The variant uses AVX-512 F/VL/BW/DQ; libgcc also checks the OS saves zmm state. */
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
    case BDNN_ISA_AVX512_VNNI:
        return bdnn_isa_supported(BDNN_ISA_AVX512) && __builtin_cpu_supports("avx512vnni");
    case BDNN_ISA_AVX512_BF16:
        return bdnn_isa_supported(BDNN_ISA_AVX512) && __builtin_cpu_supports("avx512bf16");
    default: return 0;
    }
#else
    return isa == BDNN_ISA_SCALAR;
#endif
}

int bdnn_max_threads(void) { return omp_get_max_threads(); }

void bdnn_set_threads(int n) { omp_set_num_threads(n); }

const char *bdnn_build_info(void) {
#ifdef __VERSION__
    return "cc " __VERSION__ "; flags: " BDNN_BUILD_FLAGS;
#else
    return "cc unknown; flags: " BDNN_BUILD_FLAGS;
#endif
}
