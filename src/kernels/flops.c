/* flops.c - the useful FLOPs a dispatch performs and the product FLOPs it executes for them (plan.h
 * struct dispatch flops, flops_exec): plain formulas of the shapes, no GPU (docs/figures.md). */
#include "kernels.h"

uint64_t k_product_flops(int64_t rows, int64_t k, int64_t cols, bool swiglu)
{
    if (rows <= 0 || k <= 0 || cols <= 0) return 0;
    return 2 * (uint64_t)rows * (uint64_t)k * (uint64_t)cols * (swiglu ? 2 : 1);
}

uint32_t k_gemm_exec_mult(bool coopmat, enum dtype t)
{
    if (!coopmat) return 1;
    return t == DT_F32 || t == DT_Q8_0 ? 3 : 2;
}

uint64_t k_attn_pair_flops(const struct k_attn_geom *a)
{
    return 4 * (uint64_t)MAX(a->n_h, 0) * (uint64_t)MAX(a->hd, 0);
}

uint64_t k_conv_flops(int64_t channels, int taps, int64_t cols)
{
    if (channels <= 0 || taps <= 0 || cols <= 0) return 0;
    return 2 * (uint64_t)channels * (uint64_t)taps * (uint64_t)cols;
}

uint64_t k_attn_step_pairs(const struct run_meta *runs, int n_runs)
{
    uint64_t pairs = 0;
    for (int r = 0; r < n_runs; r++) {
        uint64_t p = runs[r].pos0, n = runs[r].n_cols;
        pairs += n * p + n * (n + 1) / 2;
    }
    return pairs;
}
