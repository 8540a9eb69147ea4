/* AVX-512 instantiation of the pooling row kernel. */
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")
#include "pool_impl.h"
#define DT_VEC_AVX512
#define DT_VEC(x) pool_##x##_avx512
#define POOL_FWD_ROW pool_fwd_row_avx512
#define POOL_OBJ bdnn_pool_ker_avx512
#include "pool_ker.inc"
