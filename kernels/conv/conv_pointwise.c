/* gemm_conv_blocked's pointwise route (rows gemm_conv_blocked:<isa>:pointwise): backward
 * weights of a pointwise convolution with both tensors read in place (the kernels and
 * their contract: conv_pointwise.h). Preconditions (init refuses others): backward
 * weights, f32, one group, every kernel size 1 without padding, at unit stride (the
 * output is then the input's size) or, in 1D and 2D, strided, channel blocks whose width
 * the kernel's vector divides, the vectors' channels in whole vectors and the broadcast
 * ones in whole 8s and whole calls (a block's padded tail is never read).
 *
 * Work items are (up to PW_MAX_NB vectors' channels, xw broadcast channels: the larger of
 * the kernel's nx and 8; 16 where AVX2's weight rows would share L1's sets, see
 * PW_STAGED_IC); threads own contiguous ranges of them, in the order x_outer says (a
 * thread's consecutive items then read the same rows of one tensor). The reduction runs in k
 * blocks of about PW_POINTS points (of one image, or of whole images where an image is
 * shorter: at unit stride a run of points, strided whole output rows), every item of the
 * thread over a block before the next. Each item writes its sums into the user's weights on
 * the first block and adds to them on the others: no scratch and no final pass, but every
 * block loads and stores all of the thread's weights once, so the blocks are long (short
 * ones, which would keep an item's vector rows in L1, made that traffic the larger cost on
 * layers with many input channels). */
#include "conv_gemm_nhwc.h"
#include "conv_pointwise.h"

enum { PW_POINTS = 1024 };
/* A kernel with a twin (AVX2's: 8 output channels in the lanes, the twin 8 input
 * channels) leaves a layer to the twin with input channels in the lanes where the layer
 * has more input than output channels (their vectors then fill the tiles), or where a
 * call sums fewer than PW_SHORT_CALL points: there the output-channel kernel's transposed
 * store weighs beside the products (7 x 7 and 14 x 14 layers at mb1). Elsewhere the
 * output-channel kernel ran as fast or faster (ResNet-50's res2a layers and MobileNet
 * v2's expansions at mb16). */
enum { PW_SHORT_CALL = 256 };
/* AVX2 oc8's weight rows (its sums are columns of the weights) a multiple of
 * BDNN_ALIAS_BYTES apart fall in one set of L1: an item's 24 rows then outnumber its ways,
 * and each row's line, written in four 16-byte pieces by two items' two calls each, is
 * missed on every piece. Such weights are staged: an item of PW_STAGED_IC input channels
 * has its calls write its sums into a small buffer, then writes (or adds) each row's 64
 * bytes at once. (The ic8 and AVX-512 kernels' sums are runs of rows.) */
enum { PW_STAGED_IC = 16, PW_MAX_VL = 16 };

typedef struct {
    const conv_pw_ker_t *k;
    int64_t items;            /* (up to PW_MAX_NB vectors' channels, xw broadcast ones) */
    int strided;              /* k blocks of output rows (else runs of points) */
    int64_t kb, kn;           /* a k block's points or rows (of one image) and images */
    int64_t xw;               /* broadcast channels per item: nx or 8, or PW_STAGED_IC */
    int staged;               /* the sums staged per item (AVX2's aliasing rows) */
    /* Items in the order that keeps the smaller tensor's k block in L2 while the larger
     * one's streams past once: vectors outermost (each group of vectors meets every run
     * of broadcasts, which are read again per group) where the broadcasts' tensor has at
     * most the vectors' channels, else broadcast runs outermost (each meets every group
     * of vectors, read again per run). The other way round, the larger block, past L2,
     * came from L3 once per group (or run). */
    int x_outer;
    /* The items' operands, decoded at init so that a call (one item on AVX-512, 49 points
     * an image on 7 x 7 layers) costs no division: groups of vectors (the first of group g
     * vb_of[g], its vectors' offsets v_at[g][j] from an image's first element at point 0)
     * and runs of broadcasts (x_at[x], likewise) */
    int64_t groups, xbw;
    int64_t *vb_of, (*v_at)[PW_MAX_NB], *x_at;
} pw_plan_t;

int bdnn_pointwise_applies(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_WEIGHTS;
}

static int pw_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const int layout = c->attr.layout;
    const int unit = d->sd == 1 && d->sh == 1 && d->sw == 1;
    /* k blocks: PW_POINTS points of one image, evenly cut (strided: into whole output
     * rows, whose input points are one step apart); or whole images, as many as make up
     * PW_POINTS points (7 x 7 outputs: 49 points an image, 20 images a block) */
    const int64_t points = out_points(d), span = unit ? points : d->oh;
    const int64_t kb = points >= PW_POINTS ? bdnn_div_up(span, bdnn_div_up(points, PW_POINTS))
                                           : span,
                  kn = points >= PW_POINTS ? 1 : points > 0 ? PW_POINTS / points : 1;
    /* the row's kernel, or its twin with the other tensor's channels in the lanes
     * (conv_pw_ker_t.twin) where the twin's rule holds: a call's points */
    const conv_pw_ker_t *k = (const conv_pw_ker_t *)c->impl->kernel;
    const int64_t call_points = min64(kn, d->mb) * kb * (unit ? 1 : d->ow);
    const int ic_lanes = d->ic > d->oc || call_points < PW_SHORT_CALL;
    if (k->twin && k->lanes_ic != ic_lanes) k = k->twin;
    const int64_t VC = k->lanes_ic ? d->ic : d->oc, XC = k->lanes_ic ? d->oc : d->ic;
    if (c->lp || c->operands != OPERANDS_F32
            || (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SKIP_LAST_IC)
            || d->g != 1
            || (layout != BDNN_LAYOUT_BLOCKED8 && layout != BDNN_LAYOUT_BLOCKED16)
            || bdnn_layout_block(layout) % k->vl
            || d->kd != 1 || d->kh != 1 || d->kw != 1 || !bdnn_reads_no_padding(d)
            || (unit ? d->id != d->od || d->ih != d->oh || d->iw != d->ow
                     : d->id != 1 || d->od != 1)
            || VC % k->vl || XC % 8 || XC % k->nx)
        return BDNN_STATUS_UNIMPLEMENTED;
    pw_plan_t *q = calloc(1, sizeof(*q));
    if (!q) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = q;
    q->k = k;
    /* (rows BDNN_ALIAS_BYTES apart hold whole multiples of PW_STAGED_IC channels) */
    q->staged = !k->lanes_ic && (d->ic * (int64_t)sizeof(float)) % BDNN_ALIAS_BYTES == 0;
    q->xw = q->staged ? PW_STAGED_IC : k->nx > 8 ? k->nx : 8;
    const int64_t VB = VC / k->vl;
    q->groups = bdnn_div_up(VB, PW_MAX_NB);
    q->xbw = XC / q->xw;
    q->items = q->groups * q->xbw;
    q->x_outer = XC > VC;
    q->strided = !unit;
    q->kb = kb, q->kn = kn;
    if (k->variant) c->variant = &k->variant;
    /* (one entry more than used: never an empty allocation) */
    q->vb_of = malloc(sizeof(*q->vb_of) * (size_t)(q->groups + 1));
    q->v_at = malloc(sizeof(*q->v_at) * (size_t)(q->groups + 1));
    q->x_at = malloc(sizeof(*q->x_at) * (size_t)(q->xbw + 1));
    if (!q->vb_of || !q->v_at || !q->x_at) return BDNN_STATUS_OUT_OF_MEMORY;
    const act_t ts = act_of(c, d->ic, in_points(d)), td = act_of(c, d->oc, points);
    const act_t tv = k->lanes_ic ? ts : td, tx = k->lanes_ic ? td : ts;
    /* (the vectors go in the fewest groups of at most PW_MAX_NB, evenly cut: 4 vectors are
     * 2 groups of 2, where as 3 and 1 the thread with the single vector ran a third of the
     * products in as many steps) */
    for (int64_t g = 0; g <= q->groups; ++g) q->vb_of[g] = VB * g / q->groups;
    for (int64_t g = 0; g < q->groups; ++g)
        for (int64_t j = 0; j < PW_MAX_NB; ++j)
            q->v_at[g][j] = q->vb_of[g] + j < q->vb_of[g + 1]
                                ? at(&tv, (q->vb_of[g] + j) * k->vl, 0) : 0;
    for (int64_t x = 0; x < q->xbw; ++x) q->x_at[x] = at(&tx, x * q->xw, 0);
    return BDNN_STATUS_OK;
}

/* (backward weights only: the weights are the output, nothing to pack) */
static size_t pw_weights_bytes(const struct bdnn_conv *c) { return 0; }

static void pw_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {}

/* Item it: its group of vectors g and run of broadcasts x (x_outer: which of the two is
 * outermost) */
static inline void pw_item(const pw_plan_t *q, int64_t it, int64_t *g, int64_t *x) {
    *g = q->x_outer ? it % q->groups : it / q->xbw;
    *x = q->x_outer ? it / q->groups : it % q->xbw;
}

/* ... and the next item's, from this one's */
static inline void pw_next(const pw_plan_t *q, int64_t *g, int64_t *x) {
    if (q->x_outer) {
        if (++*g == q->groups) *g = 0, ++*x;
    } else if (++*x == q->xbw) {
        *x = 0, ++*g;
    }
}

/* The weights item it computes: output channels [oc0, oc1), input channels [ic0, ic1). */
static void pw_item_weights(const pw_plan_t *q, int64_t it, int64_t *oc0, int64_t *oc1,
                            int64_t *ic0, int64_t *ic1) {
    int64_t g, x;
    pw_item(q, it, &g, &x);
    const int64_t v0 = q->vb_of[g] * q->k->vl, v1 = q->vb_of[g + 1] * q->k->vl, x0 = x * q->xw;
    if (q->k->lanes_ic)
        *oc0 = x0, *oc1 = x0 + q->xw, *ic0 = v0, *ic1 = v1;
    else
        *oc0 = v0, *oc1 = v1, *ic0 = x0, *ic1 = x0 + q->xw;
}

/* A staged row: PW_STAGED_IC sums written to w (first k block) or added to it. */
static inline void pw_row_out(float *restrict w, const float *restrict sums, int first) {
    if (first)
        memcpy(w, sums, sizeof(float) * PW_STAGED_IC);
    else
        for (int i = 0; i < PW_STAGED_IC; ++i) w[i] += sums[i];
}

static void pw_execute(const struct bdnn_conv *c, const bdnn_conv_args_t *a) {
    const pw_plan_t *q = c->plan;
    const conv_pw_ker_t *ker = q->k;
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t points = out_points(d), IC = d->ic, XW = q->xw, vl = ker->vl,
                  nx = ker->nx;
    const int lanes_ic = ker->lanes_ic, staged = q->staged;
    const act_t ts = act_of(c, IC, in_points(d)), td = act_of(c, d->oc, points);
    /* the vectors' tensor and the broadcasts' (AVX2: diff_dst's vectors, src broadcast) */
    const act_t tv = lanes_ic ? ts : td, tx = lanes_ic ? td : ts;
    /* src's steps: strided, a row of output points reads every sw-th point of every sh-th
     * input row */
    const int strided = q->strided;
    const pw_steps_t ss = {ts.img, d->sh * d->iw * ts.B, (strided ? d->sw : 1) * ts.B},
                     sd = {td.img, d->ow * td.B, td.B};
    const int64_t span = strided ? d->oh : points;
    /* Weights written in one pass (one k block: all images, the whole span) go past the
     * caches by the size rule of backward weights (bdnn_bwt_streams_weights) where the
     * kernel writes whole lines: its rows (IC in whole vectors) start on lines */
    const int stream = ker->streams && q->kn >= d->mb && q->kb >= span
        && (uintptr_t)a->diff_wei % (sizeof(float) * (size_t)vl) == 0
        && bdnn_bwt_streams_weights(d->oc * IC * (int64_t)sizeof(float), d->mb * points);
    const float *vt = lanes_ic ? a->src : a->diff_dst, *xt = lanes_ic ? a->diff_dst : a->src;
    /* an item's calls' broadcasts from its first one's where its channels are one block's
     * (its width divides the block's) */
    const int x_one_block = tx.B == tx.C || tx.B % XW == 0;
    float *diff_wei = a->diff_wei;
#pragma omp parallel num_threads(c->nthr)
    {
        for (int tid = omp_get_thread_num(); tid < c->nthr; tid += omp_get_num_threads()) {
            const int64_t it0 = q->items * tid / c->nthr, it1 = q->items * (tid + 1) / c->nthr;
            if (d->mb == 0 || points == 0)   /* no points: the sums are zeros */
                for (int64_t it = it0, oc0, oc1, ic0, ic1; it < it1; ++it) {
                    pw_item_weights(q, it, &oc0, &oc1, &ic0, &ic1);
                    for (int64_t oc = oc0; oc < oc1; ++oc)
                        memset(diff_wei + oc * IC + ic0, 0, sizeof(float) * (size_t)(ic1 - ic0));
                }
            int first = 1;
            float rows[PW_MAX_NB * PW_MAX_VL * PW_STAGED_IC] __attribute__((aligned(64)));
            for (int64_t n0 = 0; n0 < d->mb; n0 += q->kn)            /* k blocks */
            for (int64_t b0 = 0; b0 < span; b0 += q->kb, first = 0) {
                const int64_t nb0 = min64(q->kb, span - b0);
                /* the block's first point in src and in diff_dst */
                const int64_t ps = strided ? b0 * d->sh * d->iw : b0,
                              pd = strided ? b0 * d->ow : b0;
                const int64_t pv = lanes_ic ? ps : pd, px = lanes_ic ? pd : ps;
                pw_call_t k = {.imgs = min64(q->kn, d->mb - n0), .rows = strided ? nb0 : 1,
                               .points = strided ? d->ow : nb0, .vs = lanes_ic ? ss : sd,
                               .xs = lanes_ic ? sd : ss, .ldw = staged ? XW : IC,
                               .accumulate = !staged && !first, .stream = stream,
                               /* (at unit stride, where a run's next points are its next
                                * lines; strided, a row's lines ahead are ones no call
                                * reads, and reading ahead ran slower) */
                               .read_ahead = !strided};
                int64_t g = 0, x = 0;
                if (it0 < it1) pw_item(q, it0, &g, &x);
                for (int64_t it = it0; it < it1; ++it, pw_next(q, &g, &x)) {   /* items */
                    const int64_t vb = q->vb_of[g], x0 = x * XW;
                    k.nb = (int)(q->vb_of[g + 1] - vb);
                    /* (a channel's place at point p: at point 0's, plus p blocks) */
                    for (int j = 0; j < k.nb; ++j)
                        k.v[j] = vt + n0 * tv.img + q->v_at[g][j] + pv * tv.B;
                    const float *x_item = xt + n0 * tx.img + q->x_at[x] + px * tx.B;
                    for (int64_t i0 = x0; i0 < x0 + XW; i0 += nx) {   /* broadcast runs */
                        k.x = x_one_block ? x_item + (i0 - x0)
                                          : xt + n0 * tx.img + at(&tx, i0, px);
                        k.w = staged     ? rows + (i0 - x0)
                            : lanes_ic ? diff_wei + i0 * IC + vb * vl
                                       : diff_wei + vb * vl * IC + i0;
                        ker->fn(&k);
                    }
                    if (staged)   /* each row's line of sums at once */
                        for (int64_t o = 0; o < vl * k.nb; ++o)
                            pw_row_out(diff_wei + (vb * vl + o) * IC + x0, rows + o * XW,
                                       first);
                }
            }
            /* the test defect: the last input channel dropped (its sums never added) */
            for (int64_t it = it0, oc0, oc1, ic0, ic1;
                 c->fault == BDNN_FAULT_SKIP_LAST_IC && it < it1; ++it) {
                pw_item_weights(q, it, &oc0, &oc1, &ic0, &ic1);
                for (int64_t oc = oc0; ic1 == IC && oc < oc1; ++oc)
                    diff_wei[oc * IC + IC - 1] = 0.0f;
            }
        }
        if (stream) bdnn_stream_fence();
        if (a->bias) bdnn_nhwc_bias_sums(c, a->diff_dst, (float *)a->bias);
    }
}

static void pw_fini(struct bdnn_conv *c) {
    pw_plan_t *q = c->plan;
    if (q) free(q->vb_of), free(q->v_at), free(q->x_at);
    free(c->plan);
    c->plan = NULL;
}

const conv_impl_ops_t bdnn_conv_pointwise_ops = {
    pw_init, pw_weights_bytes, pw_pack_weights, pw_execute, pw_fini, NULL,
};
