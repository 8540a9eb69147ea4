/* AVX-512 instantiation of backward weights by direct convolution (conv_dbw.inc): 16
 * output channels a vector, up to 24 sums in registers. Predictive commoning off: it
 * carried each src value from one point to the next in general registers (the next
 * point's tap kw - 1 reads it again), spilling them, where a broadcast from L1 costs a
 * load port only. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")
#pragma GCC optimize("no-predictive-commoning")
#include "conv_impl.h"

typedef float vf __attribute__((vector_size(64)));
typedef float vfu __attribute__((vector_size(64), aligned(4)));
#define VLEN 16
#define DBW_ACC_MAX 24
#define DBW_OBJ bdnn_dbw_ker_avx512
#include "conv_dbw.inc"
