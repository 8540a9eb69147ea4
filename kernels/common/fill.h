/* The integer fill's loops (fill.c holds the contract): the scalar one, and the AVX-512
 * one (fill_avx512.c), each over elements [first, first + count) of one stream. */
#ifndef BDNN_FILL_H
#define BDNN_FILL_H

#include <stdint.h>

/* The widest range, and the largest |lo|, the vector loop takes (its exactness argument:
 * fill_avx512.c needs |lo| + width below 2^53). */
#define FILL_VEC_MAX_SPAN ((uint64_t)1 << 24)
#define FILL_VEC_MAX_LO ((int64_t)1 << 40)

void bdnn_fill_int_scalar(int64_t first, int64_t count, uint64_t key_value,
                          uint64_t key_keep, int64_t lo, uint64_t span, double density,
                          float *out);
void bdnn_fill_int_avx512(int64_t first, int64_t count, uint64_t key_value,
                          uint64_t key_keep, int64_t lo, uint64_t span, double density,
                          float *out);

#endif /* BDNN_FILL_H */
