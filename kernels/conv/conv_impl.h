/* Internal contract between the convolution drivers (loops, packing, threading) and the
 * per-ISA kernels. Nothing here is part of the public API in bdnn.h. */
#ifndef BDNN_CONV_IMPL_H
#define BDNN_CONV_IMPL_H

#include "bdnn.h"
#include "dt.h"   /* bdnn_stream_fence */

/* GEMM micro-kernel (BLIS model): one MR x NR tile of C. With bias[r] (0 when bias is
 * NULL) broadcast along row r:
 *
 *   mode UKR_WRITE:       C[0:mr, 0:nr] := bias + A * B
 *   mode UKR_ACCUMULATE:  C[0:mr, 0:nr] := C + A * B
 *   mode UKR_SUM:         C[0:mr, 0:nr] := sum_scale * C + bias + A * B   (sum post-op)
 *
 * A is a packed micro-panel of kc x MR: element (k, r) at a[k*MR + r]; rows r >= mr are 0.
 * B is kc x NR: element (k, j) at b[k*ldb + j] (a packed micro-panel: ldb = NR, 64-byte
 * aligned; or rows of a tensor used in place); all NR columns of every row are read, and
 * columns j >= nr only reach C's unwritten columns. C has row stride ldc; only
 * C[0:mr, 0:nr] is read or written. */
/* mode | UKR_RELU: the stored values then go through relu with relu_alpha (the last k
 * block of a chain whose only eltwise entry is an unscaled relu: fused in registers).
 * mode | UKR_STREAM (with UKR_WRITE; C and ldc aligned to the vector): full tiles are
 * stored past the caches (non-temporal stores, a plain store where the ISA has none); the
 * caller fences (bdnn_stream_fence) before C is read. For a C written once and far larger
 * than the caches, this saves reading each line in before it is overwritten. */
enum { UKR_WRITE = 0, UKR_ACCUMULATE = 1, UKR_SUM = 2, UKR_RELU = 4, UKR_STREAM = 8 };
/* Addresses a multiple of this apart agree in their low 12 bits: they fall in one set of
 * L1 (32 KiB, 8 ways on the CPUs these kernels target), and a load checked against a
 * pending store sees them alike. */
enum { BDNN_ALIAS_BYTES = 4096 };
/* Whether a forward output of `bytes` at dst, written once, goes past the caches: at
 * least BDNN_STREAM_MIN_BYTES (bdnn.h, why there), and dst aligned to the vector of
 * vec_bytes that each non-temporal store writes whole. */
static inline int bdnn_streams_output(const void *dst, size_t bytes, size_t vec_bytes) {
    return bytes >= (size_t)BDNN_STREAM_MIN_BYTES && (uintptr_t)dst % vec_bytes == 0;
}
typedef void (*conv_gemm_ukr_fn)(int64_t kc, const float *a, const float *b, int64_t ldb,
                                 float *c, int64_t ldc, int64_t mr, int64_t nr, int mode,
                                 const float *bias, float sum_scale, float relu_alpha);
/* Read-ahead: lines of memory a tile asks the caches for while it computes (pf_fn below),
 * so that a caller whose next operands stream from memory finds them in cache. A slice is
 * `lines` 64-byte lines of a pattern of runs of `run` lines, `stride` bytes apart (one
 * channel's points per run, on plain layouts), from line `col` of the run at `row`. */
typedef struct {
    const char *row;
    int64_t col, run, stride, lines;
} bdnn_pf_slice_t;

/* The same as conv_gemm_ukr_fn (no bias, sum or relu: mode UKR_WRITE or UKR_ACCUMULATE)
 * with A's k steps lda floats apart (MR: a packed panel; more: A read in place, its rows
 * a point's channels), also asking for pf's lines, one per k step (those past kc are not
 * asked for; pf NULL: none). The lines are only read ahead, never relied on. */
typedef void (*conv_gemm_ukr_pf_fn)(int64_t kc, const float *a, int64_t lda, const float *b,
                                    int64_t ldb, float *c, int64_t ldc, int64_t mr, int64_t nr,
                                    int mode, const bdnn_pf_slice_t *pf);

/* A caller's next operands as up to BDNN_AHEAD_PATTERNS patterns of runs, handed out in
 * slices of per_tile lines, one per tile (a slice stays inside one pattern): one line per
 * k step, since prefetching in bursts between the tiles stalls them. */
enum { BDNN_AHEAD_PATTERNS = 8 };
typedef struct {
    struct { const char *at; int64_t run, stride, lines; } p[BDNN_AHEAD_PATTERNS];
    int n, i;                /* patterns; the one being handed out */
    int64_t done, per_tile;  /* its lines handed out; lines per tile */
} bdnn_ahead_t;

/* count runs of `bytes` bytes, the first at `first`, `stride` bytes apart (dropped once
 * the patterns are full). */
static inline void bdnn_ahead_add(bdnn_ahead_t *h, const void *first, int64_t bytes,
                                  int64_t stride, int64_t count) {
    if (h->n == BDNN_AHEAD_PATTERNS || bytes <= 0 || count <= 0) return;
    const uintptr_t at = (uintptr_t)first & ~(uintptr_t)63;
    const int64_t run = ((int64_t)((uintptr_t)first - at) + bytes + 63) / 64;
    h->p[h->n].at = (const char *)at, h->p[h->n].run = run, h->p[h->n].stride = stride;
    h->p[h->n++].lines = run * count;
}

/* Spread the patterns over `tiles` tiles. */
static inline void bdnn_ahead_share(bdnn_ahead_t *h, int64_t tiles) {
    int64_t total = 0;
    for (int i = 0; i < h->n; ++i) total += h->p[i].lines;
    if (tiles < 1) tiles = 1;
    h->per_tile = (total + tiles - 1) / tiles;
}

/* The next tile's slice into *s; 0 once every line is handed out. */
static inline int bdnn_ahead_slice(bdnn_ahead_t *h, bdnn_pf_slice_t *s) {
    while (h->i < h->n && h->done >= h->p[h->i].lines) ++h->i, h->done = 0;
    if (h->i == h->n || h->per_tile <= 0) return 0;
    const int64_t run = h->p[h->i].run, left = h->p[h->i].lines - h->done;
    s->row = h->p[h->i].at + h->done / run * h->p[h->i].stride;
    s->col = h->done % run, s->run = run, s->stride = h->p[h->i].stride;
    s->lines = h->per_tile < left ? h->per_tile : left;
    h->done += s->lines;
    return 1;
}

/* Backward data by input points (the gather routes) reads, for each input point, every
 * tap of the kernel, though only the taps that reach an output point are live: per
 * spatial dim at most min(k, o) of k. A kernel much larger than the output
 * (3d_conv_large_shape: a 192^3 kernel over a 192^3 input, one output point) leaves one
 * tap in millions live, and that work, the input points times the taps, would not
 * finish. Their rows' predicate (gather_applies, conv_api.c) refuses such a problem;
 * col2im, whose work is the live products only, takes it. */
enum { BDNN_LIVE_TAPS_MIN_SHARE = 64 };
static inline int bdnn_few_live_taps(const bdnn_conv_desc_t *d) {
    const int64_t live = (d->kd < d->od ? d->kd : d->od) * (d->kh < d->oh ? d->kh : d->oh)
                       * (d->kw < d->ow ? d->kw : d->ow);
    return live * BDNN_LIVE_TAPS_MIN_SHARE < d->kd * d->kh * d->kw;
}

/* Backward weights' f32 operands come from memory on every run: src and diff_dst together
 * pass BDNN_BWT_CACHED_MAX_BYTES. Where they do, both routes read each next k block
 * ahead. */
static inline int bdnn_bwt_from_memory(const bdnn_conv_desc_t *d) {
    return d->mb * (d->id * d->ih * d->iw * d->ic + d->od * d->oh * d->ow * d->oc)
               * (int64_t)sizeof(float)
           > BDNN_BWT_CACHED_MAX_BYTES;
}

/* The point of a D x H x W grid nearest to (z, y, x): each coordinate clamped into it. */
static inline int64_t bdnn_clamped_point(int64_t z, int64_t y, int64_t x, int64_t D,
                                         int64_t H, int64_t W) {
    z = z < 0 ? 0 : z >= D ? D - 1 : z;
    y = y < 0 ? 0 : y >= H ? H - 1 : y;
    x = x < 0 ? 0 : x >= W ? W - 1 : x;
    return (z * H + y) * W + x;
}

/* The input points a block of outputs reads, as one range [*i0, *i1] of the input grid's
 * points: from the first output's first tap (first * stride - padding) to the last one's
 * last (last * stride - padding + reach, reach the taps' extent), each end clamped into
 * the input. Output coordinates and reach are (d, h, w). */
static inline void bdnn_input_window(const bdnn_conv_desc_t *d, const int64_t first[3],
                                     const int64_t last[3], const int64_t reach[3],
                                     int64_t *i0, int64_t *i1) {
    *i0 = bdnn_clamped_point(first[0] * d->sd - d->pd, first[1] * d->sh - d->ph,
                             first[2] * d->sw - d->pw, d->id, d->ih, d->iw);
    *i1 = bdnn_clamped_point(last[0] * d->sd - d->pd + reach[0],
                             last[1] * d->sh - d->ph + reach[1],
                             last[2] * d->sw - d->pw + reach[2], d->id, d->ih, d->iw);
}

/* Dot-product micro-kernel (low-precision operands, conv_ukr_bf16.c / conv_ukr_int8*.c):
 *
 *   C[0:mr, 0:nr] := (accumulate ? C : 0) + A * B
 *
 * over kcp = kc rounded up to a multiple of PACK. Operands are grouped PACK consecutive k
 * values at a time, so one 32-bit lane holds the PACK values a dot-product instruction
 * consumes: A element (k, r) at a[(k / PACK) * MR * PACK + r * PACK + k % PACK], B element
 * (k, j) at b[(k / PACK) * ldb + j * PACK + k % PACK] (ldb = NR * PACK for a packed panel;
 * larger for a tensor read in place, all NR columns read); k >= kc are zero in both.
 *   PACK 2: bf16 A and B, f32 C.
 *   PACK 4: s8 A (weights), u8 B (shifted source, see conv_gemm.h), s32 C.
 * C has row stride ldc. A kernel with a_wide set (conv_gemm_ukr_t) takes A widened, at the
 * same element positions: f32 values for PACK 2, s16 for PACK 4 with each group's four
 * values in the order k % 4 = 0, 2, 1, 3 (the pairs (0, 2) and (1, 3) one 32-bit unit
 * each). A is packed once per problem (the weights) and read by every tile, so a kernel
 * without the dot-product instruction gets operands it multiplies as they are, instead of
 * widening A in its inner loop. */
typedef void (*conv_dp_ukr_fn)(int64_t kcp, const void *a, const void *b, int64_t ldb,
                               void *c, int64_t ldc, int64_t mr, int64_t nr, int accumulate);

/* The same over a chain of k blocks, the tile staying in registers from the first block to
 * the last (the shift route's taps: each block its own A micro-panel and B rows, one ldb):
 *   C[0:mr, 0:nr] := (accumulate ? C : 0) + sum over i < nblk of A_i * B_i
 * with A_i, B_i laid out as conv_dp_ukr_fn's, over blk[i].kcp (a multiple of PACK). */
typedef struct {
    int64_t kcp;
    const void *a, *b;
} conv_dp_block_t;
typedef void (*conv_dp_chain_fn)(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                 void *c, int64_t ldc, int64_t mr, int64_t nr, int accumulate);

/* ... with the chain's result stored straight into the output, converted (no accumulator
 * buffer, no epilogue pass), for problems whose epilogue is only a bias and the
 * conversion (no scales, zero points or post-ops). C starts from acc's partial sums (an
 * earlier chain's, row stride ld_acc, f32 or s32 as C) or from 0; then row r, column j:
 *   v = C[r][j] (bf16: f32) or (float)(C[r][j] - comp[r]) (int8, exact in s32),
 *   v = v + bias[r] (if bias),
 * stored as out_dt at out[r * ld_out + j] exactly as bdnn_conv_epilogue stores it
 * (saturation and rounding to nearest even for integers, NaN giving 0; bf16 rounded in the
 * integer bits). out_dt is one of the kernel's store_dts (1 << dt). With segments (nseg >
 * 0), only columns [seg.col, seg.col + seg.len) of each are stored, column seg.col + t at
 * out[r * ld_out + seg.off + t] (a grid whose columns are not all outputs, such as the
 * shift route's padded one). */
typedef struct {
    int32_t col, len;        /* tile columns [col, col + len) */
    int64_t off;             /* ... stored from this element of row 0 on */
} conv_dp_seg_t;
typedef struct {
    int out_dt;
    const float *bias;       /* mr values, or NULL */
    const int32_t *comp;     /* int8: mr values, or NULL (bf16) */
    int nseg;                /* 0: columns [0, nr) contiguous from out */
    const conv_dp_seg_t *seg;
} conv_dp_store_t;
typedef void (*conv_dp_chain_store_fn)(int64_t nblk, const conv_dp_block_t *blk, int64_t ldb,
                                       const void *acc, int64_t ld_acc, void *out,
                                       int64_t ld_out, int64_t mr, int64_t nr,
                                       const conv_dp_store_t *st);

/* A dot-product tile's edge (mr < MR or nr < NR), its accumulators spilled to tile (row
 * stride ld_tile): C[0:mr, 0:nr] := (accumulate ? C : 0) + tile, s32 sums wrapping as the
 * instructions' do. */
static inline void bdnn_dp_edge_s32(const int32_t *tile, int64_t ld_tile, int32_t *c,
                                    int64_t ldc, int64_t mr, int64_t nr, int accumulate) {
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            c[r * ldc + j] = (int32_t)((uint32_t)(accumulate ? c[r * ldc + j] : 0)
                                       + (uint32_t)tile[r * ld_tile + j]);
}
static inline void bdnn_dp_edge_f32(const float *tile, int64_t ld_tile, float *c, int64_t ldc,
                                    int64_t mr, int64_t nr, int accumulate) {
    for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nr; ++j)
            c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.0f) + tile[r * ld_tile + j];
}

/* Transposing copy (backward weights' outer-product packing, and its results' rows into
 * the user's [ic][tap]): for c < cols, r < ldo,
 *   out[c * ldo + r] = r < rows ? in[r * ldi + c] : 0
 * reading rows [0, rows) and columns [0, cols) of in only (rows <= ldo, any ldo). The
 * kernel stores whole vectors: where vlen does not divide ldo it may write zeros to the
 * bdnn_transpose_spill(vlen, ldo) floats after out's last row (out + cols * ldo). */
typedef void (*conv_transpose_fn)(const float *in, int64_t ldi, int64_t rows, int64_t cols,
                                  float *out, int64_t ldo);
static inline int64_t bdnn_transpose_spill(int64_t vlen, int64_t ldo) {
    return ldo % vlen ? vlen - ldo % vlen : 0;
}

/* Rows gathered from runs (backward weights' outer-product packing of B straight from src
 * where each (ic, kd, kh)'s kw taps are consecutive input points): for i < count, the
 * first `width` floats of row i (out + i * ldo, width a multiple of vlen) are zero but for
 *   out[i * ldo + runs[r].col + t] = runs[r].in[i * step + t], t < runs[r].len,
 * each run within one vector of the row (col / vlen == (col + len - 1) / vlen), the runs in
 * order of col. Masked loads: no float of `in` outside the runs is read, so a run may end
 * at a buffer's last float. */
typedef struct {
    const float *in;
    int64_t col, len;
} conv_run_t;
typedef void (*conv_runs_fn)(const conv_run_t *runs, int64_t nruns, int64_t step,
                             int64_t count, float *out, int64_t ldo, int64_t width);

typedef struct conv_gemm_ukr {
    int mr, nr;
    conv_gemm_ukr_fn fn;       /* f32 operands (pack 0) */
    conv_gemm_ukr_pf_fn pf_fn; /* fn reading ahead (f32; NULL: none) */
    conv_dp_ukr_fn dp_fn;      /* grouped operands */
    int pack;                  /* 0: f32; 2: bf16 pairs; 4: u8 x s8 quads */
    conv_transpose_fn tr_fn;   /* f32 backward weights' packing (NULL: none) */
    conv_runs_fn runs_fn;      /* f32 backward weights' packing of runs (NULL: none) */
    int vlen;                  /* floats per vector (tr_fn's stores, runs_fn's rows) */
    conv_dp_chain_fn dp_chain_fn;   /* dp_fn over a chain of k blocks (NULL: call dp_fn
                                       per block) */
    conv_dp_chain_store_fn dp_store_fn;   /* the chain stored into the output (NULL: none) */
    unsigned store_dts;                   /* dp_store_fn's output types, as 1 << dt */
    int a_wide;                           /* A widened (see conv_dp_ukr_fn) */
    /* The full-width tile of the same ISA that backward weights by taps runs on instead
     * (a blocked row's one-block tile: its packing absorbs the blocks); NULL: this one. */
    const struct conv_gemm_ukr *bwt_tile;
    /* fn's short tiles: a tile of mr < MR rows reads A's first mr rows rounded up to a
     * multiple of this (packers leave the rows past them unwritten); 0: MR (all rows) */
    int row_step;
    /* The same tile (mr, nr, pack 4) on A as plain s8 quads, summing products in 16 bits
     * first (vpmaddubsw): more products per instruction, exact only where no 16-bit sum
     * can saturate or wrap (bdnn_pairs16_exact), so a route runs it on the executions
     * whose bytes prove that; NULL: none. A bounded tile's own pairs16 is a deeper one. */
    const struct conv_gemm_ukr *pairs16;
    int pair_depth;        /* a bounded tile: the k quads whose pair sums it adds in s16
                              before widening them (its bound: pair_depth weight pairs) */
    const char *variant;   /* a bounded tile: its name as bdnn_conv_variant reports it */
} conv_gemm_ukr_t;

/* A u8 x s8 pair sum b0*w0 + b1*w1 fits s16 for every u8 byte at most b_max and every
 * weight pair whose |w0| + |w1| is at most w_pair: b_max * w_pair <= 32767 bounds both
 * signs (-32768 is not needed). Either factor may carry it: bytes under 128 with any s8
 * weights (127 * 256), or weights within 7 bits (|w| <= 64) with any bytes (255 * 128).
 * A sum of d pairs is bounded by d * w_pair in place of w_pair. */
static inline int bdnn_pairs16_exact(int32_t b_max, int32_t w_pair) {
    return (int64_t)b_max * w_pair <= 32767;
}

/* u's f32 tile (mode UKR_WRITE or UKR_ACCUMULATE) on A's k steps lda floats apart,
 * reading the next tile's slice of `next` ahead while one is left; pf_fn where either
 * asks for it, else plain fn; next NULL: no read-ahead. */
static inline void bdnn_ukr_reading_ahead(const conv_gemm_ukr_t *u, bdnn_ahead_t *next,
                                          int64_t kc, const float *a, int64_t lda,
                                          const float *b, int64_t ldb, float *c, int64_t ldc,
                                          int64_t mr, int64_t nr, int mode) {
    bdnn_pf_slice_t pf;
    const int ahead = next && bdnn_ahead_slice(next, &pf);
    if (ahead || lda != u->mr)
        u->pf_fn(kc, a, lda, b, ldb, c, ldc, mr, nr, mode, ahead ? &pf : NULL);
    else
        u->fn(kc, a, b, ldb, c, ldc, mr, nr, mode, NULL, 0.0f, 0.0f);
}

/* Depthwise plane kernel: every output of one (n, channel) plane, from the plane's
 * zero-padded copy, so the inner loop has no bounds checks and, split by the stride's
 * phase, reads each tap as a contiguous run of inputs.
 *
 * pad: the padded plane, input point (z, y, x) (padded coordinates, the padding added)
 * at (z * g->zstride + y * g->ystride) + (x % SW) * g->phase + x / SW; g->tap_off[t]:
 * the offset of tap t's first input for output (0, 0, 0); output (od, oh, ow) reads
 * pad[od * zstep + oh * ystep + tap_off[t] + ow]. Outputs are computed a whole vector
 * at a time, so reads reach up to a vector past a row's last tap (the caller pads each
 * phase row by a vector). dst: the plane's outputs [od][oh][ow] (dense), written as
 *   dst := (has_sum ? sum_scale * dst : 0) + bias + sum over t of wei[t] * input
 * touching only its OD*OH*OW points (the sum post-op reads them first). Eltwise entries
 * are the driver's, on the finished plane. */
typedef struct {
    int64_t od, oh, ow, taps, zstep, ystep;   /* zstep/ystep: pad offset of one output's z / y */
    int64_t zstride, ystride, phase;
    const int64_t *tap_off;
} dw_geom_t;

typedef void (*conv_dw_plane_fn)(const dw_geom_t *g, const float *pad, const float *wei,
                                 float bias, float sum_scale, int has_sum, float *dst);

typedef struct {
    conv_dw_plane_fn fn;
    int vlen;   /* outputs per vector: rows are computed in whole vectors */
    conv_dw_plane_fn narrow;   /* NULL, or a kernel for rows of at most narrow_vlen */
    int narrow_vlen;           /* outputs (shorter vectors; same padded plane) */
} conv_dw_ker_t;
void bdnn_dw_plane_avx2(const dw_geom_t *g, const float *pad, const float *wei, float bias,
                        float sum_scale, int has_sum, float *dst);

/* Depthwise row kernel on channels in lanes (conv_dw_lanes.inc; driver conv_dw_lanes.c):
 * noh output rows of VLEN channels, where a channel vector is VLEN consecutive floats:
 * channels last (the pixel's channels) or a channel block of B >= VLEN (B % VLEN == 0).
 * Row i (0 <= i < noh) reads the tap rows of row 0 moved in_rs elements on per row (rows
 * of one set of taps: those whose every tap row is inside the input, stride-apart):
 *
 *   O(i, ow) := (has_sum ? sum_scale * O(i, ow) : 0) + bias
 *              + sum over r < nrows, kw < KW with iw = ow*SW - PW + kw*DW inside [0, IW)
 *                of wrow[r][kw] * I(r, i, iw)                    (products lane by lane)
 *
 * with O(i, ow) the vector at out + i * out_rs + ow * out_ps and I(r, i, iw) the one at
 * in_row[r] + i * in_rs + iw * in_ps (elements).
 * in_row[r]: input pixel iw = 0 of the r-th (kd, kh) tap row inside the input (the driver
 * drops the rows in the padding), pixels in_ps elements apart, f32 (fn) or bf16 (fn_bf16,
 * widened exactly as it is read); wrow[r]: that row's KW weight vectors (VLEN floats
 * each, zero past the n valid lanes); bias: VLEN floats; out: pixel ow at
 * out + ow * out_ps. Only n lanes (1..VLEN) are valid: with n < VLEN the kernel reads no
 * input or output float past a vector's n-th, writes the n lanes, and with zero_tail
 * stores zero into the other VLEN - n (a blocked layout's padded tail), else leaves them
 * alone. The row runs in segments of pixels, each kw tap over the pixels kw_lo ..
 * kw_hi - 1. Eltwise entries are the driver's, on the finished rows.
 * Plane runs (oh0 >= 0; a 2D plane, nrows = KH <= DWL_PLANE_MAX_KH): output rows oh0 ..
 * oh0 + noh - 1 of the plane in one call, border rows included. in_row[r] is then pixel
 * 0 of the plane's input row 0, wrow[r] tap row kh = r's weights, and row i reads tap row
 * r at input row ih = (oh0 + i) * SH - PH + r * DH, in_ys elements per input row on,
 * leaving out the rows outside [0, IH) (in_rs is unused). */
enum { DWL_PLANE_MAX_KH = 8 };
typedef struct {
    int64_t ow, iw, kw, sw, dw, pw;   /* dw: dilation + 1 */
    int64_t in_ps, out_ps;            /* elements between neighbouring pixels */
    /* per kw tap: the output pixels whose column it reaches, [kw_lo, kw_hi) */
    const int64_t *kw_lo, *kw_hi;
    int64_t ih, sh, ph, dh, in_ys;    /* plane runs: rows (dh: dilation + 1), row stride */
} dwl_geom_t;
typedef void (*conv_dwl_row_fn)(const dwl_geom_t *g, int64_t nrows, const void *const *in_row,
                                const float *const *wrow, const float *bias, float sum_scale,
                                int has_sum, void *out, int64_t n, int64_t noh, int64_t in_rs,
                                int64_t out_rs, int zero_tail, int64_t oh0);
typedef struct {
    /* f32 inputs; bf16 inputs (out f32 in both); bf16 inputs and out, rounded in the store */
    conv_dwl_row_fn fn, fn_bf16, fn_bf16_out;
    /* n elements of type dt to f32 and back (dt_vec.inc's contract, on this ISA) */
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n, int truncate);
    int vlen;
} conv_dwl_ker_t;
extern const conv_dwl_ker_t bdnn_dwl_ker_scalar, bdnn_dwl_ker_avx2, bdnn_dwl_ker_avx512,
    bdnn_dwl_ker_avx512_bf16;
/* (the f32 row of bdnn_dwl_ker_avx512_bf16: AVX512_BF16 changes only the bf16 taps) */
void bdnn_dwl_row_avx512(const dwl_geom_t *g, int64_t nrows, const void *const *in_row,
                         const float *const *wrow, const float *bias, float sum_scale,
                         int has_sum, void *out, int64_t n, int64_t noh, int64_t in_rs,
                         int64_t out_rs, int zero_tail, int64_t oh0);

/* Winograd F(4x4, 3x3) transform kernels (conv_wino.inc, per ISA) and the GEMM
 * micro-kernel they feed (conv_wino.c has the algorithm and the loops).
 *
 * src_tf: the input transform V = B^T d B of mr tiles at once (mr = ukr->mr): tile r's
 *   6x6 patch d_r(i, j) at patch[(i * 6 + j) * mr + r]; writes V_r[p] (p = 6 * i + j) at
 *   v[p * vstride + r], so with vstride the distance between the 36 packed A micro-panels
 *   of one (tile panel, ic), each call fills column ic of all 36.
 * dst_tf: the output transform Y = A^T M A of one tile over n channels rounded up to
 *   its vector length (the caller's buffers hold them; lanes past n are garbage): M_ch[p]
 *   at m[p * mstride + ch]; writes Y_ch[k] (k = 4 * row + column) at
 *   out[k * ostride + ch].
 * gather: tiles r0 .. r0+cnt-1 of the patch buffer, horizontally adjacent tiles wholly
 *   inside the input, tile r0 + q's patch at row0 + 4 * q (rows iw apart). */
typedef struct {
    const conv_gemm_ukr_t *ukr;
    void (*src_tf)(const float *patch, float *v, int64_t vstride);
    void (*dst_tf)(const float *m, int64_t mstride, int64_t n, float *out, int64_t ostride);
    void (*gather)(const float *row0, int64_t iw, float *patch, int64_t r0, int64_t cnt);
    int mr;
} conv_wino_ker_t;
extern const conv_wino_ker_t bdnn_wino_ker_scalar, bdnn_wino_ker_avx2, bdnn_wino_ker_avx512;

/* Winograd F(4x4, 3x3) on channel blocks (conv_wino_blk.c has the algorithm and the
 * loops; conv_wino_blk.inc the kernel, per ISA). chunk computes the chunk's nt (at most
 * WB_TB) horizontally adjacent tiles of one tile row of one image, every output block:
 *   src: the image's input blocks, src_cb floats apart ([ih][iw][vlen]; input channel ic
 *     in lane ic % vlen of block ic / vlen; the lanes past icg are never read), the
 *     tiles' 6x6 patches at rows y0 .. y0+5 and columns x0 + 4q .. +5 (zeros outside
 *     the input; rows_inside: all six rows are in);
 *   u: the packed U, [ocb][36][icg][vlen] (output channels in the lanes, zeros past oc);
 *   dst: the image's output blocks, dst_ob floats apart ([oh][ow][vlen]); the tiles'
 *     points at rows oy .. oy+rows-1, columns ox0 + 4q .. (those inside ow) get
 *     A^T M A + bias (NULL: none), + sum_scale * dst (has_sum), the eltwise entries
 *     (has_eltwise), and tail_v on the lanes past oc;
 *     stream: whole vectors may be stored past the cache (dst is vector-aligned);
 *   v, t: the thread's buffers, 36 vectors per tile and input block, 24 per tile. */
typedef struct {
    const float *src, *u, *bias;
    float *dst, *v, *t;
    int64_t ih, iw, src_cb, y0, x0, nt, icg, ocb, oc, dst_ob, ow, oy, ox0, rows;
    int rows_inside, has_sum, has_eltwise, stream;
    float sum_scale, tail_v;
} wino_blk_chunk_t;
typedef struct {
    void (*chunk)(const struct bdnn_conv *c, const wino_blk_chunk_t *a);
    int vlen;   /* floats per vector: the channel block of the layout it runs on */
} conv_wino_blk_ker_t;
extern const conv_wino_blk_ker_t bdnn_wino_blk_ker_avx2, bdnn_wino_blk_ker_avx512;
/* What both Winograd families share (conv_wino.c): whether a problem is in F(4x4, 3x3)'s
 * domain (forward f32 fast path, 2D 3x3, unit stride, no dilation) with a test defect the
 * families carry (none, WINO_COEF, SUM_SCALE_DROPPED, CRASH) or the caller's own_fault;
 * and one (oc, ic) pair's U = G g G^T in double from its 3x3 weights w, u[6 * i + j]
 * (WINO_COEF perturbs one coefficient of G, 1/24 -> 1/25: a transform error the
 * correctness checks must catch). */
int bdnn_wino_f43_takes(const struct bdnn_conv *c, int own_fault);
void bdnn_wino_f43_weights(const struct bdnn_conv *c, const float *w, double *u);

/* The int8 dot route's kernel (conv_gemm_dot.c; conv_dot_<isa>.c). Contract: over n >= 0
 * activation bytes x (u8; with flip, s8 read as u8 by flipping the sign bit, that is
 * x + 128) and n s8 weights w, *dot = the sum of x * w and *wsum = the sum of w, both
 * wrapped to 32 bits as the s32 sums of every int8 kernel. Unaligned pointers allowed. */
typedef void (*conv_dot_fn)(const uint8_t *x, const int8_t *w, int64_t n, int flip,
                            uint32_t *dot, uint32_t *wsum);
typedef struct {
    conv_dot_fn fn;
} conv_dot_ker_t;
extern const conv_dot_ker_t bdnn_dot_ker_scalar, bdnn_dot_ker_avx2, bdnn_dot_ker_avx512_vnni;

/* Per-ISA kernel objects, defined in conv_ukr_<isa>.c / conv_dw_<isa>.c. */
extern const conv_gemm_ukr_t bdnn_gemm_ukr_scalar, bdnn_gemm_ukr_avx2, bdnn_gemm_ukr_avx512;
extern const conv_gemm_ukr_t bdnn_gemm_ukr_blk_avx2, bdnn_gemm_ukr_blk_avx512;  /* NR 8, 16 */
extern const conv_gemm_ukr_t bdnn_gemm_ukr_bf16_avx512_bf16, bdnn_gemm_ukr_bf16_avx2;
extern const conv_gemm_ukr_t bdnn_gemm_ukr_int8_scalar, bdnn_gemm_ukr_int8_avx2,
    bdnn_gemm_ukr_int8_avx512_vnni;
extern const conv_dw_ker_t bdnn_dw_ker_scalar, bdnn_dw_ker_avx2, bdnn_dw_ker_avx512;

/* The tensors of one execution; which are read and which written depends on the
 * direction (see bdnn.h). wei is the implementation's packed weights for the forward and
 * backward-data directions. */
typedef struct {
    const void *src, *wei, *bias, *diff_dst;
    void *dst, *diff_src, *diff_wei;
} bdnn_conv_args_t;

/* What every implementation provides; a primitive keeps a pointer to its entry. */
struct bdnn_conv;
typedef struct {
    int (*init)(struct bdnn_conv *c);  /* BDNN_STATUS_UNIMPLEMENTED if not applicable */
    size_t (*weights_bytes)(const struct bdnn_conv *c);
    void (*pack_weights)(const struct bdnn_conv *c, const void *wei, void *packed);
    void (*execute)(const struct bdnn_conv *c, const bdnn_conv_args_t *args);
    void (*fini)(struct bdnn_conv *c);
    /* Only the fused_dw family (a dw post-op): packs every constant input. */
    void (*pack_weights_dw)(const struct bdnn_conv *c, const void *wei, const void *dw_wei,
                            const void *dw_bias, void *packed);
} conv_impl_ops_t;

/* Operand classes (BDNN_OPERANDS_* in bdnn.h), short. */
enum {
    OPERANDS_F32 = BDNN_OPERANDS_F32,
    OPERANDS_F16 = BDNN_OPERANDS_F16,
    OPERANDS_BF16 = BDNN_OPERANDS_BF16,
    OPERANDS_INT8 = BDNN_OPERANDS_INT8,
    OPERANDS_F64 = BDNN_OPERANDS_F64
};

/* What a row of the implementation table is (conv_api.c), beyond its ops and kernel. */
enum {
    CONV_ROW_FUSED_DW = 1,     /* takes the problems with a dw post-op, and only those */
    CONV_ROW_WINO = 2,         /* Winograd: never a step of fused_dw (its steps are direct) */
    CONV_ROW_GEMM = 4,         /* the plain-layout GEMM family (conv_gemm*.c): its kernel's
                                  MR rows tile the output channels (fused_dw's blocks), and
                                  the slow-gemm defect runs its execution twice */
    CONV_ROW_DW_LANES = 8,     /* depthwise on channels in lanes, f32: bdnn_dwl_row serves it */
    CONV_ROW_BLOCKED_DC = 16,  /* the f32 blocked direct route: bdnn_blocked_dc_plan's */
    CONV_ROW_SRC1 = 32,        /* its low-precision epilogue runs on runs of dst's plain
                                  offsets: binary and prelu entries know each position */
    CONV_ROW_SRC_NHWC = 64,    /* takes attr.src_nhwc: forward, src channels last and
                                  dst blocked (the blocked direct rows) */
    CONV_ROW_SPLIT_512 = 128,  /* preferred to the next row only where 512-bit operations
                                  run in two halves (bdnn_cpu_splits_512); elsewhere the
                                  two trade places in the order (conv_api.c's row) */
};
/* The activation layouts a row runs on, as a set: ROW_LAYOUT(BDNN_LAYOUT_*) | ... */
#define ROW_LAYOUT(layout) (1u << (layout))

/* One row: one route of one algorithm on one ISA and operand class. The table's order is
 * the order of preference; a problem goes to the first row (the caller's filter allowing)
 * whose checks pass: its ISA, operands and layouts, its applies predicate (the route's
 * domain, NULL: every problem), then its init (which may still refuse: sizes, memory). */
typedef struct conv_impl_entry {
    const char *name;     /* family:isa, or family:isa:route (kernels/conv/README.md) */
    int isa;
    const conv_impl_ops_t *ops;
    const void *kernel;   /* conv_gemm_ukr_t or conv_dw_ker_t, as the ops expect */
    int operands;         /* OPERANDS_*: the one class this row computes */
    unsigned layouts;     /* ROW_LAYOUT(...) of each activation layout it runs on */
    int (*applies)(const struct bdnn_conv *c);
    unsigned flags;       /* CONV_ROW_* */
} conv_impl_entry_t;

/* The scratchpad's slots of one top-level primitive and of every sub-primitive created
 * inside it (conv_scratch): in user mode, where each pointer goes before an execution. */
typedef struct {
    int user;             /* attr.scratchpad_user of the primitive being created */
    size_t bytes;         /* the scratchpad's size: every slot, each rounded to 64 bytes */
    int n, cap;
    void ***slot;         /* user mode: the pointer each execution points into the memory */
    size_t *off;          /* ... at this offset */
} conv_book_t;

struct bdnn_conv {
    bdnn_conv_desc_t d;
    int dir, with_bias, fault, nthr;
    int n_post_ops;
    bdnn_post_op_t post_ops[BDNN_MAX_POST_OPS];
    const void *post_src[BDNN_MAX_POST_OPS];   /* binary, prelu: their extra inputs */
    bdnn_conv_attr_t attr;   /* data types, scales, zero points (wei_scales: see below) */
    float *wei_scales;       /* owned copy: oc values (one repeated when common) */
    float *dw_wei_scales;    /* owned copy: the dw step's oc weight scales (ARGS + dw), or NULL */
    int32_t *src_zps;        /* owned copies of per-channel zero points (ic, oc), or NULL */
    int32_t *dst_zps;
    int operands;            /* OPERANDS_* of this problem */
    int out_dt;              /* the written tensor's type: dst, diff_src or diff_wei */
    /* 1 when the f32 fast path (kernels write f32 outputs directly, sum folded, eltwise
     * chain after it) cannot serve: other types, scales, zero points, other chains. The
     * GEMM then accumulates into a per-thread buffer and conv_epilogue.c converts. */
    int lp;
    const conv_impl_entry_t *impl;
    void *plan;          /* owned by the implementation (init allocates, fini frees) */
    const char *name;    /* what bdnn_conv_name reports when not the row's name (fused_dw
                            names the sub-implementations it runs); owned by the plan */
    const char *const *variant;   /* where the plan records the variant of its tile the
                                     last execution ran (bdnn_conv_variant), or NULL */
    size_t scratch_bytes;   /* what init allocated with bdnn_aligned_alloc (conv_api.c) */
    conv_book_t book;       /* the scratchpad's slots (conv_scratch) */
    void *scratchpad;       /* user mode: the memory bdnn_conv_set_scratchpad gave */
};

/* The low-precision epilogue (conv_epilogue.c): turns rows x cols accumulators (f32, or
 * s32 when the operands are int8; row stride ld_acc) of output channels ch0 .. ch0+rows-1
 * into the output type at out (element offset out_off, row stride ld_out): compensation,
 * scales and bias, post-ops in order, dst scale and zero point, conversion just before the
 * store. bias is NULL or of attr.bia_dt; comp is NULL or int8 compensation per channel.
 * tmp holds cols + EPI_TMP_SLACK floats (the stages run in whole vectors). */
enum { EPI_TMP_SLACK = 16 };
void bdnn_conv_epilogue(const struct bdnn_conv *c, const void *acc, int64_t ld_acc,
                        int64_t rows, int64_t cols, int64_t ch0, const void *bias,
                        const int32_t *comp, void *out, int64_t out_off, int64_t ld_out,
                        float *tmp);
/* Its instances per vector width (conv_epilogue.inc; bdnn_conv_epilogue picks by the
 * implementation's ISA), and the deliberate defects' store they share. */
void bdnn_conv_epilogue_avx512(const struct bdnn_conv *c, const void *acc, int64_t ld_acc,
                               int64_t rows, int64_t cols, int64_t ch0, const void *bias,
                               const int32_t *comp, void *out, int64_t out_off,
                               int64_t ld_out, float *tmp);
void bdnn_conv_epilogue_avx2(const struct bdnn_conv *c, const void *acc, int64_t ld_acc,
                             int64_t rows, int64_t cols, int64_t ch0, const void *bias,
                             const int32_t *comp, void *out, int64_t out_off,
                             int64_t ld_out, float *tmp);
void bdnn_conv_epilogue_scalar(const struct bdnn_conv *c, const void *acc, int64_t ld_acc,
                               int64_t rows, int64_t cols, int64_t ch0, const void *bias,
                               const int32_t *comp, void *out, int64_t out_off,
                               int64_t ld_out, float *tmp);
void bdnn_conv_store_faulty(void *out, int dt, int64_t i, float v, int fault);

extern const conv_impl_ops_t bdnn_conv_dw_ops, bdnn_conv_fused_dw_ops;
extern const conv_impl_ops_t bdnn_conv_dot_ops;   /* conv_gemm_dot.c */
int bdnn_conv_dot_applies(const struct bdnn_conv *c);

/* The index of a problem's dw post-op entry, or -1. */
static inline int bdnn_dw_post_op(const bdnn_conv_attr_t *a) {
    for (int i = 0; i < a->n_post_ops; ++i)
        if (a->post_ops[i].kind == BDNN_POST_DW) return i;
    return -1;
}

/* For fused_dw (conv_fused_dw.c): a single-threaded primitive of the first row of the
 * table, other than fused_dw, whose ISA is supported and at most max_isa and that accepts
 * the problem (conv_api.c). The primitive runs on the calling thread: an outer parallel
 * region gives each thread its own. */
int bdnn_conv_create_single(const bdnn_conv_desc_t *d, int max_isa, int with_bias,
                            const bdnn_conv_attr_t *attr, int fault, bdnn_conv_t **out);
extern const conv_impl_ops_t bdnn_conv_wino_ops;        /* conv_wino.c */
extern const conv_impl_ops_t bdnn_conv_wino_blk_ops;    /* conv_wino_blk.c */
extern const conv_impl_ops_t bdnn_conv_dw_lanes_ops;   /* conv_dw_lanes.c */
extern const conv_impl_ops_t bdnn_conv_amx_ops;        /* conv_amx.c */
/* The GEMM family's routes on plain layouts (conv_gemm.h has their files) and on channels
 * last and channel blocks (conv_gemm_nhwc.h), each with the predicate of its domain. */
extern const conv_impl_ops_t bdnn_conv_gemm_outer_ops, bdnn_conv_gemm_shift_ops,
    bdnn_conv_gemm_s2d_ops, bdnn_conv_gemm_col2im_ops, bdnn_conv_gemm_gather_ops;
int bdnn_gemm_outer_applies(const struct bdnn_conv *c);
int bdnn_gemm_shift_applies(const struct bdnn_conv *c);
int bdnn_gemm_s2d_applies(const struct bdnn_conv *c);
int bdnn_gemm_col2im_applies(const struct bdnn_conv *c);
extern const conv_impl_ops_t bdnn_conv_nhwc_direct_ops, bdnn_conv_nhwc_taps_ops,
    bdnn_conv_nhwc_window_ops, bdnn_conv_nhwc_col2im_ops, bdnn_conv_nhwc_gather_ops;
int bdnn_nhwc_direct_applies(const struct bdnn_conv *c);
int bdnn_nhwc_taps_applies(const struct bdnn_conv *c);
int bdnn_nhwc_window_applies(const struct bdnn_conv *c);
int bdnn_nhwc_col2im_applies(const struct bdnn_conv *c);
/* gemm_conv_blocked's pointwise route (conv_pointwise.c; its kernel object is a
 * conv_pw_ker_t, conv_pointwise.h) */
extern const conv_impl_ops_t bdnn_conv_pointwise_ops;
int bdnn_pointwise_applies(const struct bdnn_conv *c);
/* One output row (od 0, oh) of a dw_conv_nhwc / dw_conv_blocked primitive c, every
 * channel, from rows the caller lays out (fused_dw's bands: a ring of 1x1 output rows):
 * nrows tap rows inside the input, row r's pixel 0 of channel 0 at row0[r] (channel
 * blocks in_blk floats apart) and its first tap row_tap[r] (kh * KW); wei c's packed
 * weights, bias NULL or c's [C]; out0 the output row's pixel 0 of channel 0 (blocks
 * out_blk apart). Bias, sum, eltwise entries and the padded tail as execute. */
void bdnn_dwl_row(const struct bdnn_conv *c, int64_t nrows, const float *const *row0,
                  const int64_t *row_tap, int64_t in_blk, const float *wei, const float *bias,
                  float *out0, int64_t out_blk);

/* Post-ops of the f32 fast path (post_ops.c): a sum, if any, comes first and is folded
 * into the kernels' first write of an output (UKR_SUM); the eltwise entries are applied
 * to each finished output tile while it is still in cache. */
void bdnn_post_ops_eltwise(const struct bdnn_conv *c, float *tile, int64_t ld, int64_t rows,
                           int64_t cols);
/* Binary or prelu entry i (post_ops.c) on x[0:n], the written tensor's elements from
 * plain offset off on ([mb][c][d][h][w] of dst, or of diff_src in backward data). */
void bdnn_post_op_src1(const struct bdnn_conv *c, int i, float *x, int64_t off, int64_t n);
/* Whether a chain has an entry that reads an extra input (binary, prelu). */
static inline int bdnn_has_src1_post_op(const bdnn_conv_attr_t *a) {
    for (int i = 0; i < a->n_post_ops; ++i)
        if (a->post_ops[i].kind == BDNN_POST_BINARY || a->post_ops[i].kind == BDNN_POST_PRELU)
            return 1;
    return 0;
}
/* The sum post-op's scale (sets *has_sum), honouring the dropped-scale defect. */
float bdnn_post_ops_sum_scale(const struct bdnn_conv *c, int *has_sum);
/* Whether a low-precision row of f32 sums can finish in f32 and convert on the store: no
 * scales or zero points, a first sum without zero point reading dst's type, eltwise
 * entries without a scale (the blocked direct and the depthwise lanes rows). */
int bdnn_post_ops_row_store(const struct bdnn_conv *c);

/* Helpers shared by the drivers. */
void *bdnn_aligned_alloc(size_t bytes);
/* A work buffer of the scratchpad, reserved by an implementation's init: written before
 * it is read in every execution, never touched at creation. Library mode: *slot gets
 * bdnn_aligned_alloc(bytes) now (freed by fini as before). User mode: *slot stays NULL
 * (free(NULL) in fini is harmless) and each execution points it into the user's memory.
 * Nonzero (BDNN_STATUS_OUT_OF_MEMORY) when the memory or the booking fails. */
int conv_scratch(void **slot, size_t bytes);
/* Around a probe, a sub-primitive an init creates and destroys before it returns: its
 * buffers are its own (library mode), never slots of the primitive being created. */
void *conv_book_suspend(void);
void conv_book_resume(void *book);
static inline int64_t bdnn_weights_elems(const bdnn_conv_desc_t *d) {
    return d->oc * (d->ic / d->g) * d->kd * d->kh * d->kw;
}
static inline int64_t bdnn_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* Thread t of nt's fixed share [*lo, *hi) of work items [0, n): contiguous, balanced by
 * cost (cost(ctx, i) >= 0; equal shares by count when all are 0), the same items in every
 * execution. Items handed out as threads free up move their output and operands from core
 * to core between executions, which costs most where the cores are far apart; a fixed share
 * keeps them in the core that used them last. Item i goes to the thread whose share of the
 * total cost holds its cost's midpoint. The last items, 2 per thread (half the items when
 * fewer than 4 per thread), are in no share: returns the first of them, for the caller to
 * hand out as threads free up (`omp for schedule(dynamic, 1) nowait`), which evens out what
 * the shares' costs differ by, and a thread running slowed on a shared machine. */
typedef int64_t (*bdnn_item_cost_fn)(const void *ctx, int64_t item);
int64_t bdnn_cost_share(int64_t n, bdnn_item_cost_fn cost, const void *ctx, int64_t t,
                        int64_t nt, int64_t *lo, int64_t *hi);
/* Channels per block of a channel-blocked attr.layout (BLOCKED8/16), 0 for the others. */
static inline int64_t bdnn_layout_block(int layout) {
    return layout == BDNN_LAYOUT_BLOCKED16 ? 16 : layout == BDNN_LAYOUT_BLOCKED8 ? 8 : 0;
}
/* floor(a / b) for b > 0 and any sign of a (C division truncates toward zero). */
static inline int64_t bdnn_floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/* The taps [lo, hi) of output index o along one axis (stride st, dilation dl, padding
 * pd, kernel k) that read inside an input of n points. */
static inline void bdnn_taps_inside(int64_t o, int64_t st, int64_t dl, int64_t pd, int64_t n,
                                    int64_t k, int64_t *lo, int64_t *hi) {
    const int64_t i0 = o * st - pd, step = dl + 1;
    *lo = i0 >= 0 ? 0 : bdnn_div_up(-i0, step);
    *hi = n - 1 - i0 < 0 ? 0 : bdnn_floor_div(n - 1 - i0, step) + 1;
    if (*hi > k) *hi = k;
    if (*lo > *hi) *lo = *hi;
}
/* The interior of one axis: the outputs [*lo, *hi) of o_n (lo <= hi) whose every one of
 * k taps (dilation dil, stride s, padding pad) is inside an input of i_n points (o * s -
 * pad >= 0 and o * s - pad + (k - 1) * (dil + 1) <= i_n - 1). */
static inline void bdnn_interior(int64_t o_n, int64_t k, int64_t dil, int64_t s, int64_t pad,
                                 int64_t i_n, int64_t *lo, int64_t *hi) {
    const int64_t span = (k - 1) * (dil + 1);
    *lo = pad > 0 ? bdnn_div_up(pad, s) : 0;
    if (*lo > o_n) *lo = o_n;
    *hi = bdnn_floor_div(i_n - 1 + pad - span, s) + 1;
    if (*hi > o_n) *hi = o_n;
    if (*hi < *lo) *hi = *lo;
}
/* Whether every output point's taps all read inside the input: no padding before, and
 * none after, which an explicit output size can ask for (ih4 oh3 at stride 2 reads row
 * 4). The fast paths that read a 1x1's input points directly need both. */
static inline int bdnn_reads_no_padding(const bdnn_conv_desc_t *d) {
    return d->pd == 0 && d->ph == 0 && d->pw == 0
        && (d->od - 1) * d->sd + (d->kd - 1) * (d->dd + 1) < d->id
        && (d->oh - 1) * d->sh + (d->kh - 1) * (d->dh + 1) < d->ih
        && (d->ow - 1) * d->sw + (d->kw - 1) * (d->dw + 1) < d->iw;
}

#endif /* BDNN_CONV_IMPL_H */
