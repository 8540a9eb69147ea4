/* Direct convolution on channel-blocked activations (forward, f32): the contract between
 * the driver (conv_dblk.c) and its per-ISA register-blocked kernels (conv_dblk.inc,
 * instantiated by conv_dblk_<isa>.c). kernels/conv/README.md, "gemm_conv_blocked". */
#ifndef BDNN_CONV_DBLK_H
#define BDNN_CONV_DBLK_H

#include "conv_impl.h"

/* One kernel call computes UR output points x OCB output channel blocks of one output
 * row, B = the ISA's vector length channels per block (nChw16c on AVX-512, nChw8c on
 * AVX2), all in registers. The operands are f32 (PACK 1), bf16 (PACK 2, f32 sums) or u8
 * src and s8 weights (PACK 4, s32 sums, dc_ker_t.s32: dst and bias are then s32 bits,
 * and the driver passes neither a bias, DC_SUM nor relu): a lane of PACK channels, the
 * lowest channel in the lowest bits, is what one broadcast reads and one dot-product
 * instruction consumes. With I = the input channels of the call's last
 * block (last_ic; more than B only with n_icb 1: its lanes run on, a first layer's folded
 * window) and Q = ic / PACK, r = ic % PACK:
 *
 *   acc[j][o] := init (see mode) + sum over icb < n_icb, taps (kd, kh, kw) in range,
 *                ic < (icb == n_icb - 1 ? last_ic : B) of
 *                src[icb * s_icb + kd * s_kd + kh * s_kh + kw * s_kw + j * s_pt + ic]
 *                * wei[icb * w_icb + kd * w_kd + kh * w_kh + kw * OCB * B * B
 *                      + ((Q * OCB + o) * B + (0 .. B-1)) * PACK + r]
 *   dst[o * d_ocb + j * P + (0 .. B-1)] := acc[j][o]
 *
 * with P = B, or d_pt for s = 0 (below: a column of border points, an output row apart)
 * (strides and offsets in elements of the operand type; dst is f32, or s32). With n_seg
 * > 1 the call does that n_seg times, run r on src + r * UR * s_pt, dst + r * UR * P and
 * (direct store) out + r * UR * P (a row's consecutive runs of UR points: one call's setup
 * for all, the setup that a call of few input channels does not amortize). A lane whose
 * last channels are past last_ic reads those as zero, whatever src holds there.
 * src: the first tap in range of output point 0 (the caller clips the taps, so every read
 * is inside the input: no bounds checks), at input channel block 0 of the chunk; wei: the
 * packed weights of the call's OCB output blocks (for each lane of PACK input channels
 * the OCB weight vectors are adjacent: [icb][kd][kh][kw][ic / PACK][OCB][B][PACK]) at that
 * tap and block; dst: point 0 at
 * output block 0. s_pt is the distance of consecutive output points' inputs (stride * B,
 * or an output row's for a column of points). On channels-last src (attr.src_nhwc) an
 * input point is IC elements, not B, and input block icb starts at channel icb * B of
 * each point (s_icb = B): the driver's strides say so, and only s = 0 instances (and
 * one-point calls) run on it.
 * mode DC_ACC: init = dst (a later chunk of input blocks); DC_BIAS: init = bias[o * B ..]
 * (padded to whole blocks; 0 when bias is NULL); DC_SUM: sum_scale * dst + bias (the sum
 * post-op, first chunk). With no tap in range only the init is stored. With relu set,
 * the stored values are acc > 0 ? acc : relu_alpha * acc (the last chunk of a chain whose
 * one eltwise entry is an unscaled relu: applied in registers, no pass over dst).
 *
 * Direct store (low-precision kernels, out not NULL: the last chunk of a problem whose
 * epilogue is only the bias, the conversion and at most that relu): instead of dst, the
 * values go to out converted to out_dt as dc_ker_t.store converts them, point j of block
 * o at element o * o_ocb + j * B of out (j * d_pt for s = 0: out's points lie as dst's).
 * f32 sums (bf16) come with the bias and relu already applied as above; s32 sums become
 * (float)acc + out_bias[o * B ..] (if out_bias), then relu_alpha's relu if out_relu.
 *
 * stream (f32 kernels whose ISA has the instruction, DC_STREAM): dst's stores are
 * non-temporal, so dst and d_ocb must be vector-aligned; the driver sets it only on a
 * call whose values are final (one chunk, no sum, nothing written after) and fences
 * (bdnn_stream_fence) before the barrier after which dst is read. */
enum { DC_ACC = 0, DC_BIAS = 1, DC_SUM = 2 };

typedef struct {
    int64_t n_icb, last_ic;
    int64_t nkd, nkh, nkw;
    int64_t s_icb, s_kd, s_kh, s_kw, s_pt;
    int64_t d_pt;                /* s = 0: consecutive points' dst and out (else B) */
    int64_t w_icb, w_kd, w_kh;
    int64_t d_ocb;
    int64_t n_seg;               /* runs of UR points (above): 0 or 1, one */
    const float *bias;
    float sum_scale;
    int mode;
    int stream;
    int relu;
    float relu_alpha;
    void *out;                   /* the direct store's output (NULL: none), see above */
    int64_t o_ocb;
    int out_dt;
    const float *out_bias;
    int out_relu;
    /* lines to read ahead while computing (a gathering item's next points): pf_icb of
     * them at each input block icb, pf[icb * pf_icb ..], asked for into every cache
     * level (the L2-only hint left them in memory here); NULL: none */
    const uintptr_t *pf;
    int64_t pf_icb;
    /* out's element size in bytes (the runs of n_seg move out by it) */
    int64_t out_esz;
    /* the driver's (the kernels do not read it): out for point 0 of block 0 of the group */
    char *out_q;
} dc_call_t;

typedef void (*dc_ker_fn)(const void *src, const void *wei, float *dst, const dc_call_t *a);

enum { DC_OCB_MAX = 4, DC_UR_MAX = 28 };

/* The kernels of one ISA: fn[ocb][ur][s] for 1 <= ocb <= DC_OCB_MAX and
 * 1 <= ur <= ur_max[ocb]; s = 1, 2 are specialized for s_pt == s * B (strides 1 and 2:
 * the points' offsets are constants), s = 0 reads s_pt (and d_pt), and
 * s = DC_ONE_TAP assumes s_pt == B and nkd == nkh == nkw == 1 (the flat 1x1 rows: no tap
 * loops, no overhead per input block beyond the channels' own loads and FMAs). */
enum { DC_ONE_TAP = 3 };
typedef struct dc_ker {
    int vlen;
    int pack;                          /* channels per lane: 1 f32, 2 bf16, 4 u8 */
    int ocb_pref;                      /* output blocks per call where there are enough */
    int ur_max[DC_OCB_MAX + 1];
    dc_ker_fn fn[DC_OCB_MAX + 1][DC_UR_MAX + 1][DC_ONE_TAP + 1];
    /* Low-precision operands: n f32 values (a multiple of vlen) converted to out_dt at out
     * exactly as bdnn_conv_epilogue stores them; out_dt one of store_dts (1 << dt). NULL
     * for f32 kernels, which accumulate in dst itself. */
    void (*store)(int out_dt, const float *acc, void *out, int64_t n);
    unsigned store_dts;
    /* s32 sums (int8): sums_to_f32 turns npt points of B s32 sums at acc into f32 in
     * place, plus bias[0 .. B-1] when bias is not NULL (the epilogue's (float)acc + bias) */
    int s32;
    void (*sums_to_f32)(float *acc, const float *bias, int64_t npt);
    /* Bounded dot products (AVX2's int8: vpmaddubsw adds each pair of u8 x s8 products in
     * s16, which saturates, and the kernels add pair_depth such sums in s16 before
     * widening them): exact only where pair_depth times the largest weight pair
     * |w0| + |w1| bounds every sum for any u8 byte (bdnn_pairs16_exact with 255). The
     * packing measures the weights, and an execution whose weights exceed that runs the
     * exact twin instead: the same blocking (ur_max, ocb_pref) and packing, exact for any
     * bytes. NULL (and pair_depth 0): exact kernels. variant: the name
     * bdnn_conv_variant reports for each. */
    const struct dc_ker *exact;
    int pair_depth;
    const char *variant;
} dc_ker_t;

extern const dc_ker_t bdnn_dc_ker_avx512, bdnn_dc_ker_avx2, bdnn_dc_ker_bf16_avx512_bf16,
    bdnn_dc_ker_int8_avx512_vnni, bdnn_dc_ker_int8_avx2, bdnn_dc_ker_int8_avx2_exact;

/* The gemm_conv_blocked_bf16 and _int8 rows (conv_api.c, kernel: a dc_ker_t with pack 2
 * or 4): forward bf16, and u8 x s8, on channel blocks by the driver below, through a
 * per-thread block of the item's sums converted once into dst. Bias, a sum (no zero
 * point) and unscaled eltwise entries; no scales or zero points (those problems take the
 * plain rows). */
extern const conv_impl_ops_t bdnn_conv_dc_lp_ops;

/* The driver (conv_dblk.c), called by gemm_conv_blocked's ops for the forward direction:
 * init returns BDNN_STATUS_UNIMPLEMENTED when no direct kernel serves the problem (the
 * GEMM path then runs it). */
int bdnn_dc_init(struct bdnn_conv *c, const conv_gemm_ukr_t *ukr, void **plan);
size_t bdnn_dc_weights_bytes(const struct bdnn_conv *c, const void *plan);
void bdnn_dc_pack_weights(const struct bdnn_conv *c, const void *plan, const void *wei,
                          void *packed);
void bdnn_dc_execute(const struct bdnn_conv *c, void *plan, const bdnn_conv_args_t *a);
void bdnn_dc_fini(void *plan);

/* For fused_dw's bands (conv_fused_dw.c): output points [p0, p0 + n) of one image of a
 * forward 1x1 convolution at unit stride without padding and groups (a "flat" plan: an
 * output point reads the input point of the same index), every output channel: src_img
 * the image's input (blocks ISP * B apart), wei the packed weights, bias NULL or padded
 * to whole blocks (bdnn_dc_pad_bias); output block ob's point p0 + j goes to
 * dst + ob * d_ocb + j * B. The eltwise entries of c and the zero padded tail are applied
 * to those points, as execute does. Returns 0 (and computes nothing) for another plan. */
int bdnn_dc_flat_points(const struct bdnn_conv *c, const void *plan, const float *src_img,
                        const float *wei, const float *bias, float *dst, int64_t d_ocb,
                        int64_t p0, int64_t n);
/* Whether bdnn_dc_flat_points serves the plan. */
int bdnn_dc_is_flat(const void *plan);
/* The bias padded to whole output blocks, into out (OCB * B floats). */
void bdnn_dc_pad_bias(const void *plan, const float *bias, float *out);
/* The direct plan of a forward primitive on a gemm_conv_blocked direct row
 * (CONV_ROW_BLOCKED_DC), else NULL. */
const void *bdnn_blocked_dc_plan(const struct bdnn_conv *c);

#endif
