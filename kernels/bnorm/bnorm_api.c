/* The batch normalization implementation table and the public API of bdnn_bnorm.h.
 *
 * Registration lives here and only here: one row per ISA, in order of preference. This
 * file owns the threading (OpenMP, static splits), the combination of the threads'
 * partial statistics and the per-channel coefficients between the reduction and the
 * elementwise pass; the loops are the ISA's (bnorm_ker.inc). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "dt.h"
#include "post_chain.h"
#include "bnorm_impl.h"

typedef struct {
    const char *name;
    int isa;
    const bn_ker_t *ker;
} bn_impl_entry_t;

static const bn_impl_entry_t impls[] = {
    {"bnorm:avx512", BDNN_ISA_AVX512, &bdnn_bn_ker_avx512},
    {"bnorm:avx2", BDNN_ISA_AVX2, &bdnn_bn_ker_avx2},
    {"bnorm:scalar", BDNN_ISA_SCALAR, &bdnn_bn_ker_scalar},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

int bdnn_bnorm_impl_count(void) { return N_IMPLS; }
const char *bdnn_bnorm_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_bnorm_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1; }
int bdnn_bnorm_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? BDNN_OPERANDS_F32 : -1;
}

int bdnn_bnorm_status(int impl, int dt, int backward) {
    if (impl < 0 || impl >= N_IMPLS || !bdnn_dt_bits(dt)) return BDNN_STATUS_INVALID;
    const bn_impl_entry_t *row = &impls[impl];
    if (!bdnn_isa_supported(row->isa)) return BDNN_STATUS_UNIMPLEMENTED;
    /* oneDNN's types: the floats both ways, s8 forward (no integer gradients) */
    if (dt != BDNN_DT_F32 && dt != BDNN_DT_BF16 && dt != BDNN_DT_F16 && dt != BDNN_DT_S8)
        return BDNN_STATUS_UNIMPLEMENTED;
    if (backward && dt == BDNN_DT_S8) return BDNN_STATUS_UNIMPLEMENTED;
    if (dt == BDNN_DT_F16 && row->isa == BDNN_ISA_AVX2 && !bdnn_cpu_f16c())
        return BDNN_STATUS_UNIMPLEMENTED;
    return BDNN_STATUS_OK;
}

static int desc_ok(const bdnn_bnorm_desc_t *d) {
    const unsigned all = BDNN_BNORM_GLOBAL_STATS | BDNN_BNORM_SCALE | BDNN_BNORM_SHIFT
                         | BDNN_BNORM_RELU | BDNN_BNORM_ADD_RELU;
    return d && !(d->flags & ~all) && d->outer >= 0 && d->channels >= 0 && d->inner >= 1
           && d->eps >= 0.0f;
}

/* Row tiles of a channels-last walk (bnorm_impl.h). */
static int64_t tiles(const bdnn_bnorm_desc_t *d) {
    const int64_t r = bn_rows(d->channels);
    return (d->outer + r - 1) / r;
}

/* Thread t's share [t W / T, (t+1) W / T) of W items. */
#define SHARE(W, lo, hi)                                                        \
    const int64_t t_ = omp_get_thread_num(), nt_ = omp_get_num_threads();      \
    const int64_t lo = (W) * t_ / nt_, hi = (W) * (t_ + 1) / nt_

/* Per-channel mean and variance into mean_out, var_out (f32, rounded from double).
 * Channels first: threads own channels. Channels last: threads own row tiles and keep
 * their own running statistics, joined in thread order (Chan's formula again). */
static int compute_stats(const bn_ker_t *ker, const bn_job_t *j, float *mean_out,
                         float *var_out) {
    const int64_t C = j->C, N = j->outer * j->inner;
    const int nt = omp_get_max_threads();
    const int parts = j->inner > 1 ? 1 : nt;
    double *mem = calloc((size_t)(3 * C * parts + parts), sizeof(double));
    if (!mem) return BDNN_STATUS_OUT_OF_MEMORY;
    double *counts = mem + 3 * C * parts;
    if (j->inner > 1) {
        bn_stats_t st = {0, mem, mem + C, mem + 2 * C};
#pragma omp parallel
        {
            SHARE(C, c0, c1);
            bn_stats_t own = st;
            if (c1 > c0) ker->stats_cf(j, c0, c1, &own);
        }
    } else {
        const int64_t W = (j->outer + bn_rows(C) - 1) / bn_rows(C);
#pragma omp parallel num_threads(nt)
        {
            SHARE(W, w0, w1);
            bn_stats_t own = {0, mem + 3 * C * t_, mem + 3 * C * t_ + C,
                              mem + 3 * C * t_ + 2 * C};
            if (w1 > w0) ker->stats_cl(j, w0, w1, &own);
            counts[t_] = own.n;
        }
        bn_stats_t all = {0, mem, mem + C, mem + 2 * C};
        all.n = counts[0];
        for (int p = 1; p < parts; ++p) {
            if (counts[p] == 0) continue;
            const double *s = mem + 3 * C * p, *q = s + 2 * C;
            for (int64_t c = 0; c < C; ++c) bn_stats_join(&all, c, counts[p], s[c], q[c]);
            all.n += counts[p];
        }
    }
    for (int64_t c = 0; c < C; ++c) {
        /* (the last channel stays 0 under the last-channel defect: its loops skip it) */
        mean_out[c] = (float)(mem[c] / (double)N);
        var_out[c] = (float)(mem[2 * C + c] / (double)N);
    }
    free(mem);
    return BDNN_STATUS_OK;
}

static void run_elementwise(const bn_job_t *j, void (*cf)(const bn_job_t *, int64_t, int64_t),
                            void (*cl)(const bn_job_t *, int64_t, int64_t)) {
    const int64_t W = j->inner > 1 ? j->outer * j->C
                                   : (j->outer + bn_rows(j->C) - 1) / bn_rows(j->C);
#pragma omp parallel
    {
        SHARE(W, w0, w1);
        if (w1 > w0) (j->inner > 1 ? cf : cl)(j, w0, w1);
    }
}

int bdnn_bnorm_fwd(int impl, const bdnn_bnorm_desc_t *d, const bdnn_post_chain_t *po,
                   const void *src, const void *src1, void *dst, float *mean,
                   float *variance, const float *scale, const float *shift, uint8_t *ws,
                   int fault) {
    if (!desc_ok(d)) return BDNN_STATUS_INVALID;
    const int st = bdnn_bnorm_status(impl, d->dt, 0);
    if (st != BDNN_STATUS_OK) return st;
    const unsigned f = d->flags;
    const int glob = !!(f & BDNN_BNORM_GLOBAL_STATS);
    if ((glob && (!mean || !variance)) || ((f & BDNN_BNORM_SCALE) && !scale)
            || ((f & BDNN_BNORM_SHIFT) && !shift) || ((f & BDNN_BNORM_ADD_RELU) && !src1)
            || !src || !dst)
        return BDNN_STATUS_INVALID;
    const int po_st = bdnn_post_chain_status(po);
    if (po_st != BDNN_STATUS_OK) return po_st;
    if (po && po->n == 0) po = NULL;
    const int64_t C = d->channels, n = d->outer * C * d->inner;
    if (po && n % (po->c * po->d * po->h * po->w)) return BDNN_STATUS_INVALID;
    if (n == 0) {       /* no points: statistics over nothing are 0 */
        for (int64_t c = 0; c < C && !glob; ++c) {
            if (mean) mean[c] = 0.0f;
            if (variance) variance[c] = 0.0f;
        }
        return BDNN_STATUS_OK;
    }
    const int relu = !!(f & (BDNN_BNORM_RELU | BDNN_BNORM_ADD_RELU));
    float *coef = malloc(sizeof(float) * (size_t)(4 * C));
    if (!coef) return BDNN_STATUS_OUT_OF_MEMORY;
    float *m = coef, *v = coef + C, *k1 = coef + 2 * C, *k2 = coef + 3 * C;
    bn_job_t job = {d->dt, f, d->outer, C, d->inner, po, src, src1, NULL, dst, NULL, NULL,
                    d->training && relu ? ws : NULL, NULL, NULL, NULL, NULL, fault};
    const bn_ker_t *ker = impls[impl].ker;
    if (glob) {
        for (int64_t c = 0; c < C; ++c) m[c] = mean[c], v[c] = variance[c];
    } else {
        const int s = compute_stats(ker, &job, m, v);
        if (s != BDNN_STATUS_OK) {
            free(coef);
            return s;
        }
        for (int64_t c = 0; c < C; ++c) {
            if (mean) mean[c] = m[c];
            if (variance) variance[c] = v[c];
        }
    }
    for (int64_t c = 0; c < C; ++c) {
        const double g = (f & BDNN_BNORM_SCALE) ? scale[c] : 1.0;
        k1[c] = (float)(g / sqrt((double)v[c] + (double)d->eps));
        k2[c] = (f & BDNN_BNORM_SHIFT) ? shift[c] : 0.0f;
    }
    job.mean = m, job.k1 = k1, job.k2 = k2;
    run_elementwise(&job, ker->fwd_cf, ker->fwd_cl);
    free(coef);
    return BDNN_STATUS_OK;
}

int bdnn_bnorm_bwd(int impl, const bdnn_bnorm_desc_t *d, const void *src,
                   const float *mean, const float *variance, const void *diff_dst,
                   const float *scale, const uint8_t *ws, void *diff_src, void *diff_src1,
                   float *diff_scale, float *diff_shift, int fault) {
    if (!desc_ok(d)) return BDNN_STATUS_INVALID;
    const int st = bdnn_bnorm_status(impl, d->dt, 1);
    if (st != BDNN_STATUS_OK) return st;
    const unsigned f = d->flags;
    const int relu = !!(f & (BDNN_BNORM_RELU | BDNN_BNORM_ADD_RELU));
    if (!src || !mean || !variance || !diff_dst || !diff_src || (relu && !ws)
            || ((f & BDNN_BNORM_SCALE) && !scale)
            || ((f & BDNN_BNORM_ADD_RELU) && !diff_src1))
        return BDNN_STATUS_INVALID;
    const int64_t C = d->channels, N = d->outer * d->inner;
    if (N * C == 0) {   /* no points: sums over nothing are 0 */
        for (int64_t c = 0; c < C; ++c) {
            if (diff_scale) diff_scale[c] = 0.0f;
            if (diff_shift) diff_shift[c] = 0.0f;
        }
        return BDNN_STATUS_OK;
    }
    const int glob = !!(f & BDNN_BNORM_GLOBAL_STATS);
    const int nt = omp_get_max_threads();
    const int parts = d->inner > 1 ? 1 : nt;
    double *sums = calloc((size_t)(2 * C * parts), sizeof(double));
    float *coef = malloc(sizeof(float) * (size_t)(3 * C));
    if (!sums || !coef) {
        free(sums);
        free(coef);
        return BDNN_STATUS_OUT_OF_MEMORY;
    }
    bn_job_t job = {d->dt, f, d->outer, C, d->inner, NULL, src, NULL, diff_dst, diff_src,
                    diff_src1, relu ? ws : NULL, NULL, mean, NULL, NULL, NULL, fault};
    const bn_ker_t *ker = impls[impl].ker;
    double *db = sums, *dg = sums + C;
    if (!glob || diff_scale || diff_shift) {
        if (d->inner > 1) {
#pragma omp parallel
            {
                SHARE(C, c0, c1);
                if (c1 > c0) ker->red_cf(&job, c0, c1, db, dg);
            }
        } else {
            const int64_t W = tiles(d);
#pragma omp parallel num_threads(nt)
            {
                SHARE(W, w0, w1);
                if (w1 > w0) ker->red_cl(&job, w0, w1, sums + 2 * C * t_, sums + 2 * C * t_ + C);
            }
            for (int p = 1; p < parts; ++p)
                for (int64_t c = 0; c < 2 * C; ++c) sums[c] += sums[2 * C * p + c];
        }
    }
    float *k1 = coef, *k2 = coef + C, *k3 = coef + 2 * C;
    for (int64_t c = 0; c < C; ++c) {
        const double r = 1.0 / sqrt((double)variance[c] + (double)d->eps);
        const double g = (f & BDNN_BNORM_SCALE) ? scale[c] : 1.0;
        const double dgamma = dg[c] * r, dbeta = db[c];
        if (diff_scale) diff_scale[c] = (float)dgamma;
        if (diff_shift) diff_shift[c] = (float)dbeta;
        k1[c] = (float)(g * r);
        k2[c] = glob ? 0.0f : (float)(dbeta / (double)N);
        k3[c] = glob ? 0.0f : (float)(r * dgamma / (double)N);
    }
    job.k1 = k1, job.k2 = k2, job.k3 = k3;
    run_elementwise(&job, ker->bwd_cf, ker->bwd_cl);
    free(sums);
    free(coef);
    return BDNN_STATUS_OK;
}
