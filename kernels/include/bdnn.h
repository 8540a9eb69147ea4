/*
 * bdnn.h -- the whole C API of the benchdnn-py kernel core.
 *
 * benchdnn_py/core/ is the only Python package that calls into it. The part between the
 * CDEF markers is fed verbatim to cffi's cdef(), so it holds declarations only (no
 * preprocessor lines, no inline code).
 *
 * Conventions shared by every entry point:
 *   - Tensors are dense, plain (row-major "abx") buffers owned by the caller, each of the
 *     data type the primitive was created with (f32 unless said otherwise):
 *       src  [mb][ic][id][ih][iw]
 *       wei  [g][oc/g][ic/g][kd][kh][kw]          (user layout; see bdnn_conv_pack_weights)
 *       bias [oc]
 *       dst  [mb][oc][od][oh][ow]
 *     A convolution created with attr.layout BDNN_LAYOUT_NHWC takes src and dst (and their
 *     diffs) channels-last instead: [mb][id][ih][iw][ic], [mb][od][oh][ow][oc]; with
 *     BDNN_LAYOUT_BLOCKED8/16 channel-blocked: [mb][ic/B][id][ih][iw][B] (padded).
 *     1D and 2D problems are passed as 3D ones with the missing outer spatial sizes set to 1
 *     (kernel 1, stride 1, padding 0, dilation 0).
 *   - Dilation uses the primitive convention: 0 means no dilation; taps are (d + 1) apart.
 *   - Padding: only the front/top/left padding is given. Right padding is implied by the
 *     output size and may be negative; every tap whose input coordinate falls outside
 *     [0, I) reads zero.
 *   - Return codes are BDNN_STATUS_* values.
 */
#ifndef BDNN_H
#define BDNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CDEF BEGIN */
typedef struct {
    int64_t g, mb, ic, oc;
    int64_t id, ih, iw;
    int64_t od, oh, ow;
    int64_t kd, kh, kw;
    int64_t sd, sh, sw;
    int64_t pd, ph, pw;
    int64_t dd, dh, dw;
} bdnn_conv_desc_t;

enum {
    BDNN_STATUS_OK = 0,
    BDNN_STATUS_UNIMPLEMENTED = 1,   /* this implementation does not handle the problem */
    BDNN_STATUS_INVALID = 2,         /* the problem itself is inconsistent */
    BDNN_STATUS_OUT_OF_MEMORY = 3
};

/* Instruction sets a kernel variant may need, from the portable one up. AVX512 means
 * F/VL/BW/DQ; the last two add the dot-product extensions to it. */
enum {
    BDNN_ISA_SCALAR = 0,
    BDNN_ISA_AVX2 = 1,
    BDNN_ISA_AVX512 = 2,
    BDNN_ISA_AVX512_VNNI = 3,   /* vpdpbusd: u8 x s8 dot products into s32 */
    BDNN_ISA_AVX512_BF16 = 4,   /* vdpbf16ps: bf16 pair dot products into f32 */
    BDNN_ISA_AVX512_AMX = 5     /* AMX tiles: bf16 pairs into f32, u8 x s8 quads into s32 */
};

/* Data types of tensors. */
enum {
    BDNN_DT_F32 = 0,
    BDNN_DT_BF16 = 1,
    BDNN_DT_F16 = 2,
    BDNN_DT_S32 = 3,
    BDNN_DT_S8 = 4,
    BDNN_DT_U8 = 5,
    /* Only the reorder's generic route, bdnn_dt_convert and (the 8-bit floats) eltwise
     * take the types below; the other kernels reject them: 8-bit floats, and 4-bit types
     * packed two to a byte, element 2k in the low nibble of byte k (oneDNN's packing). */
    BDNN_DT_F8_E5M2 = 6,
    BDNN_DT_F8_E4M3 = 7,
    BDNN_DT_S4 = 8,
    BDNN_DT_U4 = 9,
    BDNN_DT_F4_E2M1 = 10,
    /* eltwise and the f64 convolution (computed in double); no conversion or reorder
     * takes it */
    BDNN_DT_F64 = 11
};

/* Propagation directions of a primitive. */
enum {
    BDNN_DIR_FWD = 0,          /* dst = conv(src, wei) (+ bias) */
    BDNN_DIR_BWD_DATA = 1,     /* diff_src from diff_dst and wei */
    BDNN_DIR_BWD_WEIGHTS = 2   /* diff_wei (and diff_bias) from src and diff_dst */
};

/* Post-ops (forward only), applied in order in the kernels' epilogue, in f32:
 *   sum:      dst = scale * (dst_prior - zero_point) + result
 *   eltwise:  dst = scale * f(dst; alpha, beta)    (scale is 1 outside int8)
 *   dw:       dst = Conv_dw(result): a depthwise convolution (g = ic = oc = the main
 *             convolution's oc; kernel dw_k x dw_k, stride dw_s, padding dw_p on both
 *             sides) of the main output, which is first rounded to dst_dt exactly as a
 *             stored output would be. Entries before it apply to the main output, entries
 *             after it to the depthwise output. Only the fused_dw rows take it (2D forward
 *             1x1 convolutions, g = 1, eltwise entries beside it, at most one dw entry);
 *             the written tensor is then [mb][oc][dw_oh][dw_ow] of dw_dst_dt, with
 *             dw_oh = (oh + 2 * dw_p - dw_k) / dw_s + 1 (dw_ow alike), and the primitive
 *             takes its weights [oc][1][1][dw_k][dw_k] (dw_wei_dt) and, with bias, a bias
 *             [oc] (dw_bia_dt) through bdnn_conv_pack_weights_dw.
 *   binary:   dst = dst OP src1, src1 (of src1_dt) converted to f32; OP one of
 *             BDNN_BIN_*, the comparisons giving 1 or 0
 *   prelu:    dst = dst > 0 ? dst : dst * weight   (weights in src1, f32)
 *             Both read an extra input tensor over the written tensor's dims
 *             (mb, c, d, h, w), broadcast along the dims whose src1_strides entry is 0:
 *             element (n, c, d, h, w) of it is src1[n*s0 + c*s1 + d*s2 + h*s3 + w*s4].
 *             The buffer is given by bdnn_conv_set_post_op_input before execution; only
 *             the plain-layout GEMM rows take these entries (their epilogue knows each
 *             output's position), and no dw entry beside them.
 * For f32 data the sum must come first in a chain; the low-precision epilogue takes the
 * entries in any order. */
enum {
    BDNN_POST_SUM = 1,
    BDNN_POST_ELTWISE = 2,
    BDNN_POST_DW = 3,
    BDNN_POST_BINARY = 4,
    BDNN_POST_PRELU = 5
};
/* Binary post-op algorithms (bdnn_post_op_t.alg of a BDNN_POST_BINARY entry). */
enum {
    BDNN_BIN_ADD = 0, BDNN_BIN_SUB, BDNN_BIN_MUL, BDNN_BIN_DIV, BDNN_BIN_MAX, BDNN_BIN_MIN,
    BDNN_BIN_GE, BDNN_BIN_GT, BDNN_BIN_LE, BDNN_BIN_LT, BDNN_BIN_EQ, BDNN_BIN_NE
};

/* Eltwise algorithms (oneDNN's forward formulas; the _dst variants differ only backward). */
enum {
    BDNN_ELT_ABS = 0, BDNN_ELT_CLIP, BDNN_ELT_CLIP_V2, BDNN_ELT_ELU, BDNN_ELT_EXP,
    BDNN_ELT_GELU_ERF, BDNN_ELT_GELU_TANH, BDNN_ELT_HARDSIGMOID, BDNN_ELT_HARDSWISH,
    BDNN_ELT_LINEAR, BDNN_ELT_LOG, BDNN_ELT_LOGISTIC, BDNN_ELT_MISH, BDNN_ELT_POW,
    BDNN_ELT_RELU, BDNN_ELT_ROUND, BDNN_ELT_SOFT_RELU, BDNN_ELT_SQRT, BDNN_ELT_SQUARE,
    BDNN_ELT_SWISH, BDNN_ELT_TANH
};

enum { BDNN_MAX_POST_OPS = 8 };

typedef struct {
    int kind;              /* BDNN_POST_* */
    int alg;               /* BDNN_ELT_* for eltwise, BDNN_BIN_* for binary */
    float scale, alpha, beta;
    int32_t zero_point;    /* sum: subtracted from the prior dst (int8) */
    int sum_dt;            /* sum: the BDNN_DT_* the prior dst is read as, its bits
                              reinterpreted (a type of dst's size); -1: dst's own */
    int dw_k, dw_s, dw_p;  /* dw: kernel size, stride, padding (both sides) */
    int dw_wei_dt, dw_bia_dt, dw_dst_dt;   /* dw: BDNN_DT_* of its weights, bias, output */
    int src1_dt;                /* binary, prelu: BDNN_DT_* of the extra input */
    int64_t src1_strides[5];    /* binary, prelu: its strides over (mb, c, d, h, w), in
                                   elements; 0 along a broadcast dim */
} bdnn_post_op_t;

/* A post-op chain of the memory-bound primitives (eltwise, pooling): eltwise, binary and
 * prelu entries applied in order, in f32, to each output before its store. Binary and
 * prelu read src1[i] at each output's position in the written tensor, whose dims are
 * [mb][c][d][h][w], stored in that order (channels_last 0) or as [mb][d][h][w][c] (1);
 * their strides are over (mb, c, d, h, w) as in bdnn_post_op_t. */
typedef struct {
    int n;
    bdnn_post_op_t ops[8];                /* BDNN_MAX_POST_OPS */
    const void *src1[8];
    int64_t c, d, h, w;
    int channels_last;
} bdnn_post_chain_t;

/* How the accumulator is scaled (int8 convolutions), before the post-ops:
 *   NONE    v = acc + bias
 *   OSCALE  v = oscale[oc] * (acc + bias)                      (DNNL 1.x output scales)
 *   ARGS    v = acc * src_scale * wei_scale[oc] + bias         (oneDNN 3.x argument scales)
 * and after them (ARGS only) dst = v * (1 / dst_scale) + dst_zp. acc sums
 * (src - src_zp) * wei, so padding contributes nothing whatever the zero point. Zero
 * points per channel (src_zps, dst_zps) are for forward and backward data on the plain
 * GEMM rows' gather route; the other rows and routes refuse them. */
enum {
    BDNN_SCALES_NONE = 0,
    BDNN_SCALES_OSCALE = 1,
    BDNN_SCALES_ARGS = 2
};

/* Everything about a primitive beyond its shape and direction. Data types name the user's
 * tensors: in backward data src_dt is diff_src's and dst_dt diff_dst's; in backward
 * weights wei_dt is diff_weights' and bia_dt diff_bias'. */
typedef struct {
    int src_dt, wei_dt, dst_dt, bia_dt;   /* BDNN_DT_* */
    int scales;                           /* BDNN_SCALES_* */
    float src_scale, dst_scale;           /* ARGS: common scales */
    int wei_scales_per_oc;                /* 0: wei_scales[0] for all; 1: one per oc */
    const float *wei_scales;              /* OSCALE/ARGS, one per output channel (oc;
                                             ic in backward data); copied by create */
    int32_t src_zp, dst_zp;               /* common zero points: src_zp of the
                                             activation read (src; diff_dst in backward
                                             data), dst_zp of the tensor written */
    /* ARGS with a dw post-op (oneDNN 3.x): the depthwise step's own scales; its src
     * scale is dst_scale, the 1x1 step's (whose output it reads). dw_wei_scales: NULL
     * (all 1), one, or one per channel (copied by create); dw_dst_scale: 1 when not given. */
    const float *dw_wei_scales;
    int dw_wei_scales_per_oc;
    float dw_dst_scale;
    const int32_t *src_zps, *dst_zps;     /* or one per channel of the activation read
                                             and of the tensor written (forward: ic,
                                             oc; backward data: oc, ic), copied by
                                             create; NULL: the common one */
    int n_post_ops;
    bdnn_post_op_t post_ops[8];           /* BDNN_MAX_POST_OPS */
    int layout;                           /* BDNN_LAYOUT_*: src and dst (diff_src,
                                             diff_dst); weights stay in the user layout */
    int src_nhwc;                         /* 1: forward with layout BLOCKED8/16 takes
                                             src channels last instead (first layers:
                                             a few channels padded to a block would be
                                             mostly padding); the blocked direct rows
                                             only */
    int scratchpad_user;                  /* 1: the caller provides the work memory
                                             (bdnn_conv_set_scratchpad); 0: the
                                             primitive allocates it at creation */
} bdnn_conv_attr_t;

/* The activations' memory layout a primitive runs on (bdnn_conv_attr_t.layout); each row
 * of the implementation table accepts exactly one:
 *   PLAIN  [mb][c][d][h][w] (abx: ncw, nchw, ncdhw), the default (0)
 *   NHWC   [mb][d][h][w][c] (axb: nwc, nhwc, ndhwc), channels last: the gemm_conv_nhwc
 *          rows, f32 only.
 *   BLOCKED8, BLOCKED16  [mb][c/B][d][h][w][B] with B = 8, 16 (aBx8b, aBx16b: nChw8c,
 *          nChw16c and their 1D/3D forms), channels padded up to a multiple of B; the
 *          gemm_conv_blocked rows, f32 only. Buffers hold the padded channels; the rows
 *          never read the padded tail of an input and write zeros into that of an output. */
enum {
    BDNN_LAYOUT_PLAIN = 0,
    BDNN_LAYOUT_NHWC = 1,
    BDNN_LAYOUT_BLOCKED8 = 2,
    BDNN_LAYOUT_BLOCKED16 = 3
};
/* Backward weights' f32 operands up to this many bytes (8 MiB) stay in the caches from one
 * run to the next; past it they come from memory on every run. Channels last
 * (gemm_conv_nhwc) reads a 1x1's src of a page a point in place, without a copy, only up
 * to this much src; both routes read each next k block ahead past this much src and
 * diff_dst together; the driver's choice of layout for `any` follows the same bound on a
 * src it would copy. */
enum { BDNN_BWT_CACHED_MAX_BYTES = 8388608 };
/* The wino_f43_blocked rows take transformed weights U (36 x IC x OC rounded up to the
 * channel block, f32) of at most this many bytes (10 MiB; why: conv_wino_blk.c); the
 * driver's --alg=auto few-channel rule follows the same bound. */
enum { BDNN_WINO_BLOCKED_MAX_U_BYTES = 10485760 };
/* A forward output (or unit-stride backward data's diff_src) written once and of at least
 * this many bytes (16 MiB) goes past the caches, by non-temporal stores, in the kernels
 * that can (wino_f43_blocked, gemm_conv_blocked's direct kernels): half of L3 here, so
 * with the input that produced it it does not stay there for a next reader, and a normal
 * store first reads each line it writes. */
enum { BDNN_STREAM_MIN_BYTES = 16777216 };
/* A strided 1x1 forward on channel blocks (gemm_conv_blocked's direct kernels) whose src
 * is at least this many bytes (4 MiB) reads each work item's points ahead, while the item
 * before computes; a smaller src stays in L3 from one run to the next, where asking for
 * its lines cost more than the copy waited. */
enum { BDNN_GATHER_AHEAD_MIN_BYTES = 4194304 };

/* Deliberate defects, for the test suite to prove that the checks catch them. */
enum {
    BDNN_FAULT_NONE = 0,
    BDNN_FAULT_SKIP_LAST_IC = 1,     /* drop the last input channel of every group */
    BDNN_FAULT_RIGHT_PAD_EDGE = 2,   /* read the edge value instead of zero past the right edge */
    BDNN_FAULT_SKIP_LAST_TAP = 3,    /* drop the last kernel tap */
    BDNN_FAULT_STRIDE_TRUNC = 4,     /* backward data: truncate (i + p - k) / s instead of
                                        skipping taps that do not divide evenly */
    BDNN_FAULT_SLOW_GEMM = 5,        /* correct, but gemm_conv does all its work twice (for
                                        regression-detection tests) */
    BDNN_FAULT_POST_OPS_SWAPPED = 6, /* apply a two-entry post-op chain in reverse order */
    BDNN_FAULT_SUM_SCALE_DROPPED = 7,/* use 1 instead of the sum post-op's scale */
    BDNN_FAULT_TRUNCATE_DST = 8,     /* low-precision outputs: truncate instead of rounding
                                        to nearest even */
    BDNN_FAULT_WRAP_DST = 9,         /* integer outputs: wrap around instead of saturating */
    BDNN_FAULT_CRASH = 10,           /* forward execute raises SIGSEGV when ic == 3 and oc == 5
                                        (crash-isolation tests: one recognizable shape dies) */
    BDNN_FAULT_DW_PRE_POST_SWAPPED = 11,/* depthwise fusion: the eltwise entries before the dw
                                           entry run after the depthwise step, and those
                                           after it before */
    BDNN_FAULT_WINO_COEF = 12,       /* Winograd: one coefficient of the weight transform G
                                        is wrong (1/24 -> 1/25) */
    BDNN_FAULT_PADDING_GARBAGE = 13, /* gemm_conv_blocked: write 1 instead of 0 into the
                                        padded channel tail of its output (the reorders'
                                        reorder_padding_garbage, on the native rows) */
    BDNN_FAULT_SPLIT_DROPPED = 14,   /* the reductions of per-thread partial results
                                        (k splits, per-thread diff_src) leave out the last
                                        thread's: a defect only a multi-thread run has */
    BDNN_FAULT_SRC1_CHANNEL0 = 15,   /* binary and prelu post-ops read their input at
                                        channel 0 for every channel */
    BDNN_FAULT_BORDER_KEPT = 16      /* int8 gather route, a zero point the padding byte
                                        cannot hold: the border's correction is skipped */
};
/* The defect (BDNN_FAULT_*) every convolution primitive created from now on carries, read
 * at bdnn_conv_create (tests only; BDNN_FAULT_NONE, the default, for correct kernels). */
void bdnn_set_test_fault(int fault);

/* ---- machine ---- */
int bdnn_isa_supported(int isa);     /* CPU and OS can run this level, and it is allowed */
void bdnn_set_max_isa(int isa);      /* allow no level above isa (every row table follows) */
int bdnn_max_threads(void);          /* OpenMP threads a parallel region will use */
/* Sets that count for the calling thread's later parallel regions and primitives
 * (omp_set_num_threads): a case's --threads. */
void bdnn_set_threads(int n);
const char *bdnn_build_info(void);   /* compiler and flags the core was built with */
/* 1 where the core runs 512-bit vector operations as two 256-bit halves (AMD family
 * 19h): row tables order some routes by it. */
int bdnn_cpu_splits_512(void);

/* Measured limits (kernels/common/peak.c): the best of `repeats` runs of about `seconds`
 * each, on all OpenMP threads, in operations (multiply and add counted apart) or bytes per
 * second; 0 when the CPU lacks the instructions. */
enum {
    BDNN_PEAK_F32 = 0,    /* f32 FMA (avx512, avx2) */
    BDNN_PEAK_BF16 = 1,   /* bf16 pair dot products, vdpbf16ps (avx512_bf16) */
    BDNN_PEAK_INT8 = 2    /* u8 x s8 quad dot products: vpdpbusd (avx512_vnni), or
                             s16 pair products vpmaddwd + vpaddd (avx2) */
};
double bdnn_peak_ops(int kind, int isa, double seconds, int repeats);
double bdnn_peak_copy_bandwidth(int64_t bytes, int repeats);   /* read + written bytes */
/* The perf guard's cache probe: every OpenMP thread reads a buffer of its own of `bytes`
 * (within its core's L2) `passes` times, FMAs fed by the loads; the rate of the slowest
 * thread, in bytes read per second (0 if a buffer cannot be had). */
double bdnn_probe_cache(int64_t bytes, int passes);
/* The round trip of one cache line between OpenMP threads 0 and 1 (each writes it in turn
 * and waits for the other's write), averaged over about `seconds` of turns, in seconds; 0
 * with fewer than two threads. A pair of cores far apart (on another die, or placed so
 * by a hypervisor) reads several times a near pair's, and work that moves between cores
 * from one execution to the next pays it per line. */
double bdnn_probe_core_round_trip(double seconds);

/* ---- fills (kernels/common/fill.c; the contract is benchdnn_py/common/fill.py's) ----
 * n f32 values of tensor kind `kind`, a pure function of (kind, n, element index):
 * integers in [lo, hi] kept with probability density, else 0, element 0 strictly positive
 * when hi >= 1 (bdnn_fill_int); uniform reals in [lo, hi) (bdnn_fill_real); values drawn
 * uniformly from values[0..count) (bdnn_fill_choice, count >= 1). */
void bdnn_fill_int(int kind, int64_t n, int64_t lo, int64_t hi, double density, float *out);
void bdnn_fill_real(int kind, int64_t n, double lo, double hi, float *out);
void bdnn_fill_choice(int kind, int64_t n, const float *values, int64_t count, float *out);

/* ---- data types ----
 * Converts n values from f32 to to_dt or from from_dt to f32 (one side must be f32):
 * round to nearest even, saturation for integers, NaN quieted. isa BDNN_ISA_SCALAR forces
 * the portable code; any other value uses the best instructions the CPU has (exposed so
 * tests can hold both paths to the same bits). f64: BDNN_STATUS_UNIMPLEMENTED. */
int bdnn_dt_convert(int from_dt, int to_dt, const void *in, void *out, int64_t n, int isa);

/* Whether a row of a typed implementation table (eltwise, pooling: one operand class,
 * BDNN_OPERANDS_* below, on one ISA, f32 inside) runs dt in that direction here:
 * BDNN_STATUS_OK, _UNIMPLEMENTED (the CPU lacks the ISA, or F16C for f16 on AVX2; another
 * operand class; integer backward), or _INVALID (an unknown type). */
int bdnn_typed_row_status(int isa, int operands, int dt, int backward);

/* ---- reference ----
 * Plain loops over the formulas of the convolution spec, accumulating in double.
 * Outputs are double so that the caller decides how to round. Shares no code with the
 * implementations below. */
int bdnn_ref_conv_fwd(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                      const float *bias /* NULL: no bias */, double *dst);
int bdnn_ref_conv_bwd_data(const bdnn_conv_desc_t *d, const float *diff_dst,
                           const float *wei, double *diff_src);
int bdnn_ref_conv_bwd_weights(const bdnn_conv_desc_t *d, const float *src,
                              const float *diff_dst, double *diff_wei,
                              double *diff_bias /* NULL: not computed */);
/* The same formulas at a list of output points only (--check=sampled): points[i] is a
 * linear offset into the direction's output tensor in its plain layout (dst; diff_src;
 * diff_wei [g][oc/g][ic/g][k...]; diff_bias [oc]) and out[i] receives the reference value
 * there, bit for bit the value the whole-tensor call above writes at that offset (both
 * call one per-point transcription of the formula). An offset outside the tensor:
 * BDNN_STATUS_INVALID, nothing written. */
int bdnn_ref_conv_fwd_at(const bdnn_conv_desc_t *d, const float *src, const float *wei,
                         const float *bias /* NULL: no bias */, const int64_t *points,
                         int64_t n_points, double *out);
int bdnn_ref_conv_bwd_data_at(const bdnn_conv_desc_t *d, const float *diff_dst,
                              const float *wei, const int64_t *points, int64_t n_points,
                              double *out);
int bdnn_ref_conv_bwd_weights_at(const bdnn_conv_desc_t *d, const float *src,
                                 const float *diff_dst, const int64_t *points,
                                 int64_t n_points, double *out);
int bdnn_ref_conv_bwd_bias_at(const bdnn_conv_desc_t *d, const float *diff_dst,
                              const int64_t *points, int64_t n_points, double *out);

/* ---- implementations ----
 * A fixed table, in order of preference, one row per route of an algorithm on one ISA
 * (names family:isa or family:isa:route, kernels/conv/README.md). An entry is usable for
 * a problem when its ISA is supported and bdnn_conv_create() returns BDNN_STATUS_OK. */
int bdnn_conv_impl_count(void);
const char *bdnn_conv_impl_name(int impl);
int bdnn_conv_impl_isa(int impl);
/* The operand class a row computes: the types of the two tensors a direction multiplies
 * (forward src and wei; backward data diff_dst and wei; backward weights src and
 * diff_dst). */
enum {
    BDNN_OPERANDS_F32 = 0,    /* f32 and f32 */
    BDNN_OPERANDS_F16 = 1,    /* f16 and f16 */
    BDNN_OPERANDS_BF16 = 2,   /* bf16 and bf16 */
    BDNN_OPERANDS_INT8 = 3,   /* u8 or s8, and s8 weights (eltwise, pooling: s8, u8, s32) */
    BDNN_OPERANDS_F8 = 4,     /* eltwise only: f8_e5m2 or f8_e4m3, computed in f32 */
    BDNN_OPERANDS_F64 = 5     /* f64 and f64 (eltwise: computed in double) */
};
int bdnn_conv_impl_operands(int impl);

typedef struct bdnn_conv bdnn_conv_t;

/* Whether the forward shape is the int8 dot route's (conv_gemm_dot.c): a long reduction with
 * few outputs per image. The layout policy runs such int8 cases on the plain layouts. */
int bdnn_conv_dot_shape(const bdnn_conv_desc_t *d);
/* Whether backward weights on channels last (gemm_conv_nhwc's taps route) reads src in
 * place on isa's row (BDNN_ISA_*), without copying it: the layout policy weighs that copy
 * from memory. */
int bdnn_bwt_src_in_place(const bdnn_conv_desc_t *d, int isa);
/* Builds the primitive for one direction: checks the problem, plans blocking and
 * threading, allocates its scratch space. with_bias: forward adds bias; backward data adds
 * a bias to diff_src (used by deconvolution, whose forward is a convolution's backward
 * data); backward weights also computes diff_bias. attr (NULL: f32 everywhere, nothing
 * else) gives the data types, scales, zero points and post-ops; post-ops apply to the
 * forward and backward-data outputs. What an implementation does not handle gives
 * BDNN_STATUS_UNIMPLEMENTED. With a sum post-op, the output buffer must hold the prior
 * values on entry. */
int bdnn_conv_create(int impl, const bdnn_conv_desc_t *d, int dir, int with_bias,
                     const bdnn_conv_attr_t *attr, bdnn_conv_t **out);
/* Size in bytes of the weights in the implementation's own layout (forward and backward
 * data; backward weights writes the user layout and returns 0). */
size_t bdnn_conv_weights_bytes(const bdnn_conv_t *c);
/* Bytes of scratch space the primitive allocated at creation (plans, per-thread buffers,
 * staging copies; the packed weights are the caller's, bdnn_conv_weights_bytes). Reserved
 * at creation, touched at execution: the memory guard counts them before the tensors are
 * allocated. */
size_t bdnn_conv_scratch_bytes(const bdnn_conv_t *c);
/* The scratchpad: the work buffers an execution writes before it reads (packed blocks,
 * accumulators, staging copies), whose contents never carry over from one execution to
 * the next. Its size in bytes, in either mode. With attr.scratchpad_user, creation
 * allocates none of it (bdnn_conv_scratch_bytes then counts only what the primitive
 * keeps: plans, tables, padding planes it zeroes once) and each execution runs in the
 * memory last given to bdnn_conv_set_scratchpad. */
size_t bdnn_conv_scratchpad_bytes(const bdnn_conv_t *c);
/* Gives a user-mode primitive its scratchpad: at least bdnn_conv_scratchpad_bytes bytes,
 * 64-byte aligned, any contents, not used by anyone else while the primitive executes.
 * BDNN_STATUS_INVALID for a library-mode primitive or a misaligned or NULL mem (unless
 * the size is 0); executing a user-mode primitive without one is INVALID too. */
int bdnn_conv_set_scratchpad(bdnn_conv_t *c, void *mem);
/* Reorders user weights (plain layout above, of wei_dt) into the implementation's layout.
 * Not part of the timed execution, as a weights reorder is not in oneDNN. */
int bdnn_conv_pack_weights(const bdnn_conv_t *c, const void *wei, void *wei_packed);
/* The same for a primitive with a dw post-op: every constant input (the main weights, the
 * depthwise weights [oc][1][1][k][k] of dw_wei_dt and, with bias, the depthwise bias [oc]
 * of dw_bia_dt; NULL without) goes into the one packed buffer of bdnn_conv_weights_bytes.
 * BDNN_STATUS_INVALID for a primitive without a dw post-op (and bdnn_conv_pack_weights
 * is INVALID for one with it). */
int bdnn_conv_pack_weights_dw(const bdnn_conv_t *c, const void *wei, const void *dw_wei,
                              const void *dw_bias, void *wei_packed);
/* The extra input of post-op entry `index` (binary src1, prelu weights), as the entry
 * describes it; read at every later execution (the buffer must outlive them).
 * BDNN_STATUS_INVALID for an entry that takes no input. */
int bdnn_conv_set_post_op_input(bdnn_conv_t *c, int index, const void *data);
/* Execution, one entry point per direction (BDNN_STATUS_INVALID if the primitive was
 * created for another). Thread-safe with respect to other primitives; one primitive must
 * not be executed concurrently with itself (it owns its scratch space). */
int bdnn_conv_execute(const bdnn_conv_t *c, const void *src, const void *wei_packed,
                      const void *bias, void *dst);
int bdnn_conv_execute_bwd_data(const bdnn_conv_t *c, const void *diff_dst,
                               const void *wei_packed, const void *bias, void *diff_src);
int bdnn_conv_execute_bwd_weights(const bdnn_conv_t *c, const void *src,
                                  const void *diff_dst, void *diff_wei, void *diff_bias);
/* Applies an eltwise post-op (f32 math) to x[0:n] in place; exposed for tests. */
void bdnn_eltwise_fwd(const bdnn_post_op_t *op, float *x, int64_t n);
/* Per-channel sums of x [mb][channels][spatial] into out [channels] (a bias gradient). */
int bdnn_bias_grad(const float *x, int64_t mb, int64_t channels, int64_t spatial, float *out);
const char *bdnn_conv_name(const bdnn_conv_t *c);
/* The variant of its tile the last execution ran, for a row that chooses one per
 * execution from its data (such as "pairs16", conv_gemm_ukr_t in conv_impl.h); "" for a
 * row with one tile, or before any execution. */
const char *bdnn_conv_variant(const bdnn_conv_t *c);
void bdnn_conv_destroy(bdnn_conv_t *c);
/* The Winograd F(4x4, 3x3) matrices the wino_f43 rows use, derived from their
 * interpolation points (kernels/conv/conv_wino.c): bt = B^T [6][6], g = G [6][3],
 * at = A^T [4][6], row-major; exposed for tests. */
int bdnn_wino_f43_matrices(double *bt, double *g, double *at);
/* CDEF END */

#ifdef __cplusplus
}
#endif

#endif /* BDNN_H */
