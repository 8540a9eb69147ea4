/* The softmax implementation table and the public API of bdnn_softmax.h.
 *
 * Registration lives here and only here: one row per compute type and ISA, in order of
 * preference. The work split is static: thread t of T owns the work items (lines, or tiles
 * of neighbouring lines: softmax_impl.h) [t W / T, (t+1) W / T), so the result does not
 * depend on the thread count. */
#include <omp.h>

#include "dt.h"
#include "post_chain.h"
#include "softmax_impl.h"

typedef struct {
    const char *name;
    int isa;
    int operands;      /* BDNN_OPERANDS_F32: computes in f32; _F64: in double */
    const smx_ker_t *ker;
} smx_impl_entry_t;

static const smx_impl_entry_t impls[] = {
    /* f32 compute for every pair of types without f64: widen a tile exactly, e^x by a
       polynomial that vectorizes (softmax_ker.inc), round on the store */
    {"softmax:avx512", BDNN_ISA_AVX512, BDNN_OPERANDS_F32, &bdnn_smx_ker_avx512},
    {"softmax:avx2", BDNN_ISA_AVX2, BDNN_OPERANDS_F32, &bdnn_smx_ker_avx2},
    {"softmax:scalar", BDNN_ISA_SCALAR, BDNN_OPERANDS_F32, &bdnn_smx_ker_scalar},
    /* double compute where either tensor is f64: libm's exp per element */
    {"softmax_f64:avx512", BDNN_ISA_AVX512, BDNN_OPERANDS_F64, &bdnn_smx_ker_avx512},
    {"softmax_f64:avx2", BDNN_ISA_AVX2, BDNN_OPERANDS_F64, &bdnn_smx_ker_avx2},
    {"softmax_f64:scalar", BDNN_ISA_SCALAR, BDNN_OPERANDS_F64, &bdnn_smx_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_smx_impl_count(void) { return N_IMPLS; }
const char *bdnn_smx_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_smx_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_smx_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].operands : -1;
}

/* The types softmax takes: the floats and the 8-bit integers (oneDNN's list). */
static int softmax_type(int dt) {
    switch (dt) {
    case BDNN_DT_F32: case BDNN_DT_BF16: case BDNN_DT_F16: case BDNN_DT_S8: case BDNN_DT_U8:
    case BDNN_DT_F8_E5M2: case BDNN_DT_F8_E4M3: case BDNN_DT_F64: return 1;
    default: return 0;
    }
}

int bdnn_smx_status(int impl, int src_dt, int dst_dt, int backward) {
    if (impl < 0 || impl >= N_IMPLS || !bdnn_dt_bits(src_dt) || !bdnn_dt_bits(dst_dt))
        return BDNN_STATUS_INVALID;
    const smx_impl_entry_t *row = &impls[impl];
    if (!softmax_type(src_dt) || !softmax_type(dst_dt) || !bdnn_isa_supported(row->isa))
        return BDNN_STATUS_UNIMPLEMENTED;
    const int f64 = src_dt == BDNN_DT_F64 || dst_dt == BDNN_DT_F64;
    if (row->operands != (f64 ? BDNN_OPERANDS_F64 : BDNN_OPERANDS_F32))
        return BDNN_STATUS_UNIMPLEMENTED;
    const int ints = bdnn_dt_operands(src_dt) == BDNN_OPERANDS_INT8
                     || bdnn_dt_operands(dst_dt) == BDNN_OPERANDS_INT8;
    if (backward && ints) return BDNN_STATUS_UNIMPLEMENTED;
    const int f16 = src_dt == BDNN_DT_F16 || dst_dt == BDNN_DT_F16;
    if (f16 && row->isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c()) return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

/* The job's work items (softmax_impl.h) and the run over them on every thread. */
static int64_t items(const smx_job_t *j) {
    return j->inner == 1 ? j->outer
                         : j->outer * ((j->inner + SMX_COLS - 1) / SMX_COLS);
}

static void run_all(smx_run_t run, const smx_job_t *j) {
    const int64_t w = items(j);
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t w0 = w * t / nt, w1 = w * (t + 1) / nt;
        if (w1 > w0) run(j, w0, w1);
    }
}

static int dims_ok(int64_t outer, int64_t axis, int64_t inner) {
    return outer >= 0 && axis >= 0 && inner >= 0;
}

int bdnn_smx_fwd(int impl, int alg, int src_dt, int dst_dt, float src_scale,
                 float dst_scale, const bdnn_dropout_t *dropout,
                 const bdnn_post_chain_t *po, const void *src, void *dst, int64_t outer,
                 int64_t axis, int64_t inner, int fault) {
    const int st = bdnn_smx_status(impl, src_dt, dst_dt, 0);
    if (st != BDNN_STATUS_OK) return st;
    if ((alg != BDNN_SOFTMAX_ACCURATE && alg != BDNN_SOFTMAX_LOG) || !dims_ok(outer, axis, inner)
            || !(dst_scale != 0.0f))
        return BDNN_STATUS_INVALID;
    const int po_st = bdnn_post_chain_status(po);
    if (po_st != BDNN_STATUS_OK) return po_st;
    if (po && po->n == 0) po = NULL;
    const int64_t n = outer * axis * inner;
    if (po && n % (po->c * po->d * po->h * po->w)) return BDNN_STATUS_INVALID;
    if (dropout && !(dropout->p >= 0.0f && dropout->p <= 1.0f)) return BDNN_STATUS_INVALID;
    const int f64 = impls[impl].operands == BDNN_OPERANDS_F64;
    if (f64 && (po || dropout)) return BDNN_STATUS_UNIMPLEMENTED;   /* f32 steps only */
    if (n == 0) return BDNN_STATUS_OK;
    const int stream = !f64 && dst_dt == BDNN_DT_F32 && n * 4 >= BDNN_STREAM_OUT_MIN_BYTES;
    const smx_job_t job = {alg, src_dt, dst_dt, src_scale, dst_scale, dropout, po, src, NULL,
                           dst, outer, axis, inner, fault, stream};
    run_all(f64 ? impls[impl].ker->fwd_f64 : impls[impl].ker->fwd_f32, &job);
    return BDNN_STATUS_OK;
}

int bdnn_smx_bwd(int impl, int alg, int src_dt, int dst_dt, const void *dst,
                 const void *diff_dst, void *diff_src, int64_t outer, int64_t axis,
                 int64_t inner, int fault) {
    const int st = bdnn_smx_status(impl, src_dt, dst_dt, 1);
    if (st != BDNN_STATUS_OK) return st;
    if ((alg != BDNN_SOFTMAX_ACCURATE && alg != BDNN_SOFTMAX_LOG) || !dims_ok(outer, axis, inner))
        return BDNN_STATUS_INVALID;
    if (outer * axis * inner == 0) return BDNN_STATUS_OK;
    const int f64 = impls[impl].operands == BDNN_OPERANDS_F64;
    const int stream = !f64 && src_dt == BDNN_DT_F32
                       && outer * axis * inner * 4 >= BDNN_STREAM_OUT_MIN_BYTES;
    const smx_job_t job = {alg, src_dt, dst_dt, 1.0f, 1.0f, NULL, NULL, dst, diff_dst,
                           diff_src, outer, axis, inner, fault, stream};
    run_all(f64 ? impls[impl].ker->bwd_f64 : impls[impl].ker->bwd_f32, &job);
    return BDNN_STATUS_OK;
}
