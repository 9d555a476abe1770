/* gpu.h - the Vulkan core: device choice, memory, uploads, pipelines, command recording, timing.
 *
 * Decisions made once, here, for every kernel:
 *  - Buffers are addressed by buffer device address (GL_EXT_buffer_reference), passed to kernels
 *    in push constants. There are no descriptor sets, so no 128 MiB maxStorageBufferRange limit:
 *    a 256 MiB embedding is one pointer like any other tensor.
 *  - Device memory comes from big blocks (<= maxMemoryAllocationSize, 2 GiB on lavapipe), each one
 *    VkDeviceMemory bound to one VkBuffer; allocations are 256-byte aligned ranges of a block.
 *    Nothing is freed one by one: everything goes at gpu_close.
 *  - Uploads go through one reusable host-visible staging buffer in chunks, so a multi-GB model
 *    never needs a host copy of itself.
 *  - One command buffer for the step being recorded (gpu_cmd_*), another for uploads.
 *  - With LFM2_VALIDATION=1 (or =require: gpu_open fails without the layer) the Khronos validation layer is enabled and every
 *    message it prints is counted; gpu_close returns ST_RUNTIME if there was any (tests fail). */
#ifndef LFM2_GPU_H
#define LFM2_GPU_H

#include <stdio.h>
#include <volk.h>

#include "common.h"
#include "plan_kind.h"
#include "tune.h"

#define GPU_MAX_BLOCKS 256
#define GPU_MAX_PIPELINES 256
#define GPU_MAX_SPEC 12

/* A range of device memory. addr is its device address (host-visible buffers have one too, so a
 * kernel can read or write them directly). host is non-NULL for host-visible memory (mapped,
 * coherent). */
struct gpu_buf {
    VkBuffer buffer;  /* the block's buffer */
    uint64_t offset;  /* bytes into the block's buffer */
    uint64_t size;    /* bytes */
    uint64_t addr;    /* device address of byte 0 of this range */
    void *host;       /* mapped pointer to byte 0, or NULL for device-local memory */
};

enum gpu_mem {
    GPU_MEM_DEVICE, /* device-local: weights, activations, KV */
    GPU_MEM_HOST,   /* host-visible, coherent, preferably cached: column upload and readback */
};

struct gpu_block {
    VkDeviceMemory memory;
    VkBuffer buffer;
    uint64_t size, used, addr;
    enum gpu_mem kind;
    void *host;
    uint32_t memory_type; /* index into VkPhysicalDeviceMemoryProperties.memoryTypes */
};

/* A compute pipeline made from an embedded shader and its specialization constants. */
struct gpu_pipeline {
    char name[64];
    uint32_t spec[GPU_MAX_SPEC]; /* values for constant_id 0..n_spec-1 */
    uint32_t n_spec;
    VkPipeline pipeline;
    VkPipelineLayout layout;
};

struct gpu {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    int index; /* index in vkEnumeratePhysicalDevices order */

    /* what kernels and the report need to know about the device */
    VkPhysicalDeviceProperties props;
    char driver_name[256];         /* driverName + driverInfo */
    uint32_t subgroup_size;        /* from VkPhysicalDeviceSubgroupProperties */
    uint32_t shared_mem;           /* maxComputeSharedMemorySize, bytes */
    uint32_t max_push;             /* maxPushConstantsSize, bytes */
    uint64_t max_alloc;            /* maxMemoryAllocationSize, bytes */
    float timestamp_period;        /* ns per tick */
    uint32_t timestamp_valid_bits; /* of the compute queue; 0 = no timestamps */
    bool has_coopmat_nv;           /* VK_NV_cooperative_matrix */
    bool has_coopmat_khr;          /* VK_KHR_cooperative_matrix enabled */
    bool has_coopmat2;             /* VK_NV_cooperative_matrix2 enabled with workgroup scope, flexible
                                    * dimensions, tensor addressing and block loads (gemm_cm2.comp) */
    bool has_coopmat2_per_element;     /* and its per-element operations (gemm_cm2.comp's SwiGLU epilogue) */
    uint32_t coopmat2_reserved_shared; /* its workgroup-scope staging's shared memory, bytes */
    uint32_t coopmat2_max_invocations; /* its largest workgroup of workgroup-scope matrices */
    bool gemm_khr;                 /* gemm.comp's cooperative matrices usable on VK_KHR_cooperative_matrix
                                    * (its 16x16x16 f16*f16+f32 subgroup shape, f16 arithmetic and storage,
                                    * subgroups of 32) */
    bool gemm_nv;                  /* ... on VK_NV_cooperative_matrix (which of them the gemm takes:
                                    * kernels/select.c sel_gemm_path) */
    bool has_memory_budget;        /* VK_EXT_memory_budget */
    uint64_t device_local_bytes;   /* size of the largest device-local heap */
    uint64_t max_buffer;           /* maxBufferSize (Vulkan 1.3), else max_alloc */
    uint32_t min_subgroup_size, max_subgroup_size; /* subgroupSizeControl range, else subgroup_size */
    bool has_subgroup_size_control; /* subgroupSizeControl + computeFullSubgroups enabled */
    bool has_float16, has_int8;     /* shaderFloat16 / shaderInt8 enabled */
    bool has_float_atomic_add;      /* VK_EXT_shader_atomic_float shaderBufferFloat32AtomicAdd enabled */
    bool has_exec_stats;            /* bench builds only (LFM2_BENCH): VK_KHR_pipeline_executable_properties
                                       enabled, pipelines capture the compiler's statistics */
    double tensor_roof;             /* FLOP/s of gpu_tensor_roof, measured once (0: not yet) */
    struct tune tune;               /* the run's --tune overrides (tune.h; gpu_open: every key automatic) */
    enum precision precision;       /* the run's --precision (plan_kind.h; gpu_open: exact) */

    struct gpu_block blocks[GPU_MAX_BLOCKS];
    int n_blocks;
    uint64_t allocated[2]; /* bytes handed out, per enum gpu_mem */

    struct gpu_buf staging; /* reusable upload/readback staging buffer */

    struct gpu_pipeline pipelines[GPU_MAX_PIPELINES];
    int n_pipelines;

    VkCommandPool pool;
    VkCommandBuffer cmd;     /* the step being recorded */
    VkCommandBuffer xfer;    /* uploads / downloads: first staging half */
    VkCommandBuffer xfer2;   /* uploads / downloads: second staging half */
    VkFence xfer_fence[2];   /* one per staging half (xfer, xfer2) */
    VkFence fence;           /* the step's */
    VkQueryPool queries;     /* timestamps; VK_NULL_HANDLE when unsupported */
    uint32_t n_queries;
    bool recording;
    bool queries_recorded; /* the step being recorded already uses `queries` (no regrowth) */

    uint32_t validation_messages; /* count of validation-layer messages seen */
    uint32_t validation_layer;    /* the validation layer's spec version when enabled, else 0 */
};

/* The words naming the wide plan's gemm path on a device whose gemm.comp may run on KHR / NV
 * cooperative matrices (gpu.h gemm_khr, gemm_nv) and gemm_cm2.comp on VK_NV_cooperative_matrix2
 * (cm2: gpu.h has_coopmat2): the kernel stage's rule, handed down by the app (the vk stage does not
 * choose kernels). */
typedef const char *gpu_gemm_path_fn(bool khr, bool nv, bool cm2);
/* Prints every device (index, name, type, driver, API, timestamps, subgroup size, shared memory,
 * cooperative-matrix support, the gemm path gemm_path names (NULL: that line left out), memory
 * heaps). */
int gpu_list_devices(FILE *out, gpu_gemm_path_fn *gemm_path, struct err *e);

/* Opens device `index` (-1: the first discrete GPU, else the first device); an index out of range
 * is ST_USAGE. *g must stay at one address until gpu_close (the validation callback counts into
 * it). On failure nothing stays allocated and *g is zeroed, so gpu_close(g) is a harmless no-op. */
int gpu_open(struct gpu *g, int index, struct err *e);
/* Frees everything; returns ST_RUNTIME (and fills e) if the validation layer printed anything.
 * Safe on a zeroed struct gpu. */
int gpu_close(struct gpu *g, struct err *e);

/* Allocates `size` bytes (256-aligned). Out of memory is an error that says how much was asked
 * and how much is free. */
int gpu_alloc(struct gpu *g, uint64_t size, enum gpu_mem kind, struct gpu_buf *out, struct err *e);
/* A mark of what is allocated now, and the release back to it: the blocks that existed get their
 * fill level back and every block made since is kept empty for the next allocations (not freed:
 * memory freed and allocated again stage after stage measured slower kernels), so one process can
 * profile shard after shard (--stages) with the memory of its largest. Nothing may be in flight,
 * and no buffer handed out after the mark may be used again. */
struct gpu_mark {
    int n_blocks;
    uint64_t used[GPU_MAX_BLOCKS];
    uint64_t allocated[2];
};
void gpu_mark(const struct gpu *g, struct gpu_mark *m);
void gpu_release(struct gpu *g, const struct gpu_mark *m);
/* A sub-range of a buffer. */
struct gpu_buf gpu_sub(const struct gpu_buf *b, uint64_t offset, uint64_t size);

/* Copies n host bytes to dst+dst_off through the staging buffer in chunks (no host copy): the
 * two halves of the staging buffer alternate, so the host fills one while the GPU copies the
 * other. Uploads, downloads and fills wait for their copies before returning. */
int gpu_upload(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, const void *src, uint64_t n,
               struct err *e);
/* Like gpu_upload, but the bytes come from a producer: fill(ctx, at, n, out) writes bytes
 * [at, at+n) of the n uploaded bytes (at = 0 is the byte that lands at dst+dst_off) into out, at
 * most the staging size per call (for repacking a tensor while it streams). */
typedef void (*gpu_fill_fn)(void *ctx, uint64_t at, uint64_t n, void *out);
int gpu_upload_fn(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, uint64_t n, gpu_fill_fn fill,
                  void *ctx, struct err *e);
/* Copies n bytes from src+src_off to host memory through the staging buffer. */
int gpu_download(struct gpu *g, const struct gpu_buf *src, uint64_t src_off, void *dst, uint64_t n,
                 struct err *e);
/* Fills a device range with a repeated 32-bit word (vkCmdFillBuffer; size multiple of 4). */
int gpu_fill(struct gpu *g, const struct gpu_buf *dst, uint32_t word, struct err *e);

/* Finds or makes the pipeline of embedded shader `name` with specialization constants
 * spec[0..n_spec-1] for constant_id 0..n_spec-1. The layout has one push-constant range of
 * g->max_push bytes (capped at 128) and no descriptor sets. The pointer stays valid until close. */
int gpu_pipeline(struct gpu *g, const char *name, const uint32_t *spec, uint32_t n_spec,
                 const struct gpu_pipeline **out, struct err *e);
/* The driver's statistics of pipeline p's compiled shader ("Register count 128, ..." as the driver
 * names them) into out (n bytes); "" where the device captures none (has_exec_stats false: every
 * build but the bench's). For the benches: what a kernel variant compiled to. */
void gpu_pipeline_stats(const struct gpu *g, const struct gpu_pipeline *p, char *out, size_t n);

/* Recording one step: begin, any number of dispatches / barriers / copies / timestamps, then
 * submit_wait (one submit, one fence wait). wall_us (may be NULL) gets the host wall time of
 * vkQueueSubmit + fence wait. */
int gpu_cmd_begin(struct gpu *g, struct err *e);
void gpu_cmd_dispatch(struct gpu *g, const struct gpu_pipeline *p, const void *push, uint32_t push_size,
                      uint32_t gx, uint32_t gy, uint32_t gz);
/* Full compute+transfer memory barrier: every write before is visible to every read after. */
void gpu_cmd_barrier(struct gpu *g);
/* The same between two dispatches only: shader writes before, shader reads and writes after (no
 * transfer stage; a copy on either side needs gpu_cmd_barrier). */
void gpu_cmd_barrier_compute(struct gpu *g);
void gpu_cmd_copy(struct gpu *g, const struct gpu_buf *src, uint64_t src_off, const struct gpu_buf *dst,
                  uint64_t dst_off, uint64_t n);
/* Fills n bytes at dst+dst_off with a repeated 32-bit word (n, dst_off multiples of 4). */
void gpu_cmd_fill(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, uint64_t n, uint32_t word);
/* Timestamps: reset `count` queries from `first`, then write query i after all prior work. */
int gpu_cmd_reset_timestamps(struct gpu *g, uint32_t first, uint32_t count, struct err *e);
void gpu_cmd_timestamp(struct gpu *g, uint32_t query);
int gpu_submit_wait(struct gpu *g, double *wall_us, struct err *e);
/* Reads `count` timestamps (ticks masked to timestamp_valid_bits) after a submit_wait. */
int gpu_read_timestamps(struct gpu *g, uint32_t first, uint32_t count, uint64_t *ticks, struct err *e);

/* Bytes per second of a device-to-device copy kernel (read + write counted), the largest size
 * the device allows up to 1 GiB each way (1/8 of device-local memory at most; 32 MiB on a CPU
 * device), minimum time of `reps` runs. Its two buffers are freed again. Records its own steps
 * (not while one is being recorded) and uses timestamp queries 0 and 1. */
int gpu_copy_bandwidth(struct gpu *g, int reps, double *bytes_per_s, struct err *e);

/* Bytes per second of a device-local to host-visible transfer (vkCmdCopyBuffer; what a stage's
 * activations cross on their way to another GPU through the host): 256 MiB (32 MiB on a CPU
 * device), minimum time of `reps` runs, timestamps when there are, else the wall. Its buffers are
 * freed again; uses timestamp queries 0 and 1. */
int gpu_copy_bandwidth_d2h(struct gpu *g, int reps, double *bytes_per_s, struct err *e);

/* FLOP/s of the arithmetic the wide plan's gemm runs on (roof.c): with gemm_nv or gemm_khr, 16×16×16
 * f16 × f16 + f32 cooperative-matrix products (*path "NV coopmat f16"), else f32 fused
 * multiply-adds, the FMA twin's (*path "f32 FMA"); on registers, no memory traffic, the best of 3
 * short runs (a few ms). Measured on the first call and kept in g->tensor_roof (once a process and
 * device); uses timestamp queries 0 and 1. */
int gpu_tensor_roof(struct gpu *g, double *flops_per_s, const char **path, struct err *e);

#endif
