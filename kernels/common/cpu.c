/* Machine queries: which instruction sets can run, how many threads a parallel region uses,
 * and how this core was built. Kernels never assume an ISA at compile time (no -march);
 * each variant is compiled with a target pragma and chosen here at run time. */
#include <omp.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "bdnn.h"

#ifndef BDNN_BUILD_FLAGS
#define BDNN_BUILD_FLAGS "unknown"
#endif

/* The highest level the user allows (--isa): levels above it report unsupported, so every
 * row table, and the measured peaks, stop at it. Levels are ordered as oneDNN's max ISA
 * (AVX512_AMX above AVX512_BF16 above AVX512_VNNI above AVX512). */
static int max_isa = BDNN_ISA_AVX512_AMX;

/* AMX: the CPU's tile, bf16 and int8 sets, the OS saving tile state (XCR0 bits 17 and 18),
 * and Linux's permission for this process to use tile data (arch_prctl
 * ARCH_REQ_XCOMP_PERM; without it the first tile instruction faults). Asked once. */
static int amx_usable(void) {
#if defined(__linux__) && defined(__x86_64__)
    static int usable = -1;
    if (usable < 0) {
        int ok = __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16")
              && __builtin_cpu_supports("amx-int8") && __builtin_cpu_supports("osxsave");
        if (ok) {
            unsigned lo, hi;
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            ok = (lo & (3u << 17)) == (3u << 17);
        }
        enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
        if (ok) ok = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
        usable = ok;
    }
    return usable;
#else
    return 0;
#endif
}

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
    case BDNN_ISA_AVX512_AMX:
        return bdnn_isa_supported(BDNN_ISA_AVX512_BF16)
            && bdnn_isa_supported(BDNN_ISA_AVX512_VNNI) && amx_usable();
    default: return 0;
    }
#else
    return isa == BDNN_ISA_SCALAR;
#endif
}

/* AMD's family 19h executes a 512-bit operation as two 256-bit halves; Intel's AVX-512
 * cores and the desktop and server cores of AMD's family 1Ah run them at full width (that
 * family's mobile parts, which split them too, are not told apart here). */
int bdnn_cpu_splits_512(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
    /* "AuthenticAMD" in ebx, edx, ecx */
    if (b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned family = ((a >> 8) & 0xfu) + ((a >> 20) & 0xffu);
    return family == 0x19;
#else
    return 0;
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
