/* The reorder implementation table and the public API of bdnn_reorder.h (the contract is
 * there).
 *
 * Registration lives here and only here: one row per ISA, in order of preference. A job
 * runs in one of three shapes, picked from its two innermost loops:
 *   - run:   the innermost loop is the unit of work (contiguous in both tensors when the
 *            layouts agree there: memcpy or a bulk conversion; else strided elements);
 *   - tile:  the innermost loop is contiguous in dst and the next one in src (a
 *            transposition, e.g. nchw -> nhwc or nchw -> nChw16c): 64 x 64 tiles (taller
 *            for 4-byte bit copies), every element through the ISA's register
 *            transposes (narrow types widened to 4 bytes, conversions in f32);
 *   - zero:  padding, written as zeros.
 * Work is split statically over (outer point, chunk or tile) so every thread streams its
 * own part of memory and the split does not depend on the data. */
#pragma GCC optimize("fp-contract=off")   /* each f32 step rounds on its own (contract) */
#include <omp.h>
#include <string.h>

#include "dt.h"
#include "reorder_impl.h"

typedef struct {
    const char *name;
    int isa;
    const reorder_ker_t *ker;   /* NULL: the generic route (generic_job) */
} reorder_impl_entry_t;

/* The ISA rows run the fast paths below for the core's six types with common scales and a
 * sum; the generic row, last, runs everything else a point at a time (zero points,
 * per-point scales, the 8- and 4-bit types: what oneDNN, too, runs in reference code). */
static const reorder_impl_entry_t impls[] = {
    {"reorder:avx512", BDNN_ISA_AVX512, &bdnn_reorder_ker_avx512},
    {"reorder:avx2", BDNN_ISA_AVX2, &bdnn_reorder_ker_avx2},
    {"reorder:scalar", BDNN_ISA_SCALAR, &bdnn_reorder_ker_scalar},
    {"reorder_generic:scalar", BDNN_ISA_SCALAR, NULL},
};
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };
enum { RUN_CHUNK = 4096, CVT_CHUNK = 256 };
/* Tiles are TILE_Y tall; the paths through L1 tiles (1-byte bit copies, f16, sum) cut
 * them to TILE_AREA elements (16 KiB of 4-byte ones: two fit in L1 with the lines in
 * flight). 512 measured best among 64, 128, 256, 512, 1024, 2048 (bf16 nchw -> nhwc). */
enum { SHORT_RUN_BYTES = 64, TILE_AREA = 4096, TILE_Y = 512 };
/* The loop swap below: for at most SWAP_MAX runs moving SWAP_MIN_BYTES or more together
 * (a smaller batch costs more in bookkeeping than its order saves: nChw16c -> nChw8c). */
enum { SWAP_MAX = 16, SWAP_MIN_BYTES = 512 };
/* A job moving fewer bytes than this runs on the calling thread: waking the team costs
 * more than the copy (on a loaded machine a fork/join can take milliseconds, while 64 KiB
 * copy in microseconds), and a convolution's reorder route runs several small jobs. */
enum { PARALLEL_MIN_BYTES = 64 * 1024 };

int bdnn_reorder_impl_count(void) { return N_IMPLS; }
const char *bdnn_reorder_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].name : NULL;
}
int bdnn_reorder_impl_isa(int impl) {
    return impl >= 0 && impl < N_IMPLS ? impls[impl].isa : -1;
}

typedef struct {
    const bdnn_reorder_attr_t *attr;
    const reorder_ker_t *ker;
    size_t ssz, dsz;     /* element sizes */
    int bitwise;         /* same type, no scale, no sum: copy bits */
    int fault;
    int stream;          /* this job's dst is large: ask the kernels for non-temporal stores */
} ctx_t;

/* -- element runs ---------------------------------------------------------------------- */

static void load_run(const ctx_t *c, int dt, const char *p, int64_t stride, int64_t n,
                     float *out) {
    if (stride == 1) { c->ker->to_f32(dt, p, out, n); return; }
    for (int64_t i = 0; i < n; ++i) out[i] = bdnn_load_f32(p, dt, i * stride);
}

static void store_run(const ctx_t *c, int dt, const float *in, char *p, int64_t stride,
                      int64_t n) {
    if (stride == 1) { c->ker->from_f32(dt, in, p, n, 0); return; }
    for (int64_t i = 0; i < n; ++i) bdnn_store_f32(p, dt, i * stride, in[i]);
}

/* v = (v * src_scale + sum_scale * prior) / dst_scale, one rounding per step. */
static void apply_attr(const bdnn_reorder_attr_t *a, float *v, const float *prior, int64_t n) {
    if (a->src_scale != 1.0f)
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] * a->src_scale;
    if (a->sum) {
        const float beta = a->sum_scale;
        for (int64_t i = 0; i < n; ++i) {
            const float t = beta * prior[i];
            v[i] = v[i] + t;
        }
    }
    if (a->dst_scale != 1.0f)
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] / a->dst_scale;
}

static void copy_bits(const char *s, int64_t ss, char *d, int64_t ds, int64_t n, size_t sz) {
    if (ss == 1 && ds == 1 && sz == 4 && n <= 64) {   /* short runs: no library call */
        for (int64_t i = 0; i < n; ++i) ((uint32_t *)d)[i] = ((const uint32_t *)s)[i];
        return;
    }
    if (ss == 1 && ds == 1) { memcpy(d, s, (size_t)n * sz); return; }
    switch (sz) {
    case 4: for (int64_t i = 0; i < n; ++i)
                ((uint32_t *)d)[i * ds] = ((const uint32_t *)s)[i * ss];
            break;
    case 2: for (int64_t i = 0; i < n; ++i)
                ((uint16_t *)d)[i * ds] = ((const uint16_t *)s)[i * ss];
            break;
    default: for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss]; break;
    }
}

static void zero_run(const ctx_t *c, char *d, int64_t ds, int64_t n) {
    const int dt = c->attr->dst_dt;
    if (c->fault == BDNN_REORDER_FAULT_PADDING_GARBAGE) {
        for (int64_t i = 0; i < n; ++i) bdnn_store_f32(d, dt, i * ds, 1.0f);
        return;
    }
    if (ds == 1) { memset(d, 0, (size_t)n * c->dsz); return; }
    for (int64_t i = 0; i < n; ++i) memset(d + i * ds * (int64_t)c->dsz, 0, c->dsz);
}

/* n points of src at stride ss into dst at stride ds (pointers at the first point). */
static void convert_run(const ctx_t *c, const char *s, int64_t ss, char *d, int64_t ds,
                        int64_t n) {
    if (c->bitwise) { copy_bits(s, ss, d, ds, n, c->ssz); return; }
    const bdnn_reorder_attr_t *a = c->attr;
    const int identity = a->src_scale == 1.0f && a->dst_scale == 1.0f && !a->sum;
    if (identity && ss == 1 && ds == 1 && a->src_dt == BDNN_DT_F32) {   /* one pass */
        /* streamed only when every run is whole lines (not 16-byte s8 runs, say) */
        c->ker->from_f32(a->dst_dt, (const float *)s, d, n,
                         c->stream && n * (int64_t)c->dsz % 64 == 0);
        return;
    }
    if (identity && ss == 1 && ds == 1 && a->dst_dt == BDNN_DT_F32) {
        c->ker->to_f32(a->src_dt, s, (float *)d, n);
        return;
    }
    float v[CVT_CHUNK], prior[CVT_CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CVT_CHUNK) {
        const int64_t m = n - i0 < CVT_CHUNK ? n - i0 : CVT_CHUNK;
        const char *sp = s + i0 * ss * (int64_t)c->ssz;
        char *dp = d + i0 * ds * (int64_t)c->dsz;
        load_run(c, a->src_dt, sp, ss, m, v);
        if (a->sum) load_run(c, a->dst_dt, dp, ds, m, prior);
        apply_attr(a, v, prior, m);
        store_run(c, a->dst_dt, v, dp, ds, m);
    }
}

/* A tile: dst(y, x) at d + y*dy + x (x contiguous), src(y, x) at s + y + x*sx. Every
 * element passes through the kernel's register transposes: 4- and 2-byte bit copies and
 * conversions without a sum or f16 directly (tr4, tr2, trc: loaded, transposed, scaled
 * and converted in registers). The rest goes through L1 tiles of at most TILE_AREA
 * elements: 1-byte bit copies widened to 4 bytes a src line at a time and narrowed a dst
 * line at a time; f16 and sums to f32 per src line, transposed into a dense f32 tile,
 * then the attribute and the store per dst line, or once for the whole tile when its dst
 * rows follow each other (nChw16c: one run). Streaming (c->stream) is asked for only
 * where whole lines get written. */
static void convert_tile(const ctx_t *c, const char *s, int64_t sx, char *d, int64_t dy,
                         int64_t ny, int64_t nx) {
    const reorder_ker_t *k = c->ker;
    if (c->bitwise && c->ssz == 4) {
        k->tr4((const uint32_t *)s, sx, (uint32_t *)d, dy, ny, nx, c->stream);
        return;
    }
    if (c->bitwise && c->ssz == 2) {
        k->tr2((const uint16_t *)s, sx, (uint16_t *)d, dy, ny, nx, c->stream);
        return;
    }
    const bdnn_reorder_attr_t *a = c->attr;
    if (!c->bitwise && !a->sum && a->src_dt != BDNN_DT_F16 && a->dst_dt != BDNN_DT_F16) {
        k->trc(a->src_dt, a->dst_dt, s, sx, d, dy, ny, nx, a->src_scale, a->dst_scale,
               c->stream);
        return;
    }
    /* Through L1 tiles of at most TILE_AREA elements (taller tiles are cut). */
    if (ny * nx > TILE_AREA) {
        const int64_t h = TILE_AREA / nx;
        for (int64_t y0 = 0; y0 < ny; y0 += h)
            convert_tile(c, s + y0 * (int64_t)c->ssz, sx, d + y0 * dy * (int64_t)c->dsz, dy,
                         ny - y0 < h ? ny - y0 : h, nx);
        return;
    }
    const int64_t ssz = (int64_t)c->ssz, dsz = (int64_t)c->dsz;
    /* whole lines: rows of whole 64-byte lines, or rows that follow each other */
    const int dense = dy == nx;
    const int stream = c->stream && (dense || (nx * dsz % 64 == 0 && dy * dsz % 64 == 0));
    uint32_t in[TILE_AREA], out[TILE_AREA];   /* in: x lines of ny; out: y rows of nx */
    if (c->bitwise) {
        for (int64_t x = 0; x < nx; ++x) k->widen(c->ssz, s + x * sx * ssz, in + x * ny, ny);
        k->tr4(in, ny, out, nx, ny, nx, 0);
        if (dense) { k->narrow(c->dsz, out, d, ny * nx, stream); return; }
        for (int64_t y = 0; y < ny; ++y)
            k->narrow(c->dsz, out + y * nx, d + y * dy * dsz, nx, stream);
        return;
    }
    const int identity = a->src_scale == 1.0f && a->dst_scale == 1.0f && !a->sum;
    if (a->src_dt != BDNN_DT_F32) {
        for (int64_t x = 0; x < nx; ++x)      /* src lines: y runs */
            k->to_f32(a->src_dt, s + x * sx * ssz, (float *)(in + x * ny), ny);
        if (identity && a->dst_dt == BDNN_DT_F32) {   /* the f32 values are the result */
            k->tr4(in, ny, (uint32_t *)d, dy, ny, nx, c->stream);
            return;
        }
        k->tr4(in, ny, out, nx, ny, nx, 0);
    } else {                                  /* f32 bits, moved as they are */
        k->tr4((const uint32_t *)s, sx, out, nx, ny, nx, 0);
    }
    if (!a->sum) {                            /* no prior: the tile at once */
        apply_attr(a, (float *)out, NULL, ny * nx);
        if (dense) { k->from_f32(a->dst_dt, (const float *)out, d, ny * nx, stream); return; }
        for (int64_t y = 0; y < ny; ++y)
            k->from_f32(a->dst_dt, (const float *)(out + y * nx), d + y * dy * dsz, nx, stream);
        return;
    }
    float prior[REORDER_TILE];
    for (int64_t y = 0; y < ny; ++y) {        /* dst lines: x runs */
        float *row = (float *)(out + y * nx);
        char *dp = d + y * dy * dsz;
        k->to_f32(a->dst_dt, dp, prior, nx);
        apply_attr(a, row, prior, nx);
        k->from_f32(a->dst_dt, row, dp, nx, 0);
    }
}

/* -- jobs -------------------------------------------------------------------------------- */

/* The defect that ignores non-dense strides: dst strides recomputed as if dst were dense
 * in the order of its strides. */
static void densify_dst(bdnn_reorder_job_t *j) {
    int order[BDNN_REORDER_MAX_LOOPS];
    for (int k = 0; k < j->nloops; ++k) order[k] = k;
    for (int a = 1; a < j->nloops; ++a)      /* insertion sort, smallest stride first */
        for (int b = a; b > 0 && j->dst_stride[order[b]] < j->dst_stride[order[b - 1]]; --b) {
            const int t = order[b]; order[b] = order[b - 1]; order[b - 1] = t;
        }
    int64_t stride = 1;
    for (int k = 0; k < j->nloops; ++k) {
        j->dst_stride[order[k]] = stride;
        stride *= j->n[order[k]];
    }
}

static void run_job(const ctx_t *c, const bdnn_reorder_job_t *job_in, const char *src,
                    char *dst) {
    bdnn_reorder_job_t job = *job_in;
    if (job.nloops == 0) {                    /* a single point */
        job.nloops = 1;
        job.n[0] = 1;
        job.src_stride[0] = job.dst_stride[0] = 1;
    }
    if (c->fault == BDNN_REORDER_FAULT_DENSE_DST) densify_dst(&job);
    const int L = job.nloops;
    /* Short runs whose neighbours along a small third loop sit next to each other in one
     * tensor (nChw16c -> nhwc: the 16 channel blocks of a pixel fill 1 KiB of dst): that
     * loop goes inside the batch, so the adjacent side is read or written in order and the
     * other side is a few streams advancing together (any loop order copies the same
     * points). */
    if (!job.zero && L >= 3 && job.n[L - 1] * (int64_t)c->dsz <= SHORT_RUN_BYTES
        && job.n[L - 3] <= SWAP_MAX && job.n[L - 2] > job.n[L - 3]
        && job.n[L - 3] * job.n[L - 1] * (int64_t)c->dsz >= SWAP_MIN_BYTES
        && ((job.src_stride[L - 1] == 1 && job.src_stride[L - 3] == job.n[L - 1])
            || (job.dst_stride[L - 1] == 1 && job.dst_stride[L - 3] == job.n[L - 1]))
        && !(job.src_stride[L - 2] == 1 && job.dst_stride[L - 1] == 1)) {
        const int64_t n = job.n[L - 3], ss = job.src_stride[L - 3], ds = job.dst_stride[L - 3];
        job.n[L - 3] = job.n[L - 2];
        job.src_stride[L - 3] = job.src_stride[L - 2];
        job.dst_stride[L - 3] = job.dst_stride[L - 2];
        job.n[L - 2] = n;
        job.src_stride[L - 2] = ss;
        job.dst_stride[L - 2] = ds;
    }
    const int tile = !job.zero && L >= 2 && job.src_stride[L - 2] == 1
        && job.dst_stride[L - 1] == 1 && job.src_stride[L - 1] != 1
        && job.dst_stride[L - 2] != 1;
    /* short runs (a cache line or less): the next loop joins the unit, so a unit is a
     * batch of runs and the bookkeeping is paid once per batch */
    const int batch = !tile && !job.zero && L >= 2
        && job.n[L - 1] * (int64_t)c->dsz <= SHORT_RUN_BYTES;
    const int inner = tile || batch ? 2 : 1, outer = L - inner;
    int64_t m_count = 1;
    for (int k = 0; k < outer; ++k) m_count *= job.n[k];
    const int64_t nx = job.n[L - 1], ny = tile ? job.n[L - 2] : 1;
    const int64_t nb = batch ? job.n[L - 2] : 1;
    /* One long run (e.g. a same-layout copy): an equal share per thread, so the copy is
     * exactly a parallel memcpy (large copies then get the C library's streaming
     * stores); otherwise runs are cut into RUN_CHUNK pieces for balance. */
    const int64_t nthr = omp_get_max_threads();
    const int64_t x_chunk = tile ? REORDER_TILE
        : (m_count == 1 && nx > RUN_CHUNK * nthr) ? (nx + nthr - 1) / nthr : RUN_CHUNK;
    const int64_t tx = (nx + x_chunk - 1) / x_chunk;
    /* Tiles TILE_Y tall (along src lines): each visit of a src line then reads 1 to 2
     * KiB of it, which the prefetches keep ahead of, instead of hopping between lines
     * (the paths through L1 tiles cut them to TILE_AREA). */
    const int64_t tile_y = TILE_Y;
    const int64_t ty = tile ? (ny + tile_y - 1) / tile_y : 1;
    const int64_t tasks = m_count * ty * tx;
    const int64_t ssz = (int64_t)c->ssz, dsz = (int64_t)c->dsz;
    int64_t points = 1;
    for (int k = 0; k < L; ++k) points *= job.n[k];
    const int parallel = points * ((job.zero ? 0 : ssz) + dsz) >= PARALLEL_MIN_BYTES;
    ctx_t cj = *c;
    cj.stream = !c->attr->sum && points * dsz >= BDNN_STREAM_OUT_MIN_BYTES;
    c = &cj;

    /* Each thread takes one contiguous range of units (outer point, tile row, chunk),
     * decodes its first unit once, then steps through the rest like an odometer: short
     * runs (nhwc -> nChw16c copies 16 elements at a time) pay no division per run. */
#pragma omp parallel if (parallel)
    {
        const int64_t nt = omp_get_num_threads(), th = omp_get_thread_num();
        const int64_t lo = tasks * th / nt, hi = tasks * (th + 1) / nt;
        int64_t idx[BDNN_REORDER_MAX_LOOPS];
        int64_t ix = lo % tx, iy = (lo / tx) % ty, m = lo / (tx * ty);
        int64_t so = job.src_off, doff = job.dst_off;
        for (int k = outer - 1; k >= 0; --k) {
            idx[k] = m % job.n[k];
            m /= job.n[k];
            so += idx[k] * job.src_stride[k];
            doff += idx[k] * job.dst_stride[k];
        }
        for (int64_t t = lo; t < hi; ++t) {
            const int64_t x0 = ix * x_chunk, nxc = nx - x0 < x_chunk ? nx - x0 : x_chunk;
            const int64_t sx = so + x0 * job.src_stride[L - 1];
            const int64_t dx = doff + x0 * job.dst_stride[L - 1];
            if (job.zero) {
                zero_run(c, dst + dx * dsz, job.dst_stride[L - 1], nxc);
            } else if (batch && c->bitwise && c->ssz == 4 && job.src_stride[L - 1] == 1
                       && job.dst_stride[L - 1] == 1) {
                c->ker->runs4((const uint32_t *)src + sx, job.src_stride[L - 2],
                              (uint32_t *)dst + dx, job.dst_stride[L - 2], nb, nxc,
                              c->stream);
            } else if (batch) {
                const int64_t bs = job.src_stride[L - 2], bd = job.dst_stride[L - 2];
                for (int64_t b = 0; b < nb; ++b)
                    convert_run(c, src + (sx + b * bs) * ssz, job.src_stride[L - 1],
                                dst + (dx + b * bd) * dsz, job.dst_stride[L - 1], nxc);
            } else if (!tile) {
                convert_run(c, src + sx * ssz, job.src_stride[L - 1], dst + dx * dsz,
                            job.dst_stride[L - 1], nxc);
            } else {
                const int64_t y0 = iy * tile_y;
                const int64_t nyc = ny - y0 < tile_y ? ny - y0 : tile_y;
                /* src_stride[L-2] == 1 */
                convert_tile(c, src + (sx + y0) * ssz, job.src_stride[L - 1],
                             dst + (dx + y0 * job.dst_stride[L - 2]) * dsz,
                             job.dst_stride[L - 2], nyc, nxc);
            }
            if (++ix < tx) continue;
            ix = 0;
            if (++iy < ty) continue;
            iy = 0;
            for (int k = outer - 1; k >= 0; --k) {   /* next outer point */
                so += job.src_stride[k];
                doff += job.dst_stride[k];
                if (++idx[k] < job.n[k]) break;
                so -= job.n[k] * job.src_stride[k];
                doff -= job.n[k] * job.dst_stride[k];
                idx[k] = 0;
            }
        }
        if (c->stream) bdnn_stream_fence();   /* the streamed lines reach memory before the join */
    }
}

/* -- the generic route ------------------------------------------------------------------- */

/* One job a point at a time: every type through bdnn_load_any_f32 / bdnn_store_any_f32,
 * zero points and per-point attributes read through the job's arg strides. Threads take
 * contiguous ranges of the outer points (the inner loop whole); a 4-bit dst runs on one
 * thread, since neighbouring points share a byte. */
static void generic_job(const bdnn_reorder_attr_t *a, const bdnn_reorder_job_t *job_in,
                        const char *src, char *dst, int fault) {
    bdnn_reorder_job_t job = *job_in;
    if (job.nloops == 0) {                    /* a single point */
        job.nloops = 1;
        job.n[0] = 1;
        job.src_stride[0] = job.dst_stride[0] = 1;
        for (int k = 0; k < BDNN_REORDER_ARGS; ++k) job.arg_stride[k][0] = 0;
    }
    if (fault == BDNN_REORDER_FAULT_DENSE_DST) densify_dst(&job);
    const int L = job.nloops, outer = L - 1;
    int64_t m_count = 1;
    for (int k = 0; k < outer; ++k) m_count *= job.n[k];
    const int64_t nx = job.n[L - 1], points = m_count * nx;
    const int64_t sx = job.src_stride[L - 1], dx = job.dst_stride[L - 1];
    int64_t axs[BDNN_REORDER_ARGS];
    for (int k = 0; k < BDNN_REORDER_ARGS; ++k) axs[k] = job.arg_stride[k][L - 1];
    const int parallel = bdnn_dt_bits(a->dst_dt) >= 8
        && points * (bdnn_dt_bits(a->src_dt) + bdnn_dt_bits(a->dst_dt)) / 8
               >= PARALLEL_MIN_BYTES;
    const int zp_src = (a->per_point >> BDNN_REORDER_ARG_SRC_ZPS) & 1;
    const int sc_src = (a->per_point >> BDNN_REORDER_ARG_SRC_SCALES) & 1;
    const int sc_dst = (a->per_point >> BDNN_REORDER_ARG_DST_SCALES) & 1;
    const int comp = (a->per_point >> BDNN_REORDER_ARG_COMP) & 1 && !job.zero;
#pragma omp parallel if (parallel && !comp)
    {
        const int64_t nt = omp_get_num_threads(), th = omp_get_thread_num();
        const int64_t lo = m_count * th / nt, hi = m_count * (th + 1) / nt;
        int64_t idx[BDNN_REORDER_MAX_LOOPS];
        int64_t so = job.src_off, doff = job.dst_off, ao[BDNN_REORDER_ARGS];
        for (int k = 0; k < BDNN_REORDER_ARGS; ++k) ao[k] = job.arg_off[k];
        int64_t m = lo;
        for (int k = outer - 1; k >= 0; --k) {
            idx[k] = m % job.n[k];
            m /= job.n[k];
            so += idx[k] * job.src_stride[k];
            doff += idx[k] * job.dst_stride[k];
            for (int q = 0; q < BDNN_REORDER_ARGS; ++q) ao[q] += idx[k] * job.arg_stride[q][k];
        }
        for (int64_t t = lo; t < hi; ++t) {
            for (int64_t i = 0; i < nx; ++i) {
                const int64_t di = doff + i * dx;
                if (job.zero) {
                    bdnn_store_any_f32(dst, a->dst_dt, di,
                                       fault == BDNN_REORDER_FAULT_PADDING_GARBAGE ? 1.f : 0.f);
                    continue;
                }
                float v = bdnn_load_any_f32(src, a->src_dt, so + i * sx);
                const int32_t szp = zp_src
                    ? a->src_zps[ao[BDNN_REORDER_ARG_SRC_ZPS] + i * axs[BDNN_REORDER_ARG_SRC_ZPS]]
                    : a->src_zp;
                if (szp) v = v - (float)szp;
                const float ssc = sc_src
                    ? a->src_scales[ao[BDNN_REORDER_ARG_SRC_SCALES]
                                    + i * axs[BDNN_REORDER_ARG_SRC_SCALES]]
                    : a->src_scale;
                if (ssc != 1.0f) v = v * ssc;
                if (a->sum) {
                    float prior = bdnn_load_any_f32(dst, a->dst_dt, di);
                    if (a->dst_zp) prior = prior - (float)a->dst_zp;
                    const float t2 = a->sum_scale * prior;
                    v = v + t2;
                }
                const float dsc = sc_dst
                    ? a->dst_scales[ao[BDNN_REORDER_ARG_DST_SCALES]
                                    + i * axs[BDNN_REORDER_ARG_DST_SCALES]]
                    : a->dst_scale;
                if (dsc != 1.0f) v = v / dsc;
                if (a->dst_zp) v = v + (float)a->dst_zp;
                bdnn_store_any_f32(dst, a->dst_dt, di, v);
                if (comp) {   /* the value as stored (one thread: see the caller) */
                    const int64_t f = ao[BDNN_REORDER_ARG_COMP] + i * axs[BDNN_REORDER_ARG_COMP];
                    const int32_t q = (int32_t)bdnn_load_any_f32(dst, a->dst_dt, di);
                    if (a->comp_zp) a->comp_zp[f] -= q;
                    if (a->comp_s8s8) a->comp_s8s8[f] -= 128 * q;
                }
            }
            for (int k = outer - 1; k >= 0; --k) {   /* next outer point */
                so += job.src_stride[k];
                doff += job.dst_stride[k];
                for (int q = 0; q < BDNN_REORDER_ARGS; ++q) ao[q] += job.arg_stride[q][k];
                if (++idx[k] < job.n[k]) break;
                so -= job.n[k] * job.src_stride[k];
                doff -= job.n[k] * job.dst_stride[k];
                for (int q = 0; q < BDNN_REORDER_ARGS; ++q)
                    ao[q] -= job.n[k] * job.arg_stride[q][k];
                idx[k] = 0;
            }
        }
    }
}

int bdnn_reorder_check(int impl, const bdnn_reorder_attr_t *attr) {
    if (impl < 0 || impl >= N_IMPLS || !attr) return BDNN_STATUS_INVALID;
    if (!bdnn_dt_bits(attr->src_dt) || !bdnn_dt_bits(attr->dst_dt)) return BDNN_STATUS_INVALID;
    /* every route computes in f32, which would round an f64 value */
    if (attr->src_dt == BDNN_DT_F64 || attr->dst_dt == BDNN_DT_F64)
        return BDNN_STATUS_UNIMPLEMENTED;
    if (attr->per_point & ~((1 << BDNN_REORDER_ARGS) - 1)) return BDNN_STATUS_INVALID;
    if (!bdnn_isa_supported(impls[impl].isa)) return BDNN_STATUS_UNIMPLEMENTED;
    if ((attr->per_point >> BDNN_REORDER_ARG_COMP & 1) && attr->dst_dt != BDNN_DT_S8)
        return BDNN_STATUS_INVALID;
    if (!impls[impl].ker) return BDNN_STATUS_OK;
    /* the six core types (BDNN_DT_F32 .. BDNN_DT_U8) */
    const int fast = attr->src_dt <= BDNN_DT_U8 && attr->dst_dt <= BDNN_DT_U8
        && !attr->src_zp && !attr->dst_zp && !attr->per_point;
    return fast ? BDNN_STATUS_OK : BDNN_STATUS_UNIMPLEMENTED;
}

int bdnn_reorder_execute(int impl, const bdnn_reorder_attr_t *attr,
                         const bdnn_reorder_job_t *jobs, int njobs, const void *src,
                         void *dst, int fault) {
    const int status = bdnn_reorder_check(impl, attr);
    if (status) return status;
    for (int j = 0; j < njobs; ++j) {
        const bdnn_reorder_job_t *job = &jobs[j];
        if (job->nloops < 0 || job->nloops > BDNN_REORDER_MAX_LOOPS) return BDNN_STATUS_INVALID;
        for (int k = 0; k < job->nloops; ++k)
            if (job->n[k] < 1) return BDNN_STATUS_INVALID;
    }
    if (!impls[impl].ker) {
        for (int k = 0; k < BDNN_REORDER_ARGS; ++k)
            if ((attr->per_point >> k & 1)
                && !(k == BDNN_REORDER_ARG_SRC_ZPS ? (const void *)attr->src_zps
                     : k == BDNN_REORDER_ARG_SRC_SCALES ? (const void *)attr->src_scales
                     : k == BDNN_REORDER_ARG_DST_SCALES ? (const void *)attr->dst_scales
                     : attr->comp_s8s8 ? (const void *)attr->comp_s8s8
                                       : (const void *)attr->comp_zp))
                return BDNN_STATUS_INVALID;
        if (attr->per_point >> BDNN_REORDER_ARG_COMP & 1) {   /* sums start at 0 */
            if (attr->comp_s8s8) memset(attr->comp_s8s8, 0, sizeof(int32_t) * (size_t)attr->comp_n);
            if (attr->comp_zp) memset(attr->comp_zp, 0, sizeof(int32_t) * (size_t)attr->comp_n);
        }
        for (int j = 0; j < njobs; ++j) generic_job(attr, &jobs[j], src, dst, fault);
        return BDNN_STATUS_OK;
    }
    ctx_t c = {attr, impls[impl].ker, bdnn_dt_size(attr->src_dt), bdnn_dt_size(attr->dst_dt),
               0, fault, 0};
    c.bitwise = attr->src_dt == attr->dst_dt && attr->src_scale == 1.0f
        && attr->dst_scale == 1.0f && !attr->sum;
    for (int j = 0; j < njobs; ++j) run_job(&c, &jobs[j], src, dst);
    return BDNN_STATUS_OK;
}

void bdnn_parallel_fill(void *dst, const void *value, int64_t value_bytes, int64_t count) {
#pragma omp parallel if (count * value_bytes >= PARALLEL_MIN_BYTES)
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t lo = count * t / nt, hi = count * (t + 1) / nt;
        char *out = (char *)dst;
        switch (value_bytes) {   /* typed stores the compiler turns into vector ones */
        case 1: memset(out + lo, *(const uint8_t *)value, (size_t)(hi - lo)); break;
        case 2: {
            uint16_t v;
            memcpy(&v, value, 2);
            for (int64_t i = lo; i < hi; ++i) ((uint16_t *)dst)[i] = v;
            break;
        }
        case 4: {
            uint32_t v;
            memcpy(&v, value, 4);
            for (int64_t i = lo; i < hi; ++i) ((uint32_t *)dst)[i] = v;
            break;
        }
        case 8: {
            uint64_t v;
            memcpy(&v, value, 8);
            for (int64_t i = lo; i < hi; ++i) ((uint64_t *)dst)[i] = v;
            break;
        }
        default:
            for (int64_t i = lo; i < hi; ++i)
                memcpy(out + i * value_bytes, value, (size_t)value_bytes);
        }
    }
}

void bdnn_parallel_memcpy(void *dst, const void *src, int64_t bytes) {
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t lo = bytes * t / nt, hi = bytes * (t + 1) / nt;
        if (hi > lo) memcpy((char *)dst + lo, (const char *)src + lo, (size_t)(hi - lo));
    }
}
