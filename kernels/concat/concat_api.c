/* The concat implementation table and the public API of bdnn_concat.h.
 *
 * Registration lives here and only here: one row per ISA, in order of preference. Work
 * items are the (outer block, source) pairs, each one contiguous run of dst; thread t of
 * T owns items [t W / T, (t+1) W / T), so each element is written once, by one thread. */
#include <omp.h>

#include "concat_impl.h"
#include "dt.h"

typedef struct {
    const char *name;
    int isa;
    const concat_ker_t *ker;
} concat_impl_entry_t;

static const concat_impl_entry_t impls[] = {
    {"concat:avx512", BDNN_ISA_AVX512, &bdnn_concat_ker_avx512},
    {"concat:avx2", BDNN_ISA_AVX2, &bdnn_concat_ker_avx2},
    {"concat:scalar", BDNN_ISA_SCALAR, &bdnn_concat_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_concat_impl_count(void) { return N_IMPLS; }
const char *bdnn_concat_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_concat_impl_isa(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1;
}
int bdnn_concat_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? BDNN_OPERANDS_F32 : -1;   /* f32 inside */
}

/* The types concat takes here: every type the conversions hold but f64 and the 4-bit
 * ones (two to a byte). */
static int concat_type(int dt) {
    return dt != BDNN_DT_F64 && bdnn_dt_operands(dt) >= 0;
}

int bdnn_concat_status(int impl, int src_dt, int dst_dt) {
    if (impl < 0 || impl >= N_IMPLS || !bdnn_dt_bits(src_dt) || !bdnn_dt_bits(dst_dt))
        return BDNN_STATUS_INVALID;
    if (!concat_type(src_dt) || !concat_type(dst_dt) || !bdnn_isa_supported(impls[impl].isa))
        return BDNN_STATUS_UNIMPLEMENTED;
    const int f16 = src_dt == BDNN_DT_F16 || dst_dt == BDNN_DT_F16;
    if (f16 && impls[impl].isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c())
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

int bdnn_concat(int impl, int n_src, int src_dt, const void *const *srcs,
                const int64_t *axis_sizes, const float *scales, int dst_dt, void *dst,
                int64_t outer, int64_t inner, int fault) {
    const int st = bdnn_concat_status(impl, src_dt, dst_dt);
    if (st != BDNN_STATUS_OK) return st;
    if (n_src < 1 || outer < 0 || inner < 0) return BDNN_STATUS_INVALID;
    int64_t axis = 0;
    for (int s = 0; s < n_src; ++s) {
        if (axis_sizes[s] < 0) return BDNN_STATUS_INVALID;
        axis += axis_sizes[s];
    }
    const concat_ker_t *ker = impls[impl].ker;
    const int64_t in_sz = bdnn_dt_size(src_dt), out_sz = bdnn_dt_size(dst_dt);
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const int64_t items = outer * n_src;
    const int stream = dst_dt == BDNN_DT_F32
                       && outer * axis * inner * 4 >= BDNN_STREAM_OUT_MIN_BYTES;   /* dt.h */
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t w0 = items * t / nt, w1 = items * (t + 1) / nt;
        for (int64_t w = w0; w < w1; ++w) {               /* (outer block, source) */
            const int64_t o = w / n_src;
            const int s = (int)(w % n_src);
            int64_t before = 0;                           /* dst's axis steps before s */
            for (int k = 0; k < s; ++k) before += axis_sizes[k];
            if (fault == BDNN_CONCAT_FAULT_LAST_SHIFTED && s == n_src - 1 && before > 0)
                --before;
            const int64_t run = axis_sizes[s] * inner;
            const char *in = (const char *)srcs[s] + o * run * in_sz;
            char *out = (char *)dst + ((o * axis + before) * inner) * out_sz;
            ker->copy(src_dt, in, scales[s], dst_dt, out, run, truncate, stream);
        }
        if (stream) bdnn_stream_fence();
    }
    return BDNN_STATUS_OK;
}
