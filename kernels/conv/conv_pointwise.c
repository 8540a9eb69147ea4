/* gemm_conv_blocked's pointwise route (rows gemm_conv_blocked:<isa>:pointwise): backward
 * weights of a pointwise convolution with both tensors read in place (the kernels and
 * their contract: conv_pointwise.h). Preconditions (init refuses others): backward
 * weights, f32, one group, every kernel size 1 at unit stride without padding (so the
 * output is the input's size), channel blocks of 8 or 16, input and output channels in
 * whole 8s (a block's padded tail is never read).
 *
 * Work items are (up to PW_MAX_NB blocks of 8 output channels, 8 input channels: 16
 * where the weights' rows would share L1's sets, see PW_STAGED_IC); threads
 * own contiguous ranges of them, output channels outermost (a thread's consecutive items
 * then read the same diff_dst rows). The reduction runs in k blocks of about PW_POINTS
 * points (of one image, or of whole images where an image is shorter), every item of the
 * thread over a block before the next. Each item writes its sums into the user's weights
 * on the first block and adds to them on the others: no scratch and no final pass, but
 * every block loads and stores all of the thread's weights once, so the blocks are long
 * (short ones, which would keep an item's diff_dst rows in L1, made that traffic the
 * larger cost on layers with many input channels); an item's diff_dst rows of a block
 * (nb x 8 channels x PW_POINTS points, 96 KiB) stay in L2 while the items that share
 * them run. */
#include "conv_gemm_nhwc.h"
#include "conv_pointwise.h"

enum { PW_POINTS = 1024 };
/* Weight rows a multiple of BDNN_ALIAS_BYTES apart fall in one set of L1: an item's 24
 * rows then outnumber its ways, and each row's line, written in four 16-byte pieces by
 * two items' two calls each, is missed on every piece. Such weights are staged: an item
 * of PW_STAGED_IC input channels has its calls write its sums into a small buffer, then
 * writes (or adds) each row's 64 bytes at once. */
enum { PW_STAGED_IC = 16 };

typedef struct {
    const conv_pw_ker_t *k;
    int64_t items;            /* (up to PW_MAX_NB 8-channel output blocks, icw input channels) */
    int64_t kp, kn;           /* a k block's points (of one image) and images */
    int64_t icw;              /* input channels per item: 8, or PW_STAGED_IC (staged) */
} pw_plan_t;

int bdnn_pointwise_applies(const struct bdnn_conv *c) {
    return c->dir == BDNN_DIR_BWD_WEIGHTS;
}

static int pw_init(struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const int layout = c->attr.layout;
    if (c->lp || c->operands != OPERANDS_F32
            || (c->fault != BDNN_FAULT_NONE && c->fault != BDNN_FAULT_SKIP_LAST_IC)
            || d->g != 1
            || (layout != BDNN_LAYOUT_BLOCKED8 && layout != BDNN_LAYOUT_BLOCKED16)
            || d->kd != 1 || d->kh != 1 || d->kw != 1 || d->sd != 1 || d->sh != 1
            || d->sw != 1 || !bdnn_reads_no_padding(d) || d->id != d->od || d->ih != d->oh
            || d->iw != d->ow || d->ic % 8 || d->oc % 8)
        return BDNN_STATUS_UNIMPLEMENTED;
    pw_plan_t *q = calloc(1, sizeof(*q));
    if (!q) return BDNN_STATUS_OUT_OF_MEMORY;
    c->plan = q;
    q->k = (const conv_pw_ker_t *)c->impl->kernel;
    /* (rows BDNN_ALIAS_BYTES apart hold whole multiples of PW_STAGED_IC channels) */
    q->icw = (d->ic * (int64_t)sizeof(float)) % BDNN_ALIAS_BYTES == 0 ? PW_STAGED_IC : 8;
    q->items = bdnn_div_up(d->oc / 8, PW_MAX_NB) * (d->ic / q->icw);
    /* k blocks: PW_POINTS points of one image, evenly cut; or whole images, as many as
     * make up PW_POINTS points (7 x 7 outputs: 49 points an image, 20 images a block) */
    const int64_t points = out_points(d);
    if (points >= PW_POINTS) {
        q->kp = bdnn_div_up(points, bdnn_div_up(points, PW_POINTS)), q->kn = 1;
    } else {
        q->kp = points, q->kn = points > 0 ? PW_POINTS / points : 1;
    }
    return BDNN_STATUS_OK;
}

/* (backward weights only: the weights are the output, nothing to pack) */
static size_t pw_weights_bytes(const struct bdnn_conv *c) { return 0; }

static void pw_pack_weights(const struct bdnn_conv *c, const void *wei, void *packed) {}

/* Item it's first output block ob, its nb blocks and its first input channel ic0 (ICW
 * input channels an item, ICBW items along IC): output blocks outermost. */
static inline void pw_item(int64_t it, int64_t OCB8, int64_t ICBW, int64_t ICW, int64_t *ob,
                           int *nb, int64_t *ic0) {
    *ob = it / ICBW * PW_MAX_NB, *ic0 = it % ICBW * ICW;
    *nb = (int)min64(PW_MAX_NB, OCB8 - *ob);
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
    const bdnn_conv_desc_t *d = &c->d;
    const int64_t points = out_points(d), IC = d->ic, OCB8 = d->oc / 8, ICW = q->icw,
                  ICBW = IC / ICW;
    const int staged = ICW == PW_STAGED_IC;
    const act_t ts = act_of(c, IC, in_points(d)), td = act_of(c, d->oc, points);
    const float *src = a->src, *diff_dst = a->diff_dst;
    float *diff_wei = a->diff_wei;
#pragma omp parallel num_threads(c->nthr)
    {
        for (int tid = omp_get_thread_num(); tid < c->nthr; tid += omp_get_num_threads()) {
            const int64_t it0 = q->items * tid / c->nthr, it1 = q->items * (tid + 1) / c->nthr;
            if (d->mb == 0 || points == 0)   /* no points: the sums are zeros */
                for (int64_t it = it0, ob, ic0; it < it1; ++it) {
                    int nb;
                    pw_item(it, OCB8, ICBW, ICW, &ob, &nb, &ic0);
                    for (int64_t oc = ob * 8; oc < (ob + nb) * 8; ++oc)
                        memset(diff_wei + oc * IC + ic0, 0, sizeof(float) * (size_t)ICW);
                }
            int first = 1;
            float rows[PW_MAX_NB * 8 * PW_STAGED_IC] __attribute__((aligned(64)));
            for (int64_t n0 = 0; n0 < d->mb; n0 += q->kn)            /* k blocks */
            for (int64_t p0 = 0; p0 < points; p0 += q->kp, first = 0) {
                pw_call_t k = {.pt = ts.B, .points = min64(q->kp, points - p0),
                               .imgs = min64(q->kn, d->mb - n0), .dd_img = td.img,
                               .s_img = ts.img, .ldw = staged ? ICW : IC,
                               .accumulate = !staged && !first};
                for (int64_t it = it0, ob, ic0; it < it1; ++it) {     /* items */
                    pw_item(it, OCB8, ICBW, ICW, &ob, &k.nb, &ic0);
                    for (int j = 0; j < k.nb; ++j)
                        k.dd[j] = diff_dst + n0 * td.img + at(&td, (ob + j) * 8, p0);
                    for (int64_t i0 = ic0; i0 < ic0 + ICW; i0 += 4) {   /* input quads */
                        k.s = src + n0 * ts.img + at(&ts, i0, p0);
                        k.w = staged ? rows + (i0 - ic0) : diff_wei + ob * 8 * IC + i0;
                        q->k->fn(&k);
                    }
                    if (staged)   /* each row's line of sums at once */
                        for (int64_t o = 0; o < 8 * k.nb; ++o)
                            pw_row_out(diff_wei + (ob * 8 + o) * IC + ic0, rows + o * ICW,
                                       first);
                }
            }
            /* the test defect: the last input channel dropped (its sums never added) */
            for (int64_t it = it0, ob, ic0; c->fault == BDNN_FAULT_SKIP_LAST_IC && it < it1;
                 ++it) {
                int nb;
                pw_item(it, OCB8, ICBW, ICW, &ob, &nb, &ic0);
                for (int64_t oc = ob * 8; ic0 + ICW == IC && oc < (ob + nb) * 8; ++oc)
                    diff_wei[oc * IC + IC - 1] = 0.0f;
            }
        }
        if (a->bias) bdnn_nhwc_bias_sums(c, diff_dst, (float *)a->bias);
    }
}

static void pw_fini(struct bdnn_conv *c) {
    free(c->plan);
    c->plan = NULL;
}

const conv_impl_ops_t bdnn_conv_pointwise_ops = {
    pw_init, pw_weights_bytes, pw_pack_weights, pw_execute, pw_fini, NULL,
};
