/* device.c - physical devices: what we ask of one, the device list (--list-devices), and opening
 * and closing the chosen device (gpu_open, gpu_close). */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"
#include "vk_coopmat2.h"

/* ---------------------------------------------------------------------------------------------
 * Physical device: everything we ask of one, gathered once (for gpu_open and the device list). */

struct dev_info {
    VkPhysicalDeviceProperties2 props;
    VkPhysicalDeviceDriverProperties driver;
    VkPhysicalDeviceVulkan11Properties p11; /* subgroupSize, maxMemoryAllocationSize */
    VkPhysicalDeviceVulkan13Properties p13; /* maxBufferSize, subgroup size range (1.3 only) */
    VkPhysicalDeviceMemoryProperties mem;
    VkPhysicalDeviceFeatures2 features;
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceVulkan13Features f13; /* zero below 1.3 */
    VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR fkhr;     /* zero without VK_KHR_cooperative_matrix */
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV fcm2;     /* zero without VK_NV_cooperative_matrix2 */
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV pcm2;
    VkPhysicalDeviceCooperativeMatrixPropertiesKHR pkhr; /* zero without VK_KHR_cooperative_matrix */
    bool api13, has_budget, has_coopmat_nv, has_coopmat_khr, has_coopmat2_ext;
    int queue_family; /* compute family used, -1 if none */
    uint32_t ts_bits; /* its timestampValidBits */
    uint64_t device_local_bytes;
};

/* The first Khronos validation layers that know VK_KHR_cooperative_matrix (1.3.255) and
 * VK_NV_cooperative_matrix2 (1.3.300): an older one (Debian 12 has 1.3.239) reports their feature
 * structs and SPIR-V capabilities as errors, so under it (layer != 0) they are left off. */
#define LAYER_KNOWS_KHR_COOPMAT VK_MAKE_API_VERSION(0, 1, 3, 255)
#define LAYER_KNOWS_COOPMAT2 VK_MAKE_API_VERSION(0, 1, 3, 300)
static bool layer_allows(uint32_t layer, uint32_t since) { return layer == 0 || layer >= since; }

static bool has_device_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *ext = calloc(n, sizeof *ext);
    bool found = false;
    if (ext && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    free(ext);
    return found;
}

/* A compute-capable queue family, preferring one with timestamps; -1 if there is none. */
static int pick_queue_family(VkPhysicalDevice pd, uint32_t *ts_bits)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties fam[64];
    n = MIN(n, (uint32_t)ARRAY_LEN(fam));
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    int best = -1;
    *ts_bits = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || fam[i].queueCount == 0) continue;
        if (best < 0 || (*ts_bits == 0 && fam[i].timestampValidBits > 0)) {
            best = (int)i;
            *ts_bits = fam[i].timestampValidBits;
        }
    }
    return best;
}

/* Fills d; the pNext chains point into d, so d must not be copied afterwards. layer: the validation
 * layer's version (0: none), which may not see a struct it predates. */
static void dev_query(VkPhysicalDevice pd, uint32_t layer, struct dev_info *d)
{
    memset(d, 0, sizeof *d);
    VkPhysicalDeviceProperties basic;
    vkGetPhysicalDeviceProperties(pd, &basic);
    d->api13 = basic.apiVersion >= VK_API_VERSION_1_3;
    d->has_budget = has_device_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    d->has_coopmat_nv = has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    d->has_coopmat_khr = has_device_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    d->has_coopmat2_ext = d->has_coopmat_khr && has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);

    d->props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    d->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    d->p11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES;
    d->p13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES;
    if (basic.apiVersion >= VK_API_VERSION_1_2) {
        d->props.pNext = &d->driver;
        d->driver.pNext = &d->p11;
        if (d->api13) d->p11.pNext = &d->p13;
        d->pcm2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV;
        if (d->has_coopmat2_ext) {
            d->pcm2.pNext = d->p11.pNext;
            d->p11.pNext = &d->pcm2;
        }
        d->pkhr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
        if (d->has_coopmat_khr && layer_allows(layer, LAYER_KNOWS_KHR_COOPMAT)) {
            d->pkhr.pNext = d->p11.pNext;
            d->p11.pNext = &d->pkhr;
        }
        vkGetPhysicalDeviceProperties2(pd, &d->props);
    } else {
        d->props.properties = basic;
    }
    vkGetPhysicalDeviceMemoryProperties(pd, &d->mem);
    for (uint32_t h = 0; h < d->mem.memoryHeapCount; h++)
        if (d->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            d->device_local_bytes = MAX(d->device_local_bytes, d->mem.memoryHeaps[h].size);

    d->features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    d->f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    d->f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    d->f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
    d->fcoop.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    if (basic.apiVersion >= VK_API_VERSION_1_2) {
        void **next = &d->features.pNext;
        *next = &d->f11;
        next = &d->f11.pNext;
        *next = &d->f12;
        next = &d->f12.pNext;
        if (d->api13) {
            *next = &d->f13;
            next = &d->f13.pNext;
        }
        if (d->has_coopmat_nv) {
            *next = &d->fcoop;
            next = &d->fcoop.pNext;
        }
        d->fkhr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
        d->fcm2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV;
        if (d->has_coopmat_khr) {
            *next = &d->fkhr;
            next = &d->fkhr.pNext;
        }
        if (d->has_coopmat2_ext) *next = &d->fcm2;
        vkGetPhysicalDeviceFeatures2(pd, &d->features);
    }
    d->queue_family = pick_queue_family(pd, &d->ts_bits);
}

static const char *device_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "CPU";
    default:
        return "other";
    }
}

/* ---------------------------------------------------------------------------------------------
 * Device list */


/* What gemm.comp's cooperative matrices need besides the extension and its shape: f16 arithmetic
 * and 16-bit storage, and subgroups of 32 (its subgroup grid: tid / 32; no pipeline asks for a
 * subgroup size). Test hook: LFM2_TEST_NO_COOPMAT=1 takes both paths away (tune gemm_path=fma
 * forces the twin in the product). */
static bool gemm_coopmat_base(const struct dev_info *d)
{
    return d->f12.shaderFloat16 && d->f11.storageBuffer16BitAccess && d->p11.subgroupSize == 32 &&
           !tuning()->test_no_coopmat;
}

/* gemm.comp on VK_NV_cooperative_matrix: its feature and the 16x16x16 f16*f16+f32 subgroup shape. */
static bool gemm_nv_usable(VkPhysicalDevice pd, const struct dev_info *d)
{
    return d->has_coopmat_nv && d->fcoop.cooperativeMatrix && vk_coopmat_f16_16(pd) && gemm_coopmat_base(d);
}

/* gemm_khr: VK_KHR_cooperative_matrix enabled (its feature; a validation layer that knows it), in
 * compute shaders, with the same shape. */
static bool gemm_khr_usable(VkInstance inst, VkPhysicalDevice pd, const struct dev_info *d, uint32_t layer)
{
    return d->has_coopmat_khr && d->fkhr.cooperativeMatrix && layer_allows(layer, LAYER_KNOWS_KHR_COOPMAT) &&
           (d->pkhr.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
           vk_coopmat_khr_f16_16(inst, pd) && gemm_coopmat_base(d);
}

static void print_coopmat_khr(FILE *out, VkInstance inst, VkPhysicalDevice pd, const struct dev_info *d,
                              uint32_t layer)
{
    char why[160];
    const char *state = NULL;
    if (!d->has_coopmat_khr || !d->fkhr.cooperativeMatrix) {
        state = "none (VK_KHR_cooperative_matrix absent)";
    } else if (!layer_allows(layer, LAYER_KNOWS_KHR_COOPMAT)) {
        snprintf(why, sizeof why, "VK_KHR_cooperative_matrix present, not enabled: the validation layer %u.%u.%u "
                 "predates it", VK_API_VERSION_MAJOR(layer), VK_API_VERSION_MINOR(layer), VK_API_VERSION_PATCH(layer));
        state = why;
    }
    vk_print_coopmat_khr(out, inst, pd, state);
}

/* Whether the device gives gemm_cm2.comp what it uses: VK_NV_cooperative_matrix2's workgroup-scope
 * matrices of flexible dimensions, tensor addressing and block loads (the decode functions), on
 * VK_KHR_cooperative_matrix, and the core features its SPIR-V declares. */
static bool coopmat2_usable(const struct dev_info *d)
{
    /* its SPIR-V is 1.6 (Vulkan 1.3) and declares the Vulkan memory model, f16 and 16-bit storage */
    bool base = d->api13 && d->f12.vulkanMemoryModel && d->f12.shaderFloat16 && d->f11.storageBuffer16BitAccess &&
                d->features.features.shaderInt16 && d->features.features.shaderInt64;
    return base && d->has_coopmat2_ext && d->fkhr.cooperativeMatrix && d->fcm2.cooperativeMatrixWorkgroupScope &&
           d->fcm2.cooperativeMatrixFlexibleDimensions && d->fcm2.cooperativeMatrixTensorAddressing &&
           d->fcm2.cooperativeMatrixBlockLoads;
}

static void print_coopmat2(FILE *out, const struct dev_info *d, uint32_t layer)
{
    const char *label = "coopmat2";
    if (d->has_coopmat2_ext && !layer_allows(layer, LAYER_KNOWS_COOPMAT2)) {
        fprintf(out, "  %-18s VK_NV_cooperative_matrix2 present, not enabled: the validation layer %u.%u.%u predates it\n",
                label, VK_API_VERSION_MAJOR(layer), VK_API_VERSION_MINOR(layer), VK_API_VERSION_PATCH(layer));
        return;
    }
    if (!d->has_coopmat2_ext) {
        fprintf(out, "  %-18s none (VK_NV_cooperative_matrix2 %s)\n", label,
                d->has_coopmat_khr ? "absent" : "and VK_KHR_cooperative_matrix absent");
        return;
    }
    fprintf(out, "  %-18s VK_NV_cooperative_matrix2%s: workgroup scope %s, flexible dimensions %s, tensor "
            "addressing %s, block loads %s, per-element operations %s; workgroups up to %u invocations, %u "
            "bytes of shared memory reserved\n", label, coopmat2_usable(d) ? " (gemm_cm2 usable)" : " (gemm_cm2 NOT usable)",
            d->fcm2.cooperativeMatrixWorkgroupScope ? "yes" : "no",
            d->fcm2.cooperativeMatrixFlexibleDimensions ? "yes" : "no",
            d->fcm2.cooperativeMatrixTensorAddressing ? "yes" : "no",
            d->fcm2.cooperativeMatrixBlockLoads ? "yes" : "no",
            d->fcm2.cooperativeMatrixPerElementOperations ? "yes" : "no",
            d->pcm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize,
            d->pcm2.cooperativeMatrixWorkgroupScopeReservedSharedMemory);
}

static void print_device(FILE *out, uint32_t index, VkInstance inst, VkPhysicalDevice pd, uint32_t layer,
                         gpu_gemm_path_fn *gemm_path)
{
    struct dev_info d;
    dev_query(pd, layer, &d);
    const VkPhysicalDeviceProperties *p = &d.props.properties;
    fprintf(out, "device %u: %s\n", index, p->deviceName);
    fprintf(out, "  %-18s %s\n", "type", device_type_name(p->deviceType));
    fprintf(out, "  %-18s %s %s\n", "driver", d.driver.driverName, d.driver.driverInfo);
    fprintf(out, "  %-18s %u.%u.%u\n", "api", VK_API_VERSION_MAJOR(p->apiVersion),
            VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion));
    if (d.queue_family < 0)
        fprintf(out, "  %-18s none (no compute queue)\n", "timestamps");
    else if (d.ts_bits == 0)
        fprintf(out, "  %-18s no timestamps (compute queue family %d)\n", "timestamps",
                d.queue_family);
    else
        fprintf(out, "  %-18s %.3f ns/tick, %u valid bits (compute queue family %d)\n",
                "timestamps", p->limits.timestampPeriod, d.ts_bits, d.queue_family);
    if (d.api13)
        fprintf(out, "  %-18s %u (range %u..%u)\n", "subgroup size", d.p11.subgroupSize,
                d.p13.minSubgroupSize, d.p13.maxSubgroupSize);
    else
        fprintf(out, "  %-18s %u\n", "subgroup size", d.p11.subgroupSize);
    fprintf(out, "  %-18s %u KiB\n", "shared memory", p->limits.maxComputeSharedMemorySize / 1024);
    fprintf(out, "  %-18s %.0f MiB\n", "max allocation", MIB(d.p11.maxMemoryAllocationSize));
    fprintf(out, "  %-18s %s\n", "buffer address",
            d.f12.bufferDeviceAddress ? "yes" : "NO (this tool cannot use the device)");
    vk_print_coopmat_nv(out, pd, d.has_coopmat_nv && d.fcoop.cooperativeMatrix);
    print_coopmat_khr(out, inst, pd, &d, layer);
    print_coopmat2(out, &d, layer);
    bool cm2 = coopmat2_usable(&d) && layer_allows(layer, LAYER_KNOWS_COOPMAT2);
    if (gemm_path)
        fprintf(out, "  %-18s %s\n", "gemm path", gemm_path(gemm_khr_usable(inst, pd, &d, layer), gemm_nv_usable(pd, &d), cm2));
    for (uint32_t h = 0; h < d.mem.memoryHeapCount; h++) {
        char label[32];
        snprintf(label, sizeof label, "heap %u", h);
        fprintf(out, "  %-18s %.0f MiB%s\n", label, MIB(d.mem.memoryHeaps[h].size),
                d.mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? " device-local"
                                                                             : "");
    }
}

int gpu_list_devices(FILE *out, gpu_gemm_path_fn *gemm_path, struct err *e)
{
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    uint32_t messages = 0;
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0;
    uint32_t layer = 0;
    int st = vk_instance_create(&instance, &messenger, &messages, &layer, e);
    if (st == ST_OK) st = vk_devices_enumerate(instance, &devs, &n, e);
    if (st == ST_OK) {
        if (n == 0) fprintf(out, "no Vulkan devices\n");
        for (uint32_t i = 0; i < n; i++) {
            if (i) fprintf(out, "\n");
            print_device(out, i, instance, devs[i], layer, gemm_path);
        }
    }
    free(devs);
    vk_instance_destroy(instance, messenger);
    if (st == ST_OK && messages)
        st = err_set(e, ST_RUNTIME, "validation layer reported %u messages", messages);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Opening and closing a device */

/* Creates the logical device with every feature the kernels may use that the device has. */
static int device_create(struct gpu *g, const struct dev_info *d, struct err *e)
{
    /* VK_NV_cooperative_matrix2 on VK_KHR_cooperative_matrix (gemm_cm2.comp): the features it uses */
    bool cm2 = coopmat2_usable(d) && layer_allows(g->validation_layer, LAYER_KNOWS_COOPMAT2);
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV fcm2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
        .cooperativeMatrixWorkgroupScope = VK_TRUE,
        .cooperativeMatrixFlexibleDimensions = VK_TRUE,
        .cooperativeMatrixTensorAddressing = VK_TRUE,
        .cooperativeMatrixBlockLoads = VK_TRUE,
        .cooperativeMatrixPerElementOperations = d->fcm2.cooperativeMatrixPerElementOperations,
    };
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR fkhr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
        .pNext = cm2 ? &fcm2 : NULL,
        .cooperativeMatrix = VK_TRUE,
    };
    bool khr = d->has_coopmat_khr && d->fkhr.cooperativeMatrix && layer_allows(g->validation_layer, LAYER_KNOWS_KHR_COOPMAT);
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
        .pNext = khr ? &fkhr : NULL,
        .cooperativeMatrix = d->fcoop.cooperativeMatrix,
    };
    void *coop_chain = d->has_coopmat_nv ? (void *)&coop : khr ? (void *)&fkhr : NULL;
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .pNext = coop_chain,
        .subgroupSizeControl = d->f13.subgroupSizeControl,
        .computeFullSubgroups = d->f13.computeFullSubgroups,
        .maintenance4 = d->f13.maintenance4,
        .shaderIntegerDotProduct = d->f13.shaderIntegerDotProduct,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = d->api13 ? (void *)&f13 : coop_chain,
        .bufferDeviceAddress = VK_TRUE,
        .shaderFloat16 = d->f12.shaderFloat16,
        .shaderInt8 = d->f12.shaderInt8,
        .storageBuffer8BitAccess = d->f12.storageBuffer8BitAccess,
        .uniformAndStorageBuffer8BitAccess = d->f12.uniformAndStorageBuffer8BitAccess,
        .storagePushConstant8 = d->f12.storagePushConstant8,
        .shaderSubgroupExtendedTypes = d->f12.shaderSubgroupExtendedTypes,
        .vulkanMemoryModel = d->f12.vulkanMemoryModel,
        .vulkanMemoryModelDeviceScope = d->f12.vulkanMemoryModelDeviceScope,
        .scalarBlockLayout = d->f12.scalarBlockLayout,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = &f12,
        .storageBuffer16BitAccess = d->f11.storageBuffer16BitAccess,
        .uniformAndStorageBuffer16BitAccess = d->f11.uniformAndStorageBuffer16BitAccess,
        .storagePushConstant16 = d->f11.storagePushConstant16,
    };
    VkPhysicalDeviceFeatures2 features = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f11,
        .features =
            {
                .shaderInt64 = d->features.features.shaderInt64,
                .shaderInt16 = d->features.features.shaderInt16,
                .shaderFloat64 = d->features.features.shaderFloat64,
            },
    };
    const char *ext[7];
    uint32_t n_ext = 0;
    if (d->has_budget) ext[n_ext++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    if (d->has_coopmat_nv) ext[n_ext++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (khr) ext[n_ext++] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (cm2) ext[n_ext++] = VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME;
    g->has_coopmat_khr = khr;
    g->has_coopmat2 = cm2;
    g->has_coopmat2_per_element = cm2 && d->fcm2.cooperativeMatrixPerElementOperations;
    g->coopmat2_reserved_shared = cm2 ? d->pcm2.cooperativeMatrixWorkgroupScopeReservedSharedMemory : 0;
    g->coopmat2_max_invocations = cm2 ? d->pcm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize : 0;
    /* float atomic add on buffers: the wide plan's split-k sums (gemm.comp FADD variants) */
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT faf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
    };
    g->has_float_atomic_add = false;
    if (has_device_extension(g->phys, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) {
        VkPhysicalDeviceFeatures2 fa = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &faf};
        vkGetPhysicalDeviceFeatures2(g->phys, &fa);
        if (faf.shaderBufferFloat32AtomicAdd) {
            faf = (VkPhysicalDeviceShaderAtomicFloatFeaturesEXT){
                .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
                .pNext = features.pNext,
                .shaderBufferFloat32AtomicAdd = VK_TRUE,
            };
            features.pNext = &faf;
            ext[n_ext++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
            g->has_float_atomic_add = true;
        }
    }
    /* bench builds: the compiler's statistics of each pipeline (gpu_pipeline_stats) */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fexec = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
#ifdef LFM2_BENCH
    VkPhysicalDeviceFeatures2 fq = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &fexec};
    if (has_device_extension(g->phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
        vkGetPhysicalDeviceFeatures2(g->phys, &fq);
#endif
    g->has_exec_stats = fexec.pipelineExecutableInfo;
    if (g->has_exec_stats) {
        fexec.pNext = features.pNext;
        features.pNext = &fexec;
        ext[n_ext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = g->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &features,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = n_ext,
        .ppEnabledExtensionNames = ext,
    };
    VK_TRY(vkCreateDevice(g->phys, &dci, NULL, &g->device));
    volkLoadDevice(g->device);
    vkGetDeviceQueue(g->device, g->queue_family, 0, &g->queue);
    return ST_OK;
}

/* Copies what kernels and the report need from d into g. */
static void fill_device_fields(struct gpu *g, const struct dev_info *d)
{
    g->props = d->props.properties;
    snprintf(g->driver_name, sizeof g->driver_name, "%.120s %.120s", d->driver.driverName,
             d->driver.driverInfo);
    g->subgroup_size = d->p11.subgroupSize;
    g->shared_mem = g->props.limits.maxComputeSharedMemorySize;
    g->max_push = g->props.limits.maxPushConstantsSize;
    g->max_alloc = d->p11.maxMemoryAllocationSize;
    g->max_buffer = d->api13 && d->p13.maxBufferSize ? d->p13.maxBufferSize : g->max_alloc;
    g->timestamp_period = g->props.limits.timestampPeriod;
    g->timestamp_valid_bits = d->ts_bits;
    /* Test hook: behave as a device without timestamps (the profiler's fallback path). */
    if (tuning()->test_no_timestamps) g->timestamp_valid_bits = 0;
    g->has_coopmat_nv = d->has_coopmat_nv && d->fcoop.cooperativeMatrix;
    g->has_memory_budget = d->has_budget;
    g->device_local_bytes = d->device_local_bytes;
    g->has_subgroup_size_control = d->f13.subgroupSizeControl && d->f13.computeFullSubgroups;
    g->min_subgroup_size = d->api13 ? d->p13.minSubgroupSize : g->subgroup_size;
    g->max_subgroup_size = d->api13 ? d->p13.maxSubgroupSize : g->subgroup_size;
    g->has_float16 = d->f12.shaderFloat16;
    g->has_int8 = d->f12.shaderInt8;
    g->gemm_nv = gemm_nv_usable(g->phys, d);
    g->gemm_khr = gemm_khr_usable(g->instance, g->phys, d, g->validation_layer);
}

/* The command pool, the step and transfer command buffers, the fence, the staging buffer. */
static int commands_create(struct gpu *g, struct err *e)
{
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = g->queue_family,
    };
    VK_TRY(vkCreateCommandPool(g->device, &pci, NULL, &g->pool));
    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = g->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VK_TRY(vkAllocateCommandBuffers(g->device, &cai, &g->cmd));
    VK_TRY(vkAllocateCommandBuffers(g->device, &cai, &g->xfer));
    VK_TRY(vkAllocateCommandBuffers(g->device, &cai, &g->xfer2));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_TRY(vkCreateFence(g->device, &fci, NULL, &g->fence));
    VK_TRY(vkCreateFence(g->device, &fci, NULL, &g->xfer_fence[0]));
    VK_TRY(vkCreateFence(g->device, &fci, NULL, &g->xfer_fence[1]));
    return ST_OK;
}

static int open_device(struct gpu *g, int index, struct err *e)
{
    int st = vk_instance_create(&g->instance, &g->messenger, &g->validation_messages, &g->validation_layer, e);
    if (st) return st;
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0;
    st = vk_devices_enumerate(g->instance, &devs, &n, e);
    if (st) return st;
    if (n == 0)
        return err_set(e, ST_RUNTIME,
                       "no Vulkan device found (install a Vulkan driver: the "
                       "NVIDIA driver, or mesa-vulkan-drivers for lavapipe)");
    if (index < -1 || index >= (int)n) {
        free(devs);
        return err_set(e, ST_USAGE,
                       "--device %d: out of range, this machine has %u Vulkan "
                       "device%s (0..%u; --list-devices shows them)",
                       index, n, n == 1 ? "" : "s", n - 1);
    }
    if (index < 0) {
        index = 0;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(devs[i], &p);
            if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
                index = (int)i;
                break;
            }
        }
    }
    g->index = index;
    g->phys = devs[index];
    free(devs);

    struct dev_info *d = calloc(1, sizeof *d);
    if (!d) return err_set(e, ST_RUNTIME, "out of host memory");
    dev_query(g->phys, g->validation_layer, d);
    const char *name = d->props.properties.deviceName;
    if (d->props.properties.apiVersion < VK_API_VERSION_1_2)
        st = err_set(e, ST_RUNTIME, "device %d (%s) supports Vulkan %u.%u; this tool needs 1.2+",
                     index, name, VK_API_VERSION_MAJOR(d->props.properties.apiVersion),
                     VK_API_VERSION_MINOR(d->props.properties.apiVersion));
    else if (!d->f12.bufferDeviceAddress)
        st = err_set(e, ST_RUNTIME,
                     "device %d (%s) lacks the bufferDeviceAddress feature, "
                     "which every kernel uses to reach its buffers",
                     index, name);
    else if (d->queue_family < 0)
        st = err_set(e, ST_RUNTIME, "device %d (%s) has no compute queue", index, name);
    if (st == ST_OK) {
        g->queue_family = (uint32_t)d->queue_family;
        fill_device_fields(g, d);
        st = device_create(g, d, e);
    }
    free(d);
    if (st == ST_OK) st = commands_create(g, e);
    if (st == ST_OK) {
        uint64_t staging = MIN(GPU_STAGING, g->max_alloc / 4 / GPU_ALIGN * GPU_ALIGN);
        st = gpu_alloc(g, staging, GPU_MEM_HOST, &g->staging, e);
        if (st) err_wrap(e, st, "staging buffer");
    }
    return st;
}

int gpu_open(struct gpu *g, int index, struct err *e)
{
    memset(g, 0, sizeof *g);
    g->tune = tune_default();
    g->precision = PRECISION_EXACT;
    int st = open_device(g, index, e);
    if (st) gpu_close(g, NULL);
    return st;
}

void vk_block_destroy(struct gpu *g, struct gpu_block *b)
{
    if (b->buffer) vkDestroyBuffer(g->device, b->buffer, NULL);
    if (b->memory) vkFreeMemory(g->device, b->memory, NULL); /* unmaps too */
    memset(b, 0, sizeof *b);
}

int gpu_close(struct gpu *g, struct err *e)
{
    if (g->device) {
        vkDeviceWaitIdle(g->device);
        for (int i = 0; i < g->n_pipelines; i++) {
            vkDestroyPipeline(g->device, g->pipelines[i].pipeline, NULL);
            vkDestroyPipelineLayout(g->device, g->pipelines[i].layout, NULL);
        }
        if (g->queries) vkDestroyQueryPool(g->device, g->queries, NULL);
        if (g->fence) vkDestroyFence(g->device, g->fence, NULL);
        for (int i = 0; i < 2; i++)
            if (g->xfer_fence[i]) vkDestroyFence(g->device, g->xfer_fence[i], NULL);
        if (g->pool) vkDestroyCommandPool(g->device, g->pool, NULL);
        for (int i = 0; i < g->n_blocks; i++)
            vk_block_destroy(g, &g->blocks[i]);
        vkDestroyDevice(g->device, NULL);
    }
    vk_instance_destroy(g->instance, g->messenger);
    uint32_t messages = g->validation_messages;
    memset(g, 0, sizeof *g);
    if (messages) return err_set(e, ST_RUNTIME, "validation layer reported %u messages", messages);
    return ST_OK;
}
