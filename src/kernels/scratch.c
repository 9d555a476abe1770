/* scratch.c - the kernels' device scratch (kernels.h struct k_scratch): reserved by the engine
 * before a build, taken by the helpers while it runs. */
#include "kernels_priv.h"

int k_scratch_reserve(struct gpu *g, const struct sel_scratch *need, struct k_scratch *sc,
                      struct err *e)
{
    struct {
        struct gpu_buf *b;
        uint64_t bytes;
        const char *what;
    } parts[] = {
        {&sc->gemm_x, need->gemm_x, "prepared activations"},
        {&sc->gemm_w, 2 * need->gemm_w, "f16 weight copies"},
        {&sc->attn_part, need->attn_part, "attention split outputs"},
        {&sc->gemm_part, need->gemm_part, "split-k partial sums"},
    };
    for (size_t i = 0; i < ARRAY_LEN(parts); i++) {
        if (parts[i].b->size >= parts[i].bytes) continue;
        int st = gpu_alloc(g, parts[i].bytes, GPU_MEM_DEVICE, parts[i].b, e);
        if (st) return err_wrap(e, st, "kernel scratch: %s", parts[i].what);
    }
    return ST_OK;
}

uint64_t k_scratch_half(const struct k_scratch *sc)
{
    return sc->gemm_w.size / 2 / 256 * 256;
}

uint64_t k_scratch_part_slice(const struct k_scratch *sc)
{
    return sc->gemm_part.size / K_MULTI_MAX / 256 * 256;
}

int k_scratch_bufs(const struct k_scratch *sc, uint64_t lo[K_SCRATCH_BUFS],
                   uint64_t hi[K_SCRATCH_BUFS])
{
    uint64_t half = k_scratch_half(sc);
    int n = 0;
    for (int i = 0; half && i < 2; i++, n++) {
        lo[n] = sc->gemm_w.addr + (uint64_t)i * half;
        hi[n] = lo[n] + half;
    }
    uint64_t slice = k_scratch_part_slice(sc);
    for (int i = 0; slice && i < K_MULTI_MAX; i++, n++) {
        lo[n] = sc->gemm_part.addr + (uint64_t)i * slice;
        hi[n] = lo[n] + slice;
    }
    return n;
}

int k_scratch_take(const struct gpu_buf *b, uint64_t have, uint64_t bytes, const char *what,
                   const char *op, uint64_t *addr, struct err *e)
{
    if (!b || have < bytes)
        return err_set(e, ST_RUNTIME,
                       "%s: needs %llu bytes of kernel scratch for its %s, the plan has %llu (the "
                       "engine sizes the scratch before the build: a product it missed)",
                       op, (unsigned long long)bytes, what, (unsigned long long)(b ? have : 0));
    *addr = b->addr;
    return ST_OK;
}
