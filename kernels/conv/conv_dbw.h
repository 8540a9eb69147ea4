/* Backward weights by direct convolution: the direct rows of gemm_conv_nhwc and
 * gemm_conv_blocked in that direction (conv_gemm_nhwc_dbw.c drives them; the kernels are
 * conv_dbw.inc, one instance per ISA). Each weight gradient is a sum over output points:
 *   diff_wei[oc][ic][kh][kw] = sum over n, oh, ow of
 *       diff_dst[n][oc][oh][ow] * src[n][ic][oh*SH - PH + kh*(DH+1)][ow*SW - PW + kw*(DW+1)]
 * A kernel call keeps, in registers for all its points, the sums of VLEN output channels
 * (the vector lanes: one load of diff_dst per point, channels contiguous in both layouts)
 * for ICS input channels x KW taps along w of one kh: per point one vector load and
 * KW * ICS multiply-adds, each with one src value broadcast from the caches. No packing:
 * both tensors are read in place, and the taps along w of neighbouring points read the
 * same src lines.
 *
 * Contract (dbw_fn, one per KW from 2 to DBW_MAX_KW, with that KW's ICS):
 *   for kw < KW, i < ICS, lane < VLEN:
 *     acc[i * acc_ic + kw * VLEN + lane] +=
 *         sum over y < rows, x < ow with 0 <= iw(x, kw) < iw_n of
 *             dd[y * dd_row + x * dd_pt + lane] * s[y * s_row + iw(x, kw) * s_pt + i]
 *   where iw(x, kw) = x * sw - pw + kw * dwk.
 * x_lo, x_hi: the output columns [x_lo, x_hi) whose taps all lie inside (iw in [0, iw_n));
 * the kernel tests each tap only outside them. Every lane is computed: lanes past the
 * output channels read whatever dd holds there (a block's padded tail), and their sums
 * are dropped by the caller, as are the sums of input channels past the tensor's. Rows
 * run in order, points in order; the sums are added in that order. */
#ifndef BDNN_CONV_DBW_H
#define BDNN_CONV_DBW_H

#include <stdint.h>

#include "conv_impl.h"

/* 6 and more taps along w leave 4 or 2 input channels a call (of 24 sums): the taps
 * route ran faster there (7 taps of 1x7 layers). */
enum { DBW_MAX_KW = 5 };

typedef struct {
    int64_t rows;
    const float *dd;
    int64_t dd_row, dd_pt;
    const float *s;
    int64_t s_row, s_pt;
    int64_t ow, iw_n, sw, pw, dwk, x_lo, x_hi;
    float *acc;
    int64_t acc_ic;
} dbw_call_t;

typedef void (*dbw_fn)(const dbw_call_t *k);

typedef struct {
    int vlen;
    int ics[DBW_MAX_KW + 1];    /* per KW: input channels per call (a power of two <= 16) */
    dbw_fn fn[DBW_MAX_KW + 1];  /* per KW (indices 0 and 1: none) */
    conv_transpose_fn tr;       /* the ISA's transposing copy: the sums into the weights */
} conv_dbw_ker_t;

extern const conv_dbw_ker_t bdnn_dbw_ker_avx512;

#endif
