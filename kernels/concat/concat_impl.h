/* Internal contract between the concat entry point (concat_api.c: table, threading) and
 * the per-ISA kernels (concat_ker.inc instantiated by concat_ker_<isa>.c). */
#ifndef BDNN_CONCAT_IMPL_H
#define BDNN_CONCAT_IMPL_H

#include "bdnn_concat.h"

/* n elements of src_dt at in, times scale, into dst_dt at out (a contiguous run); a tile
 * at a time through f32. truncate: BDNN_FAULT_TRUNCATE_DST's store; stream: an f32 dst
 * stored past the caches (the caller fences, dt.h's bdnn_stream_fence, after its last
 * run). */
typedef struct {
    void (*copy)(int src_dt, const void *in, float scale, int dst_dt, void *out, int64_t n,
                 int truncate, int stream);
} concat_ker_t;

extern const concat_ker_t bdnn_concat_ker_scalar, bdnn_concat_ker_avx2,
    bdnn_concat_ker_avx512;

#endif /* BDNN_CONCAT_IMPL_H */
