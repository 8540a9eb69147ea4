/* The binary implementation table and the public API of bdnn_binary.h.
 *
 * Registration lives here and only here: one row per ISA, in order of preference. Before
 * the kernels run, the dims are simplified without changing any element's place: size-1
 * dims are dropped (no operand moves along them), and a dim merges into the one outside
 * it wherever every operand's stride there is its inner stride times the inner size (both
 * dense, or both broadcast), so that a dense or per-channel operand reads long runs. The
 * work split is static and contiguous (thread t owns dst elements [t n / T, (t+1) n / T));
 * each element is computed alone, so the result does not depend on the thread count. */
#include <omp.h>

#include "dt.h"
#include "post_chain.h"
#include "binary_impl.h"

typedef struct {
    const char *name;
    int isa;
    const binary_ker_t *ker;
} binary_impl_entry_t;

static const binary_impl_entry_t impls[] = {
    {"binary:avx512", BDNN_ISA_AVX512, &bdnn_binary_ker_avx512},
    {"binary:avx2", BDNN_ISA_AVX2, &bdnn_binary_ker_avx2},
    {"binary:scalar", BDNN_ISA_SCALAR, &bdnn_binary_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_binary_impl_count(void) { return N_IMPLS; }
const char *bdnn_binary_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_binary_impl_isa(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1;
}
int bdnn_binary_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? BDNN_OPERANDS_F32 : -1;   /* f32 inside */
}

/* The types binary takes (oneDNN's CPU set): the 16- and 32-bit floats and the integers. */
static int binary_type(int dt) {
    switch (dt) {
    case BDNN_DT_F32: case BDNN_DT_BF16: case BDNN_DT_F16: case BDNN_DT_S32: case BDNN_DT_S8:
    case BDNN_DT_U8: return 1;
    default: return 0;
    }
}

int bdnn_binary_status(int impl, const bdnn_binary_desc_t *d, const bdnn_post_chain_t *po) {
    if (impl < 0 || impl >= N_IMPLS || !d) return BDNN_STATUS_INVALID;
    if (d->alg < BDNN_BIN_ADD || d->alg > BDNN_BINARY_SELECT) return BDNN_STATUS_INVALID;
    if (d->ndims < 1 || d->ndims > BDNN_BINARY_MAX_NDIMS) return BDNN_STATUS_INVALID;
    for (int j = 0; j < d->ndims; ++j)
        if (d->dims[j] < 0 || d->src0_strides[j] < 0 || d->src1_strides[j] < 0)
            return BDNN_STATUS_INVALID;
    const int dts[3] = {d->src0_dt, d->src1_dt, d->dst_dt};
    int ok = 1, f16 = 0;
    for (int i = 0; i < 3; ++i) {
        if (!bdnn_dt_bits(dts[i])) return BDNN_STATUS_INVALID;
        ok &= binary_type(dts[i]);
        f16 |= dts[i] == BDNN_DT_F16;
    }
    const int po_st = bdnn_post_chain_status_sum(po);
    if (po_st != BDNN_STATUS_OK) return po_st;
    if (!ok || !bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    if (f16 && impls[impl].isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c())
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

/* d's dims without size-1 dims, mergeable neighbours merged (at least one dim kept). */
static void simplify(const bdnn_binary_desc_t *d, bdnn_binary_desc_t *out) {
    *out = *d;
    int n = 0;
    for (int j = 0; j < d->ndims; ++j) {
        if (d->dims[j] == 1) continue;
        if (n > 0 && d->src0_strides[j] * d->dims[j] == out->src0_strides[n - 1]
                && d->src1_strides[j] * d->dims[j] == out->src1_strides[n - 1]) {
            out->dims[n - 1] *= d->dims[j];          /* j joins the dim outside it */
            out->src0_strides[n - 1] = d->src0_strides[j];
            out->src1_strides[n - 1] = d->src1_strides[j];
            continue;
        }
        out->dims[n] = d->dims[j];
        out->src0_strides[n] = d->src0_strides[j];
        out->src1_strides[n] = d->src1_strides[j];
        ++n;
    }
    if (n == 0) {                                    /* one element */
        out->dims[0] = 1;
        out->src0_strides[0] = out->src1_strides[0] = 0;
        n = 1;
    }
    out->ndims = n;
}

int bdnn_binary(int impl, const bdnn_binary_desc_t *d, const bdnn_post_chain_t *po,
                const void *src0, const void *src1, const void *src2, void *dst, int fault) {
    const int st = bdnn_binary_status(impl, d, po);
    if (st != BDNN_STATUS_OK) return st;
    if (d->alg == BDNN_BINARY_SELECT && !src2) return BDNN_STATUS_INVALID;
    bdnn_binary_desc_t s;
    simplify(d, &s);
    if (fault == BDNN_BINARY_FAULT_SRC1_INNER_FIXED) s.src1_strides[s.ndims - 1] = 0;
    int64_t n = 1;
    for (int j = 0; j < s.ndims; ++j) n *= s.dims[j];
    if (n == 0) return BDNN_STATUS_OK;
    if (po && po->n == 0) po = NULL;
    if (po && n % (po->c * po->d * po->h * po->w)) return BDNN_STATUS_INVALID;
    int prior_dt = -1;                   /* every sum entry must read dst as one type */
    for (int i = 0; po && i < po->n; ++i) {
        if (po->ops[i].kind != BDNN_POST_SUM) continue;
        const int dt = po->ops[i].sum_dt >= 0 ? po->ops[i].sum_dt : d->dst_dt;
        if (bdnn_dt_size(dt) != bdnn_dt_size(d->dst_dt) || (prior_dt >= 0 && dt != prior_dt))
            return BDNN_STATUS_INVALID;
        prior_dt = dt;
    }
    const binary_ker_t *ker = impls[impl].ker;
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const int stream = d->dst_dt == BDNN_DT_F32 && prior_dt < 0
                       && n * 4 >= BDNN_STREAM_OUT_MIN_BYTES;   /* dt.h */
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        if (hi > lo)
            ker->run(&s, po, prior_dt, src0, src1, src2, dst, lo, hi, fault, truncate, stream);
    }
    return BDNN_STATUS_OK;
}
