/* The implementation table and the public primitive API of bdnn.h.
 *
 * Kernel choice lives here and only here: one row per (algorithm, route, ISA, operand
 * class), in order of preference, each with the layouts it runs on and the predicate of
 * its route's domain. Python walks the rows, skips those the CPU cannot run or the user
 * filtered out, and takes the first whose create() accepts the problem; the primitive
 * reports its row's name, so the route that ran is named. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "conv_dblk.h"
#include "conv_f64.h"
#include "conv_pointwise.h"
#include "conv_impl.h"
#include "dt.h"
#include "post_chain.h"

#define F32 OPERANDS_F32
#define F16 OPERANDS_F16
#define BF16 OPERANDS_BF16
#define INT8 OPERANDS_INT8
#define PLAIN ROW_LAYOUT(BDNN_LAYOUT_PLAIN)
#define NHWC ROW_LAYOUT(BDNN_LAYOUT_NHWC)
#define BLK8 ROW_LAYOUT(BDNN_LAYOUT_BLOCKED8)
#define BLK16 ROW_LAYOUT(BDNN_LAYOUT_BLOCKED16)
#define BLOCKS (BLK8 | BLK16)
#define FUSED CONV_ROW_FUSED_DW
#define GEMM CONV_ROW_GEMM
/* The gather routes' domain (plain, channels last, blocks): everything but backward data
 * with few live taps (bdnn_few_live_taps), which col2im takes. */
static int gather_applies(const struct bdnn_conv *c) {
    return c->dir != BDNN_DIR_BWD_DATA || !bdnn_few_live_taps(&c->d);
}
/* The AVX2 int8 blocked row's domain, where it ran ahead of the plain rows: not the dot
 * route's shapes (that row splits their long reductions across threads), not first
 * layers (fewer input channels per group than a block: space-to-depth packs their
 * window's channels densely), not strided 1x1s (the shift route reads their phase in
 * place). */
static int blocked_int8_avx2_applies(const struct bdnn_conv *c) {
    const bdnn_conv_desc_t *d = &c->d;
    const int strided_1x1 = d->kd * d->kh * d->kw == 1 && (d->sd > 1 || d->sh > 1 || d->sw > 1);
    return !bdnn_conv_dot_applies(c) && d->ic / d->g >= 8 && !strided_1x1;
}

/* The GEMM family's routes on plain layouts, in their order of preference (each refuses
 * what its domain excludes, and the next takes it; gather takes all but gather_applies'
 * exception). */
#define GEMM_OUTER(fam, isa_name, isa, ukr, ops_class)                                      \
    {fam ":" isa_name ":outer", isa, &bdnn_conv_gemm_outer_ops, ukr, ops_class, PLAIN,     \
     bdnn_gemm_outer_applies, GEMM}
#define GEMM_SHIFT(fam, isa_name, isa, ukr, ops_class)                                      \
    {fam ":" isa_name ":shift", isa, &bdnn_conv_gemm_shift_ops, ukr, ops_class, PLAIN,     \
     bdnn_gemm_shift_applies, GEMM}
#define GEMM_S2D(fam, isa_name, isa, ukr, ops_class)                                        \
    {fam ":" isa_name ":s2d", isa, &bdnn_conv_gemm_s2d_ops, ukr, ops_class, PLAIN,         \
     bdnn_gemm_s2d_applies, GEMM}
#define GEMM_COL2IM(fam, isa_name, isa, ukr, ops_class)                                     \
    {fam ":" isa_name ":col2im", isa, &bdnn_conv_gemm_col2im_ops, ukr, ops_class, PLAIN,   \
     bdnn_gemm_col2im_applies, GEMM}
#define GEMM_GATHER(fam, isa_name, isa, ukr, ops_class)                                     \
    {fam ":" isa_name ":gather", isa, &bdnn_conv_gemm_gather_ops, ukr, ops_class, PLAIN,   \
     gather_applies, GEMM}
/* ... on channels last (conv_gemm_nhwc*.c) and on channel blocks (the same code). */
#define NHWC_ROUTE(fam, isa_name, route, isa, ukr, lay, flags)                              \
    {fam ":" isa_name ":" #route, isa, &bdnn_conv_nhwc_##route##_ops, ukr, F32, lay,       \
     bdnn_nhwc_##route##_applies, flags}
#define NHWC_GATHER(fam, isa_name, isa, ukr, lay)                                           \
    {fam ":" isa_name ":gather", isa, &bdnn_conv_nhwc_gather_ops, ukr, F32, lay,            \
     gather_applies, 0}
static const conv_impl_entry_t impls[] = {
    /* The only rows that take a dw post-op (and take nothing else); each runs its 1x1
     * and depthwise steps on the rows below, at its ISA or under. */
    {"fused_dw:avx512", BDNN_ISA_AVX512, &bdnn_conv_fused_dw_ops, NULL, F32, PLAIN | BLOCKS,
     NULL, FUSED},
    {"fused_dw:avx2", BDNN_ISA_AVX2, &bdnn_conv_fused_dw_ops, NULL, F32, PLAIN | BLOCKS, NULL,
     FUSED},
    {"fused_dw:scalar", BDNN_ISA_SCALAR, &bdnn_conv_fused_dw_ops, NULL, F32, PLAIN | BLOCKS,
     NULL, FUSED},
    {"fused_dw_bf16:avx512_bf16", BDNN_ISA_AVX512_BF16, &bdnn_conv_fused_dw_ops, NULL, BF16,
     PLAIN | BLOCKS, NULL, FUSED},
    {"fused_dw_bf16:avx512", BDNN_ISA_AVX512, &bdnn_conv_fused_dw_ops, NULL, BF16,
     PLAIN | BLOCKS, NULL, FUSED},
    {"fused_dw_bf16:avx2", BDNN_ISA_AVX2, &bdnn_conv_fused_dw_ops, NULL, BF16, PLAIN | BLOCKS,
     NULL, FUSED},
    {"fused_dw_bf16:scalar", BDNN_ISA_SCALAR, &bdnn_conv_fused_dw_ops, NULL, BF16,
     PLAIN | BLOCKS, NULL, FUSED},
    {"fused_dw_int8:avx512_vnni", BDNN_ISA_AVX512_VNNI, &bdnn_conv_fused_dw_ops, NULL, INT8,
     PLAIN | BLOCKS, NULL, FUSED},
    {"fused_dw_int8:avx2", BDNN_ISA_AVX2, &bdnn_conv_fused_dw_ops, NULL, INT8, PLAIN | BLOCKS,
     NULL, FUSED},
    {"fused_dw_int8:scalar", BDNN_ISA_SCALAR, &bdnn_conv_fused_dw_ops, NULL, INT8,
     PLAIN | BLOCKS, NULL, FUSED},
    /* Depthwise forward on plain layouts (conv_fwd_dw.c): f32 FMA over widened planes for
     * every operand class (int8 within exact f32 sums), the low-precision epilogue after
     * it wherever types, scales, zero points or the chain need it. */
#define DW_FWD(name, ops_class)                                                             \
    {name ":avx512", BDNN_ISA_AVX512, &bdnn_conv_dw_ops, &bdnn_dw_ker_avx512, ops_class,    \
     PLAIN, NULL, CONV_ROW_SRC1},                                                           \
    {name ":avx2", BDNN_ISA_AVX2, &bdnn_conv_dw_ops, &bdnn_dw_ker_avx2, ops_class, PLAIN,   \
     NULL, CONV_ROW_SRC1},                                                                  \
    {name ":scalar", BDNN_ISA_SCALAR, &bdnn_conv_dw_ops, &bdnn_dw_ker_scalar, ops_class,    \
     PLAIN, NULL, CONV_ROW_SRC1}
    DW_FWD("dw_conv_fwd", F32),
    DW_FWD("dw_conv_fwd_int8", INT8),
    DW_FWD("dw_conv_fwd_bf16", BF16),
    DW_FWD("dw_conv_fwd_f16", F16),
    /* Depthwise on channels in lanes (conv_dw_lanes.c): channels last, channel blocks (the
     * AVX-512 row takes nChw16c only: its vector would straddle two 8-channel blocks). */
    {"dw_conv_nhwc:avx512", BDNN_ISA_AVX512, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx512, F32,
     NHWC, NULL, CONV_ROW_DW_LANES},
    {"dw_conv_nhwc:avx2", BDNN_ISA_AVX2, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx2, F32, NHWC,
     NULL, CONV_ROW_DW_LANES},
    {"dw_conv_nhwc:scalar", BDNN_ISA_SCALAR, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_scalar, F32,
     NHWC, NULL, CONV_ROW_DW_LANES},
    {"dw_conv_blocked:avx512", BDNN_ISA_AVX512, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx512,
     F32, BLOCKS, NULL, CONV_ROW_DW_LANES},
    {"dw_conv_blocked:avx2", BDNN_ISA_AVX2, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx2, F32,
     BLOCKS, NULL, CONV_ROW_DW_LANES},
    {"dw_conv_blocked:scalar", BDNN_ISA_SCALAR, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_scalar,
     F32, BLOCKS, NULL, CONV_ROW_DW_LANES},
    /* ... and on bf16 operands, widened as they are read (not fused_dw's row step, which
     * hands f32 rows over). The dot product form (avx512_bf16) leads only where 512-bit
     * operations run in two halves (CONV_ROW_SPLIT_512): there the widening shift costs
     * a whole extra pass; on full-width cores the shift and FMA form runs faster. */
#define DW_LANES_BF16(name, lay)                                                            \
    {name ":avx512_bf16", BDNN_ISA_AVX512_BF16, &bdnn_conv_dw_lanes_ops,                    \
     &bdnn_dwl_ker_avx512_bf16, BF16, lay, NULL, CONV_ROW_SPLIT_512},                       \
    {name ":avx512", BDNN_ISA_AVX512, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx512, BF16,  \
     lay, NULL, 0},                                                                         \
    {name ":avx2", BDNN_ISA_AVX2, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_avx2, BF16, lay,   \
     NULL, 0},                                                                              \
    {name ":scalar", BDNN_ISA_SCALAR, &bdnn_conv_dw_lanes_ops, &bdnn_dwl_ker_scalar, BF16,  \
     lay, NULL, 0}
    DW_LANES_BF16("dw_conv_nhwc_bf16", NHWC),
    DW_LANES_BF16("dw_conv_blocked_bf16", BLOCKS),
    /* Winograd F(4x4, 3x3): only where the caller asks for it (--alg=wino, or auto's
     * rule); the Python side filters these rows out for direct. The blocked rows take few
     * input channels on channel blocks (conv_wino_blk.c), the others plain layouts. */
    {"wino_f43_blocked:avx512", BDNN_ISA_AVX512, &bdnn_conv_wino_blk_ops,
     &bdnn_wino_blk_ker_avx512, F32, BLOCKS, NULL, CONV_ROW_WINO},
    {"wino_f43_blocked:avx2", BDNN_ISA_AVX2, &bdnn_conv_wino_blk_ops, &bdnn_wino_blk_ker_avx2,
     F32, BLOCKS, NULL, CONV_ROW_WINO},
    {"wino_f43:avx512", BDNN_ISA_AVX512, &bdnn_conv_wino_ops, &bdnn_wino_ker_avx512, F32, PLAIN,
     NULL, CONV_ROW_WINO},
    {"wino_f43:avx2", BDNN_ISA_AVX2, &bdnn_conv_wino_ops, &bdnn_wino_ker_avx2, F32, PLAIN, NULL,
     CONV_ROW_WINO},
    {"wino_f43:scalar", BDNN_ISA_SCALAR, &bdnn_conv_wino_ops, &bdnn_wino_ker_scalar, F32, PLAIN,
     NULL, CONV_ROW_WINO},
    /* f32 on plain layouts: backward weights by outer products, forward by shifted
     * planes (several taps, many channels), backward data by col2im (strided or several
     * taps), and the gather route for everything else. */
    GEMM_OUTER("gemm_conv", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, F32),
    GEMM_SHIFT("gemm_conv", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, F32),
    GEMM_COL2IM("gemm_conv", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, F32),
    GEMM_GATHER("gemm_conv", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, F32),
    GEMM_OUTER("gemm_conv", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, F32),
    GEMM_SHIFT("gemm_conv", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, F32),
    GEMM_COL2IM("gemm_conv", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, F32),
    GEMM_GATHER("gemm_conv", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, F32),
    GEMM_OUTER("gemm_conv", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, F32),
    GEMM_SHIFT("gemm_conv", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, F32),
    GEMM_COL2IM("gemm_conv", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, F32),
    GEMM_GATHER("gemm_conv", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, F32),
    /* bf16 and int8 (u8 source) on channels last: AMX tile products (conv_amx.c); forward,
     * without scales or zero points, one group, 2D. */
    {"tile_conv_nhwc_bf16:avx512_amx", BDNN_ISA_AVX512_AMX, &bdnn_conv_amx_ops, NULL, BF16,
     NHWC, NULL, 0},
    {"tile_conv_nhwc_int8:avx512_amx", BDNN_ISA_AVX512_AMX, &bdnn_conv_amx_ops, NULL, INT8,
     NHWC, NULL, 0},
    /* bf16 on channel blocks (BDNN_LAYOUT_BLOCKED16): direct convolution, vdpbf16ps on
     * channel pairs (conv_dblk.c); forward, without scales; src also channels last. */
    {"gemm_conv_blocked_bf16:avx512_bf16:direct", BDNN_ISA_AVX512_BF16, &bdnn_conv_dc_lp_ops,
     &bdnn_dc_ker_bf16_avx512_bf16, BF16, BLK16, NULL, CONV_ROW_SRC_NHWC},
    /* bf16: vdpbf16ps on bf16 pairs; AVX2: the pairs split into f32 in registers, f32 FMA;
     * AVX-512 without the instruction: exact conversion to an f32 copy, f32 FMA. The
     * dot-product kernels also take the shift and space-to-depth routes. */
    GEMM_SHIFT("gemm_conv_bf16", "avx512_bf16", BDNN_ISA_AVX512_BF16,
               &bdnn_gemm_ukr_bf16_avx512_bf16, BF16),
    GEMM_S2D("gemm_conv_bf16", "avx512_bf16", BDNN_ISA_AVX512_BF16,
             &bdnn_gemm_ukr_bf16_avx512_bf16, BF16),
    GEMM_GATHER("gemm_conv_bf16", "avx512_bf16", BDNN_ISA_AVX512_BF16,
                &bdnn_gemm_ukr_bf16_avx512_bf16, BF16),
    GEMM_GATHER("gemm_conv_bf16", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, BF16),
    GEMM_SHIFT("gemm_conv_bf16", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_bf16_avx2, BF16),
    GEMM_S2D("gemm_conv_bf16", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_bf16_avx2, BF16),
    GEMM_GATHER("gemm_conv_bf16", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_bf16_avx2, BF16),
    GEMM_GATHER("gemm_conv_bf16", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, BF16),
    /* f16: F16C conversion to f32 (exact), f32 FMA, F16C rounding on the way out. */
    GEMM_GATHER("gemm_conv_f16", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, F16),
    GEMM_GATHER("gemm_conv_f16", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, F16),
    GEMM_GATHER("gemm_conv_f16", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, F16),
    /* int8 on channel blocks (BDNN_LAYOUT_BLOCKED16): direct convolution, vpdpbusd on
     * channel quads (conv_dblk.c); forward, u8 source, without scales or zero points. Not
     * from channels-last src: a last lane short of channels is read whole and masked,
     * which inside a block stays inside src. */
    {"gemm_conv_blocked_int8:avx512_vnni:direct", BDNN_ISA_AVX512_VNNI, &bdnn_conv_dc_lp_ops,
     &bdnn_dc_ker_int8_avx512_vnni, INT8, BLK16, NULL, 0},
    /* ... and on nChw8c with AVX2 (conv_dblk_int8_avx2.c): vpmaddubsw's s16 pair sums
     * where the packed weights bound them, else the exact even / odd halves; as above,
     * within blocked_int8_avx2_applies. */
    {"gemm_conv_blocked_int8:avx2:direct", BDNN_ISA_AVX2, &bdnn_conv_dc_lp_ops,
     &bdnn_dc_ker_int8_avx2, INT8, BLK8, blocked_int8_avx2_applies, 0},
    /* int8 forward with a long reduction and few outputs per image (conv_gemm_dot.c): dot
     * products of kw runs read in place, the reduction split across threads. */
#define DOT_ROW(isa_name, isa)                                                              \
    {"gemm_conv_int8:" #isa_name ":dot", isa, &bdnn_conv_dot_ops, &bdnn_dot_ker_##isa_name,  \
     INT8, PLAIN, bdnn_conv_dot_applies, CONV_ROW_SRC1}
    DOT_ROW(avx512_vnni, BDNN_ISA_AVX512_VNNI),
    /* int8: vpdpbusd (u8 x s8 quads into s32); AVX2: vpmaddwd on the quads' s16 halves;
     * scalar: s32 multiply-adds. */
    GEMM_SHIFT("gemm_conv_int8", "avx512_vnni", BDNN_ISA_AVX512_VNNI,
               &bdnn_gemm_ukr_int8_avx512_vnni, INT8),
    GEMM_S2D("gemm_conv_int8", "avx512_vnni", BDNN_ISA_AVX512_VNNI,
             &bdnn_gemm_ukr_int8_avx512_vnni, INT8),
    GEMM_GATHER("gemm_conv_int8", "avx512_vnni", BDNN_ISA_AVX512_VNNI,
                &bdnn_gemm_ukr_int8_avx512_vnni, INT8),
    DOT_ROW(avx2, BDNN_ISA_AVX2),
    GEMM_SHIFT("gemm_conv_int8", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_int8_avx2, INT8),
    GEMM_S2D("gemm_conv_int8", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_int8_avx2, INT8),
    GEMM_GATHER("gemm_conv_int8", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_int8_avx2, INT8),
    DOT_ROW(scalar, BDNN_ISA_SCALAR),
    GEMM_SHIFT("gemm_conv_int8", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_int8_scalar, INT8),
    GEMM_S2D("gemm_conv_int8", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_int8_scalar, INT8),
    GEMM_GATHER("gemm_conv_int8", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_int8_scalar, INT8),
    /* Channels-last activations (attr.layout BDNN_LAYOUT_NHWC), f32: backward weights by
     * direct convolution (taps along w), else by taps, or by windows where taps refuses
     * (few input channels), backward data by col2im (strided, or few input channels),
     * else gather. */
    NHWC_ROUTE("gemm_conv_nhwc", "avx512", direct, BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, NHWC,
               0),
    NHWC_ROUTE("gemm_conv_nhwc", "avx512", taps, BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, NHWC, 0),
    NHWC_ROUTE("gemm_conv_nhwc", "avx512", window, BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, NHWC,
               0),
    NHWC_ROUTE("gemm_conv_nhwc", "avx512", col2im, BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, NHWC,
               0),
    NHWC_GATHER("gemm_conv_nhwc", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_avx512, NHWC),
    NHWC_ROUTE("gemm_conv_nhwc", "avx2", taps, BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, NHWC, 0),
    NHWC_ROUTE("gemm_conv_nhwc", "avx2", window, BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, NHWC,
               0),
    NHWC_ROUTE("gemm_conv_nhwc", "avx2", col2im, BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, NHWC, 0),
    NHWC_GATHER("gemm_conv_nhwc", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_avx2, NHWC),
    NHWC_ROUTE("gemm_conv_nhwc", "scalar", taps, BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, NHWC, 0),
    NHWC_ROUTE("gemm_conv_nhwc", "scalar", window, BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, NHWC,
               0),
    NHWC_ROUTE("gemm_conv_nhwc", "scalar", col2im, BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, NHWC,
               0),
    NHWC_GATHER("gemm_conv_nhwc", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, NHWC),
    /* Channel-blocked activations (BDNN_LAYOUT_BLOCKED8/16), f32: a row takes the blocks
     * its micro-kernel's width divides (avx512 16; avx2 8 and 16; scalar both). Forward
     * and unit-stride backward data by the direct convolution (conv_dblk.c, where the ISA
     * has one; forward also from channels-last src, attr.src_nhwc), backward weights by
     * direct convolution (taps along w), pointwise, or by taps, else gather. */
    NHWC_ROUTE("gemm_conv_blocked", "avx512", direct, BDNN_ISA_AVX512, &bdnn_gemm_ukr_blk_avx512,
               BLOCKS, CONV_ROW_BLOCKED_DC | CONV_ROW_SRC_NHWC),
    /* backward weights of a pointwise convolution, both tensors read in place
     * (conv_pointwise.c; both ISAs' rows), where its blocks are what `any` takes */
    {"gemm_conv_blocked:avx512:pointwise", BDNN_ISA_AVX512, &bdnn_conv_pointwise_ops,
     &bdnn_pw_ker_avx512, F32, BLK16, bdnn_pointwise_applies, 0},
    NHWC_ROUTE("gemm_conv_blocked", "avx512", taps, BDNN_ISA_AVX512, &bdnn_gemm_ukr_blk_avx512,
               BLOCKS, 0),
    NHWC_GATHER("gemm_conv_blocked", "avx512", BDNN_ISA_AVX512, &bdnn_gemm_ukr_blk_avx512,
                BLOCKS),
    NHWC_ROUTE("gemm_conv_blocked", "avx2", direct, BDNN_ISA_AVX2, &bdnn_gemm_ukr_blk_avx2,
               BLOCKS, CONV_ROW_BLOCKED_DC | CONV_ROW_SRC_NHWC),
    {"gemm_conv_blocked:avx2:pointwise", BDNN_ISA_AVX2, &bdnn_conv_pointwise_ops,
     &bdnn_pw_ker_avx2, F32, BLOCKS, bdnn_pointwise_applies, 0},
    NHWC_ROUTE("gemm_conv_blocked", "avx2", taps, BDNN_ISA_AVX2, &bdnn_gemm_ukr_blk_avx2, BLOCKS,
               0),
    NHWC_GATHER("gemm_conv_blocked", "avx2", BDNN_ISA_AVX2, &bdnn_gemm_ukr_blk_avx2, BLOCKS),
    NHWC_ROUTE("gemm_conv_blocked", "scalar", taps, BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar,
               BLOCKS, 0),
    NHWC_GATHER("gemm_conv_blocked", "scalar", BDNN_ISA_SCALAR, &bdnn_gemm_ukr_scalar, BLOCKS),
    /* f64, every direction, on plain and channels-last layouts (conv_f64.c) */
    {"conv_f64:avx512", BDNN_ISA_AVX512, &bdnn_conv_f64_ops, &bdnn_f64_ker_avx512,
     OPERANDS_F64, PLAIN | NHWC, NULL, 0},
    {"conv_f64:avx2", BDNN_ISA_AVX2, &bdnn_conv_f64_ops, &bdnn_f64_ker_avx2, OPERANDS_F64,
     PLAIN | NHWC, NULL, 0},
    {"conv_f64:scalar", BDNN_ISA_SCALAR, &bdnn_conv_f64_ops, &bdnn_f64_ker_scalar,
     OPERANDS_F64, PLAIN | NHWC, NULL, 0},
};
#undef F32
#undef F16
#undef BF16
#undef INT8
#undef PLAIN
#undef NHWC
#undef BLK16
#undef BLOCKS
#undef FUSED
#undef GEMM
#undef GEMM_OUTER
#undef GEMM_SHIFT
#undef GEMM_S2D
#undef GEMM_COL2IM
#undef GEMM_GATHER
#undef NHWC_ROUTE
#undef NHWC_GATHER
enum { N_IMPLS = sizeof(impls) / sizeof(impls[0]) };

/* Row i of the table in this CPU's order of preference, the order every entry point's
 * index counts in: a CONV_ROW_SPLIT_512 row (never the last, never next to another)
 * trades places with the row after it (its family on the next ISA down) on cores that
 * run 512-bit operations at full width. The cpuid answer is kept (a virtual machine
 * traps each query); every thread computes the same one. */
static const conv_impl_entry_t *row(int i) {
    static int splits = -1;
    int s = __atomic_load_n(&splits, __ATOMIC_RELAXED);
    if (s < 0) __atomic_store_n(&splits, s = bdnn_cpu_splits_512(), __ATOMIC_RELAXED);
    if (!s && impls[i].flags & CONV_ROW_SPLIT_512) return &impls[i + 1];
    if (!s && i > 0 && impls[i - 1].flags & CONV_ROW_SPLIT_512) return &impls[i - 1];
    return &impls[i];
}

/* The deliberate defect (BDNN_FAULT_*) the primitives created from now on carry: tests
 * only (bdnn_set_test_fault). */
static int test_fault = BDNN_FAULT_NONE;

void bdnn_set_test_fault(int fault) { test_fault = fault; }

/* While a primitive is being created on this thread, the bytes bdnn_aligned_alloc has
 * handed out for it (and for the sub-primitives it creates); NULL otherwise. It makes
 * bdnn_conv_scratch_bytes, which the memory guard adds to a case's estimate. */
static _Thread_local size_t *alloc_tally;

void *bdnn_aligned_alloc(size_t bytes) {
    const size_t align = 64, rounded = (bytes + align - 1) / align * align;
    if (alloc_tally) *alloc_tally += rounded;
    return aligned_alloc(align, rounded);
}

int64_t bdnn_cost_share(int64_t n, bdnn_item_cost_fn cost, const void *ctx, int64_t t,
                        int64_t nt, int64_t *lo, int64_t *hi) {
    const int64_t shared = n - (n > 4 * nt ? 2 * nt : n / 2);
    int64_t total = 0;
    for (int64_t i = 0; i < shared; ++i) total += cost(ctx, i);
    if (total <= 0) {
        *lo = shared * t / nt, *hi = shared * (t + 1) / nt;
        return shared;
    }
    *lo = *hi = shared;
    for (int64_t i = 0, before = 0, owner = -1; i < shared && owner <= t; ++i) {
        const int64_t ci = cost(ctx, i);
        owner = (2 * before + ci) * nt / (2 * total);   /* the midpoint's thread */
        if (owner >= t && *lo == shared) *lo = i;
        if (owner > t) *hi = i;
        before += ci;
    }
    return shared;
}

/* While a top-level primitive is being created on this thread, its book: the slots of
 * its scratchpad and of its sub-primitives' (fused_dw creates its steps inside its init;
 * they execute only inside its execution, which binds their slots too). */
static _Thread_local conv_book_t *booking;

enum { SCRATCH_ALIGN = 64 };

int conv_scratch(void **slot, size_t bytes) {
    conv_book_t *b = booking;
    const size_t rounded = (bytes + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
    if (b) b->bytes += rounded;
    if (!b || !b->user) {
        *slot = bdnn_aligned_alloc(bytes);
        return *slot ? BDNN_STATUS_OK : BDNN_STATUS_OUT_OF_MEMORY;
    }
    *slot = NULL;
    if (b->n == b->cap) {
        const int cap = b->cap ? 2 * b->cap : 16;
        void ***slots = realloc(b->slot, sizeof(void **) * (size_t)cap);
        if (slots) b->slot = slots;
        size_t *offs = realloc(b->off, sizeof(size_t) * (size_t)cap);
        if (offs) b->off = offs;
        if (!slots || !offs) return BDNN_STATUS_OUT_OF_MEMORY;
        b->cap = cap;
    }
    b->slot[b->n] = slot;
    b->off[b->n++] = b->bytes - rounded;
    return BDNN_STATUS_OK;
}

void *conv_book_suspend(void) {
    conv_book_t *b = booking;
    booking = NULL;
    return b;
}

void conv_book_resume(void *book) { booking = book; }

/* User mode: points every slot into the scratchpad before an execution, and back to NULL
 * after it (the primitive keeps no pointer into memory it does not own). */
static int bind_scratchpad(const bdnn_conv_t *c) {
    const conv_book_t *b = &c->book;
    if (!b->user) return BDNN_STATUS_OK;
    if (b->bytes && !c->scratchpad) return BDNN_STATUS_INVALID;
    for (int i = 0; i < b->n; ++i) *b->slot[i] = (char *)c->scratchpad + b->off[i];
    return BDNN_STATUS_OK;
}

static void unbind_scratchpad(const bdnn_conv_t *c) {
    for (int i = 0; i < c->book.n; ++i) *c->book.slot[i] = NULL;
}

size_t bdnn_conv_scratchpad_bytes(const bdnn_conv_t *c) { return c->book.bytes; }

int bdnn_conv_set_scratchpad(bdnn_conv_t *c, void *mem) {
    if (!c->book.user || ((uintptr_t)mem % SCRATCH_ALIGN) || (!mem && c->book.bytes))
        return BDNN_STATUS_INVALID;
    c->scratchpad = mem;
    return BDNN_STATUS_OK;
}

int bdnn_conv_impl_count(void) { return N_IMPLS; }
const char *bdnn_conv_impl_name(int impl) {
    return impl >= 0 && impl < N_IMPLS ? row(impl)->name : NULL;
}
int bdnn_conv_impl_isa(int impl) { return impl >= 0 && impl < N_IMPLS ? row(impl)->isa : -1; }
int bdnn_conv_impl_operands(int impl) {
    return impl >= 0 && impl < N_IMPLS ? row(impl)->operands : -1;
}

/* The checks every implementation relies on; the Python side validates the descriptor
 * first, this keeps the C boundary safe on its own. */
static int desc_ok(const bdnn_conv_desc_t *d) {
    const int64_t pos[] = {d->g, d->ic, d->oc, d->id, d->ih, d->iw, d->od, d->oh, d->ow,
                           d->kd, d->kh, d->kw, d->sd, d->sh, d->sw};
    for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); ++i)
        if (pos[i] <= 0) return 0;
    if (d->mb < 0 || d->dd < 0 || d->dh < 0 || d->dw < 0) return 0;
    return d->ic % d->g == 0 && d->oc % d->g == 0;
}

/* The operand class of a direction's two multiplied tensors, or -1 when no row of the
 * table computes it. */
static int operands_of(const bdnn_conv_attr_t *a, int dir) {
    const int x = dir == BDNN_DIR_BWD_DATA ? a->dst_dt : a->src_dt;
    const int y = dir == BDNN_DIR_BWD_WEIGHTS ? a->dst_dt : a->wei_dt;
    if (x == BDNN_DT_F32 && y == BDNN_DT_F32) return OPERANDS_F32;
    /* f32 activations with bf16 or f16 weights: the weights widen exactly to f32 at
     * packing (bdnn_conv_pack_weights), and the f32 rows compute */
    if (x == BDNN_DT_F32 && (y == BDNN_DT_BF16 || y == BDNN_DT_F16) && dir != BDNN_DIR_BWD_WEIGHTS)
        return OPERANDS_F32;
    if (x == BDNN_DT_F16 && y == BDNN_DT_F16) return OPERANDS_F16;
    if (x == BDNN_DT_BF16 && y == BDNN_DT_BF16) return OPERANDS_BF16;
    if ((x == BDNN_DT_U8 || x == BDNN_DT_S8) && y == BDNN_DT_S8 && dir != BDNN_DIR_BWD_WEIGHTS)
        return OPERANDS_INT8;
    if (x == BDNN_DT_F64 && y == BDNN_DT_F64) return OPERANDS_F64;
    return -1;
}

static int out_dt_of(const bdnn_conv_attr_t *a, int dir) {
    return dir == BDNN_DIR_FWD ? a->dst_dt : dir == BDNN_DIR_BWD_DATA ? a->src_dt : a->wei_dt;
}

/* Whether the f32 fast path serves: f32 everywhere, no scales or zero points, and a chain
 * the fused f32 epilogue applies (a sum, without zero point, only first). */
static int needs_lp(const bdnn_conv_t *c) {
    const bdnn_conv_attr_t *a = &c->attr;
    if (c->operands != OPERANDS_F32 || c->out_dt != BDNN_DT_F32) return 1;
    if (c->with_bias && a->bia_dt != BDNN_DT_F32) return 1;
    if (a->scales != BDNN_SCALES_NONE || a->src_zp || a->dst_zp || c->src_zps || c->dst_zps)
        return 1;
    for (int i = 0; i < a->n_post_ops; ++i) {
        const bdnn_post_op_t *op = &a->post_ops[i];
        if (op->kind == BDNN_POST_SUM && (i != 0 || op->zero_point
                                          || (op->sum_dt >= 0 && op->sum_dt != c->out_dt)))
            return 1;
    }
    /* binary and prelu need each output's position: only the epilogue knows it */
    return bdnn_has_src1_post_op(a);
}

static int conv_create(int impl, const bdnn_conv_desc_t *d, int dir, int with_bias,
                       const bdnn_conv_attr_t *attr, int fault, int nthr, bdnn_conv_t **out) {
    *out = NULL;
    const bdnn_conv_attr_t plain = {.src_dt = BDNN_DT_F32, .wei_dt = BDNN_DT_F32,
                                    .dst_dt = BDNN_DT_F32, .bia_dt = BDNN_DT_F32};
    const bdnn_conv_attr_t *a = attr ? attr : &plain;
    if (a->n_post_ops < 0 || a->n_post_ops > BDNN_MAX_POST_OPS) return BDNN_STATUS_INVALID;
    for (int i = 0; i < a->n_post_ops; ++i) {
        const bdnn_post_op_t *op = &a->post_ops[i];
        if (op->kind != BDNN_POST_SUM && op->kind != BDNN_POST_ELTWISE
                && op->kind != BDNN_POST_DW && op->kind != BDNN_POST_BINARY
                && op->kind != BDNN_POST_PRELU)
            return BDNN_STATUS_UNIMPLEMENTED;
        if ((op->kind == BDNN_POST_BINARY || op->kind == BDNN_POST_PRELU) && !bdnn_src1_entry_ok(op))
            return BDNN_STATUS_INVALID;
        /* a sum's own type reinterprets the prior dst: one of dst's size */
        if (op->kind == BDNN_POST_SUM && op->sum_dt >= 0
                && (op->sum_dt > BDNN_DT_U8
                    || bdnn_dt_size(op->sum_dt) != bdnn_dt_size(out_dt_of(a, dir))))
            return BDNN_STATUS_INVALID;
        if (op->kind == BDNN_POST_ELTWISE && (op->alg < BDNN_ELT_ABS || op->alg > BDNN_ELT_TANH))
            return BDNN_STATUS_UNIMPLEMENTED;
    }
    if (a->n_post_ops > 0 && dir == BDNN_DIR_BWD_WEIGHTS) return BDNN_STATUS_UNIMPLEMENTED;
    if (impl < 0 || impl >= N_IMPLS) return BDNN_STATUS_INVALID;
    if (dir != BDNN_DIR_FWD && dir != BDNN_DIR_BWD_DATA && dir != BDNN_DIR_BWD_WEIGHTS)
        return BDNN_STATUS_INVALID;
    if (!desc_ok(d)) return BDNN_STATUS_INVALID;
    const conv_impl_entry_t *e = row(impl);
    if (!bdnn_isa_supported(e->isa)) return BDNN_STATUS_UNIMPLEMENTED;
    if (operands_of(a, dir) != e->operands) return BDNN_STATUS_UNIMPLEMENTED;
    /* A dw post-op is fused_dw's, and fused_dw takes nothing else (nor weights that
     * bdnn_conv_pack_weights would widen: its packing is pack_weights_dw). */
    if (bdnn_dw_post_op(a) >= 0 && a->wei_dt != a->src_dt && a->src_dt == BDNN_DT_F32)
        return BDNN_STATUS_UNIMPLEMENTED;
    /* ... nor an f32 1x1 output with depthwise weights of another type (its step would
     * take them on the f32 rows, which only bdnn_conv_pack_weights widens for) */
    if (bdnn_dw_post_op(a) >= 0 && out_dt_of(a, dir) == BDNN_DT_F32
            && a->post_ops[bdnn_dw_post_op(a)].dw_wei_dt != BDNN_DT_F32)
        return BDNN_STATUS_UNIMPLEMENTED;
    if ((bdnn_dw_post_op(a) >= 0) != !!(e->flags & CONV_ROW_FUSED_DW))
        return BDNN_STATUS_UNIMPLEMENTED;
    /* Binary and prelu entries: the GEMM rows and the plain depthwise rows, whose
     * low-precision epilogue knows each output's position (bdnn_post_op_src1), and
     * fused_dw, whose steps are such rows pointed at their block's part of each input. */
    if (bdnn_has_src1_post_op(a)
            && !(e->flags & (CONV_ROW_GEMM | CONV_ROW_FUSED_DW | CONV_ROW_SRC1)))
        return BDNN_STATUS_UNIMPLEMENTED;
    if (a->layout < 0 || a->layout > BDNN_LAYOUT_BLOCKED16
            || !(e->layouts & ROW_LAYOUT(a->layout)))
        return BDNN_STATUS_UNIMPLEMENTED;
    /* src channels last beside blocked dst: forward, on the rows that read it */
    if (a->src_nhwc && (dir != BDNN_DIR_FWD || !bdnn_layout_block(a->layout)
                        || !(e->flags & CONV_ROW_SRC_NHWC)))
        return BDNN_STATUS_UNIMPLEMENTED;
    if (a->scales < BDNN_SCALES_NONE || a->scales > BDNN_SCALES_ARGS) return BDNN_STATUS_INVALID;
    if (a->scales != BDNN_SCALES_NONE && !a->wei_scales) return BDNN_STATUS_INVALID;
    bdnn_conv_t *c = calloc(1, sizeof(*c));
    if (!c) return BDNN_STATUS_OUT_OF_MEMORY;
    c->d = *d;
    c->dir = dir;
    c->with_bias = with_bias;
    c->fault = fault;
    c->attr = *a;
    c->attr.wei_scales = NULL;
    c->attr.src_zps = c->attr.dst_zps = NULL;   /* the owned copies below */
    c->attr.dw_wei_scales = NULL;
    c->n_post_ops = a->n_post_ops;
    for (int i = 0; i < a->n_post_ops; ++i) c->post_ops[i] = a->post_ops[i];
    c->operands = e->operands;
    c->out_dt = out_dt_of(a, dir);
    if ((a->src_zps || a->dst_zps) && dir == BDNN_DIR_BWD_WEIGHTS) {
        bdnn_conv_destroy(c);
        return BDNN_STATUS_UNIMPLEMENTED;
    }
    for (int k = 0; k < 2; ++k) {   /* the channels of the tensor read, then written */
        const int32_t *from = k ? a->dst_zps : a->src_zps;
        const int64_t n = (k == 0) == (dir == BDNN_DIR_FWD) ? d->ic : d->oc;
        if (!from) continue;
        int32_t *copy = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
        if (!copy) {
            bdnn_conv_destroy(c);
            return BDNN_STATUS_OUT_OF_MEMORY;
        }
        memcpy(copy, from, sizeof(int32_t) * (size_t)n);
        if (k) c->dst_zps = copy;
        else c->src_zps = copy;
    }
    c->lp = needs_lp(c);
    c->nthr = nthr;
    c->impl = e;
    if (a->scales != BDNN_SCALES_NONE) {
        /* One per channel of the written tensor: dst's oc, or diff_src's ic (backward
         * data, which deconvolution's forward runs). */
        const int64_t channels = dir == BDNN_DIR_BWD_DATA ? d->ic : d->oc;
        c->wei_scales = malloc(sizeof(float) * (size_t)channels);
        if (!c->wei_scales) {
            bdnn_conv_destroy(c);
            return BDNN_STATUS_OUT_OF_MEMORY;
        }
        for (int64_t ch = 0; ch < channels; ++ch)
            c->wei_scales[ch] = a->wei_scales[a->wei_scales_per_oc ? ch : 0];
    }
    if (a->scales == BDNN_SCALES_ARGS && bdnn_dw_post_op(a) >= 0) {
        c->dw_wei_scales = malloc(sizeof(float) * (size_t)(d->oc > 0 ? d->oc : 1));
        if (!c->dw_wei_scales) {
            bdnn_conv_destroy(c);
            return BDNN_STATUS_OUT_OF_MEMORY;
        }
        for (int64_t ch = 0; ch < d->oc; ++ch)
            c->dw_wei_scales[ch] = !a->dw_wei_scales ? 1.0f
                                 : a->dw_wei_scales[a->dw_wei_scales_per_oc ? ch : 0];
    }
    size_t *outer = alloc_tally, scratch = 0;
    alloc_tally = &scratch;
    conv_book_t *outer_book = booking;
    if (!outer_book) {   /* a top-level primitive: its book collects every slot */
        c->book.user = !!a->scratchpad_user;
        booking = &c->book;
    }
    const int n_booked = booking->n;
    const size_t booked = booking->bytes;
    const int st = !c->impl->applies || c->impl->applies(c) ? c->impl->ops->init(c)
                                                            : BDNN_STATUS_UNIMPLEMENTED;
    if (st != BDNN_STATUS_OK && outer_book) {
        /* a sub-primitive that failed: its slots die with it (the parent's init may try
         * another row) */
        outer_book->n = n_booked;
        outer_book->bytes = booked;
    }
    booking = outer_book;
    alloc_tally = outer;
    if (outer) *outer += scratch;
    c->scratch_bytes = scratch;
    if (st != BDNN_STATUS_OK) {
        bdnn_conv_destroy(c);
        return st;
    }
    *out = c;
    return BDNN_STATUS_OK;
}

int bdnn_conv_create(int impl, const bdnn_conv_desc_t *d, int dir, int with_bias,
                     const bdnn_conv_attr_t *attr, bdnn_conv_t **out) {
    return conv_create(impl, d, dir, with_bias, attr, test_fault, omp_get_max_threads(), out);
}

int bdnn_conv_create_single(const bdnn_conv_desc_t *d, int max_isa, int with_bias,
                            const bdnn_conv_attr_t *attr, int fault, bdnn_conv_t **out) {
    int st = BDNN_STATUS_UNIMPLEMENTED;
    for (int i = 0; i < N_IMPLS; ++i) {
        /* (never Winograd: fused_dw's steps are direct convolutions) */
        if (row(i)->flags & (CONV_ROW_FUSED_DW | CONV_ROW_WINO) || row(i)->isa > max_isa)
            continue;
        st = conv_create(i, d, BDNN_DIR_FWD, with_bias, attr, fault, 1, out);
        if (st != BDNN_STATUS_UNIMPLEMENTED) return st;
    }
    return st;
}

size_t bdnn_conv_weights_bytes(const bdnn_conv_t *c) { return c->impl->ops->weights_bytes(c); }
size_t bdnn_conv_scratch_bytes(const bdnn_conv_t *c) { return c->scratch_bytes; }

int bdnn_conv_pack_weights(const bdnn_conv_t *c, const void *wei, void *wei_packed) {
    if (c->impl->ops->pack_weights_dw) return BDNN_STATUS_INVALID;
    if (c->operands == OPERANDS_F32 && c->attr.wei_dt != BDNN_DT_F32) {
        /* bf16 or f16 weights on the f32 rows: widened here, once, so that every row
         * packs f32 (as the primitive it sees, a copy whose weights are f32) */
        const int64_t n = bdnn_weights_elems(&c->d);
        float *wf = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        if (!wf) return BDNN_STATUS_OUT_OF_MEMORY;
        bdnn_cvt_to_f32(c->attr.wei_dt, wei, wf, n);
        bdnn_conv_t widened = *c;
        widened.attr.wei_dt = BDNN_DT_F32;
        c->impl->ops->pack_weights(&widened, wf, wei_packed);
        free(wf);
        return BDNN_STATUS_OK;
    }
    c->impl->ops->pack_weights(c, wei, wei_packed);
    return BDNN_STATUS_OK;
}

int bdnn_conv_pack_weights_dw(const bdnn_conv_t *c, const void *wei, const void *dw_wei,
                              const void *dw_bias, void *wei_packed) {
    if (!c->impl->ops->pack_weights_dw || !dw_wei || (c->with_bias && !dw_bias))
        return BDNN_STATUS_INVALID;
    c->impl->ops->pack_weights_dw(c, wei, dw_wei, dw_bias, wei_packed);
    return BDNN_STATUS_OK;
}

int bdnn_conv_set_post_op_input(bdnn_conv_t *c, int index, const void *data) {
    if (index < 0 || index >= c->n_post_ops || !data) return BDNN_STATUS_INVALID;
    const int kind = c->post_ops[index].kind;
    if (kind != BDNN_POST_BINARY && kind != BDNN_POST_PRELU) return BDNN_STATUS_INVALID;
    c->post_src[index] = data;
    return BDNN_STATUS_OK;
}

/* Every binary and prelu entry has its input (bdnn_conv_set_post_op_input). */
static int post_inputs_set(const bdnn_conv_t *c) {
    for (int i = 0; i < c->n_post_ops; ++i)
        if ((c->post_ops[i].kind == BDNN_POST_BINARY || c->post_ops[i].kind == BDNN_POST_PRELU)
                && !c->post_src[i])
            return 0;
    return 1;
}

/* Runs the implementation in its scratchpad; the slow-gemm defect repeats the
 * (idempotent) work. */
static int run_impl(const bdnn_conv_t *c, const bdnn_conv_args_t *a) {
    const int st = bind_scratchpad(c);
    if (st != BDNN_STATUS_OK) return st;
    c->impl->ops->execute(c, a);
    if (c->fault == BDNN_FAULT_SLOW_GEMM && c->impl->flags & CONV_ROW_GEMM)
        c->impl->ops->execute(c, a);
    unbind_scratchpad(c);
    return BDNN_STATUS_OK;
}

int bdnn_conv_execute(const bdnn_conv_t *c, const void *src, const void *wei_packed,
                      const void *bias, void *dst) {
    if (c->dir != BDNN_DIR_FWD || (c->with_bias && !bias) || !post_inputs_set(c))
        return BDNN_STATUS_INVALID;
    if (c->d.mb == 0) return BDNN_STATUS_OK;
    if (c->fault == BDNN_FAULT_CRASH && c->d.ic == 3 && c->d.oc == 5) raise(SIGSEGV);
    const bdnn_conv_args_t a = {.src = src, .wei = wei_packed,
                                .bias = c->with_bias ? bias : NULL, .dst = dst};
    return run_impl(c, &a);
}

int bdnn_conv_execute_bwd_data(const bdnn_conv_t *c, const void *diff_dst,
                               const void *wei_packed, const void *bias, void *diff_src) {
    if (c->dir != BDNN_DIR_BWD_DATA || (c->with_bias && !bias) || !post_inputs_set(c))
        return BDNN_STATUS_INVALID;
    if (c->d.mb == 0) return BDNN_STATUS_OK;
    const bdnn_conv_args_t a = {.diff_dst = diff_dst, .wei = wei_packed,
                                .bias = c->with_bias ? bias : NULL, .diff_src = diff_src};
    return run_impl(c, &a);
}

int bdnn_conv_execute_bwd_weights(const bdnn_conv_t *c, const void *src,
                                  const void *diff_dst, void *diff_wei, void *diff_bias) {
    if (c->dir != BDNN_DIR_BWD_WEIGHTS || (c->with_bias && !diff_bias))
        return BDNN_STATUS_INVALID;
    /* The low-precision path computes diff_bias itself (from its f32 copy of diff_dst),
     * and so do the channels-last and blocked rows (bdnn_bias_grad reads [mb][oc][spatial]). */
    const int own_bias = c->lp || c->attr.layout != BDNN_LAYOUT_PLAIN;
    const bdnn_conv_args_t a = {.src = src, .diff_dst = diff_dst, .diff_wei = diff_wei,
                                .bias = own_bias && c->with_bias ? diff_bias : NULL};
    const int st = run_impl(c, &a);
    if (st != BDNN_STATUS_OK) return st;
    if (c->with_bias && !own_bias)
        bdnn_bias_grad(diff_dst, c->d.mb, c->d.oc, c->d.od * c->d.oh * c->d.ow, diff_bias);
    return BDNN_STATUS_OK;
}

/* Sums per channel. Each thread owns whole channels, so the sums need no reduction across
 * threads; the inner loop over a contiguous plane vectorizes. */
int bdnn_bias_grad(const float *x, int64_t mb, int64_t channels, int64_t spatial, float *out) {
#pragma omp parallel for schedule(static)
    for (int64_t ch = 0; ch < channels; ++ch) {
        float acc = 0.0f;
        for (int64_t n = 0; n < mb; ++n) {
            const float *plane = x + (n * channels + ch) * spatial;
            for (int64_t p = 0; p < spatial; ++p) acc += plane[p];
        }
        out[ch] = acc;
    }
    return BDNN_STATUS_OK;
}

const char *bdnn_conv_name(const bdnn_conv_t *c) { return c->name ? c->name : c->impl->name; }

const char *bdnn_conv_variant(const bdnn_conv_t *c) {
    return c->variant && *c->variant ? *c->variant : "";
}

void bdnn_conv_destroy(bdnn_conv_t *c) {
    if (!c) return;
    if (c->impl && c->impl->ops->fini) c->impl->ops->fini(c);
    free(c->wei_scales);
    free(c->dw_wei_scales);
    free(c->src_zps);
    free(c->dst_zps);
    free(c->book.slot);
    free(c->book.off);
    free(c);
}
