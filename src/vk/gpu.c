/* gpu.c - the Vulkan core: instance and validation, device choice, memory blocks, staging
 * transfers, pipelines, step recording, timestamps and the copy-bandwidth roofline.
 * The design decisions are in gpu.h's header comment. */
#define VOLK_IMPLEMENTATION /* volk's loader code is compiled into this one file */
#include "gpu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shaders.h"
#include "tuning.h"

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

/* ---------------------------------------------------------------------------------------------
 * Errors: every VkResult is checked by VK_TRY, which names the failed call. */

static const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS:
        return "VK_SUCCESS";
    case VK_NOT_READY:
        return "VK_NOT_READY";
    case VK_TIMEOUT:
        return "VK_TIMEOUT";
    case VK_INCOMPLETE:
        return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
        return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
        return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL:
        return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE:
        return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case VK_ERROR_FRAGMENTATION:
        return "VK_ERROR_FRAGMENTATION";
    case VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS:
        return "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS";
    case VK_PIPELINE_COMPILE_REQUIRED:
        return "VK_PIPELINE_COMPILE_REQUIRED";
    case VK_ERROR_INVALID_SHADER_NV:
        return "VK_ERROR_INVALID_SHADER_NV";
    default:
        return "unknown VkResult";
    }
}

/* Fills e with "<function> failed: <VkResult>", the function being the call's text up to '('. */
static int vk_fail(struct err *e, const char *call, VkResult r)
{
    int len = (int)strcspn(call, "(");
    return err_set(e, ST_RUNTIME, "%.*s failed: %s (%d)", len, call, vk_result_name(r), (int)r);
}

#define VK_TRY(call)                                                                               \
    do {                                                                                           \
        VkResult vk_r_ = (call);                                                                   \
        if (vk_r_ != VK_SUCCESS) return vk_fail(e, #call, vk_r_);                                  \
    } while (0)

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

static const char *mem_kind_name(enum gpu_mem kind)
{
    return kind == GPU_MEM_DEVICE ? "device-local" : "host-visible";
}

/* ---------------------------------------------------------------------------------------------
 * Instance and validation layer */

/* Counts (into *user, a uint32_t) and prints every WARNING or ERROR message of the layer. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    uint32_t *count = user;
    (*count)++;
    fprintf(stderr, "vulkan validation %s: %s\n",
            severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
            data->pMessage ? data->pMessage : "(no text)");
    return VK_FALSE;
}

static bool validation_requested(void)
{
    return tuning()->validation;
}

static bool has_instance_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
    VkLayerProperties *layers = calloc(n, sizeof *layers);
    bool found = false;
    if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(layers[i].layerName, name) == 0;
    free(layers);
    return found;
}

/* Whether the instance extension `name` is there, globally or from `layer` (may be NULL). */
static bool has_instance_extension(const char *layer, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *ext = calloc(n, sizeof *ext);
    bool found = false;
    if (ext && vkEnumerateInstanceExtensionProperties(layer, &n, ext) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    free(ext);
    return found;
}

/* Loads the Vulkan loader, makes an instance (Vulkan 1.2 or 1.3) and, with LFM2_VALIDATION=1, the
 * validation layer plus a messenger counting into *count (which must outlive the instance). */
static int instance_create(VkInstance *instance, VkDebugUtilsMessengerEXT *messenger,
                           uint32_t *count, struct err *e)
{
    if (volkInitialize() != VK_SUCCESS)
        return err_set(e, ST_RUNTIME,
                       "cannot load the Vulkan loader libvulkan.so.1: install libvulkan1 and a "
                       "Vulkan driver (the NVIDIA driver, or mesa-vulkan-drivers for lavapipe)");
    uint32_t loader = volkGetInstanceVersion();
    if (loader < VK_API_VERSION_1_2)
        return err_set(e, ST_RUNTIME, "the Vulkan loader is version %u.%u; this tool needs 1.2+",
                       VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader));

    static const char *validation_layer = "VK_LAYER_KHRONOS_validation";
    bool validate = false;
    if (validation_requested()) {
        static bool warned;
        if (!has_instance_layer(validation_layer)) {
            if (!warned)
                fprintf(stderr,
                        "warning: LFM2_VALIDATION is set but %s is not installed "
                        "(vulkan-validationlayers); running without it\n",
                        validation_layer);
            warned = true;
        } else if (!has_instance_extension(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) &&
                   !has_instance_extension(validation_layer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
            if (!warned)
                fprintf(stderr,
                        "warning: LFM2_VALIDATION is set but %s is missing; running "
                        "without validation\n",
                        VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
            warned = true;
        } else {
            validate = true;
        }
    }

    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message,
        .pUserData = count,
    };
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "lfm2-profile-stage",
        .apiVersion = loader >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = validate ? &mci : NULL, /* also catches messages of create/destroy instance */
        .pApplicationInfo = &app,
        .enabledLayerCount = validate ? 1 : 0,
        .ppEnabledLayerNames = &validation_layer,
        .enabledExtensionCount = validate ? 1 : 0,
        .ppEnabledExtensionNames = &ext,
    };
    VkResult r = vkCreateInstance(&ici, NULL, instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return err_set(e, ST_RUNTIME,
                       "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER): "
                       "install mesa-vulkan-drivers for the CPU device (lavapipe) or the GPU "
                       "vendor's driver; VK_DRIVER_FILES, if set, must name a driver's JSON file");
    if (r != VK_SUCCESS) return vk_fail(e, "vkCreateInstance", r);
    volkLoadInstanceOnly(*instance);
    if (validate) VK_TRY(vkCreateDebugUtilsMessengerEXT(*instance, &mci, NULL, messenger));
    return ST_OK;
}

static void instance_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger)
{
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, NULL);
    if (instance) vkDestroyInstance(instance, NULL);
}

/* Lists the physical devices into a calloc'ed array (*out, *n). */
static int devices_enumerate(VkInstance instance, VkPhysicalDevice **out, uint32_t *n,
                             struct err *e)
{
    *out = NULL;
    *n = 0;
    VK_TRY(vkEnumeratePhysicalDevices(instance, n, NULL));
    if (*n == 0) return ST_OK;
    *out = calloc(*n, sizeof **out);
    if (!*out) return err_set(e, ST_RUNTIME, "out of host memory listing %u devices", *n);
    VkResult r = vkEnumeratePhysicalDevices(instance, n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*out);
        *out = NULL;
        return vk_fail(e, "vkEnumeratePhysicalDevices", r);
    }
    return ST_OK;
}

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
    bool api13, has_budget, has_coopmat_nv;
    int queue_family; /* compute family used, -1 if none */
    uint32_t ts_bits; /* its timestampValidBits */
    uint64_t device_local_bytes;
};

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

/* Fills d; the pNext chains point into d, so d must not be copied afterwards. */
static void dev_query(VkPhysicalDevice pd, struct dev_info *d)
{
    memset(d, 0, sizeof *d);
    VkPhysicalDeviceProperties basic;
    vkGetPhysicalDeviceProperties(pd, &basic);
    d->api13 = basic.apiVersion >= VK_API_VERSION_1_3;
    d->has_budget = has_device_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    d->has_coopmat_nv = has_device_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);

    d->props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    d->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    d->p11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES;
    d->p13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES;
    if (basic.apiVersion >= VK_API_VERSION_1_2) {
        d->props.pNext = &d->driver;
        d->driver.pNext = &d->p11;
        if (d->api13) d->p11.pNext = &d->p13;
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
        if (d->has_coopmat_nv) *next = &d->fcoop;
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

/* ---------------------------------------------------------------------------------------------
 * Device list */

static void print_coopmat_nv(FILE *out, VkPhysicalDevice pd, const struct dev_info *d)
{
    if (!d->has_coopmat_nv || !d->fcoop.cooperativeMatrix) {
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

static void print_device(FILE *out, uint32_t index, VkPhysicalDevice pd)
{
    struct dev_info d;
    dev_query(pd, &d);
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
    print_coopmat_nv(out, pd, &d);
    for (uint32_t h = 0; h < d.mem.memoryHeapCount; h++) {
        char label[32];
        snprintf(label, sizeof label, "heap %u", h);
        fprintf(out, "  %-18s %.0f MiB%s\n", label, MIB(d.mem.memoryHeaps[h].size),
                d.mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? " device-local"
                                                                             : "");
    }
}

int gpu_list_devices(FILE *out, struct err *e)
{
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    uint32_t messages = 0;
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0;
    int st = instance_create(&instance, &messenger, &messages, e);
    if (st == ST_OK) st = devices_enumerate(instance, &devs, &n, e);
    if (st == ST_OK) {
        if (n == 0) fprintf(out, "no Vulkan devices\n");
        for (uint32_t i = 0; i < n; i++) {
            if (i) fprintf(out, "\n");
            print_device(out, i, devs[i]);
        }
    }
    free(devs);
    instance_destroy(instance, messenger);
    if (st == ST_OK && messages)
        st = err_set(e, ST_RUNTIME, "validation layer reported %u messages", messages);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Opening and closing a device */

/* Creates the logical device with every feature the kernels may use that the device has. */
static int device_create(struct gpu *g, const struct dev_info *d, struct err *e)
{
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
        .cooperativeMatrix = d->fcoop.cooperativeMatrix,
    };
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .pNext = d->has_coopmat_nv ? &coop : NULL,
        .subgroupSizeControl = d->f13.subgroupSizeControl,
        .computeFullSubgroups = d->f13.computeFullSubgroups,
        .maintenance4 = d->f13.maintenance4,
        .shaderIntegerDotProduct = d->f13.shaderIntegerDotProduct,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = d->api13 ? (void *)&f13 : (d->has_coopmat_nv ? (void *)&coop : NULL),
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
    const char *ext[4];
    uint32_t n_ext = 0;
    if (d->has_budget) ext[n_ext++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    if (d->has_coopmat_nv) ext[n_ext++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
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

/* Whether the device lists the cooperative-matrix shape gemm.comp uses: 16x16x16, f16 * f16 + f32
 * -> f32, subgroup scope. */
static bool coopmat_f16_16(VkPhysicalDevice pd)
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
    /* the wide plan's tensor-core gemm needs the shape, f16 arithmetic and 16-bit storage, and a
     * subgroup of 32 (its 2 x 2 subgroup grid); test hook: LFM2_TEST_NO_COOPMAT=1 runs the FMA twin
     * on such a device too, so both can be compared on it */
    g->gemm_coopmat = g->has_coopmat_nv && coopmat_f16_16(g->phys) && g->has_float16 &&
                      d->f11.storageBuffer16BitAccess && g->subgroup_size == 32 && !tuning()->test_no_coopmat;
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
    int st = instance_create(&g->instance, &g->messenger, &g->validation_messages, e);
    if (st) return st;
    VkPhysicalDevice *devs = NULL;
    uint32_t n = 0;
    st = devices_enumerate(g->instance, &devs, &n, e);
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
    dev_query(g->phys, d);
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
    int st = open_device(g, index, e);
    if (st) gpu_close(g, NULL);
    return st;
}

static void block_destroy(struct gpu *g, struct gpu_block *b)
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
            block_destroy(g, &g->blocks[i]);
        vkDestroyDevice(g->device, NULL);
    }
    instance_destroy(g->instance, g->messenger);
    uint32_t messages = g->validation_messages;
    memset(g, 0, sizeof *g);
    if (messages) return err_set(e, ST_RUNTIME, "validation layer reported %u messages", messages);
    return ST_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Memory: blocks of one VkDeviceMemory bound to one VkBuffer, handed out in 256-byte ranges. */

/* The best memory type among `bits` for `kind`, or -1. Device: DEVICE_LOCAL, preferably not
 * host-visible (the BAR window is small). Host: HOST_VISIBLE|HOST_COHERENT, preferably cached
 * (readback) and in system memory. */
static int pick_memory_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits,
                            enum gpu_mem kind)
{
    int best = -1, best_score = -1;
    for (uint32_t i = 0; i < m->memoryTypeCount; i++) {
        if (!(bits & (1u << i))) continue;
        VkMemoryPropertyFlags f = m->memoryTypes[i].propertyFlags;
        bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        bool visible = f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        bool coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        bool cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        int score;
        if (kind == GPU_MEM_DEVICE)
            score = local ? (visible ? 1 : 2) : -1;
        else
            score = visible && coherent ? 1 + (cached ? 4 : 0) + (local ? 0 : 2) : -1;
        if (score > best_score) {
            best = (int)i;
            best_score = score;
        }
    }
    return best;
}

/* Bytes still free in heap `heap`: from VK_EXT_memory_budget when there, else the heap's size
 * less what our blocks hold. */
static uint64_t heap_free(struct gpu *g, uint32_t heap)
{
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT,
    };
    VkPhysicalDeviceMemoryProperties2 mp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
        .pNext = g->has_memory_budget ? &budget : NULL,
    };
    vkGetPhysicalDeviceMemoryProperties2(g->phys, &mp);
    if (g->has_memory_budget)
        return budget.heapBudget[heap] > budget.heapUsage[heap]
                   ? budget.heapBudget[heap] - budget.heapUsage[heap]
                   : 0;
    uint64_t used = 0;
    for (int i = 0; i < g->n_blocks; i++)
        if (mp.memoryProperties.memoryTypes[g->blocks[i].memory_type].heapIndex == heap)
            used += g->blocks[i].size;
    uint64_t size = mp.memoryProperties.memoryHeaps[heap].size;
    return size > used ? size - used : 0;
}

static int out_of_memory(struct gpu *g, struct err *e, uint64_t asked, enum gpu_mem kind,
                         uint32_t heap)
{
    VkPhysicalDeviceMemoryProperties m;
    vkGetPhysicalDeviceMemoryProperties(g->phys, &m);
    return err_set(e, ST_RUNTIME,
                   "out of device memory: asked %.1f MiB for a %s buffer, %.1f MiB free of heap "
                   "%u (%.0f MiB%s)",
                   MIB(asked), mem_kind_name(kind), MIB(heap_free(g, heap)), heap,
                   MIB(m.memoryHeaps[heap].size), g->has_memory_budget ? ", memory budget" : "");
}

/* Makes one block: a VkBuffer of `size` bytes on its own memory, with its device address and,
 * for host memory, its persistent mapping. On failure nothing stays allocated. */
static int block_create(struct gpu *g, uint64_t size, enum gpu_mem kind, struct gpu_block *b,
                        struct err *e)
{
    memset(b, 0, sizeof *b);
    b->size = size;
    b->kind = kind;
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = vkCreateBuffer(g->device, &bci, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        b->buffer = VK_NULL_HANDLE;
        return vk_fail(e, "vkCreateBuffer", r);
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, b->buffer, &req);
    VkPhysicalDeviceMemoryProperties m;
    vkGetPhysicalDeviceMemoryProperties(g->phys, &m);
    int type = pick_memory_type(&m, req.memoryTypeBits, kind);
    if (type < 0) {
        block_destroy(g, b);
        return err_set(e, ST_RUNTIME, "device has no %s memory type for storage buffers",
                       mem_kind_name(kind));
    }
    b->memory_type = (uint32_t)type;
    uint32_t heap = m.memoryTypes[type].heapIndex;
    /* A CPU device's heap size is a nominal figure (lavapipe of Mesa 22 reports 2 GiB and allocates
     * from host memory): there the driver's vkAllocateMemory alone says what fits. */
    bool cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (!cpu && req.size > heap_free(g, heap)) {
        block_destroy(g, b);
        return out_of_memory(g, e, req.size, kind, heap);
    }
    VkMemoryAllocateFlagsInfo flags = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
        .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
    };
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = &flags,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    r = vkAllocateMemory(g->device, &mai, NULL, &b->memory);
    if (r != VK_SUCCESS) {
        b->memory = VK_NULL_HANDLE;
        block_destroy(g, b);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            return out_of_memory(g, e, req.size, kind, heap);
        return vk_fail(e, "vkAllocateMemory", r);
    }
    r = vkBindBufferMemory(g->device, b->buffer, b->memory, 0);
    if (r != VK_SUCCESS) {
        block_destroy(g, b);
        return vk_fail(e, "vkBindBufferMemory", r);
    }
    VkBufferDeviceAddressInfo ai = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
        .buffer = b->buffer,
    };
    b->addr = vkGetBufferDeviceAddress(g->device, &ai);
    if (kind == GPU_MEM_HOST) {
        r = vkMapMemory(g->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->host);
        if (r != VK_SUCCESS) {
            block_destroy(g, b);
            return vk_fail(e, "vkMapMemory", r);
        }
    }
    return ST_OK;
}

/* The range [off, off + size) of block b as a gpu_buf. */
static struct gpu_buf block_range(const struct gpu_block *b, uint64_t off, uint64_t size)
{
    struct gpu_buf r = {
        .buffer = b->buffer,
        .offset = off,
        .size = size,
        .addr = b->addr + off,
        .host = b->host ? (char *)b->host + off : NULL,
    };
    return r;
}

int gpu_alloc(struct gpu *g, uint64_t size, enum gpu_mem kind, struct gpu_buf *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    uint64_t need = align_up(MAX(size, 1), GPU_ALIGN);
    uint64_t limit = MIN(g->max_alloc, g->max_buffer);
    if (size > limit)
        return err_set(e, ST_RUNTIME,
                       "out of device memory: asked %.1f MiB for one %s buffer, more than the "
                       "device's largest allocation of %.1f MiB (maxMemoryAllocationSize)",
                       MIB(size), mem_kind_name(kind), MIB(limit));
    need = MIN(need, limit);
    struct gpu_block *b = NULL;
    for (int i = 0; i < g->n_blocks && !b; i++) {
        struct gpu_block *c = &g->blocks[i];
        if (c->kind == kind && align_up(c->used, GPU_ALIGN) + need <= c->size) b = c;
    }
    if (!b) {
        if (g->n_blocks == GPU_MAX_BLOCKS)
            return err_set(e, ST_RUNTIME, "more than %d memory blocks (GPU_MAX_BLOCKS)",
                           GPU_MAX_BLOCKS);
        uint64_t usual = MIN(limit, kind == GPU_MEM_DEVICE ? GPU_DEVICE_BLOCK : GPU_HOST_BLOCK);
        b = &g->blocks[g->n_blocks];
        /* A block of the usual size when it fits, else one just as big as the request. */
        int st = need < usual ? block_create(g, usual, kind, b, NULL) : ST_RUNTIME;
        if (st) st = block_create(g, need, kind, b, e);
        if (st) return st;
        g->n_blocks++;
    }
    uint64_t off = align_up(b->used, GPU_ALIGN);
    b->used = off + need;
    g->allocated[kind] += need;
    *out = block_range(b, off, size);
    return ST_OK;
}

struct gpu_buf gpu_sub(const struct gpu_buf *b, uint64_t offset, uint64_t size)
{
    CHECK(offset <= b->size && size <= b->size - offset);
    struct gpu_buf s = *b;
    s.offset += offset;
    s.size = size;
    s.addr += offset;
    if (s.host) s.host = (char *)s.host + offset;
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * Transfers through the staging buffer, on the transfer command buffers (never g->cmd). The two
 * halves of the staging buffer are two slots, each with its command buffer and fence: the host
 * fills (or drains) one half while the GPU copies the other. */

struct xfer_slot {
    VkCommandBuffer cb;
    VkFence fence;
    struct gpu_buf half; /* its half of g->staging */
    uint64_t n;          /* bytes of the copy in flight */
    bool busy;           /* submitted, not yet waited for */
};

static void xfer_slots(struct gpu *g, struct xfer_slot s[2])
{
    uint64_t half = g->staging.size / 2 / GPU_ALIGN * GPU_ALIGN;
    s[0] = (struct xfer_slot){g->xfer, g->xfer_fence[0], gpu_sub(&g->staging, 0, half), 0, false};
    s[1] =
        (struct xfer_slot){g->xfer2, g->xfer_fence[1], gpu_sub(&g->staging, half, half), 0, false};
}

/* Waits for fence (the hang guard at most) and resets it. */
static int fence_wait(struct gpu *g, VkFence fence, const char *what, struct err *e)
{
    uint64_t s = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? GPU_TIMEOUT_CPU_S : GPU_TIMEOUT_S;
    VkResult r = vkWaitForFences(g->device, 1, &fence, VK_TRUE, s * 1000000000ull);
    if (r == VK_TIMEOUT)
        return err_set(e, ST_RUNTIME, "%s timed out after %llu s (vkWaitForFences)", what,
                       (unsigned long long)s);
    if (r != VK_SUCCESS) return vk_fail(e, "vkWaitForFences", r);
    VK_TRY(vkResetFences(g->device, 1, &fence));
    return ST_OK;
}

/* Submits cb (already ended) with fence. */
static int submit(struct gpu *g, VkCommandBuffer cb, VkFence fence, struct err *e)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &cb,
    };
    VK_TRY(vkQueueSubmit(g->queue, 1, &si, fence));
    return ST_OK;
}

static int slot_begin(struct xfer_slot *s, struct err *e)
{
    VK_TRY(vkResetCommandBuffer(s->cb, 0));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VK_TRY(vkBeginCommandBuffer(s->cb, &bi));
    return ST_OK;
}

static int slot_submit(struct gpu *g, struct xfer_slot *s, struct err *e)
{
    VK_TRY(vkEndCommandBuffer(s->cb));
    int st = submit(g, s->cb, s->fence, e);
    s->busy = st == ST_OK;
    return st;
}

static int slot_wait(struct gpu *g, struct xfer_slot *s, struct err *e)
{
    if (!s->busy) return ST_OK;
    s->busy = false;
    return fence_wait(g, s->fence, "GPU transfer", e);
}

/* Records and submits one buffer-to-buffer copy of n bytes in slot s. */
static int slot_copy(struct gpu *g, struct xfer_slot *s, VkBuffer src, uint64_t src_off,
                     VkBuffer dst, uint64_t dst_off, uint64_t n, struct err *e)
{
    int st = slot_begin(s, e);
    if (st) return st;
    VkBufferCopy region = {.srcOffset = src_off, .dstOffset = dst_off, .size = n};
    vkCmdCopyBuffer(s->cb, src, dst, 1, &region);
    s->n = n;
    return slot_submit(g, s, e);
}

/* Waits for both slots; keeps the first error (st) if there was one. */
static int slots_drain(struct gpu *g, struct xfer_slot s[2], int st, struct err *e)
{
    for (int i = 0; i < 2; i++) {
        int w = slot_wait(g, &s[i], st ? NULL : e);
        if (!st) st = w;
    }
    return st;
}

static int check_range(const struct gpu_buf *b, uint64_t off, uint64_t n, const char *fn,
                       struct err *e)
{
    if (off > b->size || n > b->size - off)
        return err_set(e, ST_RUNTIME,
                       "%s: %" PRIu64 " bytes at offset %" PRIu64 " run past the end of a %" PRIu64
                       "-byte buffer",
                       fn, n, off, b->size);
    return ST_OK;
}

static void fill_from_memory(void *ctx, uint64_t at, uint64_t n, void *out)
{
    memcpy(out, (const char *)ctx + at, n);
}

int gpu_upload(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, const void *src,
               uint64_t n, struct err *e)
{
    return gpu_upload_fn(g, dst, dst_off, n, fill_from_memory, (void *)src, e);
}

int gpu_upload_fn(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, uint64_t n,
                  gpu_fill_fn fill, void *ctx, struct err *e)
{
    struct xfer_slot s[2];
    xfer_slots(g, s);
    int st = check_range(dst, dst_off, n, "gpu_upload", e);
    for (uint64_t at = 0, k = 0; st == ST_OK && at < n; k++) {
        struct xfer_slot *sl = &s[k & 1];
        uint64_t chunk = MIN(n - at, sl->half.size);
        st = slot_wait(g, sl, e); /* its half is free again */
        if (st) break;
        fill(ctx, at, chunk, sl->half.host);
        st = slot_copy(g, sl, sl->half.buffer, sl->half.offset, dst->buffer,
                       dst->offset + dst_off + at, chunk, e);
        at += chunk;
    }
    return slots_drain(g, s, st, e);
}

int gpu_download(struct gpu *g, const struct gpu_buf *src, uint64_t src_off, void *dst, uint64_t n,
                 struct err *e)
{
    struct xfer_slot s[2];
    xfer_slots(g, s);
    int st = check_range(src, src_off, n, "gpu_download", e);
    /* chunk k+1 is copied by the GPU while the host drains chunk k */
    uint64_t sent = 0, done = 0, k_sent = 0, k_done = 0;
    while (st == ST_OK && done < n) {
        while (st == ST_OK && sent < n && k_sent - k_done < 2) {
            struct xfer_slot *sl = &s[k_sent & 1];
            uint64_t chunk = MIN(n - sent, sl->half.size);
            st = slot_copy(g, sl, src->buffer, src->offset + src_off + sent, sl->half.buffer,
                           sl->half.offset, chunk, e);
            sent += chunk;
            k_sent++;
        }
        struct xfer_slot *sl = &s[k_done & 1];
        if (st == ST_OK) st = slot_wait(g, sl, e);
        if (st) break;
        memcpy((char *)dst + done, sl->half.host, sl->n);
        done += sl->n;
        k_done++;
    }
    return slots_drain(g, s, st, e);
}

int gpu_fill(struct gpu *g, const struct gpu_buf *dst, uint32_t word, struct err *e)
{
    if (dst->offset % 4 || dst->size % 4)
        return err_set(e, ST_RUNTIME,
                       "gpu_fill: offset %" PRIu64 " and size %" PRIu64 " must be multiples of 4",
                       dst->offset, dst->size);
    if (dst->size == 0) return ST_OK;
    struct xfer_slot s[2];
    xfer_slots(g, s);
    int st = slot_begin(&s[0], e);
    if (st) return st;
    vkCmdFillBuffer(s[0].cb, dst->buffer, dst->offset, dst->size, word);
    st = slot_submit(g, &s[0], e);
    return slots_drain(g, s, st, e);
}

/* ---------------------------------------------------------------------------------------------
 * Pipelines */

static uint32_t push_range(const struct gpu *g)
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
        .size = push_range(g),
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

/* ---------------------------------------------------------------------------------------------
 * Recording a step */

int gpu_cmd_begin(struct gpu *g, struct err *e)
{
    if (g->recording)
        return err_set(e, ST_RUNTIME, "gpu_cmd_begin: a step is already being recorded");
    VK_TRY(vkResetCommandBuffer(g->cmd, 0));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VK_TRY(vkBeginCommandBuffer(g->cmd, &bi));
    g->recording = true;
    g->queries_recorded = false;
    return ST_OK;
}

void gpu_cmd_dispatch(struct gpu *g, const struct gpu_pipeline *p, const void *push,
                      uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz)
{
    CHECK(g->recording);
    uint32_t range = push_range(g);
    CHECK(push_size <= range);
    /* The whole range is pushed (zero-padded) so every byte a shader declares is defined. */
    uint8_t data[GPU_PUSH_MAX] = {0};
    if (push_size) memcpy(data, push, push_size);
    vkCmdBindPipeline(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    vkCmdPushConstants(g->cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, range, data);
    vkCmdDispatch(g->cmd, gx, gy, gz);
}

/* One global memory barrier: `src` writes in `stages` before, visible to `dst` accesses after. */
static void cmd_barrier(struct gpu *g, VkPipelineStageFlags stages, VkAccessFlags src, VkAccessFlags dst)
{
    CHECK(g->recording);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src, .dstAccessMask = dst};
    vkCmdPipelineBarrier(g->cmd, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

void gpu_cmd_barrier(struct gpu *g)
{
    cmd_barrier(g, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT);
}

void gpu_cmd_barrier_compute(struct gpu *g)
{
    cmd_barrier(g, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

void gpu_cmd_copy(struct gpu *g, const struct gpu_buf *src, uint64_t src_off,
                  const struct gpu_buf *dst, uint64_t dst_off, uint64_t n)
{
    CHECK(g->recording);
    CHECK(src_off <= src->size && n <= src->size - src_off);
    CHECK(dst_off <= dst->size && n <= dst->size - dst_off);
    if (n == 0) return;
    VkBufferCopy region = {
        .srcOffset = src->offset + src_off,
        .dstOffset = dst->offset + dst_off,
        .size = n,
    };
    vkCmdCopyBuffer(g->cmd, src->buffer, dst->buffer, 1, &region);
}

void gpu_cmd_fill(struct gpu *g, const struct gpu_buf *dst, uint64_t dst_off, uint64_t n, uint32_t word)
{
    CHECK(g->recording);
    CHECK(dst_off <= dst->size && n <= dst->size - dst_off && n % 4 == 0 && dst_off % 4 == 0);
    if (n) vkCmdFillBuffer(g->cmd, dst->buffer, dst->offset + dst_off, n, word);
}

/* Makes the query pool hold at least `need` timestamps (only while the step being recorded does
 * not use it yet: the old pool is destroyed). */
static int queries_reserve(struct gpu *g, uint32_t need, struct err *e)
{
    if (need <= g->n_queries) return ST_OK;
    if (g->queries_recorded)
        return err_set(e, ST_RUNTIME,
                       "gpu_cmd_reset_timestamps: %u queries needed but the pool holds %u and this "
                       "step already uses it; reset the whole range first",
                       need, g->n_queries);
    uint32_t n = MAX(need, MAX(64u, g->n_queries * 2));
    if (g->queries) vkDestroyQueryPool(g->device, g->queries, NULL);
    g->queries = VK_NULL_HANDLE;
    g->n_queries = 0;
    VkQueryPoolCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = n,
    };
    VK_TRY(vkCreateQueryPool(g->device, &qci, NULL, &g->queries));
    g->n_queries = n;
    return ST_OK;
}

int gpu_cmd_reset_timestamps(struct gpu *g, uint32_t first, uint32_t count, struct err *e)
{
    if (g->timestamp_valid_bits == 0)
        return err_set(e, ST_RUNTIME, "device %s has no timestamps on its compute queue",
                       g->props.deviceName);
    if (!g->recording)
        return err_set(e, ST_RUNTIME, "gpu_cmd_reset_timestamps: no step is being recorded");
    if (count > UINT32_MAX - first)
        return err_set(e, ST_RUNTIME, "gpu_cmd_reset_timestamps: %u + %u queries overflow", first,
                       count);
    int st = queries_reserve(g, first + count, e);
    if (st) return st;
    if (count) vkCmdResetQueryPool(g->cmd, g->queries, first, count);
    g->queries_recorded = true;
    return ST_OK;
}

void gpu_cmd_timestamp(struct gpu *g, uint32_t query)
{
    CHECK(g->recording && g->queries && query < g->n_queries);
    vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g->queries, query);
}

int gpu_submit_wait(struct gpu *g, double *wall_us, struct err *e)
{
    if (!g->recording) return err_set(e, ST_RUNTIME, "gpu_submit_wait: no step is being recorded");
    g->recording = false;
    VK_TRY(vkEndCommandBuffer(g->cmd));
    double t0 = now_us();
    int st = submit(g, g->cmd, g->fence, e);
    if (st == ST_OK) st = fence_wait(g, g->fence, "GPU step", e);
    if (wall_us) *wall_us = now_us() - t0;
    return st;
}

int gpu_read_timestamps(struct gpu *g, uint32_t first, uint32_t count, uint64_t *ticks,
                        struct err *e)
{
    if (!g->queries || first > g->n_queries || count > g->n_queries - first)
        return err_set(e, ST_RUNTIME, "gpu_read_timestamps: queries %u..%u past the %u made", first,
                       first + count, g->n_queries);
    if (count == 0) return ST_OK;
    VK_TRY(vkGetQueryPoolResults(g->device, g->queries, first, count, sizeof(uint64_t) * count,
                                 ticks, sizeof(uint64_t),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    uint64_t mask =
        g->timestamp_valid_bits >= 64 ? UINT64_MAX : (1ull << g->timestamp_valid_bits) - 1;
    for (uint32_t i = 0; i < count; i++)
        ticks[i] &= mask;
    return ST_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Copy bandwidth: the roofline every weight-reading kernel is compared with. */

/* The copy size each way: up to 1 GiB and 1/8 of device-local memory; 32 MiB on a CPU device
 * (lavapipe) so tests stay fast. */
static uint64_t bandwidth_size(const struct gpu *g)
{
    uint64_t size = MIN(1ull << 30, g->device_local_bytes / 8);
    if (g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) size = 32ull << 20;
    size = MIN(size, MIN(g->max_alloc, g->max_buffer));
    return size & ~((1ull << 20) - 1);
}

/* Seconds of one copy of n 16-byte words from a to b: timestamps when there are, else wall. */
static int time_copy(struct gpu *g, const struct gpu_pipeline *p, const struct gpu_block *a,
                     const struct gpu_block *b, uint64_t words, double *seconds, struct err *e)
{
    struct {
        uint64_t src, dst;
        uint32_t n;
    } push = {a->addr, b->addr, (uint32_t)words};
    uint32_t groups =
        (uint32_t)MIN((words + 255) / 256, g->props.limits.maxComputeWorkGroupCount[0]);
    bool ts = g->timestamp_valid_bits > 0;
    int st = gpu_cmd_begin(g, e);
    if (st) return st;
    if (ts) st = gpu_cmd_reset_timestamps(g, 0, 2, e);
    if (ts && st == ST_OK) gpu_cmd_timestamp(g, 0);
    if (st == ST_OK) gpu_cmd_dispatch(g, p, &push, sizeof push, groups, 1, 1);
    if (ts && st == ST_OK) gpu_cmd_timestamp(g, 1);
    double wall = 0;
    if (st) {
        vkEndCommandBuffer(g->cmd);
        g->recording = false;
        return st;
    }
    st = gpu_submit_wait(g, &wall, e);
    if (st) return st;
    *seconds = wall * 1e-6;
    if (ts) {
        uint64_t t[2];
        st = gpu_read_timestamps(g, 0, 2, t, e);
        if (st) return st;
        *seconds = (double)(t[1] - t[0]) * g->timestamp_period * 1e-9;
    }
    return ST_OK;
}

int gpu_copy_bandwidth(struct gpu *g, int reps, double *bytes_per_s, struct err *e)
{
    *bytes_per_s = 0;
    if (g->recording) return err_set(e, ST_RUNTIME, "gpu_copy_bandwidth: a step is being recorded");
    const struct gpu_pipeline *p;
    int st = gpu_pipeline(g, "copy", NULL, 0, &p, e);
    if (st) return st;
    /* Two blocks of their own, freed at the end: a 1 GiB pair must not stay allocated. */
    struct gpu_block a, b;
    uint64_t size = bandwidth_size(g);
    for (;;) {
        st = block_create(g, size, GPU_MEM_DEVICE, &a, e);
        if (st == ST_OK) {
            st = block_create(g, size, GPU_MEM_DEVICE, &b, e);
            if (st) block_destroy(g, &a);
        }
        if (st == ST_OK) break;
        if (size <= (1ull << 20)) return err_wrap(e, st, "copy bandwidth");
        size /= 2;
    }
    struct gpu_buf src = block_range(&a, 0, size), dst = block_range(&b, 0, size);
    st = gpu_fill(g, &src, 0x3f800000u, e);
    if (st == ST_OK) st = gpu_fill(g, &dst, 0, e);
    double best = 0;
    for (int i = 0; st == ST_OK && i < MAX(reps, 1); i++) {
        double s = 0;
        st = time_copy(g, p, &a, &b, size / 16, &s, e);
        if (st == ST_OK && s > 0 && (best == 0 || s < best)) best = s;
    }
    block_destroy(g, &a);
    block_destroy(g, &b);
    if (st) return err_wrap(e, st, "copy bandwidth");
    if (best <= 0)
        return err_set(e, ST_RUNTIME, "copy bandwidth: the copy took no measurable time");
    *bytes_per_s = 2.0 * (double)size / best;
    return ST_OK;
}
