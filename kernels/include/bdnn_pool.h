/*
 * bdnn_pool.h -- the pooling primitive of the kernel core (plain, channels-last and
 * channel-blocked layouts; f32, bf16, f16, and s8/u8/s32 forward).
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 *
 * Layouts (d->layout; one for src and dst, and their diffs; always dense, offset 0):
 *   BDNN_POOL_LAYOUT_NCX     src [mb][c][id][ih][iw]             dst [mb][c][od][oh][ow]
 *   BDNN_POOL_LAYOUT_NXC     src [mb][id][ih][iw][c]             (axb: nwc, nhwc, ndhwc)
 *   BDNN_POOL_LAYOUT_NCX8C   src [mb][C8][id][ih][iw][8], C8 = ceil(c/8)  (aBx8b: nChw8c)
 *   BDNN_POOL_LAYOUT_NCX16C  the same with blocks of 16                  (aBx16b: nChw16c)
 * A blocked tensor holds mb * ceil(c/B) * B * spatial elements; the channels c..ceil(c/B)*B
 * of the last block are its padded tail: inputs' tails are never read for a result,
 * outputs' tails are written with zeros. Each implementation row takes some layouts
 * (bdnn_pool_impl_layouts); another layout is BDNN_STATUS_UNIMPLEMENTED for it, and the
 * caller reorders (non-dense strides, other tags). The reference takes NCX only.
 * 1D and 2D problems are 3D ones with neutral outer axes (size 1, kernel 1, stride 1,
 * padding 0, dilation 0). Dilation is 0-based (taps d + 1 apart); only front/top/left
 * padding is given; taps outside [0, I) are not part of the window.
 *
 * Algorithms: max (first strict maximum over in-bounds taps; a window with none gives
 * the lowest finite value of the type, -FLT_MAX for f32), avg_p (sum / (kd*kh*kw)), avg_np (sum / in-bounds taps).
 *
 * Data types: src and dst (diff_src and diff_dst) share one type dt (BDNN_DT_*), except
 * that forward on the plain layout takes a dst type of its own. Other types than f32 are
 * widened exactly to f32, computed like f32, and rounded to nearest even (integers:
 * saturated first) on the store (common/dt.h). Integer types have no backward.
 *
 * Workspace: forward training with max records, per dst point, which tap won; backward
 * data with max reads it instead of searching src again. Its size, element type and
 * point order are whatever bdnn_pool_workspace() answers for that implementation and
 * descriptor (callers must not assume them: a channels-inner row keeps it in its own
 * point order); zero bytes means the configuration has none (inference, averages). The
 * caller only passes it from forward training to backward of the same row and desc.
 */
#ifndef BDNN_POOL_H
#define BDNN_POOL_H

#include "bdnn.h"

/* CDEF BEGIN */
typedef struct {
    int64_t mb, c;
    int64_t id, ih, iw;
    int64_t od, oh, ow;
    int64_t kd, kh, kw;
    int64_t sd, sh, sw;
    int64_t pd, ph, pw;
    int64_t dd, dh, dw;
    int layout;           /* BDNN_POOL_LAYOUT_* of src and dst (and their diffs) */
} bdnn_pool_desc_t;

enum { BDNN_POOL_LAYOUT_NCX = 0, BDNN_POOL_LAYOUT_NXC = 1, BDNN_POOL_LAYOUT_NCX8C = 2,
       BDNN_POOL_LAYOUT_NCX16C = 3, BDNN_POOL_N_LAYOUTS = 4 };

enum { BDNN_POOL_MAX = 0, BDNN_POOL_AVG_P = 1, BDNN_POOL_AVG_NP = 2 };

/* Propagation kinds (the spec's: training keeps what backward needs, inference does not). */
enum { BDNN_PROP_FWD_TRAINING = 0, BDNN_PROP_FWD_INFERENCE = 1, BDNN_PROP_BWD_DATA = 2 };

/* Deliberate defects (tests only), numbered apart from bdnn.h's. */
enum {
    BDNN_POOL_FAULT_WS_IGNORED = 301,   /* backward max never reads the workspace: each
                                           gradient goes to the window's first in-bounds
                                           tap */
    BDNN_POOL_FAULT_WS_UNWRITTEN = 302  /* forward training leaves the workspace untouched */
};

typedef struct {
    int64_t bytes;        /* 0: no workspace */
    int64_t elem_bytes;   /* size of one element */
} bdnn_pool_ws_t;

int bdnn_pool_impl_count(void);
const char *bdnn_pool_impl_name(int impl);
int bdnn_pool_impl_isa(int impl);
int bdnn_pool_impl_operands(int impl);   /* BDNN_OPERANDS_* (bdnn.h): the types a row takes */
int bdnn_pool_impl_layouts(int impl);    /* bit (1 << BDNN_POOL_LAYOUT_*) per layout taken */

/* The workspace of row impl for this descriptor (its layout included), alg and prop.
 * BDNN_STATUS_INVALID for an inconsistent descriptor or unknown impl/alg/prop. */
int bdnn_pool_workspace(int impl, const bdnn_pool_desc_t *d, int alg, int prop,
                        bdnn_pool_ws_t *ws);

/* Forward (prop = training or inference): dst (of dst_dt) from src (of dt); ws written
 * for training max (NULL allowed otherwise). BDNN_STATUS_UNIMPLEMENTED when the row does
 * not take dt, when its ISA lacks dst_dt's conversions, and for a dst_dt other than dt on
 * a layout other than the plain one.
 * po (NULL: none): eltwise, binary and prelu entries over dst [mb][c][od][oh][ow],
 * applied to each output row in f32 before its store; the plain layout only (another is
 * BDNN_STATUS_UNIMPLEMENTED; a sum or dw entry too).
 * fault: 0, a BDNN_POOL_FAULT_*, or bdnn.h's BDNN_FAULT_TRUNCATE_DST or
 * BDNN_FAULT_SRC1_CHANNEL0 (tests only). */
int bdnn_pool_fwd(int impl, const bdnn_pool_desc_t *d, int alg, int prop, int dt,
                  int dst_dt, const bdnn_post_chain_t *po, const void *src, void *dst,
                  void *ws, void *scratchpad, int64_t scratchpad_bytes, int fault);
/* Backward data: diff_src (fully overwritten) from diff_dst; max reads ws (as written by
 * the forward-training call on the same descriptor), averages need none. A workspace entry
 * that names no tap of its window contributes nothing (it is never a write elsewhere). */
int bdnn_pool_bwd(int impl, const bdnn_pool_desc_t *d, int alg, int dt, const void *diff_dst,
                  const void *ws, void *diff_src, void *scratchpad, int64_t scratchpad_bytes,
                  int fault);
/* The work memory a call of bdnn_pool_fwd (backward 0, dst_dt its dst type) or
 * bdnn_pool_bwd (backward 1) takes at the current OpenMP thread count: -1 when the row
 * does not take the problem. A call's scratchpad (NULL: the call allocates its own block
 * and frees it) of scratchpad_bytes, 64-byte aligned, must hold that many bytes at the
 * call's thread count (else BDNN_STATUS_INVALID, nothing written); its contents on entry
 * do not matter (every part is written before it is read), and two calls running at once
 * need two scratchpads. */
int64_t bdnn_pool_scratchpad_bytes(int impl, const bdnn_pool_desc_t *d, int alg, int backward,
                                   int dt, int dst_dt);

/* The reference: the formulas as plain loops in double (max: values compared in double,
 * ties keep the first tap), NCX only. Shares no code with the implementations. */
int bdnn_ref_pool_fwd(const bdnn_pool_desc_t *d, int alg, const float *src, double *dst);
int bdnn_ref_pool_bwd(const bdnn_pool_desc_t *d, int alg, const float *src,
                      const float *diff_dst, double *diff_src);
/* CDEF END */

#endif /* BDNN_POOL_H */
