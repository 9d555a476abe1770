/* weights.c - weights on the host: the repacked device layout of a weight (kernels.h, the
 * contract with uploads) and the dtype helpers the kernels' files share. */
#include "kernels_priv.h"

#include <math.h>
#include <string.h>

/* ---- weights on the host */

/* Lower-case type names used in kinds ("matmul.bf16"). */
const char *k_kind_dtype(enum dtype t)
{
    switch (t) {
    case DT_F32: return "f32";
    case DT_F16: return "f16";
    case DT_BF16: return "bf16";
    case DT_Q8_0: return "q8_0";
    case DT_Q4_0: return "q4_0";
    default: return "?";
    }
}

uint64_t weight_bytes(enum dtype t, int64_t rows, int64_t k)
{
    return dtype_bytes(t, (uint64_t)rows * (uint64_t)k);
}

void weight_repack(enum dtype t, int64_t rows, int64_t k, const uint8_t *file_blocks, uint64_t at, uint64_t n,
                   uint8_t *out)
{
    if (!k_is_quant_type(t)) {
        memcpy(out, file_blocks + at, n);
        return;
    }
    uint64_t qb = k_quant_bytes(t), fb = qb + 2;
    uint64_t n_blocks = (uint64_t)rows * (uint64_t)(k / 32), quant_end = n_blocks * qb;
    uint64_t o = at, end = at + n;
    while (o < end && o < quant_end) { /* quant bytes: runs of one block's bytes */
        uint64_t blk = o / qb, j = o % qb, len = MIN(qb - j, end - o);
        memcpy(out + (o - at), file_blocks + blk * fb + 2 + j, len);
        o += len;
    }
    for (; o < end; o++) { /* scales: byte b of block s's f16 */
        uint64_t s = (o - quant_end) / 2, b = (o - quant_end) % 2;
        out[o - at] = file_blocks[s * fb + b];
    }
}

float weight_get(enum dtype t, int64_t rows, int64_t k, const uint8_t *dev, int64_t row, int64_t i)
{
    uint64_t e = (uint64_t)row * (uint64_t)k + (uint64_t)i;
    switch (t) {
    case DT_F32: {
        float f;
        memcpy(&f, dev + 4 * e, 4);
        return f;
    }
    case DT_F16: return f16_to_f32(rd_u16(dev + 2 * e));
    case DT_BF16: return bf16_to_f32(rd_u16(dev + 2 * e));
    case DT_Q8_0:
    case DT_Q4_0: {
        uint64_t nb = (uint64_t)k / 32, blk = (uint64_t)row * nb + (uint64_t)i / 32, j = (uint64_t)i % 32;
        uint64_t qb = k_quant_bytes(t);
        float d = f16_to_f32(rd_u16(dev + (uint64_t)rows * nb * qb + 2 * blk));
        if (t == DT_Q8_0) return (float)(int8_t)dev[blk * 32 + j] * d;
        uint8_t b = dev[blk * 16 + j % 16];
        return ((float)(j < 16 ? b & 15 : b >> 4) - 8.0f) * d;
    }
    default: return NAN;
    }
}
