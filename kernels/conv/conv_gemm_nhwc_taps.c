/* gemm_conv_nhwc / gemm_conv_blocked's taps route (rows <family>:<isa>:taps): backward
 * weights as one GEMM per tap over shifted windows of the input's stride phases, no
 * im2col, on the row ISA's full-width tile. Preconditions: backward weights (the row's
 * applies), at least NR/2 input channels per group (init refuses fewer). */
#include "conv_gemm_nhwc.h"

/* Backward weights by taps (bdnn_nhwc_run_bwt): no im2col. For each tap, the columns of its im2col
 * are the input points o*s - p + tap*(dil+1) over the output points o, and along o those
 * points are a strided walk of the padded input. Split the padded input by the stride's
 * phase (the remainder of each coordinate modulo s), and a tap's points become a plain
 * shifted walk of one phase image: phase (r_d, r_h, r_w) holds the padded input point
 * (z*sd + r_d, y*sh + r_h, x*sw + r_w) at z*plane + y*X + x, and tap t = (kd, kh, kw),
 * with kd*(dd+1) = sd*q_d + r_d (so for h and w), reads output point o = (od, oh, ow) at
 * ext(o) + off(t), off(t) = q_d*plane + q_h*X + q_w, ext(o) = od*plane + oh*X + ow. Rows
 * of X >= ow + max q_w points (and, in 3D, planes of oh + max q_h rows) make that one
 * formula for every o: the columns (and rows) past the output are junk points whose
 * diff_dst is zero, so they add nothing (finite inputs assumed, as the zero padding of
 * any im2col does).
 *
 * So C[oc][(tap, ic)] = sum over k = (n, ext point) of A[oc][k] * B_t[k][ic], A = diff_dst
 * (zero at junk points), B_t[k][ic] = phase(t)[k + off(t)][ic]. Per k block of kc points
 * the packing copies the thread's rows of diff_dst into MR-row panels ([panel][k][MR]),
 * and then, for each tap group (bwt_groups: all taps, or one plane's, or one row's), the
 * group's window of src points (k0 + base .. k0 + base + kc + spread, base and spread its
 * taps' smallest offset and their range) once per phase into NR-column panels of the
 * group's channels ([phase][panel][point][NR]); tap t's B is that window from point
 * off(t) - base on, read in place by the micro-kernels (a channels-last 1x1 at stride 1
 * without padding and with short points reads src itself: its ext points are src's
 * points; and then diff_dst itself as A, each k step's MR channels a point apart). kc
 * keeps A and a window within PACK_BYTES (L2). The micro-kernel is the row ISA's
 * full-width one (bwt_ukr), whatever the layout: the packing absorbs the blocks.
 *
 * Threads own ranges of C's MR-row panels ((g, oc panel) pairs) and stream every k block
 * once, each packing only its rows of A but the whole window; where C's rows (x taps) are
 * at most half the k points, or the panels do not share out evenly, they split k instead,
 * each a partial C of every row, summed at the end. C is [oc][tap][ic] in a thread's
 * scratch and goes into the user's [g][oc][ic][tap] row by row at the end (1x1 without a
 * k split: the micro-kernels write the user's rows directly). Used where a group has at
 * least NR/2 input channels (fewer would waste most columns of every tile: ResNet's first
 * layer, 3 channels, keeps run_bww). */
enum {
    BWT_PACK_BYTES = 512 * 1024, BWT_MIN_KC = 32, BWT_IN_PLACE_MAX_ROW = 4096,
    BWT_AHEAD_PACK_BYTES = 256 * 1024, BWT_AHEAD_MAX_C_BYTES = 512 * 1024,
    BWT_IN_PLACE_B_BYTES = 32 * 1024, BWT_IN_PLACE_ROWS = 128, BWT_IN_PLACE_MIN_PRODUCTS = 256,
    BWT_NARROW_IN_PLACE_ROW = 256, BWT_NARROW_IN_PLACE_MAX_ROW = 2048
};
/* A k split's partial C (every row of C, per thread) at most this size: a larger one
 * leaves L2 on every k block and is summed through memory at the end, and panel ranges,
 * though each thread packs the whole window, ran faster. */
enum { BWT_SPLIT_MAX_C_BYTES = 1024 * 1024 };
/* Phase images per kw offset (w_phases) where junk points are at least this share of a
 * row (1 / BWT_W_PHASES_JUNK). */
enum { BWT_W_PHASES_JUNK = 8, BWT_W_PHASES_MIN_NR = 32 };

typedef struct {
    int64_t X, plane, rows;     /* phase image: row length, plane size; rows per plane
                                   (3D; 2D: one plane, rows unbounded) */
    int64_t kext, kc, kblocks;  /* ext points per image; k block; k blocks per image (flat:
                                   of the whole minibatch) */
    int64_t n_phase, max_off;
    /* Tap groups (bwt_groups): consecutive taps whose offsets lie close together, each
     * packed as its own window of kc + its offsets' spread points from its smallest
     * offset on; span: the largest window. */
    int64_t grp_taps, n_grp, span;
    int64_t *grp_base, *grp_spread;
    int64_t (*phase)[3];        /* the phases some tap reads: (r_d, r_h, r_w) */
    int64_t phase_max[3];       /* the largest phase per axis (bwt_ahead's window end) */
    int64_t *tap_phase, *tap_off;
    const conv_gemm_ukr_t *u;   /* the micro-kernel (bwt_ukr) */
    int64_t Mp, Np;             /* OC/G up to whole MR panels, IC/G up to whole NR panels */
    int64_t panels, k_splits;   /* G * Mp / MR; k ranges (1: threads own panel ranges) */
    /* One group, k not split, panels that do not share out evenly: each thread owns
     * OCG / nthr rows (to the tile's row step) as its own MR panels from its first row,
     * instead of a range of the group's panels: OCG 128 is 10 panels of 12 and one of 8,
     * which two threads took as 60 and 68 rows. (With whole panels each, the short last
     * panel is the only difference, and a thread's own short panel costs about as much:
     * kept as panels.) */
    int row_split;
    float **ab, **bb, **cs;     /* per thread: A panels, B window, C rows ([oc][tap][Np]) */
    float **rowbuf;             /* per thread: one point's diff_dst channels (blocked) */
    int src_in_place;           /* B read from src itself: channels last, the ext points
                                   are src's points (1x1, stride 1, no padding), whole
                                   NR panels per group */
    int dd_in_place;            /* and A from diff_dst itself (pf_fn's lda: a point's
                                   channels), where a short panel's rows read stay in
                                   the group */
    int read_ahead;             /* each k block's tiles fetch the next block (bwt_ahead) */
    /* The window's columns in ranges of cw (a multiple of NR; Np: one range), each packed
     * and multiplied in turn; panel_outer: per range, each of the thread's A panels meets
     * every B panel of the range (A's panel in L1, the range's window in L2), instead of
     * each B panel meeting every A panel (B's panel in L1, all of the thread's A in L2). */
    int64_t cw;
    int panel_outer;
    /* k blocks run across images: k is (n, ext point) over the minibatch, a block the
     * images' runs one after another. Only where no tap group reads past its block (each
     * group's offsets equal: no window spread, so no point of a block reads the next
     * image's), and taken where an image is shorter than a block (7 x 7 and 14 x 14
     * outputs: blocks of one image each reloaded C every 49 or 196 points). */
    int flat;
} bwt_plan_t;

void bdnn_nhwc_bwt_fini(void *plan, int nthr) {
    bwt_plan_t *q = plan;
    if (!q) return;
    for (int t = 0; t < nthr; ++t) {
        if (q->ab) free(q->ab[t]);
        if (q->bb) free(q->bb[t]);
        if (q->cs) free(q->cs[t]);
        if (q->rowbuf) free(q->rowbuf[t]);
    }
    free(q->ab), free(q->bb), free(q->cs), free(q->rowbuf);
    free(q->phase), free(q->tap_phase), free(q->tap_off);
    free(q->grp_base), free(q->grp_spread);
    free(q);
}

/* A tap's offsets (kd, kh, kw) * (dilation + 1). */
static void tap_extent(const bdnn_conv_desc_t *d, int64_t t, int64_t e[3]) {
    e[0] = t / (d->kw * d->kh) * (d->dd + 1);
    e[1] = t / d->kw % d->kh * (d->dh + 1);
    e[2] = t % d->kw * (d->dw + 1);
}

/* Thread t's first row of the group under row_split (nthr: the end), on the tile's row
 * step. */
static int64_t bwt_row_at(const bwt_plan_t *q, int64_t OCG, int nthr, int t) {
    const int64_t step = q->u->row_step ? q->u->row_step : q->u->mr;
    return t >= nthr ? OCG : OCG * t / nthr / step * step;
}

/* Thread tid's share of C: the (g, oc panel) range [p0, p1) over rows [r0, r1) of each
 * group: all of them when k is split, a range of the panels, or (row_split) its own rows
 * as its own panels from r0. */
static void bwt_panels_of(const bwt_plan_t *q, int64_t OCG, int nthr, int tid, int64_t *p0,
                          int64_t *p1, int64_t *r0, int64_t *r1) {
    *r0 = 0, *r1 = OCG;
    if (q->k_splits > 1) { *p0 = 0, *p1 = q->panels; return; }
    if (q->row_split) {
        *r0 = bwt_row_at(q, OCG, nthr, tid), *r1 = bwt_row_at(q, OCG, nthr, tid + 1);
        *p0 = 0, *p1 = bdnn_div_up(*r1 - *r0, q->u->mr);
        return;
    }
    *p0 = q->panels * tid / nthr, *p1 = q->panels * (tid + 1) / nthr;
}

/* The packing copies each layout into the micro-kernels' panels, so a blocked row runs
 * its ISA's full-width tile (12 x 32 on AVX-512) rather than its one-block tile: C's rows
 * and columns here are channels, not points, and never straddle a block in memory. */
static const conv_gemm_ukr_t *bwt_ukr(const conv_gemm_ukr_t *u) {
    if (u == &bdnn_gemm_ukr_blk_avx512) return &bdnn_gemm_ukr_avx512;
    if (u == &bdnn_gemm_ukr_blk_avx2) return &bdnn_gemm_ukr_avx2;
    return u;
}

/* The k block that fits a window of `spread` more points (win floats each) beside the
 * A panels (a_rows floats each) in pack_floats. */
static int64_t bwt_kc(int64_t pack_floats, int64_t spread, int64_t win, int64_t a_rows) {
    const int64_t kc = (pack_floats - spread * win) / (win + a_rows);
    return kc < BWT_MIN_KC ? BWT_MIN_KC : kc > NKC ? NKC : kc;
}

/* Tap groups: every tap reads the window from its offset on, so one window for all taps
 * spans max_off more points than the block; in 3D that is two input planes (U-Net's
 * 3x3x3 on 130 x 130 planes: 34,000 points against a block of at most NKC), and packing
 * it swamped the products. Groups of consecutive taps (all of them; one kd plane's; one
 * (kd, kh) row's) pack a window each, of the block plus their own spread. The grouping
 * packing the fewest points per k point, n_grp (kc + spread) / kc with the kc that fits,
 * wins: all taps in 2D (spread two rows), planes in 3D. Sets grp_*, n_grp, kc. */
static int bwt_groups(const bdnn_conv_desc_t *d, bwt_plan_t *q, int64_t pack_floats,
                      int64_t win, int64_t a_rows) {
    const int64_t taps = taps_of(d), sizes[3] = {taps, d->kh * d->kw, d->kw};
    double best = 0.0;
    for (int level = 0; level < 3; ++level) {
        const int64_t gt = sizes[level], ng = taps / gt;
        int64_t spread = 0;
        for (int64_t g = 0; g < ng; ++g) {
            int64_t lo = INT64_MAX, hi = 0;
            for (int64_t t = g * gt; t < (g + 1) * gt; ++t) {
                lo = q->tap_off[t] < lo ? q->tap_off[t] : lo;
                hi = q->tap_off[t] > hi ? q->tap_off[t] : hi;
            }
            spread = hi - lo > spread ? hi - lo : spread;
        }
        if (q->flat && spread) continue;
        const int64_t kc = bwt_kc(pack_floats, spread, win, a_rows);
        const double cost = (double)ng * (double)(kc + spread) / (double)kc;
        if (best == 0.0 || cost < best) best = cost, q->grp_taps = gt, q->n_grp = ng, q->kc = kc;
    }
    free(q->grp_base), free(q->grp_spread);   /* a plan tried before */
    q->grp_base = calloc((size_t)q->n_grp, sizeof(int64_t));
    q->grp_spread = calloc((size_t)q->n_grp, sizeof(int64_t));
    if (!q->grp_base || !q->grp_spread) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int64_t g = 0; g < q->n_grp; ++g) {
        int64_t lo = INT64_MAX, hi = 0;
        for (int64_t t = g * q->grp_taps; t < (g + 1) * q->grp_taps; ++t) {
            lo = q->tap_off[t] < lo ? q->tap_off[t] : lo;
            hi = q->tap_off[t] > hi ? q->tap_off[t] : hi;
        }
        q->grp_base[g] = lo, q->grp_spread[g] = hi - lo;
    }
    return BDNN_STATUS_OK;
}

/* Whether B is read from a channels-last src itself: its ext points are src's points (a
 * 1x1 at unit stride without padding whose output is as large as its input) in whole NR
 * panels per group. The walk reads a point (IC floats) per k step. Up to a page per point
 * (BWT_IN_PLACE_MAX_ROW) it reads every page in order and outruns the copy; past it each
 * step skips pages, which the hardware prefetchers do not cross, and the copy wins. A
 * tile of fewer than BWT_IN_PLACE_MIN_PRODUCTS products a step (AVX2's 6 x 16) asks for
 * its lines twice as often for the same products, and there the copy wins from half a
 * page on (BWT_NARROW_IN_PLACE_MAX_ROW). Points of a page are read in place only while
 * the whole tensor stays in cache between runs (BDNN_BWT_CACHED_MAX_BYTES, bdnn.h): from
 * memory each step lands on a page of its own, and the copy, its loads issued together,
 * wins. Shorter points are read in place at any size: the walk crosses pages in order,
 * the read-ahead brings each next block, and the copy would read those same lines and
 * write them once more. */
static int src_in_place(const bdnn_conv_desc_t *d, const conv_gemm_ukr_t *u) {
    const int64_t src_row = d->ic * (int64_t)sizeof(float);
    const int64_t in_place_row = u->mr * u->nr >= BWT_IN_PLACE_MIN_PRODUCTS
        ? BWT_IN_PLACE_MAX_ROW : BWT_NARROW_IN_PLACE_MAX_ROW;
    return taps_of(d) == 1 && (d->ic / d->g) % u->nr == 0 && src_row <= in_place_row
        && (src_row < BWT_IN_PLACE_MAX_ROW
            || d->mb * in_points(d) * src_row <= BDNN_BWT_CACHED_MAX_BYTES)
        && d->id == d->od && d->ih == d->oh && d->iw == d->ow
        && d->sd == 1 && d->sh == 1 && d->sw == 1 && bdnn_reads_no_padding(d);
}

int bdnn_bwt_src_in_place(const bdnn_conv_desc_t *d, int isa) {
    return src_in_place(d, isa >= BDNN_ISA_AVX512 ? &bdnn_gemm_ukr_avx512
                         : isa == BDNN_ISA_AVX2 ? &bdnn_gemm_ukr_avx2 : &bdnn_gemm_ukr_scalar);
}

int bdnn_nhwc_bwt_init(struct bdnn_conv *c, const conv_gemm_ukr_t *row_ukr, void **out) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = bwt_ukr(row_ukr);
    const int64_t G = d->g, ICG = d->ic / G, OCG = d->oc / G, MR = u->mr, NR = u->nr;
    const int64_t taps = taps_of(d), nthr = c->nthr, s[3] = {d->sd, d->sh, d->sw};
    if (2 * ICG < NR) return BDNN_STATUS_UNIMPLEMENTED;
    bwt_plan_t *q = calloc(1, sizeof(*q));
    if (!q) return BDNN_STATUS_OUT_OF_MEMORY;
    *out = q;
    q->u = u;
    q->phase = calloc((size_t)taps, sizeof(*q->phase));
    q->tap_phase = calloc((size_t)taps, sizeof(int64_t));
    q->tap_off = calloc((size_t)taps, sizeof(int64_t));
    if (!q->phase || !q->tap_phase || !q->tap_off) return BDNN_STATUS_OUT_OF_MEMORY;
    int64_t qmax[3] = {0, 0, 0}, e[3];
    for (int64_t t = 0; t < taps; ++t) {
        tap_extent(d, t, e);
        for (int i = 0; i < 3; ++i) qmax[i] = e[i] / s[i] > qmax[i] ? e[i] / s[i] : qmax[i];
    }
    /* Rows of ow + max q_w points make every row's last max q_w points junk: an eighth
     * and more of the products at 14 wide and less with 3 taps across. There each kw
     * offset gets a phase image of its own (the w offset in the phase, none in the
     * offset): rows of ow points, none junk, for KW times the packing (by the copy,
     * next to nothing against OC multiply-adds a packed value feeds) and blocks a
     * KW-th as long (C reloaded that much more often: the cost that keeps wider
     * outputs on the shared image). Only on the 32-wide tile: at 16 columns the copies,
     * one per panel and point, are twice as many per value, and outweighed the junk. */
    const int w_phases = qmax[2] > 0 && NR >= BWT_W_PHASES_MIN_NR
        && BWT_W_PHASES_JUNK * qmax[2] >= d->ow + qmax[2];
    if (w_phases) qmax[2] = 0;
    /* Planes of their own (3D) where a tap steps in depth or there are several output
     * planes; else one plane whose rows run on (a tap's q_h rows past the output). */
    const int planes = d->od > 1 || qmax[0] > 0;
    q->X = d->ow + qmax[2];
    q->rows = planes ? d->oh + qmax[1] : INT64_MAX;
    q->plane = (planes ? d->oh + qmax[1] : d->oh) * q->X;
    q->kext = d->od * q->plane;
    for (int64_t t = 0; t < taps; ++t) {
        tap_extent(d, t, e);
        const int64_t r[3] = {e[0] % s[0], e[1] % s[1], w_phases ? e[2] : e[2] % s[2]};
        int64_t ph = 0;
        while (ph < q->n_phase && memcmp(q->phase[ph], r, sizeof(r))) ++ph;
        if (ph == q->n_phase) memcpy(q->phase[q->n_phase++], r, sizeof(r));
        for (int i = 0; i < 3; ++i)
            if (r[i] > q->phase_max[i]) q->phase_max[i] = r[i];
        q->tap_phase[t] = ph;
        q->tap_off[t] = e[0] / s[0] * q->plane + e[1] / s[1] * q->X
                      + (w_phases ? 0 : e[2] / s[2]);
        if (q->tap_off[t] > q->max_off) q->max_off = q->tap_off[t];
    }
    q->Mp = bdnn_div_up(OCG, MR) * MR;
    q->Np = bdnn_div_up(ICG, NR) * NR;
    const int wide_tile = MR * NR >= BWT_IN_PLACE_MIN_PRODUCTS;
    q->src_in_place = c->attr.layout == BDNN_LAYOUT_NHWC && src_in_place(d, u);
    /* With src in place, diff_dst's points are the k steps too: A's panels are its rows
     * of channels as they lie (the tile's broadcasts one point apart), no packing. A short
     * panel reads its rows rounded up to the tile's row step (conv_ukr.inc), which must
     * not pass the group's channels (the tensor's last point would read past its end).
     * In place, each k step reads a new line of each tensor, a point apart: a tile of
     * fewer than BWT_IN_PLACE_MIN_PRODUCTS products a step (AVX2's 6 x 16: 12 FMAs, 6
     * cycles) does not cover that, except on points of at most BWT_NARROW_IN_PLACE_ROW
     * bytes (16 to a page), and packs A (24 bytes a step) instead. A is packed too where
     * diff_dst's points take a page or more: its walk would then step a page at a time,
     * which no prefetcher follows, for a line of MR floats per step. */
    const int64_t step = u->row_step ? u->row_step : MR;
    const int64_t row_max = (d->ic > d->oc ? d->ic : d->oc) * (int64_t)sizeof(float);
    q->dd_in_place = q->src_in_place && u->pf_fn && OCG % MR % step == 0
        && (wide_tile || row_max <= BWT_NARROW_IN_PLACE_ROW)
        && d->oc * (int64_t)sizeof(float) < BWT_IN_PLACE_MAX_ROW;
    /* Read ahead where the tensors come from memory on every run (bwt_ahead), and on a
     * 1x1 at unit stride without padding whatever their size: there each k block reads
     * its points' lines once, in order, so asking for the next block's costs only the
     * requests, and it covers tensors that a cache could hold but that left it between
     * runs (training reads src long after the forward pass wrote it). Strided and
     * several-tap layers keep the size rule: read ahead while warm, they ran slower. */
    const int unit_1x1 = taps == 1 && d->sd == 1 && d->sh == 1 && d->sw == 1
        && bdnn_reads_no_padding(d);
    q->read_ahead = u->pf_fn && c->attr.layout == BDNN_LAYOUT_NHWC
        && (bdnn_bwt_from_memory(d) || unit_1x1);
    q->panels = G * (q->Mp / MR);
    /* Panel ranges make every thread pack the whole src window; a k split makes each
     * pack its share of both tensors but sum nthr partial C at the end: the split is the
     * cheaper one while C's rows (x taps) are at most half the k points (the sum is then
     * small against the packing) and C within BWT_SPLIT_MAX_C_BYTES, and where the panels
     * do not share out evenly (fewer than 4 per thread, not a multiple of the threads).
     * Both tensors read in place pack nothing, and the sum, run after the products behind
     * a barrier, is then the split's cost against each thread reading all of src: with at
     * least BWT_IN_PLACE_ROWS rows a thread no split, and one group's rows shared out as
     * each thread's own (panel ranges leave OC 256 at 132 and 124 rows a thread); fewer
     * rows use src too slowly for each thread to read it all. */
    const int64_t c_rows = G * q->Mp * taps, k_all = d->mb * q->kext;
    const int rows_in_place = q->dd_in_place && G * OCG >= BWT_IN_PLACE_ROWS * nthr;
    const int small_c = c_rows * q->Np * (int64_t)sizeof(float) <= BWT_SPLIT_MAX_C_BYTES;
    q->k_splits = nthr > 1 && !rows_in_place
        && ((2 * c_rows <= k_all && small_c) || (q->panels % nthr && q->panels < 4 * nthr))
        ? nthr : 1;
    q->row_split = nthr > 1 && q->k_splits == 1 && G == 1
        && (q->panels % nthr || rows_in_place);
    /* (A read in place under row_split: a thread's last panel ends on a multiple of the
     * row step, or on OCG, itself one where dd_in_place holds) */
    int64_t rows_t = 0;   /* the most rows of panels a thread computes */
    for (int t = 0; t < nthr; ++t) {
        int64_t p0, p1, r0, r1;
        bwt_panels_of(q, OCG, (int)nthr, t, &p0, &p1, &r0, &r1);
        rows_t = MR * (p1 - p0) > rows_t ? MR * (p1 - p0) : rows_t;
    }
    /* Reading ahead, the next block shares L2 with this one's panels and C: blocks of half
     * the size, but only while C is under half of L2 (from there on, the shorter blocks
     * reloaded C more often than the read-ahead saved). */
    const int64_t c_bytes = rows_t * taps * q->Np * (int64_t)sizeof(float);
    const int64_t pack_floats = (q->read_ahead && c_bytes <= BWT_AHEAD_MAX_C_BYTES
                                 ? BWT_AHEAD_PACK_BYTES : BWT_PACK_BYTES)
                              / (int64_t)sizeof(float);
    const int64_t a_rows = min64(rows_t, q->Mp);
    /* Flat blocks where an image is shorter than a block and each (kd, kh) row of taps
     * reads one offset (no w offsets: w_phases, or one tap across), and wherever src is
     * read in place (its images follow one another: a block's points are one run) */
    q->flat = d->mb > 1 && (q->src_in_place || (q->kext < NKC && qmax[2] == 0));
    const int64_t k_blocked = q->flat ? d->mb * q->kext : q->kext;   /* what blocks cut */
    int st = bwt_groups(d, q, pack_floats, q->Np * q->n_phase, a_rows);
    if (st != BDNN_STATUS_OK) return st;
    q->cw = q->Np;
    /* Many rows per thread (an inner product's 2048 output channels) or a wide window (4096
     * input channels) leave short k blocks beside all of A and the whole window, and C is
     * then read and written once per block (16 MiB ten times, for BERT-Large's 1024 x
     * 4096). Ranges of the window's columns with A's panels outside give blocks of up to
     * NKC: each range of cw columns is packed in turn (or, src read in place, read in
     * turn) and stays in L2 while every A panel of the thread meets it. Taken where it
     * cuts the number of blocks; not where A too is read in place (its blocks follow). */
    if (q->kc < NKC / 2 && !q->dd_in_place) {
        const int64_t blocks_before = bdnn_div_up(k_blocked, q->kc);
        int64_t cw = q->Np;
        for (;;) {
            st = bwt_groups(d, q, pack_floats, cw * q->n_phase, MR);
            if (st != BDNN_STATUS_OK) return st;
            if (q->kc >= NKC / 2 || cw == NR) break;
            cw = bdnn_div_up(cw / NR, 2) * NR;
        }
        if (bdnn_div_up(k_blocked, q->kc) < blocks_before) {
            q->cw = cw, q->panel_outer = 1;
        } else {
            st = bwt_groups(d, q, pack_floats, q->Np * q->n_phase, a_rows);
            if (st != BDNN_STATUS_OK) return st;
        }
    }
    /* Both tensors read in place and in cache: no packing bounds the block, so it is
     * bounded by L1 instead. Every A panel of the thread meets B's panel of the block in
     * turn, and that panel (kc points x NR floats, read a point apart) stays in L1 while
     * it is at most BWT_IN_PLACE_B_BYTES: longer blocks read it from L2 once per A
     * panel, a strided walk whose every step waits on a line. The blocks come in a whole
     * number per thread (an uneven count would leave one thread a block more). From
     * memory the read-ahead keeps its blocks, which leave the next block room in L2. */
    if (q->src_in_place && q->dd_in_place && !bdnn_bwt_from_memory(d)) {
        const int64_t share = bdnn_div_up(k_blocked, q->k_splits);
        const int64_t l1_kc = BWT_IN_PLACE_B_BYTES / (NR * (int64_t)sizeof(float));
        q->kc = bdnn_div_up(k_blocked, bdnn_div_up(share, l1_kc) * q->k_splits);
    }
    const int64_t win = q->cw * q->n_phase;
    q->kblocks = bdnn_div_up(k_blocked, q->kc);
    q->kc = bdnn_div_up(k_blocked, q->kblocks);   /* even blocks: no short tail */
    int64_t spread = 0;
    for (int64_t g = 0; g < q->n_grp; ++g)
        spread = q->grp_spread[g] > spread ? q->grp_spread[g] : spread;
    q->span = q->kc + spread;
    const int direct = q->k_splits == 1 && taps == 1;
    q->ab = calloc((size_t)nthr, sizeof(float *));
    q->bb = calloc((size_t)nthr, sizeof(float *));
    q->cs = calloc((size_t)nthr, sizeof(float *));
    q->rowbuf = calloc((size_t)nthr, sizeof(float *));
    if (!q->ab || !q->bb || !q->cs || !q->rowbuf) return BDNN_STATUS_OUT_OF_MEMORY;
    for (int t = 0; t < nthr; ++t) {
        if (!q->dd_in_place
                && conv_scratch((void **)&q->ab[t],
                                sizeof(float) * (size_t)(min64(rows_t, q->Mp) * q->kc)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&q->bb[t], sizeof(float) * (size_t)(q->span * win)))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (conv_scratch((void **)&q->rowbuf[t], sizeof(float) * (size_t)q->Mp))
            return BDNN_STATUS_OUT_OF_MEMORY;
        if (!direct) {
            if (conv_scratch((void **)&q->cs[t], sizeof(float) * (size_t)(rows_t * taps * q->Np)))
                return BDNN_STATUS_OUT_OF_MEMORY;
        }
    }
    return BDNN_STATUS_OK;
}

/* n channels of a point from ch on (runs inside blocks), then zeros up to `width`. */
static inline void copy_channels(const act_t *t, const float *img, int64_t ch, int64_t n,
                                 int64_t pt, float *out, int64_t width) {
    for (int64_t i = 0, w; i < n; i += w) {
        w = min64(n - i, run_from(t, ch + i));
        memcpy(out + i, img + at(t, ch + i, pt), sizeof(float) * (size_t)w);
    }
    if (width > n) memset(out + n, 0, sizeof(float) * (size_t)(width - n));
}

/* One point's n channels into a panel row (n: a micro-kernel's height MR or width NR): a
 * fixed-length copy per tile size (the packing runs this once per point and panel). */
static inline void copy_panel_row(float *restrict out, const float *restrict x, int64_t n) {
    switch (n) {
    case 32: memcpy(out, x, 32 * sizeof(float)); break;
    case 24: memcpy(out, x, 24 * sizeof(float)); break;
    case 16: memcpy(out, x, 16 * sizeof(float)); break;
    case 12: memcpy(out, x, 12 * sizeof(float)); break;
    case 6: memcpy(out, x, 6 * sizeof(float)); break;
    case 4: memcpy(out, x, 4 * sizeof(float)); break;
    default: memcpy(out, x, (size_t)n * sizeof(float));
    }
}

/* A: diff_dst channels [m0, m0 + mc) of group g at the ext points [k0, k0 + kc) of one
 * image, as MR-row panels of ld points (panel i at ab + i * ld * MR, element (k, r) at
 * [k*MR + r]); zero at junk points and past the group's channels. */
static void bwt_pack_dd(const struct bdnn_conv *c, const bwt_plan_t *q, const act_t *t,
                        const float *img, int64_t g, int64_t m0, int64_t mc, int64_t k0,
                        int64_t kc, int64_t ld, float *ab, float *rowbuf) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t MR = q->u->mr, OCG = d->oc / d->g;
    int64_t z = k0 / q->plane, y = k0 % q->plane / q->X, x = k0 % q->X;
    /* A point's channels [m0, m0 + whole) as one run, cut into whole panels: channels
     * last in place, channel blocks gathered into rowbuf first (one copy per block) */
    const int64_t whole = min64(mc, (OCG - m0) / MR * MR);
    for (int64_t k = 0; k < kc; ++k) {
        const int live = y < d->oh && x < d->ow;
        const int64_t pt = (z * d->oh + y) * d->ow + x;
        int64_t m = 0;
        if (live) {
            const float *row = img + pt * t->B + g * OCG + m0;
            if (t->B != t->C) {
                copy_channels(t, img, g * OCG + m0, whole, pt, rowbuf, whole);
                row = rowbuf;
            }
            for (; m < whole; m += MR) copy_panel_row(ab + m * ld + k * MR, row + m, MR);
        }
        for (; m < mc; m += MR) {
            const int64_t n = live ? min64(MR, OCG - m0 - m) : 0;
            copy_channels(t, img, g * OCG + m0 + m, n > 0 ? n : 0, pt, ab + m * ld + k * MR,
                          MR);
        }
        if (++x == q->X) { x = 0; if (++y * q->X == q->plane) { y = 0; ++z; } }
    }
}

/* B: the src channels [j0, j0 + cw) of group g (the column range) at the n window points
 * from ext point k0 on of one image, per phase, in NR-column panels ([phase][panel][point]
 * [NR], span points a panel: a micro-kernel's B is contiguous), zero outside the input and
 * past the group's channels. */
static void bwt_pack_src(const struct bdnn_conv *c, const bwt_plan_t *q, const act_t *t,
                         const float *img, int64_t g, int64_t j0, int64_t cw, int64_t k0,
                         int64_t n, float *bb) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t NR = q->u->nr, ICG = d->ic / d->g;
    const int64_t npan = cw / NR;
    const int whole_panels = t->B == t->C && j0 + cw <= ICG;   /* each point's one run */
    for (int64_t ph = 0; ph < q->n_phase; ++ph) {
        const int64_t *r = q->phase[ph];
        int64_t z = k0 / q->plane, y = k0 % q->plane / q->X, x = k0 % q->X;
        if (q->rows == INT64_MAX) z = 0, y = k0 / q->X;
        float *out = bb + ph * npan * q->span * NR;
        for (int64_t p = 0; p < n; ++p) {
            const int64_t id = z * d->sd + r[0] - d->pd, ih = y * d->sh + r[1] - d->ph,
                          iw = x * d->sw + r[2] - d->pw;
            const int inside = id >= 0 && id < d->id && ih >= 0 && ih < d->ih
                            && iw >= 0 && iw < d->iw;
            const int64_t pt = (id * d->ih + ih) * d->iw + iw;
            if (inside && whole_panels) {
                const float *row = img + pt * t->C + g * ICG + j0;
                for (int64_t j = 0; j < npan; ++j)
                    copy_panel_row(out + (j * q->span + p) * NR, row + j * NR, NR);
            } else {
                for (int64_t j = 0; j < npan; ++j) {
                    const int64_t ch = j0 + j * NR;   /* within the group */
                    copy_channels(t, img, g * ICG + ch, inside ? min64(NR, ICG - ch) : 0,
                                  pt, out + (j * q->span + p) * NR, NR);
                }
            }
            if (++x == q->X) { x = 0; if (++y == q->rows) { y = 0; ++z; } }
        }
    }
}

/* C row (g, oc) ([tap][Np]), summed over the n_parts scratch blocks given (into the
 * first), into the user's row ([ic][tap]) by the transposing copy: its spill past the
 * row's last ic is kept inside the row by writing the last ics' taps after it, one by one.
 * (Scalar, this store took as long as a quarter of the products on ResNet-50's 3x3 layers
 * at mb1.) */
static void bwt_store_row(const conv_gemm_ukr_t *u, float *const *parts, int n_parts,
                          int64_t at_row, int64_t taps, int64_t Np, int64_t ICG, float *w) {
    float *restrict row = parts[0] + at_row;
    for (int t = 1; t < n_parts; ++t) {
        const float *restrict part = parts[t] + at_row;
        for (int64_t i = 0; i < taps * Np; ++i) row[i] += part[i];
    }
    if (taps == 1) {
        memcpy(w, row, sizeof(float) * (size_t)ICG);
        return;
    }
    const int64_t spilled = bdnn_div_up(bdnn_transpose_spill(u->vlen, taps), taps);
    const int64_t whole = ICG > spilled ? ICG - spilled : 0;
    if (whole) u->tr_fn(row, Np, taps, whole, w, taps);
    for (int64_t ic = whole; ic < ICG; ++ic)
        for (int64_t tap = 0; tap < taps; ++tap) w[ic * taps + tap] = row[tap * Np + ic];
}

/* Read-ahead of a thread's next k block while it computes this one (channels last, where
 * both tensors' points are contiguous runs of bytes): its src window's input points and
 * its diff_dst points, one run each, a slice asked for by each tile's micro-kernel
 * (pf_fn), so that the packing copies from the caches instead of waiting on memory. */

/* Ext point k's (z, y, x) (as bwt_pack_src walks them). */
static void ext_coords(const bwt_plan_t *q, int64_t k, int64_t e[3]) {
    if (q->rows == INT64_MAX) e[0] = 0, e[1] = k / q->X;
    else e[0] = k / q->plane, e[1] = k % q->plane / q->X;
    e[2] = k % q->X;
}

/* The runs of one image's part (n, k0, kc) of a block, added to h: its diff_dst points,
 * then each tap group's src window (past BDNN_AHEAD_PATTERNS runs, dropped). */
static void bwt_ahead_add(const struct bdnn_conv *c, const bwt_plan_t *q, const float *src,
                          const float *diff_dst, int64_t n, int64_t k0, int64_t kc,
                          bdnn_ahead_t *h) {
    const bdnn_conv_desc_t *d = &c->d;
    int64_t a[3], b[3], s0, s1;
    const int64_t fsz = (int64_t)sizeof(float);
    ext_coords(q, k0, a);
    ext_coords(q, k0 + kc - 1, b);
    const int64_t d0 = bdnn_clamped_point(a[0], a[1], a[2], d->od, d->oh, d->ow);
    const int64_t d1 = bdnn_clamped_point(b[0], b[1], b[2], d->od, d->oh, d->ow);
    bdnn_ahead_add(h, diff_dst + (n * out_points(d) + d0) * d->oc,
                   (d1 + 1 - d0) * d->oc * fsz, 0, 1);
    for (int64_t g = 0; g < q->n_grp; ++g) {
        ext_coords(q, k0 + q->grp_base[g], a);
        ext_coords(q, k0 + q->grp_base[g] + kc + q->grp_spread[g] - 1, b);   /* its last */
        bdnn_input_window(d, a, b, q->phase_max, &s0, &s1);
        bdnn_ahead_add(h, src + (n * in_points(d) + s0) * d->ic, (s1 + 1 - s0) * d->ic * fsz,
                       0, 1);
    }
}

/* Block blk's first k (n * kext + ext point) and length: blocks of kc within each image,
 * or (flat) of the minibatch's k; its images' parts are the runs of it that each image
 * holds (BWT_PARTS). */
static void bwt_block(const bwt_plan_t *q, int64_t mb, int64_t blk, int64_t *k0, int64_t *kc) {
    if (q->flat) {
        *k0 = blk * q->kc, *kc = min64(q->kc, mb * q->kext - *k0);
        return;
    }
    const int64_t at = blk % q->kblocks * q->kc;
    *k0 = blk / q->kblocks * q->kext + at, *kc = min64(q->kc, q->kext - at);
}

/* Each image's part of the block [K0, K0 + KC) of plan q as (n, k0 within the image, kn
 * points, off the part's first point within the block). */
#define BWT_PARTS(K0, KC, n, k0, kn, off)                                                  \
    for (int64_t off = 0, n, k0, kn; off < (KC)                                          \
         && (n = ((K0) + off) / q->kext, k0 = ((K0) + off) % q->kext,                    \
             kn = min64((KC) - off, q->kext - k0), 1); off += kn)

/* The runs of block blk, spread over `tiles` micro-kernel calls. */
static bdnn_ahead_t bwt_ahead(const struct bdnn_conv *c, const bwt_plan_t *q,
                              const float *src, const float *diff_dst, int64_t blk,
                              int64_t tiles) {
    bdnn_ahead_t h = {0};
    int64_t K0, KC;
    bwt_block(q, c->d.mb, blk, &K0, &KC);
    BWT_PARTS(K0, KC, n, k0, kn, off) bwt_ahead_add(c, q, src, diff_dst, n, k0, kn, &h);
    bdnn_ahead_share(&h, tiles);
    return h;
}

void bdnn_nhwc_bias_sums(const struct bdnn_conv *c, const float *diff_dst, float *diff_bias);

void bdnn_nhwc_run_bwt(const struct bdnn_conv *c, const float *src, const float *diff_dst,
                    float *diff_wei, float *diff_bias) {
    const bwt_plan_t *q = ((const nhwc_plan_t *)c->plan)->bwt;
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = q->u;
    const int64_t MR = u->mr, NR = u->nr, taps = taps_of(d), Np = q->Np;
    const int64_t ICG = d->ic / d->g, OCG = d->oc / d->g, ppg = q->Mp / MR;
    const act_t ts = act_of(c, d->ic, in_points(d)), td = act_of(c, d->oc, out_points(d));
    const int64_t blocks = q->flat ? q->kblocks : d->mb * q->kblocks;
    const int64_t per_split = bdnn_div_up(blocks, q->k_splits);
    const int direct = q->k_splits == 1 && taps == 1;
    const int64_t ldc = direct ? ICG : taps * Np;   /* C rows: the user's, or [tap][Np] */
    /* The user's C written once (one k block per thread) goes past the caches by the
     * size rule (bdnn_bwt_streams_weights; full tiles on whole vectors; the rest plain) */
    const size_t vec_bytes = (size_t)u->vlen * sizeof(float);
    const int64_t c_bytes = d->oc * ICG * (int64_t)sizeof(float);
    const int stream_c = direct && (size_t)(ICG * (int64_t)sizeof(float)) % vec_bytes == 0
        && (uintptr_t)diff_wei % vec_bytes == 0
        && bdnn_bwt_streams_weights(c_bytes, d->mb * out_points(d));

#pragma omp parallel num_threads(c->nthr)
    {
        /* parts: one per planned thread (panel range or k split, its own buffers),
         * whatever team OpenMP gives */
        for (int tid = omp_get_thread_num(); tid < c->nthr; tid += omp_get_num_threads()) {
            int64_t p0, p1, r0, r1;   /* its panels, over rows r0 .. r1 of each group */
            bwt_panels_of(q, OCG, c->nthr, tid, &p0, &p1, &r0, &r1);
            const int64_t bs = q->k_splits > 1 ? min64(tid * per_split, blocks) : 0;
            const int64_t be = q->k_splits > 1 ? min64(bs + per_split, blocks) : blocks;
            float *ab = q->ab[tid], *bb = q->bb[tid];
            /* C row r of panel p (of this thread's range) */
#define BWT_C(p, r) (direct ? diff_wei + ((p) / ppg * OCG + r0 + (p) % ppg * MR + (r)) * ICG \
                                : q->cs[tid] + (((p) - p0) * MR + (r)) * ldc)
            if (bs >= be)   /* nothing to add (mb 0, or fewer blocks than splits): zeros */
                for (int64_t pn = p0; pn < p1; ++pn)
                    for (int64_t r = 0; r < MR; ++r)
                        if (!direct || (pn % ppg) * MR + r < r1 - r0)
                            memset(BWT_C(pn, r), 0,
                                   sizeof(float) * (size_t)(direct ? ICG : ldc));
            for (int64_t blk = bs; blk < be; ++blk) {
                int64_t K0, kc;
                bwt_block(q, d->mb, blk, &K0, &kc);
                /* its first image and point there: the in-place reads' (flat, a block
                 * may run on into the next images, which follow in memory) */
                const int64_t n = K0 / q->kext, k0 = K0 % q->kext;
                const int mode = blk == bs ? UKR_WRITE | (stream_c && be - bs == 1 ? UKR_STREAM : 0)
                                           : UKR_ACCUMULATE;
                bdnn_ahead_t next = {0}, *reading = NULL;
                if (q->read_ahead && blk + 1 < be) {
                    next = bwt_ahead(c, q, src, diff_dst, blk + 1, (p1 - p0) * taps * (Np / NR));
                    reading = &next;
                }
                for (int64_t g = p0 / ppg; g * ppg < p1; ++g) {
                    const int64_t g0 = g * ppg > p0 ? g * ppg : p0;
                    const int64_t g1 = min64(p1, (g + 1) * ppg);
                    if (!q->dd_in_place)
                        BWT_PARTS(K0, kc, im, pk0, kn, off)
                            bwt_pack_dd(c, q, &td, diff_dst + im * td.img, g,
                                        r0 + (g0 - g * ppg) * MR, (g1 - g0) * MR, pk0, kn, kc,
                                        ab + off * MR, q->rowbuf[tid]);
                    for (int64_t j0 = 0; j0 < Np; j0 += q->cw)     /* column ranges */
                    for (int64_t tap = 0; tap < taps; ++tap) {
                        const int64_t grp = tap / q->grp_taps, cw = min64(q->cw, Np - j0);
                        if (tap % q->grp_taps == 0 && !q->src_in_place)   /* its window */
                            BWT_PARTS(K0, kc, im, pk0, kn, off)
                                bwt_pack_src(c, q, &ts, src + im * ts.img, g, j0, cw,
                                             pk0 + q->grp_base[grp],
                                             kn + q->grp_spread[grp], bb + off * NR);
                        /* tile (j, pn): B's panel j of the range, A's panel pn */
#define BWT_TILE(j, pn)                                                                     \
    do {                                                                                    \
        const float *bt = q->src_in_place                                                   \
            ? src + n * ts.img + k0 * ts.B + g * ICG + (j)                                  \
            : bb + ((q->tap_phase[tap] * (cw / NR) + ((j) - j0) / NR) * q->span             \
                    + q->tap_off[tap] - q->grp_base[grp]) * NR;                             \
        const int64_t oc0 = r0 + ((pn) - g * ppg) * MR;                                     \
        bdnn_ukr_reading_ahead(u, reading, kc,                                              \
                               q->dd_in_place                                               \
                                   ? diff_dst + n * td.img + k0 * td.B + g * OCG + oc0      \
                                   : ab + ((pn) - g0) * MR * kc,                            \
                               q->dd_in_place ? td.B : MR, bt,                              \
                               q->src_in_place ? ts.B : NR,                                 \
                               BWT_C(pn, 0) + (direct ? (j) : tap * Np + (j)), ldc,         \
                               min64(MR, r1 - oc0), direct ? min64(NR, ICG - (j)) : NR,     \
                               mode);                                                       \
    } while (0)
                        if (q->panel_outer) {
                            for (int64_t pn = g0; pn < g1; ++pn)
                                for (int64_t j = j0; j < j0 + cw; j += NR) BWT_TILE(j, pn);
                        } else {
                            for (int64_t j = j0; j < j0 + cw; j += NR)
                                for (int64_t pn = g0; pn < g1; ++pn) BWT_TILE(j, pn);
                        }
#undef BWT_TILE
                    }
                }
            }
            if (q->k_splits == 1 && !direct)
                for (int64_t pn = p0; pn < p1; ++pn)
                    for (int64_t r = 0; r < MR && (pn % ppg) * MR + r < r1 - r0; ++r)
                        bwt_store_row(u, q->cs + tid, 1, ((pn - p0) * MR + r) * ldc, taps,
                                      Np, ICG,
                                      diff_wei + (pn / ppg * OCG + r0 + pn % ppg * MR + r)
                                                     * ICG * taps);
#undef BWT_C
        }
        if (stream_c) bdnn_stream_fence();   /* the streamed rows before the join */
        if (q->k_splits > 1) {
#pragma omp barrier
            /* every thread's partial rows are in its cs; sum them into the user's rows */
#pragma omp for schedule(static)
            for (int64_t row = 0; row < d->g * OCG; ++row)
                bwt_store_row(u, q->cs, c->nthr, (row / OCG * q->Mp + row % OCG) * ldc, taps,
                              Np, ICG, diff_wei + row * ICG * taps);
        }
        if (diff_bias) bdnn_nhwc_bias_sums(c, diff_dst, diff_bias);
    }
}

int bdnn_nhwc_taps_applies(const struct bdnn_conv *c) { return c->dir == BDNN_DIR_BWD_WEIGHTS; }

static int taps_init(struct bdnn_conv *c) {
    nhwc_plan_t *p;
    const int st = bdnn_nhwc_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : bdnn_nhwc_bwt_init(c, ukr_of(c), &p->bwt);
}

const conv_impl_ops_t bdnn_conv_nhwc_taps_ops = {
    taps_init, bdnn_nhwc_weights_bytes, bdnn_nhwc_pack_weights, bdnn_nhwc_execute, bdnn_nhwc_fini,
    NULL,
};
