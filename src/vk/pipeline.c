/* pipeline.c - compute pipelines from the embedded SPIR-V, with specialization constants. */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shaders.h"
#include "tuning.h"

/* ---------------------------------------------------------------------------------------------
 * Pipelines */

uint32_t vk_push_range(const struct gpu *g)
{
    return MIN(g->max_push, GPU_PUSH_MAX);
}

static const struct shader_blob *shader_find(const char *name)
{
    for (const struct shader_blob *s = shader_blobs; s->name; s++)
        if (strcmp(s->name, name) == 0) return s;
    return NULL;
}

/* Makes p's layout and pipeline from blob (p's name and spec already set). */
static int pipeline_create(struct gpu *g, const struct shader_blob *blob, struct gpu_pipeline *p,
                           struct err *e)
{
    VkShaderModuleCreateInfo smi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = blob->size,
        .pCode = blob->code,
    };
    VkShaderModule module;
    VK_TRY(vkCreateShaderModule(g->device, &smi, NULL, &module));
    VkPushConstantRange range = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = vk_push_range(g),
    };
    VkPipelineLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &range,
    };
    VkResult r = vkCreatePipelineLayout(g->device, &lci, NULL, &p->layout);
    if (r != VK_SUCCESS) {
        vkDestroyShaderModule(g->device, module, NULL);
        p->layout = VK_NULL_HANDLE;
        return vk_fail(e, "vkCreatePipelineLayout", r);
    }
    VkSpecializationMapEntry entries[GPU_MAX_SPEC];
    for (uint32_t i = 0; i < p->n_spec; i++)
        entries[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
    VkSpecializationInfo spec = {
        .mapEntryCount = p->n_spec,
        .pMapEntries = entries,
        .dataSize = 4 * p->n_spec,
        .pData = p->spec,
    };
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = g->has_exec_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main",
                .pSpecializationInfo = p->n_spec ? &spec : NULL,
            },
        .layout = p->layout,
    };
    r = vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cpi, NULL, &p->pipeline);
    vkDestroyShaderModule(g->device, module, NULL);
    if (r != VK_SUCCESS) {
        vkDestroyPipelineLayout(g->device, p->layout, NULL);
        p->layout = VK_NULL_HANDLE;
        p->pipeline = VK_NULL_HANDLE;
        return err_set(e, ST_RUNTIME, "vkCreateComputePipelines failed for shader '%s': %s",
                       p->name, vk_result_name(r));
    }
    return ST_OK;
}

int gpu_pipeline(struct gpu *g, const char *name, const uint32_t *spec, uint32_t n_spec,
                 const struct gpu_pipeline **out, struct err *e)
{
    *out = NULL;
    if (n_spec > GPU_MAX_SPEC)
        return err_set(e, ST_RUNTIME, "shader '%s': %u specialization constants, at most %d", name,
                       n_spec, GPU_MAX_SPEC);
    for (int i = 0; i < g->n_pipelines; i++) {
        const struct gpu_pipeline *p = &g->pipelines[i];
        if (strcmp(p->name, name) == 0 && p->n_spec == n_spec &&
            (n_spec == 0 || memcmp(p->spec, spec, 4 * n_spec) == 0)) {
            *out = p;
            return ST_OK;
        }
    }
    const struct shader_blob *blob = shader_find(name);
    if (!blob)
        return err_set(e, ST_RUNTIME,
                       "no embedded shader named '%s' (expected shaders/%s.comp or a line of "
                       "shaders/variants.txt)",
                       name, name);
    if (g->n_pipelines == GPU_MAX_PIPELINES)
        return err_set(e, ST_RUNTIME, "shader '%s': more than %d pipelines (GPU_MAX_PIPELINES)",
                       name, GPU_MAX_PIPELINES);
    struct gpu_pipeline *p = &g->pipelines[g->n_pipelines];
    memset(p, 0, sizeof *p);
    if (strlen(name) >= sizeof p->name)
        return err_set(e, ST_RUNTIME, "shader name '%s' longer than %zu characters", name,
                       sizeof p->name - 1);
    strcpy(p->name, name);
    p->n_spec = n_spec;
    if (n_spec) memcpy(p->spec, spec, 4 * n_spec);
    int st = pipeline_create(g, blob, p, e);
    if (st) return st;
    g->n_pipelines++;
    *out = p;
    return ST_OK;
}

void gpu_pipeline_stats(const struct gpu *g, const struct gpu_pipeline *p, char *out, size_t n)
{
    if (n) out[0] = 0;
    if (!g->has_exec_stats || !p->pipeline || n == 0 || !vkGetPipelineExecutableStatisticsKHR)
        return;
    VkPipelineExecutableInfoKHR info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
        .pipeline = p->pipeline,
        .executableIndex = 0, /* a compute pipeline: one executable */
    };
    VkPipelineExecutableStatisticKHR st[16];
    uint32_t count = 16;
    for (uint32_t i = 0; i < count; i++)
        st[i] = (VkPipelineExecutableStatisticKHR){
            .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = vkGetPipelineExecutableStatisticsKHR(g->device, &info, &count, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        snprintf(out, n, "(no statistics: %s)", vk_result_name(r));
        return;
    }
    size_t len = 0;
    for (uint32_t i = 0; i < count && len < n; i++) {
        const char *sep = i ? ", " : "";
        int w = 0;
        switch (st[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
            w = snprintf(out + len, n - len, "%s%s %s", sep, st[i].name,
                         st[i].value.b32 ? "yes" : "no");
            break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
            w = snprintf(out + len, n - len, "%s%s %" PRId64, sep, st[i].name, st[i].value.i64);
            break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
            w = snprintf(out + len, n - len, "%s%s %" PRIu64, sep, st[i].name, st[i].value.u64);
            break;
        default:
            w = snprintf(out + len, n - len, "%s%s %g", sep, st[i].name, st[i].value.f64);
            break;
        }
        if (w < 0) break;
        len += (size_t)w;
    }
}
