/* gemm_conv's space-to-depth route (rows <family>:<isa>:s2d): the shift route's loops on
 * the input split into its stride's phases, for bf16 / int8 first layers (few input
 * channels, a stride, several taps). Preconditions: the row's applies
 * (bdnn_gemm_s2d_applies); the weights reorder (conv_gemm.c, s2d_source) and the loops
 * (conv_gemm_shift.c) read the phase problem from the plan. */
#include "conv_gemm.h"

/* Forward, shift route by space-to-depth (bf16 / int8 first layers: few input channels,
 * stride S > 1, several taps; ResNet's 7x7 stride-2 conv1 on 3 channels). Neither route
 * above serves it: the gather route widens, packs and regroups every tap's input per
 * k block (several times a 3x3 layer of the same size), and the shift route
 * needs unit stride. Splitting the input into its S x S phases, phase (py, px) being the
 * points (S*Y + py - PH, S*X + px - PW), makes it a unit-stride problem on the phase
 * planes: IC*S*S channels, ceil(KH/S) x ceil(KW/S) taps, no padding, tap (ky', kx') of
 * phase (py, px) being the original tap (S*ky' + py, S*kx' + px), and zero weights where
 * that lies past the kernel. The padded copy is then built with the phases as channels
 * (and the padding in each lane's own bytes, since phases differ in which points exist),
 * and everything after it is the shift route unchanged. It does up to
 * (S*ceil(K/S) / K)^2 more multiply-adds (1.3x for 7x7 stride 2) on ic*S*S channels a
 * multiple of the dot product's group, where the gather route regrouped ic = 3 into a
 * group of 4 (or 2) per tap. */
enum { S2D_MAX_ICG = SHIFT_MIN_ICG - 1 };

/* One row of space-to-depth lanes: lane x gets, in its b-th channel slot, src[b][(x -
 * lo[b]) * s] for x in [lo[b], hi[b]) (src[b]: the input under column lo[b], or NULL for
 * a row outside the input) and pad[b] elsewhere. The columns inside every channel's range
 * run branch-free with s a constant (stride 2: ResNet's conv1), so the compiler vectorizes
 * them; the edges go lane by lane. Returns the OR of the lanes (pairs16: int8's bound). */
static inline uint32_t s2d_lanes_row(uint32_t *restrict row, int64_t wp, int pack,
                                 const void *const *src, const int64_t *lo, const int64_t *hi,
                                 const uint32_t *pad, uint32_t flip, int64_t s) {
    int64_t in_lo = 0, in_hi = wp;
    for (int b = 0; b < pack; ++b) {
        if (!src[b]) in_lo = wp;
        if (lo[b] > in_lo) in_lo = lo[b];
        if (hi[b] < in_hi) in_hi = hi[b];
    }
    uint32_t any = 0;
    if (in_hi > in_lo) {
        const int64_t n = in_hi - in_lo;
        uint32_t *restrict out = row + in_lo;
        if (pack == 2) {
            const uint16_t *restrict h0 = (const uint16_t *)src[0] + (in_lo - lo[0]) * s;
            const uint16_t *restrict h1 = (const uint16_t *)src[1] + (in_lo - lo[1]) * s;
            for (int64_t t = 0; t < n; ++t)
                out[t] = (uint32_t)h0[t * s] | (uint32_t)h1[t * s] << 16;
        } else {
            const uint8_t *restrict b0 = (const uint8_t *)src[0] + (in_lo - lo[0]) * s;
            const uint8_t *restrict b1 = (const uint8_t *)src[1] + (in_lo - lo[1]) * s;
            const uint8_t *restrict b2 = (const uint8_t *)src[2] + (in_lo - lo[2]) * s;
            const uint8_t *restrict b3 = (const uint8_t *)src[3] + (in_lo - lo[3]) * s;
            for (int64_t t = 0; t < n; ++t) {
                const uint32_t lane = ((uint32_t)b0[t * s] | (uint32_t)b1[t * s] << 8
                                       | (uint32_t)b2[t * s] << 16 | (uint32_t)b3[t * s] << 24)
                                    ^ flip;
                out[t] = lane;
                any |= lane;
            }
        }
    } else {
        in_lo = in_hi = wp;
    }
    for (int64_t x = 0; x < wp; ++x) {
        if (x == in_lo) x = in_hi;
        if (x >= wp) break;
        uint32_t lane = 0;
        for (int b = 0; b < pack; ++b) {
            const int bits = 32 / pack * b;
            const int inside = src[b] && x >= lo[b] && x < hi[b];
            const int64_t at = inside ? (x - lo[b]) * s : 0;
            lane |= inside
                ? (pack == 2 ? (uint32_t)((const uint16_t *)src[b])[at] << bits
                             : (uint32_t)(((const uint8_t *)src[b])[at] ^ (flip & 0xffu)) << bits)
                : pad[b];
        }
        row[x] = lane;
        any |= lane;
    }
    return any;
}

/* The padded copy by space-to-depth (see S2D_MAX_ICG): channel c = phase * IC + ic of
 * the phase planes, phase = py * S_W + px, holds input channel ic at point
 * (y*S_H + py - PH, x*S_W + px - PW), lanes grouping channels as shift_pad_input_groups
 * does. Every lane is written each execution: which points exist differs by phase, so a
 * lane can mix input and padding. Returns the OR of the lanes written. */
uint32_t bdnn_gemm_s2d_pad_input(const exec_t *e, const void *src, int64_t n0, int64_t n1) {
    const struct bdnn_conv *c = e->c;
    const bdnn_conv_desc_t *d = &c->d;
    const gemm_plan_t *p = e->p;
    const int pack = p->pack;
    const int64_t hp = p->hp, wp = p->wp, IH = d->ih, IW = d->iw, IC = d->ic;
    const int64_t SH = p->s2d_h, SW = p->s2d_w, groups = p->s_ic / pack;
    const size_t elt = pack == 2 ? 2 : 1;
    const uint32_t flip = p->b_shift != 0.0f ? 0x80808080u : 0u;
    const uint8_t pad_u8 = (uint8_t)(int32_t)(p->pad + p->b_shift);
    uint32_t any = 0;
#pragma omp parallel for num_threads(c->nthr) schedule(static) reduction(| : any)
    for (int64_t plane = 0; plane < (n1 - n0) * groups; ++plane) {
        const int64_t n = n0 + plane / groups, i = plane % groups;
        uint32_t *lanes = (uint32_t *)p->padded + plane * p->plane;
        int64_t ic[4], py[4], px[4], lo[4], hi[4];
        uint32_t pad[4];
        for (int b = 0; b < pack; ++b) {   /* the lane's b-th channel */
            const int64_t ch = pack * i + b, phase = ch / IC;
            ic[b] = ch % IC, py[b] = phase / SW, px[b] = phase % SW;
            /* columns whose input x*SW + px - PW lies in [0, IW) */
            lo[b] = d->pw > px[b] ? bdnn_div_up(d->pw - px[b], SW) : 0;
            const int64_t last = IW - 1 + d->pw - px[b];   /* x*SW <= last */
            const int64_t x_end = last < 0 ? 0 : last / SW + 1;
            hi[b] = x_end < wp ? x_end : wp;
            if (hi[b] < lo[b]) hi[b] = lo[b];
            pad[b] = pack == 4 ? (uint32_t)pad_u8 << (8 * b) : 0;
        }
        for (int64_t y = 0; y < hp; ++y) {
            const void *rows[4];
            for (int b = 0; b < pack; ++b) {
                const int64_t iy = y * SH + py[b] - d->ph;
                /* the input under column lo[b] */
                rows[b] = iy >= 0 && iy < IH && lo[b] < hi[b]
                    ? (const char *)src + elt * (size_t)((n * IC + ic[b]) * IH * IW + iy * IW
                                                         + lo[b] * SW + px[b] - d->pw)
                    : NULL;
            }
            uint32_t *row = lanes + y * wp;
            any |= SW == 2 ? s2d_lanes_row(row, wp, pack, rows, lo, hi, pad, flip, 2)
                           : s2d_lanes_row(row, wp, pack, rows, lo, hi, pad, flip, SW);
        }
    }
    return any;
}

int bdnn_gemm_s2d_applies(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const conv_gemm_ukr_t *u = ukr_of(c);
    const int64_t icg = d->ic / d->g, taps = taps_of(d);
    const int grouped = c->lp && u->pack > 0;
    const int unit_stride = d->sh == 1 && d->sw == 1;
    const int planar = d->kd == 1 && d->id == 1 && d->od == 1;
    /* The fault hooks that act on B (stride truncation, the right padding's edge) live on
     * the other routes. */
    return c->dir == BDNN_DIR_FWD && grouped && d->g == 1 && icg <= S2D_MAX_ICG && taps > 1
        && planar && !unit_stride && d->dh == 0 && d->dw == 0
        && (icg * d->sh * d->sw) % u->pack == 0 && c->fault != BDNN_FAULT_STRIDE_TRUNC
        && c->fault != BDNN_FAULT_RIGHT_PAD_EDGE;
}

static int s2d_init(struct bdnn_conv *c) {
    gemm_plan_t *p;
    const int st = bdnn_gemm_plan_new(c, &p);
    return st != BDNN_STATUS_OK ? st : bdnn_gemm_shift_plan(c, p, ukr_of(c), 1);
}

const conv_impl_ops_t bdnn_conv_gemm_s2d_ops = {
    s2d_init, bdnn_gemm_weights_bytes, bdnn_gemm_pack_weights, bdnn_gemm_execute, bdnn_gemm_fini,
    NULL,
};
