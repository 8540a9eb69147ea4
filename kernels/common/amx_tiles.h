/* The AMX tile configuration every tile user shares (conv_amx.c, peak.c): palette 1, all
 * eight tiles 16 rows of 64 bytes, the largest, so any tile holds a 16 x 16 f32 or s32
 * block of sums or a 16-row operand. Tile state is per thread: each thread loads it
 * before its first tile instruction and releases it (_tile_release) when done. */
#ifndef BDNN_AMX_TILES_H
#define BDNN_AMX_TILES_H
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

enum { BDNN_AMX_ROWS = 16, BDNN_AMX_ROW_BYTES = 64 };

typedef struct __attribute__((packed, aligned(64))) {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} bdnn_amx_cfg_t;

__attribute__((target("amx-tile"), unused))
static inline void bdnn_amx_configure(void) {
    bdnn_amx_cfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.palette = 1;
    for (int t = 0; t < 8; ++t) cfg.colsb[t] = BDNN_AMX_ROW_BYTES, cfg.rows[t] = BDNN_AMX_ROWS;
    _tile_loadconfig(&cfg);
}
#endif
