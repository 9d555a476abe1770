/* select_path.c - which matrix path the wide plan's gemm runs on (select.h sel_gemm_path): the
 * device's cooperative-matrix extensions and the tune's gemm_path, GPU-free like the rest of the
 * choice. */
#include "select.h"

/* The path the tune names, else the device's first of NV v1, KHR, the FMA twin. Both cooperative
 * paths run the same source and tiles, but on the H100 KHR's words ran the exact prefill 21 %
 * slower (bench/42), so NV v1 comes first where a driver lists both; KHR serves the devices
 * without NV v1 (AMD RDNA3, Intel Arc). */
static enum gemm_path gemm_path_pick(const struct sel *s)
{
    if (s->tune->gemm_path != GEMM_PATH_AUTO) return (enum gemm_path)s->tune->gemm_path;
    return s->coopmat_nv ? GEMM_PATH_NV : s->coopmat_khr ? GEMM_PATH_KHR : GEMM_PATH_FMA;
}

int sel_gemm_path(const struct sel *s, enum gemm_path *path, struct err *e)
{
    enum gemm_path p = gemm_path_pick(s);
    bool absent = (p == GEMM_PATH_KHR && !s->coopmat_khr) || (p == GEMM_PATH_NV && !s->coopmat_nv);
    *path = p;
    if (absent)
        return err_set(e, ST_USAGE,
                       "--tune gemm_path=%s: %s%s%s has no usable %s (a 16x16x16 f16*f16+f32 subgroup "
                       "shape, subgroups of 32, f16 arithmetic and 16-bit storage; --list-devices shows "
                       "what it has)",
                       gemm_path_name(p), s->device ? "device '" : "this device", s->device ? s->device : "",
                       s->device ? "'" : "", sel_gemm_path_label(p));
    return ST_OK;
}

bool sel_gemm_coopmat(const struct sel *s)
{
    return gemm_path_pick(s) != GEMM_PATH_FMA;
}

const char *sel_gemm_path_kernel(enum gemm_path p)
{
    return p == GEMM_PATH_KHR ? "gemm_khr" : p == GEMM_PATH_NV ? "gemm" : "gemm_fma";
}

const char *sel_gemm_path_label(enum gemm_path p)
{
    return p == GEMM_PATH_KHR  ? "VK_KHR_cooperative_matrix"
           : p == GEMM_PATH_NV ? "VK_NV_cooperative_matrix"
                               : "the FMA twin, no cooperative matrices";
}
