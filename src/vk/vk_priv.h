/* vk_priv.h - internal to src/vk: what the files of the Vulkan core share and nobody else needs
 * (the interface is gpu.h). */
#ifndef LFM2_VK_PRIV_H
#define LFM2_VK_PRIV_H

#include "gpu.h"

#define GPU_ALIGN 256ull              /* sub-allocation alignment, bytes */
#define GPU_DEVICE_BLOCK (1ull << 30) /* default device block (capped by max_alloc) */
#define GPU_HOST_BLOCK (64ull << 20)  /* default host block */
#define GPU_STAGING (64ull << 20)     /* staging buffer (capped by max_alloc / 4) */
/* Hang guard of one fence wait, not a deadline: 60 s on a GPU; a CPU device (lavapipe) runs a
 * step of a real-size model (built-in glm-ocr, 16 columns, the gap probe's doubled plan and
 * head) for minutes. */
#define GPU_TIMEOUT_S 60ull
#define GPU_TIMEOUT_CPU_S 3600ull
#define GPU_PUSH_MAX 128u /* push range of every pipeline layout (capped) */
#define MIB(x) ((double)(x) / (1024.0 * 1024.0))

#define VK_TRY(call)                                                                               \
    do {                                                                                           \
        VkResult vk_r_ = (call);                                                                   \
        if (vk_r_ != VK_SUCCESS) return vk_fail(e, #call, vk_r_);                                  \
    } while (0)

/* vk_util.c */
const char *vk_result_name(VkResult r);
int vk_fail(struct err *e, const char *call, VkResult r); /* fills e naming the call and the result */
uint64_t vk_align_up(uint64_t x, uint64_t a);
const char *vk_mem_kind_name(enum gpu_mem kind);

/* instance.c */
/* *layer_version: the validation layer's spec version when it is enabled, else 0 (device.c enables
 * extensions the layer predates only without it: an old layer reports their structs and SPIR-V as
 * errors). */
int vk_instance_create(VkInstance *instance, VkDebugUtilsMessengerEXT *messenger, uint32_t *count,
                       uint32_t *layer_version, struct err *e);
void vk_instance_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger);
int vk_devices_enumerate(VkInstance instance, VkPhysicalDevice **out, uint32_t *n, struct err *e);

/* memory.c */
int vk_block_create(struct gpu *g, uint64_t size, enum gpu_mem kind, struct gpu_block *b,
                    struct err *e);
void vk_block_destroy(struct gpu *g, struct gpu_block *b);
struct gpu_buf vk_block_range(const struct gpu_block *b, uint64_t off, uint64_t size);

/* bandwidth.c */
/* Seconds of one dispatch of p over `groups` workgroups along x, recorded and submitted on its
 * own: timestamps (queries 0 and 1) when the device has them, else the wall. */
int vk_time_dispatch(struct gpu *g, const struct gpu_pipeline *p, const void *push, uint32_t push_size,
                     uint32_t groups, double *seconds, struct err *e);

/* transfer.c */
int vk_fence_wait(struct gpu *g, VkFence fence, const char *what, struct err *e);
int vk_submit(struct gpu *g, VkCommandBuffer cb, VkFence fence, struct err *e);

/* coopmat.c */
/* Prints the VK_NV_cooperative_matrix shapes of pd (usable: the extension and its feature are there). */
void vk_print_coopmat_nv(FILE *out, VkPhysicalDevice pd, bool usable);
/* Whether pd lists the shape gemm.comp uses: 16x16x16, f16 * f16 + f32 -> f32, subgroup scope. */
bool vk_coopmat_f16_16(VkPhysicalDevice pd);
/* The same through VK_KHR_cooperative_matrix (its query fetched from inst): the shapes pd lists, or
 * `state` instead where not NULL (absent, or not enabled: why); and whether the gemm's shape is
 * among them (16x16x16, f16 * f16 + f32 -> f32, not saturating, subgroup scope). */
void vk_print_coopmat_khr(FILE *out, VkInstance inst, VkPhysicalDevice pd, const char *state);
bool vk_coopmat_khr_f16_16(VkInstance inst, VkPhysicalDevice pd);

/* pipeline.c */
uint32_t vk_push_range(const struct gpu *g);

#endif
