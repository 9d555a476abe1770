/* instance.c - the Vulkan instance, the validation layer and its messenger, device enumeration. */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

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

/* The spec version (VK_MAKE_API_VERSION) of instance layer `name`, 0 when it is not installed. */
static uint32_t instance_layer_version(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *layers = calloc(n, sizeof *layers);
    uint32_t version = 0;
    if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !version; i++)
            if (strcmp(layers[i].layerName, name) == 0) version = MAX(layers[i].specVersion, 1u);
    free(layers);
    return version;
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
int vk_instance_create(VkInstance *instance, VkDebugUtilsMessengerEXT *messenger,
                           uint32_t *count, uint32_t *layer_version, struct err *e)
{
    *layer_version = 0;
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
        if (!instance_layer_version(validation_layer) && tuning()->validation_required) {
            return err_set(e, ST_RUNTIME,
                           "LFM2_VALIDATION=require: the Vulkan validation layer %s is not installed "
                           "(vulkan-validationlayers; VK_LAYER_PATH, if set, must name its folder)",
                           validation_layer);
        } else if (!instance_layer_version(validation_layer)) {
            if (!warned)
                fprintf(stderr,
                        "warning: LFM2_VALIDATION is set but %s is not installed "
                        "(vulkan-validationlayers); running without it\n",
                        validation_layer);
            warned = true;
        } else if (!has_instance_extension(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) &&
                   !has_instance_extension(validation_layer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
            if (tuning()->validation_required)
                return err_set(e, ST_RUNTIME, "LFM2_VALIDATION=require: %s is missing, so no validation messages",
                               VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
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
    if (validate) *layer_version = instance_layer_version(validation_layer);
    return ST_OK;
}

void vk_instance_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger)
{
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, NULL);
    if (instance) vkDestroyInstance(instance, NULL);
}

/* Lists the physical devices into a calloc'ed array (*out, *n). */
int vk_devices_enumerate(VkInstance instance, VkPhysicalDevice **out, uint32_t *n,
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
