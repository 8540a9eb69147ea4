/*
 * bdnn_reorder.h -- the reorder primitive of the kernel core: copy a tensor from one
 * memory layout and data type to another.
 *
 * Called only through benchdnn_py (its core package). The CDEF section goes verbatim to cffi.
 *
 * Contract (what the kernel may assume, what it must do):
 *   - The caller describes the work as jobs. A job is a loop nest of nloops loops,
 *     outermost first, each with a count and a src and a dst stride (in elements; strides
 *     may be anything, including non-dense ones; they are never 0 for a loop of a copy
 *     job), plus the element offsets of its first point. Jobs never overlap in dst, and
 *     together they cover every logical point (copy jobs) and every padded point (zero
 *     jobs) exactly once. Positions of dst that no job names (gaps of non-dense strides)
 *     must not be written. The layouts are the caller's business (benchdnn_py/common/layout.py
 *     builds the jobs); the kernel sees only strides.
 *   - Copy job, per point: v = f32(src); v = v * src_scale; if sum,
 *     v = v + sum_scale * f32(dst_prior); v = v / dst_scale; dst = v rounded to dst_dt
 *     (nearest even, integers saturate; kernels/common/dt.h). Each step is one f32
 *     operation rounded on its own (no FMA contraction), so a numpy transcription of the
 *     formula is exact. Multiplying or dividing by 1 is skipped (exact anyway). When
 *     src_dt == dst_dt and nothing scales or sums, elements are copied bit for bit.
 *   - Zero points and per-point attributes (the generic route only, below): with src_zp
 *     and dst_zp, v = f32(src) - src_zp; v = v * src_scale; if sum, v = v + sum_scale *
 *     (f32(dst_prior) - dst_zp); v = v / dst_scale; v = v + dst_zp; rounded to dst_dt. A
 *     step with a zero point of 0 is skipped. per_point names the values read per point
 *     instead (src_scales, dst_scales, src_zps), each array indexed through the job's
 *     arg_stride and arg_off like a tensor whose dims are 1 where the value is shared.
 *   - Compensation (the generic route; s8 dst): with comp_s8s8 and/or comp_zp, after the
 *     copy, comp_zp[f] = -S[f] and comp_s8s8[f] = -128 * S[f], S[f] the sum of the stored
 *     dst values whose point maps to f through the COMP arg strides (the dims outside the
 *     compensation mask summed over); what an int8 convolution subtracts for an s8
 *     source (shifted by 128) or a source zero point. Computed on one thread.
 *   - Zero job: dst = 0 at every point (the padded tail of a blocked layout); src unread.
 *   - src and dst do not overlap. Runs on all OpenMP threads (a job moving under 64 KiB
 *     on the calling thread alone; the generic route into a 4-bit dst on one thread, as
 *     two elements share a byte).
 *   - Routes: the ISA rows take f32, bf16, f16, s32, s8 and u8 with common scales and a
 *     sum (fast paths: runs, tiles, register transposes); the generic row takes every
 *     type of bdnn.h but f64 (every route computes in f32), zero points and per-point
 *     attributes, one point at a time (bdnn_reorder_check says which row takes what).
 */
#ifndef BDNN_REORDER_H
#define BDNN_REORDER_H

#include "bdnn.h"

/* CDEF BEGIN */
enum { BDNN_REORDER_MAX_LOOPS = 32 };

typedef struct {
    int nloops;
    int64_t n[32];              /* BDNN_REORDER_MAX_LOOPS */
    int64_t src_stride[32];
    int64_t dst_stride[32];
    int64_t src_off, dst_off;   /* elements from the buffer starts to the first point */
    int zero;                   /* 1: write zeros to dst, read nothing */
    /* per-point attribute arrays (BDNN_REORDER_ARG_*): a stride per loop, the first index */
    int64_t arg_stride[4][32];  /* [BDNN_REORDER_ARGS][BDNN_REORDER_MAX_LOOPS] */
    int64_t arg_off[4];
} bdnn_reorder_job_t;

/* The per-point attribute arrays, in arg_stride's order; per_point has bit 1 << arg set
 * for each array given. */
enum {
    BDNN_REORDER_ARG_SRC_SCALES = 0,
    BDNN_REORDER_ARG_DST_SCALES = 1,
    BDNN_REORDER_ARG_SRC_ZPS = 2,
    BDNN_REORDER_ARG_COMP = 3,   /* written: comp_s8s8, comp_zp */
    BDNN_REORDER_ARGS = 4
};

typedef struct {
    int src_dt, dst_dt;         /* BDNN_DT_* */
    float src_scale, dst_scale; /* 1 when not given */
    int sum;                    /* a sum post-op: dst_prior is read */
    float sum_scale;
    int32_t src_zp, dst_zp;     /* common zero points, 0 when not given */
    int per_point;              /* bits 1 << BDNN_REORDER_ARG_*: read from the array */
    const float *src_scales, *dst_scales;
    const int32_t *src_zps;
    int32_t *comp_s8s8, *comp_zp;   /* per_point COMP: either or both, zeroed here first */
    int64_t comp_n;                 /* their length */
} bdnn_reorder_attr_t;

/* Deliberate defects (tests only), numbered apart from the other kernels'. */
enum {
    BDNN_REORDER_FAULT_PADDING_GARBAGE = 401,  /* zero jobs write 1 instead of 0 */
    BDNN_REORDER_FAULT_DENSE_DST = 402         /* dst strides taken as dense ones */
};

/* A fixed table, in order of preference; an entry is usable when its ISA is supported. */
int bdnn_reorder_impl_count(void);
const char *bdnn_reorder_impl_name(int impl);
int bdnn_reorder_impl_isa(int impl);
/* Whether the row takes these types and attributes (the arrays need not be set yet):
 * BDNN_STATUS_OK, UNIMPLEMENTED, or INVALID for an unknown type. */
int bdnn_reorder_check(int impl, const bdnn_reorder_attr_t *attr);

int bdnn_reorder_execute(int impl, const bdnn_reorder_attr_t *attr,
                         const bdnn_reorder_job_t *jobs, int njobs, const void *src,
                         void *dst, int fault);

/* memcpy split over the OpenMP threads: the bandwidth yardstick reorders are held to. */
void bdnn_parallel_memcpy(void *dst, const void *src, int64_t bytes);
/* count copies of the value_bytes at value into dst, split over the OpenMP threads (one
 * thread under 64 KiB): the drivers' poisoning of large output buffers, whose first touch
 * of fresh pages then also runs on every thread. */
void bdnn_parallel_fill(void *dst, const void *value, int64_t value_bytes, int64_t count);
/* CDEF END */

#endif /* BDNN_REORDER_H */
