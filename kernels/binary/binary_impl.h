/* Internal contract between the binary entry points (binary_api.c: table, checks, dims
 * simplified, threading) and the per-ISA kernels (binary_ker.inc instantiated by
 * binary_ker_<isa>.c). */
#ifndef BDNN_BINARY_IMPL_H
#define BDNN_BINARY_IMPL_H

#include "bdnn_binary.h"

/* Elements [lo, hi) of dst (its memory order) for a checked description d whose dims
 * have been simplified (binary_api.c: no size-1 dims, mergeable neighbours merged), a
 * tile at a time: each source gathered into f32, scaled, OP, the chain (po: NULL or one
 * with entries; prior_dt: the type its sum entry reads dst as, or -1 without a sum), the
 * store. fault: passed to the chain (BDNN_FAULT_SRC1_CHANNEL0); truncate:
 * BDNN_FAULT_TRUNCATE_DST's store; stream: an f32 dst stored past the caches (fenced
 * before the run returns). */
typedef struct {
    void (*run)(const bdnn_binary_desc_t *d, const bdnn_post_chain_t *po, int prior_dt,
                const void *src0, const void *src1, const void *src2, void *dst, int64_t lo,
                int64_t hi, int fault, int truncate, int stream);
} binary_ker_t;

extern const binary_ker_t bdnn_binary_ker_scalar, bdnn_binary_ker_avx2, bdnn_binary_ker_avx512;

#endif /* BDNN_BINARY_IMPL_H */
