/* Internal contract between the reorder driver (reorder_api.c: table, jobs, threading,
 * conversions) and the per-ISA kernels (reorder_ker.inc instantiated by
 * reorder_ker_<isa>.c). */
#ifndef BDNN_REORDER_IMPL_H
#define BDNN_REORDER_IMPL_H

#include "bdnn_reorder.h"

/* A transposing copy of 4-byte elements (f32 and s32 unchanged), the path that carries
 * large f32 transpositions:
 *   dst[y * dst_ld + x] = src[x * src_ld + y]   for y < ny, x < nx
 * src is read along y, dst written along x; nx <= REORDER_TILE, ny any. */
typedef struct {
    void (*tr4)(const uint32_t *src, int64_t src_ld, uint32_t *dst, int64_t dst_ld,
                int64_t ny, int64_t nx);
} reorder_ker_t;

/* 64 x 64: a tile of 4-byte elements (16 KiB each side) stays in L1, and each src line
 * visit reads 256 contiguous bytes, enough for the prefetchers. */
enum { REORDER_TILE = 64 };

extern const reorder_ker_t bdnn_reorder_ker_scalar, bdnn_reorder_ker_avx2,
    bdnn_reorder_ker_avx512;

#endif /* BDNN_REORDER_IMPL_H */
