/* coopmat.c - the VK_NV_cooperative_matrix and VK_KHR_cooperative_matrix shapes a device lists
 * (device.c's list and choice). */
#include "vk_priv.h"

#include <stdlib.h>

#include "vk_coopmat2.h"

static const char *component_type_name(VkComponentTypeNV t)
{
    switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_NV:
        return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV:
        return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_NV:
        return "f64";
    case VK_COMPONENT_TYPE_SINT8_NV:
        return "s8";
    case VK_COMPONENT_TYPE_SINT16_NV:
        return "s16";
    case VK_COMPONENT_TYPE_SINT32_NV:
        return "s32";
    case VK_COMPONENT_TYPE_SINT64_NV:
        return "s64";
    case VK_COMPONENT_TYPE_UINT8_NV:
        return "u8";
    case VK_COMPONENT_TYPE_UINT16_NV:
        return "u16";
    case VK_COMPONENT_TYPE_UINT32_NV:
        return "u32";
    case VK_COMPONENT_TYPE_UINT64_NV:
        return "u64";
    default:
        return "?";
    }
}

void vk_print_coopmat_nv(FILE *out, VkPhysicalDevice pd, bool usable)
{
    if (!usable) {
        fprintf(out, "  %-18s none (VK_NV_cooperative_matrix absent)\n", "cooperative matrix");
        return;
    }
    uint32_t n = 0;
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, NULL) != VK_SUCCESS) n = 0;
    VkCooperativeMatrixPropertiesNV *shapes = n ? calloc(n, sizeof *shapes) : NULL;
    for (uint32_t i = 0; shapes && i < n; i++)
        shapes[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    if (shapes && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, shapes) != VK_SUCCESS)
        n = 0;
    fprintf(out, "  %-18s VK_NV_cooperative_matrix, %u shapes (MxNxK A*B+C->D)\n",
            "cooperative matrix", shapes ? n : 0);
    for (uint32_t i = 0; shapes && i < n; i++) {
        const VkCooperativeMatrixPropertiesNV *s = &shapes[i];
        fprintf(out, "  %-18s %ux%ux%u %s*%s+%s->%s%s\n", "", s->MSize, s->NSize, s->KSize,
                component_type_name(s->AType), component_type_name(s->BType),
                component_type_name(s->CType), component_type_name(s->DType),
                s->scope == VK_SCOPE_SUBGROUP_NV ? "" : " (not subgroup scope)");
    }
    free(shapes);
}

/* Whether the device lists the cooperative-matrix shape gemm.comp uses: 16x16x16, f16 * f16 + f32
 * -> f32, subgroup scope. */
bool vk_coopmat_f16_16(VkPhysicalDevice pd)
{
    uint32_t n = 0;
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, NULL) != VK_SUCCESS || n == 0) return false;
    VkCooperativeMatrixPropertiesNV *s = calloc(n, sizeof *s);
    bool found = false;
    for (uint32_t i = 0; s && i < n; i++) s[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    if (s && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, s) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = s[i].MSize == 16 && s[i].NSize == 16 && s[i].KSize == 16 &&
                    s[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && s[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                    s[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && s[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                    s[i].scope == VK_SCOPE_SUBGROUP_NV;
    free(s);
    return found;
}


/* ---- VK_KHR_cooperative_matrix: the same shapes through the KHR query, which Debian 12's volk
 * does not load (its headers predate it): fetched from the instance by name. */

/* The shapes pd lists (*n of them, calloc'd; NULL and 0 when none or the query is missing). */
static VkCooperativeMatrixPropertiesKHR *khr_shapes(VkInstance inst, VkPhysicalDevice pd, uint32_t *n)
{
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
            inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    *n = 0;
    if (!get || get(pd, n, NULL) != VK_SUCCESS || *n == 0) return NULL;
    VkCooperativeMatrixPropertiesKHR *s = calloc(*n, sizeof *s);
    for (uint32_t i = 0; s && i < *n; i++) s[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
    if (s && get(pd, n, s) != VK_SUCCESS) {
        free(s);
        s = NULL;
    }
    if (!s) *n = 0;
    return s;
}

static bool khr_is_gemm_shape(const VkCooperativeMatrixPropertiesKHR *s)
{
    return s->MSize == 16 && s->NSize == 16 && s->KSize == 16 && s->AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
           s->BType == VK_COMPONENT_TYPE_FLOAT16_KHR && s->CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
           s->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && !s->saturatingAccumulation &&
           s->scope == VK_SCOPE_SUBGROUP_KHR;
}

void vk_print_coopmat_khr(FILE *out, VkInstance inst, VkPhysicalDevice pd, const char *state)
{
    if (state) {
        fprintf(out, "  %-18s %s\n", "coopmat KHR", state);
        return;
    }
    uint32_t n;
    VkCooperativeMatrixPropertiesKHR *shapes = khr_shapes(inst, pd, &n);
    fprintf(out, "  %-18s VK_KHR_cooperative_matrix, %u shapes (MxNxK A*B+C->D)\n", "coopmat KHR", n);
    for (uint32_t i = 0; i < n; i++) {
        const VkCooperativeMatrixPropertiesKHR *s = &shapes[i];
        fprintf(out, "  %-18s %ux%ux%u %s*%s+%s->%s%s%s\n", "", s->MSize, s->NSize, s->KSize,
                component_type_name(s->AType), component_type_name(s->BType), component_type_name(s->CType),
                component_type_name(s->ResultType), s->scope == VK_SCOPE_SUBGROUP_KHR ? "" : " (not subgroup scope)",
                s->saturatingAccumulation ? " (saturating)" : "");
    }
    free(shapes);
}

bool vk_coopmat_khr_f16_16(VkInstance inst, VkPhysicalDevice pd)
{
    uint32_t n;
    VkCooperativeMatrixPropertiesKHR *s = khr_shapes(inst, pd, &n);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) found = khr_is_gemm_shape(&s[i]);
    free(s);
    return found;
}
