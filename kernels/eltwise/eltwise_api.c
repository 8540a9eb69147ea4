/* The eltwise implementation table and the public API of bdnn_eltwise.h.
 *
 * Registration lives here and only here: one row per ISA, in order of preference. The
 * work split is static and contiguous (thread t owns elements [t*n/T, (t+1)*n/T)), so each
 * thread streams its own part of memory and the split does not depend on the data. */
#include <omp.h>

#include "eltwise_impl.h"

typedef struct {
    const char *name;
    int isa;
    const elt_ker_t *ker;
} elt_impl_entry_t;

static const elt_impl_entry_t impls[] = {
    {"eltwise:avx512", BDNN_ISA_AVX512, &bdnn_elt_ker_avx512},
    {"eltwise:avx2", BDNN_ISA_AVX2, &bdnn_elt_ker_avx2},
    {"eltwise:scalar", BDNN_ISA_SCALAR, &bdnn_elt_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_elt_impl_count(void) { return N_IMPLS; }
const char *bdnn_elt_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_elt_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }

int bdnn_elt_supported(int alg, int backward) {
    if (alg < BDNN_ELT_ABS || alg > BDNN_ELT_TANH) return BDNN_STATUS_INVALID;
    if (backward && alg == BDNN_ELT_ROUND) return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

static int usable(int impl, int alg, int backward) {
    if (impl < 0 || impl >= N_IMPLS) return BDNN_STATUS_INVALID;
    if (!bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    return bdnn_elt_supported(alg, backward);
}

/* [*lo, *hi): the calling thread's chunk; the tail defect shortens it by one. */
static void chunk(int64_t n, int fault, int64_t *lo, int64_t *hi) {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
    if (fault == BDNN_ELT_FAULT_TAIL_DROPPED && *hi > *lo) --*hi;
}

int bdnn_elt_fwd(int impl, int alg, float alpha, float beta, const float *src, float *dst,
                 int64_t n, int fault) {
    const int st = usable(impl, alg, 0);
    if (st != BDNN_STATUS_OK) return st;
    const elt_ker_t *ker = impls[impl].ker;
#pragma omp parallel
    {
        int64_t lo, hi;
        chunk(n, fault, &lo, &hi);
        if (hi > lo) ker->fwd(alg, alpha, beta, src + lo, dst + lo, hi - lo);
    }
    return BDNN_STATUS_OK;
}

int bdnn_elt_bwd(int impl, int alg, int from_dst, float alpha, float beta, const float *x,
                 const float *diff_dst, float *diff_src, int64_t n, int fault) {
    const int st = usable(impl, alg, 1);
    if (st != BDNN_STATUS_OK) return st;
    const elt_ker_t *ker = impls[impl].ker;
#pragma omp parallel
    {
        int64_t lo, hi;
        chunk(n, fault, &lo, &hi);
        if (hi > lo)
            ker->bwd(alg, from_dst, alpha, beta, x + lo, diff_dst + lo, diff_src + lo, hi - lo);
    }
    return BDNN_STATUS_OK;
}
