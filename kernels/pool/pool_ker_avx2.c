/* AVX2 instantiation of the pooling row kernel. */
#pragma GCC target("avx2,fma")
#include "pool_impl.h"
#define POOL_FWD_ROW pool_fwd_row_avx2
#define POOL_OBJ bdnn_pool_ker_avx2
#include "pool_ker.inc"
