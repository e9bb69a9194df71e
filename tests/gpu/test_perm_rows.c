/*
 * test_perm_rows.c - host-only check of the permuted-row TMA box (sm90_perm_rows.h): walking
 * the box's four row dimensions innermost first, as TMA fills shared memory, with the
 * dimensions' token strides must give row c the token flamia_fp8_perm_row(c) for every c of a
 * 128-row tile. Also what the kernels rely on besides: the order is a permutation of the
 * tile and keeps each 32-row block in place (the backward's cp.async fallback gives a thread
 * the rows c0 + 32 i). Needs no GPU.
 */
#include <stdio.h>

#include "gpu_common.h" /* EXPECT, failures */
#include "sm90_perm_rows.h"

int main(void) {
    const unsigned box[4] = FLAMIA_PERM_ROWS_BOX;
    const unsigned token_stride[4] = FLAMIA_PERM_ROWS_TOKEN_STRIDE;
    EXPECT(box[0] * box[1] * box[2] * box[3] == 128, "box covers %u rows, not 128",
           box[0] * box[1] * box[2] * box[3]);
    int seen[128] = {0};
    for (unsigned c = 0; c < 128; c++) {
        unsigned rest = c, token = 0;
        for (int d = 0; d < 4; d++) { /* coordinate d of smem row c, innermost dimension first */
            token += (rest % box[d]) * token_stride[d];
            rest /= box[d];
        }
        EXPECT((int)token == flamia_fp8_perm_row((int)c), "row %u: the box reads token %u, the order wants %d", c,
               token, flamia_fp8_perm_row((int)c));
        EXPECT(token < 128, "row %u: token %u outside the tile", c, token);
        if (token < 128) seen[token]++;
        EXPECT(token / 32 == c / 32, "row %u: token %u leaves its 32-row block", c, token);
    }
    for (int t = 0; t < 128; t++) EXPECT(seen[t] == 1, "token %d read %d times", t, seen[t]);
    if (failures) return 1;
    printf("test_perm_rows: ok (128 rows)\n");
    return 0;
}
