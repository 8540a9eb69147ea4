/* Internal contract between the reorder driver (reorder_api.c: table, jobs, threading,
 * conversions) and the per-ISA kernels (reorder_ker.inc instantiated by
 * reorder_ker_<isa>.c). */
#ifndef BDNN_REORDER_IMPL_H
#define BDNN_REORDER_IMPL_H

#include "bdnn_reorder.h"

/* The per-ISA kernels. Element offsets, not bytes; stream: the caller's request for
 * non-temporal stores (honoured only where whole aligned vectors are stored; the caller
 * calls dt.h's bdnn_stream_fence once after the last store of a thread that asked for them).
 *   tr4:      dst[y * dst_ld + x] = src[x * src_ld + y] for y < ny, x < nx, 4-byte
 *             elements copied bit for bit (f32, s32; 1-byte types widened first);
 *             src read along y, dst written along x; nx <= REORDER_TILE, ny any.
 *   tr2:      the same for 2-byte elements (bf16, f16), in registers without widening.
 *   trc:      the same with a conversion, for src and dst types other than f16:
 *             dst = dst_dt(f32(src) * mul / div), each step skipped when 1 (no sum);
 *             the bits of to_f32, the two f32 steps, then from_f32.
 *   runs4:    nr runs of n contiguous 4-byte elements, run r from src + r * src_ld to
 *             dst + r * dst_ld (short runs: nChw16c -> nhwc moves 16 at a time).
 *   to_f32:   n contiguous elements of type dt to f32, exactly (common/dt.h's values).
 *   from_f32: n f32 to dt contiguous, the bits common/dt.h's scalar stores give
 *             (nearest even, saturation, NaN -> 0 for integers, quieted NaN payloads);
 *             stream: the caller's request, honoured when out starts on 64 bytes (the
 *             stores then run in order, so every line but a short last one is whole).
 *   widen:    n contiguous 1- or 2-byte elements zero-extended to 4 bytes; narrow: back
 *             (bit copies of 1-byte types through tr4), stream as from_f32's. */
typedef struct {
    void (*tr4)(const uint32_t *src, int64_t src_ld, uint32_t *dst, int64_t dst_ld,
                int64_t ny, int64_t nx, int stream);
    void (*tr2)(const uint16_t *src, int64_t src_ld, uint16_t *dst, int64_t dst_ld,
                int64_t ny, int64_t nx, int stream);
    void (*trc)(int src_dt, int dst_dt, const void *src, int64_t src_ld, void *dst,
                int64_t dst_ld, int64_t ny, int64_t nx, float mul, float div, int stream);
    void (*runs4)(const uint32_t *src, int64_t src_ld, uint32_t *dst, int64_t dst_ld,
                  int64_t nr, int64_t n, int stream);
    void (*to_f32)(int dt, const void *in, float *out, int64_t n);
    void (*from_f32)(int dt, const float *in, void *out, int64_t n, int stream);
    void (*widen)(size_t size, const void *in, uint32_t *out, int64_t n);
    void (*narrow)(size_t size, const uint32_t *in, void *out, int64_t n, int stream);
} reorder_ker_t;

/* 64 x 64: a tile of 4-byte elements (16 KiB each side) stays in L1, and each src line
 * visit reads 256 contiguous bytes, enough for the prefetchers. */
enum { REORDER_TILE = 64 };
/* How far ahead along src lines the transposes prefetch: 4 lines, measured best among
 * 0, 256, 512 and 1024 bytes on this project's machine (16x256x56x56 nchw -> nhwc). */
enum { REORDER_PREFETCH = 256 };

extern const reorder_ker_t bdnn_reorder_ker_scalar, bdnn_reorder_ker_avx2,
    bdnn_reorder_ker_avx512;

#endif /* BDNN_REORDER_IMPL_H */
