/* Internal contract between the reorder driver (reorder_api.c: table, jobs, threading,
 * conversions) and the per-ISA kernels (reorder_ker.inc instantiated by
 * reorder_ker_<isa>.c). */
#ifndef BDNN_REORDER_IMPL_H
#define BDNN_REORDER_IMPL_H

#include "bdnn_reorder.h"

/* The per-ISA kernels. Element offsets, not bytes; stream: the caller's request for
 * non-temporal stores (honoured only where whole aligned vectors are stored; the caller
 * calls fence() once after the last store of a thread that asked for them).
 *   tr4:      dst[y * dst_ld + x] = src[x * src_ld + y] for y < ny, x < nx, 4-byte
 *             elements copied bit for bit (f32, s32; narrower types widened first);
 *             src read along y, dst written along x; nx <= REORDER_TILE, ny any.
 *   runs4:    nr runs of n contiguous 4-byte elements, run r from src + r * src_ld to
 *             dst + r * dst_ld (short runs: nChw16c -> nhwc moves 16 at a time).
 *   to_f32:   n contiguous elements of type dt to f32, exactly (common/dt.h's values).
 *   from_f32: n f32 to dt contiguous, the bits common/dt.h's scalar stores give
 *             (nearest even, saturation, NaN -> 0 for integers, quieted NaN payloads).
 *   widen:    n contiguous 1- or 2-byte elements zero-extended to 4 bytes; narrow: back
 *             (bit copies of narrow types through tr4). */
typedef struct {
    void (*tr4)(const uint32_t *src, int64_t src_ld, uint32_t *dst, int64_t dst_ld,
                int64_t ny, int64_t nx, int stream);
    void (*runs4)(const uint32_t *src, int64_t src_ld, uint32_t *dst, int64_t dst_ld,
                  int64_t nr, int64_t n, int stream);
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n);
    void (*widen)(size_t size, const void *in, uint32_t *out, int64_t n);
    void (*narrow)(size_t size, const uint32_t *in, void *out, int64_t n);
    void (*fence)(void);
} reorder_ker_t;

/* 64 x 64: a tile of 4-byte elements (16 KiB each side) stays in L1, and each src line
 * visit reads 256 contiguous bytes, enough for the prefetchers. */
enum { REORDER_TILE = 64 };

extern const reorder_ker_t bdnn_reorder_ker_scalar, bdnn_reorder_ker_avx2,
    bdnn_reorder_ker_avx512;

#endif /* BDNN_REORDER_IMPL_H */
