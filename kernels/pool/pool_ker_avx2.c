/* AVX2 instantiation of the pooling row kernel. */
#pragma GCC target("avx2,fma,f16c")
#include "pool_impl.h"
#define DT_VEC_F16C
#define DT_VEC(x) pool_##x##_avx2
#define POOL_FWD_ROW pool_fwd_row_avx2
#define POOL_OBJ bdnn_pool_ker_avx2
#include "pool_ker.inc"
