/* Portable instantiation of the pooling row kernel. */

#include "pool_impl.h"
#define DT_VEC(x) pool_##x##_scalar
#define POOL_FWD_ROW pool_fwd_row_scalar
#define POOL_OBJ bdnn_pool_ker_scalar
#include "pool_ker.inc"
