/* Portable instantiation of the depthwise row kernel (baseline target). */
#include "conv_impl.h"
#define DW_FN dw_row_scalar
#define DW_OBJ bdnn_dw_ker_scalar
#include "conv_dw.inc"
