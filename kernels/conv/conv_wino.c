/* wino_f43: forward f32 convolution by Winograd's minimal filtering F(4x4, 3x3).
 *
 * Domain: forward, f32 (the fast path: no scales, zero points or low-precision types),
 * plain layouts, 2D, 3x3 kernel, unit stride, no dilation; any padding, groups, bias, a sum
 * (first) and eltwise post-ops. Anything else: UNIMPLEMENTED.
 *
 * Algorithm. Outputs are cut into 4x4 tiles (tiles of a ragged edge compute the full 4x4
 * and store only the points that exist); tile (ty, tx) of image n reads the 6x6 input
 * patch d at rows 4*ty - ph .. +5, columns 4*tx - pw .. +5 (zeros outside the input). With
 * U = G g G^T (6x6, per (oc, ic), from the 3x3 weights g), V = B^T d B (6x6, per (tile, ic)):
 *
 *   Y(tile, oc) = A^T [ sum over ic of U(oc, ic) (.) V(tile, ic) ] A      ((.): elementwise)
 *
 * so the reduction over ic is 36 independent GEMMs, one per position p of the 6x6:
 * M_p[tile][oc] = sum over ic of V_p[tile][ic] * U_p[ic][oc] (M = tiles, N = OC/G,
 * K = IC/G), 36 multiplies per 16 outputs instead of 144.
 *
 * The matrices (derived in wino_f43_matrices below from the interpolation points 0, 1,
 * -1, 2, -2 and infinity; Toom-Cook): A^T[i][k] = a_k^i (the outputs as the product
 * polynomial's values), G[k][j] = a_k^j / N_k with N_k = prod over l != k of (a_k - a_l)
 * (Lagrange's normalization, kept on the weights' side), B^T row k = the coefficients
 * of prod over l != k of (x - a_l), and for the point at infinity A^T[3][5] = 1,
 * G[5] = (0, 0, 1), B^T row 5 = the coefficients of prod over l of (x - a_l). The input
 * and output transforms' coefficients are then small integers (conv_wino.inc spells them
 * out); the fractions are all in G, applied at pack time in double.
 *
 * Packed weights (bdnn_conv_pack_weights; untimed): U per group, per position p, per
 * NR-wide column panel of OC/G, an (IC/G) x NR micro-panel (element (ic, j) at
 * [ic * NR + j]; columns past OC/G zero): the B operand of the GEMM micro-kernel as is.
 *
 * Loops, outermost first:
 *   work item  (group, block of tb tiles)  -- split across threads (dynamic)
 *     input transform: V of the block (36 x tb x IC/G floats; sizes: see VP_BYTES),
 *       written straight into the packed A micro-panels (tb/MR panels of MR tiles per p)
 *     oc block of ocb channels (M of the block, 36 x tb x ocb)
 *       p (36) / k blocks of KC / NR panels of U_p / MR panels of V_p: the micro-kernel
 *       output transform per tile, with bias; the sum post-op, eltwise entries; store.
 * Work items write disjoint output tiles; each thread owns its V, M and tile buffers.
 *
 * Team mode (U too large to stay in L3, and too few tiles for two blocks per thread: deep
 * layers at small batches). Blocks of one panel each would make that many passes over U
 * from memory. Instead all threads work each block together: they split its input
 * transform by panels into one shared V, then its oc blocks (dynamic). U then streams
 * once per block; the barrier after each phase keeps V whole while it is read. Each thread
 * still owns its M and tile buffers. */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_impl.h"

enum { KC = 256 };
/* Blocking (L2 is 1 MiB per core on the machines this was tuned on). Each GEMM reads
 * V_p (tb x IC/G) while all of U_p streams past it once per tile block, so tb sets the
 * reuse of the transformed weights U (36 x IC/G x OC/G floats). While U is small
 * (U_SMALL_BYTES: it stays in L3), the block's whole V stays in L2 (V_L2_BYTES) and M
 * takes as much (M_L2_BYTES). A deep layer's U is megabytes, streamed from memory once per
 * block: there tb grows until V_p alone fills VP_BYTES of L2 (all of V, up to V_BYTES,
 * then lives in L3), and M gets M_BYTES: the larger blocks pay where U is read from
 * memory, and cost the small layers their L2 reuse. */
static const int64_t U_SMALL_BYTES = 4 << 20, V_L2_BYTES = 512 << 10, M_L2_BYTES = 512 << 10;
static const int64_t VP_BYTES = 256 << 10, V_BYTES = 4 << 20, M_BYTES = 1 << 20;
/* Team mode's shared V, read by every thread from L3: res5a's 3x3 at mb16 (all 64 tiles,
 * one block) takes 5.3 MB. */
static const int64_t TEAM_V_BYTES = 8 << 20;
enum { TB_PANELS_MAX = 16 };

static const double POINTS[5] = {0, 1, -1, 2, -2};

/* bt[6][6], g[6][3], at[4][6] (row-major) from POINTS; see the file comment. */
static void wino_f43_matrices(double *bt, double *g, double *at) {
    memset(bt, 0, 36 * sizeof(double));
    memset(g, 0, 18 * sizeof(double));
    memset(at, 0, 24 * sizeof(double));
    for (int k = 0; k < 5; ++k) {
        const double a = POINTS[k];
        double nk = 1, pw = 1;
        for (int l = 0; l < 5; ++l)
            if (l != k) nk *= a - POINTS[l];
        for (int i = 0; i < 4; ++i, pw *= a) at[i * 6 + k] = pw;
        pw = 1;
        for (int j = 0; j < 3; ++j, pw *= a) g[k * 3 + j] = pw / nk;
        /* coefficients (ascending) of prod over l != k of (x - a_l) */
        double poly[6] = {1, 0, 0, 0, 0, 0};
        int deg = 0;
        for (int l = 0; l < 5; ++l) {
            if (l == k) continue;
            for (int e = ++deg; e >= 0; --e)
                poly[e] = (e > 0 ? poly[e - 1] : 0) - POINTS[l] * poly[e];
        }
        for (int e = 0; e < 6; ++e) bt[k * 6 + e] = poly[e];
    }
    at[3 * 6 + 5] = 1;
    g[5 * 3 + 2] = 1;
    double poly[6] = {1, 0, 0, 0, 0, 0};
    for (int l = 0, deg = 0; l < 5; ++l)
        for (int e = ++deg; e >= 0; --e) poly[e] = (e > 0 ? poly[e - 1] : 0) - POINTS[l] * poly[e];
    for (int e = 0; e < 6; ++e) bt[5 * 6 + e] = poly[e];
}

int bdnn_wino_f43_matrices(double *bt, double *g, double *at) {
    wino_f43_matrices(bt, g, at);
    return BDNN_STATUS_OK;
}

typedef struct {
    const conv_wino_ker_t *k;
    int64_t icg, ocg, th, tw, tiles, tb, nblk, ocb, npan_oc;
    int team;          /* the threads work each block together (see the file comment) */
    int64_t vstride;   /* floats between the 36 positions' parts of V */
    int64_t v_floats, m_floats, patch_floats, out_floats, thr_floats;
    int64_t v_slot;    /* floats of V's slot: per thread, or in team mode once, first */
    float *scratch;   /* per thread: V, M, patch, out (team mode: V, then per thread the rest) */
} wino_plan_t;

int bdnn_wino_f43_takes(const struct bdnn_conv *c, int own_fault) {
    const bdnn_conv_desc_t *d = &c->d;
    if (c->dir != BDNN_DIR_FWD || c->lp) return 0;
    if (d->kd != 1 || d->id != 1 || d->od != 1 || d->kh != 3 || d->kw != 3) return 0;
    if (d->sh != 1 || d->sw != 1 || d->dh != 0 || d->dw != 0) return 0;
    return c->fault == BDNN_FAULT_NONE || c->fault == BDNN_FAULT_WINO_COEF
        || c->fault == BDNN_FAULT_SUM_SCALE_DROPPED || c->fault == BDNN_FAULT_CRASH
        || c->fault == own_fault;
}

void bdnn_wino_f43_weights(const struct bdnn_conv *c, const float *w, double *u) {
    double bt[36], g[18], at[24];
    wino_f43_matrices(bt, g, at);
    if (c->fault == BDNN_FAULT_WINO_COEF) g[3 * 3 + 0] = 1.0 / 25;
    double t[18];   /* G g: 6x3 */
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 3; ++j)
            t[i * 3 + j] = g[i * 3] * w[j] + g[i * 3 + 1] * w[3 + j] + g[i * 3 + 2] * w[6 + j];
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j)
            u[i * 6 + j] = t[i * 3] * g[j * 3] + t[i * 3 + 1] * g[j * 3 + 1]
                         + t[i * 3 + 2] * g[j * 3 + 2];
}

static int wino_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    if (!bdnn_wino_f43_takes(c, BDNN_FAULT_NONE)) return BDNN_STATUS_UNIMPLEMENTED;
    const conv_wino_ker_t *k = c->impl->kernel;
    wino_plan_t *p = calloc(1, sizeof(*p));
    if (!p) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = p;
    const int64_t mr = k->mr, nr = k->ukr->nr;
    p->k = k;
    p->icg = d->ic / d->g, p->ocg = d->oc / d->g;
    p->th = bdnn_div_up(d->oh, 4), p->tw = bdnn_div_up(d->ow, 4);
    p->tiles = d->mb * p->th * p->tw;
    /* Tiles per block (see VP_BYTES), at least one MR panel; fewer when that leaves
     * threads without two blocks each, except in team mode; then split evenly. */
    const int small_u = 36 * 4 * p->icg * p->ocg <= U_SMALL_BYTES;
    int64_t panels = V_L2_BYTES / (36 * 4 * p->icg * mr);
    if (!small_u) {
        panels = VP_BYTES / (4 * p->icg * mr);
        if (panels > V_BYTES / (36 * 4 * p->icg * mr)) panels = V_BYTES / (36 * 4 * p->icg * mr);
    }
    panels = panels < 1 ? 1 : panels > TB_PANELS_MAX ? TB_PANELS_MAX : panels;
    const int64_t tile_panels = bdnn_div_up(p->tiles, mr);
    if (panels > tile_panels) panels = tile_panels;
    p->team = !small_u && c->nthr > 1 && d->g * bdnn_div_up(tile_panels, panels) < 2 * c->nthr;
    if (p->team) {
        panels = TEAM_V_BYTES / (36 * 4 * p->icg * mr);
        panels = panels < 1 ? 1 : panels > tile_panels ? tile_panels : panels;
    }
    while (!p->team && panels > 1 && d->g * bdnn_div_up(tile_panels, panels) < 2 * c->nthr)
        --panels;
    panels = bdnn_div_up(tile_panels, bdnn_div_up(tile_panels, panels));
    p->tb = panels * mr;
    p->nblk = bdnn_div_up(p->tiles, p->tb);
    p->npan_oc = bdnn_div_up(p->ocg, nr);
    int64_t ocp = (small_u ? M_L2_BYTES : M_BYTES) / (36 * 4 * p->tb * nr);
    ocp = ocp < 1 ? 1 : ocp > p->npan_oc ? p->npan_oc : ocp;
    /* team mode: equal oc blocks, as many per thread, where some split gives them */
    while (p->team && ocp > 1 && (p->npan_oc % ocp || p->npan_oc / ocp % c->nthr)) --ocp;
    p->ocb = ocp * nr;
    /* The input transform writes the 36 parts of V together: a cache line of slack
     * between them keeps their distance off multiples of 4 KiB, where every store would
     * alias the last one in L1 (4K aliasing). M is tile-major ([tile][p][oc]): the output
     * transform reads each tile's 36 x ocb values as one contiguous run. */
    p->vstride = p->tb * p->icg + 16;
    p->v_floats = 36 * p->vstride;
    p->m_floats = 36 * p->tb * p->ocb;
    p->patch_floats = 36 * mr;
    p->out_floats = 16 * p->ocb;
    /* each part a whole number of cache lines */
    p->v_slot = bdnn_div_up(p->v_floats, 16) * 16;
    p->thr_floats = (p->team ? 0 : p->v_slot) + bdnn_div_up(p->m_floats, 16) * 16
                  + bdnn_div_up(p->patch_floats, 16) * 16 + p->out_floats;
    if (conv_scratch((void **)&p->scratch,
                     sizeof(float) * (size_t)(p->thr_floats * c->nthr
                                              + (p->team ? p->v_slot : 0))))
        return BDNN_STATUS_OUT_OF_MEMORY;
    return BDNN_STATUS_OK;
}

static void wino_fini(struct bdnn_conv *c) {
    wino_plan_t *p = c->plan;
    if (!p) return;
    free(p->scratch);
    free(p);
    c->plan = NULL;
}

static size_t wino_weights_bytes(const struct bdnn_conv *c) {
    const wino_plan_t *p = c->plan;
    return sizeof(float) * (size_t)(c->d.g * 36 * p->npan_oc * p->k->ukr->nr * p->icg);
}

/* U = G g G^T (bdnn_wino_f43_weights) rounded once to f32, into the micro-kernel's
 * B panels. */
static void wino_pack_weights(const struct bdnn_conv *c, const void *wei_, void *packed) {
    const wino_plan_t *p = c->plan;
    const float *wei = wei_;
    float *u = packed;
    const int64_t nr = p->k->ukr->nr, icg = p->icg, ocg = p->ocg;
    memset(u, 0, wino_weights_bytes(c));
#pragma omp parallel for collapse(2) schedule(static) num_threads(c->nthr)
    for (int64_t gr = 0; gr < c->d.g; ++gr)
        for (int64_t oc = 0; oc < ocg; ++oc)
            for (int64_t ic = 0; ic < icg; ++ic) {
                double uw[36];
                bdnn_wino_f43_weights(c, wei + ((gr * ocg + oc) * icg + ic) * 9, uw);
                for (int pos = 0; pos < 36; ++pos)
                    u[(((gr * 36 + pos) * p->npan_oc + oc / nr) * icg + ic) * nr + oc % nr] =
                        (float)uw[pos];
            }
}

/* The 6x6 patches of mr consecutive tiles from t0 (tiles past the last read zeros), for
 * every input channel, through the input transform into V's packed panels. */
static void transform_src(const struct bdnn_conv *c, const wino_plan_t *p, const float *src,
                          int64_t gr, int64_t t0, int64_t panel, float *v, float *patch) {
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t mr = p->k->mr, ih = d->ih, iw = d->iw, per_img = p->th * p->tw;
    int64_t y0[32], x0[32], base[32];
    int inside[32], valid[32];
    for (int64_t r = 0; r < mr; ++r) {
        const int64_t t = t0 + panel * mr + r;
        valid[r] = t < p->tiles;
        if (!valid[r]) continue;
        const int64_t n = t / per_img, ty = t % per_img / p->tw, tx = t % p->tw;
        y0[r] = 4 * ty - d->ph, x0[r] = 4 * tx - d->pw;
        inside[r] = y0[r] >= 0 && y0[r] + 6 <= ih && x0[r] >= 0 && x0[r] + 6 <= iw;
        base[r] = (n * d->ic + gr * p->icg) * ih * iw;
    }
    const int64_t vstride = p->vstride;
    for (int64_t ic = 0; ic < p->icg; ++ic) {
        for (int64_t r = 0; r < mr;) {
            if (!valid[r]) {
                for (int q = 0; q < 36; ++q) patch[q * mr + r] = 0;
                ++r;
                continue;
            }
            const float *plane = src + base[r] + ic * ih * iw;
            if (inside[r]) {   /* a run of adjacent tiles inside the input: vector loads */
                int64_t cnt = 1;
                while (r + cnt < mr && valid[r + cnt] && inside[r + cnt]
                       && base[r + cnt] == base[r] && y0[r + cnt] == y0[r]
                       && x0[r + cnt] == x0[r] + 4 * cnt)
                    ++cnt;
                p->k->gather(plane + y0[r] * iw + x0[r], iw, patch, r, cnt);
                r += cnt;
                continue;
            }
            for (int i = 0; i < 6; ++i) {
                const int64_t y = y0[r] + i;
                for (int j = 0; j < 6; ++j) {
                    const int64_t x = x0[r] + j;
                    patch[(i * 6 + j) * mr + r] =
                        y >= 0 && y < ih && x >= 0 && x < iw ? plane[y * iw + x] : 0.0f;
                }
            }
            ++r;
        }
        p->k->src_tf(patch, v + (panel * p->icg + ic) * mr, vstride);
    }
}

/* Oc block [oc0, oc0 + ocb) of the block of nt tiles from t0 (its V in v): the 36 GEMMs
 * into m, then per tile the output transform, bias, post-ops and the store. */
static void oc_block(const struct bdnn_conv *c, const wino_plan_t *p,
                     const bdnn_conv_args_t *args, int64_t gr, int64_t t0, int64_t nt,
                     int64_t oc0, const float *v, float *m, float *out) {
    const bdnn_conv_desc_t *d = &c->d;
    const float *u = args->wei, *bias = args->bias;
    float *dst = args->dst;
    const conv_gemm_ukr_t *ukr = p->k->ukr;
    const int64_t mr = p->k->mr, nr = ukr->nr, icg = p->icg, ocg = p->ocg;
    const int64_t per_img = p->th * p->tw, oh = d->oh, ow = d->ow, panels = bdnn_div_up(nt, mr);
    int has_sum;
    const float sum_scale = bdnn_post_ops_sum_scale(c, &has_sum);
    const int has_eltwise = c->n_post_ops > has_sum;
    const int64_t nc = ocg - oc0 < p->ocb ? ocg - oc0 : p->ocb;
    const int64_t jpan = bdnn_div_up(nc, nr);
    for (int64_t pos = 0; pos < 36; ++pos)
        for (int64_t k0 = 0; k0 < icg; k0 += KC) {
            const int64_t kc = icg - k0 < KC ? icg - k0 : KC;
            const int mode = k0 == 0 ? UKR_WRITE : UKR_ACCUMULATE;
            for (int64_t j = 0; j < jpan; ++j) {
                const float *b = u + (((gr * 36 + pos) * p->npan_oc + oc0 / nr + j)
                                      * icg + k0) * nr;
                const int64_t ncj = nc - j * nr < nr ? nc - j * nr : nr;
                for (int64_t i = 0; i < panels; ++i) {
                    const int64_t mri = nt - i * mr < mr ? nt - i * mr : mr;
                    ukr->fn(kc, v + pos * p->vstride + (i * icg + k0) * mr, b, nr,
                            m + (i * mr * 36 + pos) * p->ocb + j * nr, 36 * p->ocb,
                            mri, ncj, mode, NULL, 0.0f, 0.0f);
                }
            }
        }
    for (int64_t t = 0; t < nt; ++t) {
        const int64_t tg = t0 + t, n = tg / per_img;
        const int64_t oy = tg % per_img / p->tw * 4, ox = tg % p->tw * 4;
        const int64_t rows = oh - oy < 4 ? oh - oy : 4, cols = ow - ox < 4 ? ow - ox : 4;
        p->k->dst_tf(m + t * 36 * p->ocb, p->ocb, nc, out, p->ocb);
        float *dbase = dst + ((n * d->oc + gr * ocg + oc0) * oh + oy) * ow + ox;
        const float *bch = bias ? bias + gr * ocg + oc0 : NULL;
        if (bch || has_sum)
            for (int64_t ch = 0; ch < nc; ++ch) {
                const float b = bch ? bch[ch] : 0.0f;
                for (int64_t i = 0; i < rows; ++i)
                    for (int64_t jj = 0; jj < cols; ++jj) {
                        float *o = &out[(i * 4 + jj) * p->ocb + ch];
                        *o += b;
                        if (has_sum) *o += sum_scale * dbase[ch * oh * ow + i * ow + jj];
                    }
            }
        if (has_eltwise) bdnn_post_ops_eltwise(c, out, p->ocb, 16, nc);
        for (int64_t ch = 0; ch < nc; ++ch)
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t jj = 0; jj < cols; ++jj)
                    dbase[ch * oh * ow + i * ow + jj] = out[(i * 4 + jj) * p->ocb + ch];
    }
}

static void wino_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *args) {
    const wino_plan_t *p = c->plan;
    const float *src = args->src;
    const int64_t mr = p->k->mr, tb = p->tb, n_ocb = bdnn_div_up(p->ocg, p->ocb);
    const int64_t items = c->d.g * p->nblk;
#pragma omp parallel num_threads(c->nthr)
    {
        float *own = p->scratch + (p->team ? p->v_slot : 0) + p->thr_floats * omp_get_thread_num();
        float *v = p->team ? p->scratch : own;
        float *m = p->team ? own : own + p->v_slot;
        float *patch = m + bdnn_div_up(p->m_floats, 16) * 16;
        float *out = patch + bdnn_div_up(p->patch_floats, 16) * 16;
        if (p->team) {
            for (int64_t item = 0; item < items; ++item) {   /* every thread, together */
                const int64_t gr = item / p->nblk, t0 = item % p->nblk * tb;
                const int64_t nt = p->tiles - t0 < tb ? p->tiles - t0 : tb;
#pragma omp for schedule(static)
                for (int64_t pn = 0; pn < bdnn_div_up(nt, mr); ++pn)
                    transform_src(c, p, src, gr, t0, pn, v, patch);
#pragma omp for schedule(dynamic, 1)
                for (int64_t ob = 0; ob < n_ocb; ++ob)
                    oc_block(c, p, args, gr, t0, nt, ob * p->ocb, v, m, out);
            }
        } else {
#pragma omp for schedule(dynamic, 1)
            for (int64_t item = 0; item < items; ++item) {
                const int64_t gr = item / p->nblk, t0 = item % p->nblk * tb;
                const int64_t nt = p->tiles - t0 < tb ? p->tiles - t0 : tb;
                for (int64_t pn = 0; pn < bdnn_div_up(nt, mr); ++pn)
                    transform_src(c, p, src, gr, t0, pn, v, patch);
                for (int64_t ob = 0; ob < n_ocb; ++ob)
                    oc_block(c, p, args, gr, t0, nt, ob * p->ocb, v, m, out);
            }
        }
    }
}

const conv_impl_ops_t bdnn_conv_wino_ops = {
    wino_init, wino_weights_bytes, wino_pack_weights, wino_execute, wino_fini, NULL,
};
