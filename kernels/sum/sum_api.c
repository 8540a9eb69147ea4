/* The sum implementation table and the public API of bdnn_sum.h.
 *
 * Registration lives here and only here: one row per ISA, in order of preference. The
 * work split is static and contiguous (thread t owns elements [t n / T, (t+1) n / T)),
 * and each element's terms are added in the sources' order, so the result does not
 * depend on the thread count. */
#include <omp.h>

#include "dt.h"
#include "sum_impl.h"

typedef struct {
    const char *name;
    int isa;
    const sum_ker_t *ker;
} sum_impl_entry_t;

static const sum_impl_entry_t impls[] = {
    {"sum:avx512", BDNN_ISA_AVX512, &bdnn_sum_ker_avx512},
    {"sum:avx2", BDNN_ISA_AVX2, &bdnn_sum_ker_avx2},
    {"sum:scalar", BDNN_ISA_SCALAR, &bdnn_sum_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_sum_impl_count(void) { return N_IMPLS; }
const char *bdnn_sum_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_sum_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_sum_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? BDNN_OPERANDS_F32 : -1;   /* f32 inside */
}

/* The types sum takes (oneDNN's): the 16- and 32-bit floats and the integers. */
static int sum_type(int dt) {
    switch (dt) {
    case BDNN_DT_F32: case BDNN_DT_BF16: case BDNN_DT_F16: case BDNN_DT_S32: case BDNN_DT_S8:
    case BDNN_DT_U8: return 1;
    default: return 0;
    }
}

int bdnn_sum_status(int impl, int n_src, const int *src_dts, int dst_dt) {
    if (impl < 0 || impl >= N_IMPLS || n_src < 1 || !bdnn_dt_bits(dst_dt))
        return BDNN_STATUS_INVALID;
    int f16 = dst_dt == BDNN_DT_F16, ok = sum_type(dst_dt);
    for (int s = 0; s < n_src; ++s) {
        if (!bdnn_dt_bits(src_dts[s])) return BDNN_STATUS_INVALID;
        ok &= sum_type(src_dts[s]);
        f16 |= src_dts[s] == BDNN_DT_F16;
    }
    if (!ok || !bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    if (f16 && impls[impl].isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c())
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

int bdnn_sum(int impl, int n_src, const int *src_dts, const void *const *srcs,
             const float *scales, int dst_dt, void *dst, int64_t n, int fault) {
    const int st = bdnn_sum_status(impl, n_src, src_dts, dst_dt);
    if (st != BDNN_STATUS_OK) return st;
    if (n < 0) return BDNN_STATUS_INVALID;
    const sum_ker_t *ker = impls[impl].ker;
    const int used = n_src - (fault == BDNN_SUM_FAULT_LAST_DROPPED && n_src > 1);
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const int stream = dst_dt == BDNN_DT_F32 && n * 4 >= BDNN_STREAM_OUT_MIN_BYTES;   /* dt.h */
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        if (hi > lo)
            ker->run(used, src_dts, srcs, scales, dst_dt, dst, lo, hi, truncate, stream);
    }
    return BDNN_STATUS_OK;
}
