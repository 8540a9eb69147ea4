/* Portable instantiation of the GEMM micro-kernel: plain C scalars, 4 x 4 tile. It builds
 * for any target and is the fallback where no vector variant runs. */
#include "conv_impl.h"

typedef float vf;
typedef float vfu;
#define VLEN 1
#define MR 4
#define NRV 4
#define UKR_FN gemm_ukr_scalar_4x4
#define UKR_OBJ bdnn_gemm_ukr_scalar
#include "conv_ukr.inc"
