/* roof.c - the arithmetic roof every product kernel is compared with (the roofline's FLOP/s
 * line): the peak rate of the units the wide plan's gemm runs on, measured on registers alone. */
#include "vk_priv.h"

#include <string.h>

/* One dispatch of a roof kernel: its grid, its rounds and the FLOPs one round of one workgroup
 * performs (the kernels' headers give the formula). */
struct roof_kernel {
    const char *pipeline;
    const char *path; /* what the report names */
    uint32_t groups, iters;
    double group_round_flops;
};

/* Where the gemm runs on cooperative matrices, coopmat_roof.comp: 4 subgroups × 8 products of
 * 16×16×16 a round (2·16³ FLOP each); else fma_roof.comp: 128 invocations × 8 vec4 FMAs. About
 * 0.3 TFLOP a run on a GPU (~1 ms on an H100's tensor cores), 0.13 GFLOP on a CPU device. */
static struct roof_kernel roof_kernel(const struct gpu *g)
{
    bool cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    /* the same units either way: NV v1 where the device has it (Debian 12's compiler), else KHR */
    if (g->gemm_nv)
        return (struct roof_kernel){"coopmat_roof", "NV coopmat f16", 4096, 1024,
                                    4.0 * 8 * 2 * 16 * 16 * 16};
    if (g->gemm_khr)
        return (struct roof_kernel){"coopmat_roof_khr", "KHR coopmat f16", 4096, 1024,
                                    4.0 * 8 * 2 * 16 * 16 * 16};
    return (struct roof_kernel){"fma_roof", "f32 FMA", cpu ? 64 : 4096, cpu ? 256 : 1024,
                                128.0 * 8 * 4 * 2};
}

int gpu_tensor_roof(struct gpu *g, double *flops_per_s, const char **path, struct err *e)
{
    struct roof_kernel k = roof_kernel(g);
    *path = k.path;
    *flops_per_s = g->tensor_roof;
    if (g->tensor_roof > 0) return ST_OK;
    if (g->recording) return err_set(e, ST_RUNTIME, "gpu_tensor_roof: a step is being recorded");
    const struct gpu_pipeline *p;
    int st = gpu_pipeline(g, k.pipeline, NULL, 0, &p, e);
    if (st) return err_wrap(e, st, "tensor roof");
    struct gpu_block out;
    if ((st = vk_block_create(g, (uint64_t)k.groups * 128 * 4, GPU_MEM_DEVICE, &out, e)))
        return err_wrap(e, st, "tensor roof");
    struct {
        uint64_t out;
        uint32_t iters;
        float seed;
    } push = {out.addr, k.iters, 0.01f};
    /* the best of three runs after one that warms the clocks */
    double best = 0;
    for (int i = 0; st == ST_OK && i < 4; i++) {
        double s = 0;
        st = vk_time_dispatch(g, p, &push, sizeof push, k.groups, &s, e);
        if (st == ST_OK && i > 0 && s > 0 && (best == 0 || s < best)) best = s;
    }
    vk_block_destroy(g, &out);
    if (st) return err_wrap(e, st, "tensor roof");
    if (best <= 0)
        return err_set(e, ST_RUNTIME, "tensor roof: %s took no measurable time", k.pipeline);
    g->tensor_roof = (double)k.groups * k.iters * k.group_round_flops / best;
    *flops_per_s = g->tensor_roof;
    return ST_OK;
}
