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
 *   - Zero job: dst = 0 at every point (the padded tail of a blocked layout); src unread.
 *   - src and dst do not overlap. Runs on all OpenMP threads (a job moving under 64 KiB
 *     on the calling thread alone).
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
} bdnn_reorder_job_t;

typedef struct {
    int src_dt, dst_dt;         /* BDNN_DT_* */
    float src_scale, dst_scale; /* 1 when not given */
    int sum;                    /* a sum post-op: dst_prior is read */
    float sum_scale;
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

int bdnn_reorder_execute(int impl, const bdnn_reorder_attr_t *attr,
                         const bdnn_reorder_job_t *jobs, int njobs, const void *src,
                         void *dst, int fault);

/* memcpy split over the OpenMP threads: the bandwidth yardstick reorders are held to. */
void bdnn_parallel_memcpy(void *dst, const void *src, int64_t bytes);
/* CDEF END */

#endif /* BDNN_REORDER_H */
