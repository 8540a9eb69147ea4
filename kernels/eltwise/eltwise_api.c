/* The eltwise implementation table and the public API of bdnn_eltwise.h.
 *
 * Registration lives here and only here: one row per operand class and ISA, in order of
 * preference. The work split is static and contiguous (thread t owns elements
 * [t*n/T, (t+1)*n/T)), so each thread streams its own part of memory and the split does
 * not depend on the data. f32 and f64 run on the buffers themselves; the other types go
 * through the f32 kernels one tile at a time: widen a tile into a stack buffer, compute in
 * f32, round it into the output. Dropout and post-ops apply a tile at a time, while the
 * tile is in cache. */
#include <omp.h>

#include "dropout.h"
#include "dt.h"
#include "post_chain.h"
#include "eltwise_impl.h"

typedef struct {
    const char *name;
    int isa;
    int operands;      /* BDNN_OPERANDS_*: which data types the row takes */
    const elt_ker_t *ker;
} elt_impl_entry_t;

#define F32 BDNN_OPERANDS_F32
#define BF16 BDNN_OPERANDS_BF16
#define F16 BDNN_OPERANDS_F16
#define INT BDNN_OPERANDS_INT8
#define F8 BDNN_OPERANDS_F8
#define F64 BDNN_OPERANDS_F64
static const elt_impl_entry_t impls[] = {
    {"eltwise:avx512", BDNN_ISA_AVX512, F32, &bdnn_elt_ker_avx512},
    {"eltwise:avx2", BDNN_ISA_AVX2, F32, &bdnn_elt_ker_avx2},
    {"eltwise:scalar", BDNN_ISA_SCALAR, F32, &bdnn_elt_ker_scalar},
    /* bf16: widening is a shift, rounding a branch-free integer sequence; both vectorize */
    {"eltwise_bf16:avx512", BDNN_ISA_AVX512, BF16, &bdnn_elt_ker_avx512},
    {"eltwise_bf16:avx2", BDNN_ISA_AVX2, BF16, &bdnn_elt_ker_avx2},
    {"eltwise_bf16:scalar", BDNN_ISA_SCALAR, BF16, &bdnn_elt_ker_scalar},
    /* f16: vcvtph2ps / vcvtps2ph (AVX-512, or F16C next to AVX2) */
    {"eltwise_f16:avx512", BDNN_ISA_AVX512, F16, &bdnn_elt_ker_avx512},
    {"eltwise_f16:avx2", BDNN_ISA_AVX2, F16, &bdnn_elt_ker_avx2},
    {"eltwise_f16:scalar", BDNN_ISA_SCALAR, F16, &bdnn_elt_ker_scalar},
    /* s8, u8, s32 (forward only): saturating, round-to-nearest-even stores */
    {"eltwise_int8:avx512", BDNN_ISA_AVX512, INT, &bdnn_elt_ker_avx512},
    {"eltwise_int8:avx2", BDNN_ISA_AVX2, INT, &bdnn_elt_ker_avx2},
    {"eltwise_int8:scalar", BDNN_ISA_SCALAR, INT, &bdnn_elt_ker_scalar},
    /* f8_e5m2, f8_e4m3: widened and narrowed a byte at a time through f16 (dt.h) */
    {"eltwise_f8:avx512", BDNN_ISA_AVX512, F8, &bdnn_elt_ker_avx512},
    {"eltwise_f8:avx2", BDNN_ISA_AVX2, F8, &bdnn_elt_ker_avx2},
    {"eltwise_f8:scalar", BDNN_ISA_SCALAR, F8, &bdnn_elt_ker_scalar},
    /* f64: the algorithm loops instantiated for double, on the buffers themselves */
    {"eltwise_f64:avx512", BDNN_ISA_AVX512, F64, &bdnn_elt_ker_avx512},
    {"eltwise_f64:avx2", BDNN_ISA_AVX2, F64, &bdnn_elt_ker_avx2},
    {"eltwise_f64:scalar", BDNN_ISA_SCALAR, F64, &bdnn_elt_ker_scalar},
};
#undef F32
#undef BF16
#undef F16
#undef INT
#undef F8
#undef F64
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

/* Elements per tile of the typed path: three f32 tiles (x, diff_dst, diff_src) stay in L1. */
enum { TILE = 1024 };

int bdnn_elt_impl_count(void) { return N_IMPLS; }
const char *bdnn_elt_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_elt_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_elt_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].operands : -1;
}

int bdnn_elt_supported(int alg, int backward) {
    if (alg < BDNN_ELT_ABS || alg > BDNN_ELT_TANH) return BDNN_STATUS_INVALID;
    if (backward && alg == BDNN_ELT_ROUND) return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

static int usable(int impl, int alg, int dt, int backward) {
    if (impl < 0 || impl >= N_IMPLS) return BDNN_STATUS_INVALID;
    const int st = bdnn_typed_row_status(impls[impl].isa, impls[impl].operands, dt, backward);
    return st != BDNN_STATUS_OK ? st : bdnn_elt_supported(alg, backward);
}

/* [*lo, *hi): the calling thread's chunk; the tail defect shortens it by one. */
static void chunk(int64_t n, int fault, int64_t *lo, int64_t *hi) {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
    if (fault == BDNN_ELT_FAULT_TAIL_DROPPED && *hi > *lo) --*hi;
}

static const char *at(const void *p, int dt, int64_t i) {
    return (const char *)p + i * (int64_t)bdnn_dt_size(dt);
}

int bdnn_elt_fwd(int impl, int alg, int dt, float alpha, float beta,
                 const bdnn_dropout_t *dropout, const bdnn_post_chain_t *po,
                 const void *src, void *dst, int64_t n, int fault) {
    const int st = usable(impl, alg, dt, 0);
    if (st != BDNN_STATUS_OK) return st;
    const int po_st = bdnn_post_chain_status(po);
    if (po_st != BDNN_STATUS_OK) return po_st;
    if (po && po->n == 0) po = NULL;
    if (po && n % (po->c * po->d * po->h * po->w)) return BDNN_STATUS_INVALID;
    if (po && dt == BDNN_DT_F64) return BDNN_STATUS_UNIMPLEMENTED;   /* f32 entries only */
    if (dropout && !(dropout->p >= 0.0f && dropout->p <= 1.0f)) return BDNN_STATUS_INVALID;
    const elt_ker_t *ker = impls[impl].ker;
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
    const int word0 = fault == BDNN_ELT_FAULT_DROPOUT_WORD0;
    /* the plain types in one pass over the chunk unless a tile step follows */
    const int tiled = po || dropout;
#pragma omp parallel
    {
        int64_t lo, hi;
        chunk(n, fault, &lo, &hi);
        if (dt == BDNN_DT_F64) {
            for (int64_t i = lo; i < hi; i += tiled ? TILE : hi - lo) {
                const int64_t m = !tiled || hi - i < TILE ? hi - i : TILE;
                double *out = (double *)dst + i;
                ker->fwd_f64(alg, alpha, beta, (const double *)src + i, out, m);
                if (dropout) bdnn_dropout_f64(dropout, out, i, m, word0);
            }
        } else if (dt == BDNN_DT_F32) {
            for (int64_t i = lo; i < hi; i += tiled ? TILE : hi - lo) {
                const int64_t m = !tiled || hi - i < TILE ? hi - i : TILE;
                float *out = (float *)dst + i;
                ker->fwd(alg, alpha, beta, (const float *)src + i, out, m);
                if (dropout) bdnn_dropout_f32(dropout, out, i, m, word0);
                if (po) bdnn_post_chain_run(po, out, i, m, fault);
            }
        } else {
            float buf[TILE];
            for (int64_t i = lo; i < hi; i += TILE) {
                const int64_t m = hi - i < TILE ? hi - i : TILE;
                ker->to_f32(dt, at(src, dt, i), buf, m);
                ker->fwd(alg, alpha, beta, buf, buf, m);
                if (dropout) bdnn_dropout_f32(dropout, buf, i, m, word0);
                if (po) bdnn_post_chain_run(po, buf, i, m, fault);
                ker->from_f32(dt, buf, (char *)at(dst, dt, i), m, truncate);
            }
        }
    }
    return BDNN_STATUS_OK;
}

int bdnn_elt_bwd(int impl, int alg, int from_dst, int dt, float alpha, float beta,
                 const void *x, const void *diff_dst, void *diff_src, int64_t n, int fault) {
    const int st = usable(impl, alg, dt, 1);
    if (st != BDNN_STATUS_OK) return st;
    const elt_ker_t *ker = impls[impl].ker;
    const int truncate = fault == BDNN_FAULT_TRUNCATE_DST;
#pragma omp parallel
    {
        int64_t lo, hi;
        chunk(n, fault, &lo, &hi);
        if (dt == BDNN_DT_F64) {
            if (hi > lo)
                ker->bwd_f64(alg, from_dst, alpha, beta, (const double *)x + lo,
                             (const double *)diff_dst + lo, (double *)diff_src + lo, hi - lo);
        } else if (dt == BDNN_DT_F32) {
            if (hi > lo)
                ker->bwd(alg, from_dst, alpha, beta, (const float *)x + lo,
                         (const float *)diff_dst + lo, (float *)diff_src + lo, hi - lo);
        } else {
            float xb[TILE], db[TILE];
            for (int64_t i = lo; i < hi; i += TILE) {
                const int64_t m = hi - i < TILE ? hi - i : TILE;
                ker->to_f32(dt, at(x, dt, i), xb, m);
                ker->to_f32(dt, at(diff_dst, dt, i), db, m);
                ker->bwd(alg, from_dst, alpha, beta, xb, db, db, m);
                ker->from_f32(dt, db, (char *)at(diff_src, dt, i), m, truncate);
            }
        }
    }
    return BDNN_STATUS_OK;
}
