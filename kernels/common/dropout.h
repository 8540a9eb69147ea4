/* Dropout (oneDNN's attribute; contract in bdnn_eltwise.h's bdnn_dropout_t): the counter-
 * based generator and the keep-or-drop step, applied a tile at a time by the kernels that
 * take the attribute.
 *
 * The generator is Philox4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011) in oneDNN's 64-bit arrangement (PyTorch's Philox engine):
 * element i draws word i mod 4 of the block whose counter is (offset low, offset high,
 * (i & ~3) low, (i & ~3) high) under the key (seed low, seed high). Every element's draw
 * depends on its index alone, so any split of the work over threads and tiles gives the
 * same mask. */
#ifndef BDNN_DROPOUT_H
#define BDNN_DROPOUT_H

#include <stdint.h>

#include "bdnn_eltwise.h"

/* The four words of the block whose counter holds base = i & ~3. */
static inline void bdnn_philox_block(uint64_t base, uint64_t seed, uint64_t offset,
                                     uint32_t out[4]) {
    uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32);
    uint32_t c2 = (uint32_t)base, c3 = (uint32_t)(base >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; ++round) {
        if (round) {   /* the key schedule: Weyl increments (golden ratio, sqrt 3 - 1) */
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* The keep threshold: a draw r keeps its element when r > p * (2^32 - 1), in double. */
static inline double bdnn_dropout_threshold(float p) { return (double)p * 4294967295.0; }

/* The kept elements' factor, in the computation's type: 1 / (1 - p), 0 when p = 1. */
/* word0: the deliberate defect BDNN_ELT_FAULT_DROPOUT_WORD0 (tests only). */
#define BDNN_DROPOUT_APPLY(NAME, T)                                                          \
    static inline void NAME(const bdnn_dropout_t *dr, T *v, int64_t first, int64_t m,      \
                            int word0) {                                                    \
        const double thr = bdnn_dropout_threshold(dr->p);                                   \
        const T inv_q = dr->p != 1.0f ? (T)1 / ((T)1 - (T)dr->p) : (T)0;                    \
        uint32_t r[4];                                                                      \
        int64_t block = -1;                                                                 \
        for (int64_t j = 0; j < m; ++j) {                                                   \
            const int64_t i = first + j;                                                    \
            if ((i & ~(int64_t)3) != block) {                                               \
                block = i & ~(int64_t)3;                                                    \
                bdnn_philox_block((uint64_t)block, (uint64_t)dr->seed,                      \
                                  (uint64_t)dr->offset, r);                                 \
            }                                                                               \
            const int keep = (double)r[word0 ? 0 : i & 3] > thr;                            \
            v[j] = keep ? v[j] * inv_q : (T)0;                                              \
            if (dr->mask) dr->mask[i] = (uint8_t)keep;                                      \
        }                                                                                   \
    }
BDNN_DROPOUT_APPLY(bdnn_dropout_f32, float)
BDNN_DROPOUT_APPLY(bdnn_dropout_f64, double)
#undef BDNN_DROPOUT_APPLY

#endif /* BDNN_DROPOUT_H */
