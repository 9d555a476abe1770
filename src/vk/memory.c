/* memory.c - device and host memory in blocks, sub-allocated (gpu_alloc, gpu_sub). */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

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
                   MIB(asked), vk_mem_kind_name(kind), MIB(heap_free(g, heap)), heap,
                   MIB(m.memoryHeaps[heap].size), g->has_memory_budget ? ", memory budget" : "");
}

/* Makes one block: a VkBuffer of `size` bytes on its own memory, with its device address and,
 * for host memory, its persistent mapping. On failure nothing stays allocated. */
int vk_block_create(struct gpu *g, uint64_t size, enum gpu_mem kind, struct gpu_block *b,
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
        vk_block_destroy(g, b);
        return err_set(e, ST_RUNTIME, "device has no %s memory type for storage buffers",
                       vk_mem_kind_name(kind));
    }
    b->memory_type = (uint32_t)type;
    uint32_t heap = m.memoryTypes[type].heapIndex;
    /* A CPU device's heap size is a nominal figure (lavapipe of Mesa 22 reports 2 GiB and allocates
     * from host memory): there the driver's vkAllocateMemory alone says what fits. */
    bool cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (!cpu && req.size > heap_free(g, heap)) {
        vk_block_destroy(g, b);
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
        vk_block_destroy(g, b);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            return out_of_memory(g, e, req.size, kind, heap);
        return vk_fail(e, "vkAllocateMemory", r);
    }
    r = vkBindBufferMemory(g->device, b->buffer, b->memory, 0);
    if (r != VK_SUCCESS) {
        vk_block_destroy(g, b);
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
            vk_block_destroy(g, b);
            return vk_fail(e, "vkMapMemory", r);
        }
    }
    return ST_OK;
}

/* The range [off, off + size) of block b as a gpu_buf. */
struct gpu_buf vk_block_range(const struct gpu_block *b, uint64_t off, uint64_t size)
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
    uint64_t need = vk_align_up(MAX(size, 1), GPU_ALIGN);
    uint64_t limit = MIN(g->max_alloc, g->max_buffer);
    if (size > limit)
        return err_set(e, ST_RUNTIME,
                       "out of device memory: asked %.1f MiB for one %s buffer, more than the "
                       "device's largest allocation of %.1f MiB (maxMemoryAllocationSize)",
                       MIB(size), vk_mem_kind_name(kind), MIB(limit));
    need = MIN(need, limit);
    struct gpu_block *b = NULL;
    for (int i = 0; i < g->n_blocks && !b; i++) {
        struct gpu_block *c = &g->blocks[i];
        if (c->kind == kind && vk_align_up(c->used, GPU_ALIGN) + need <= c->size) b = c;
    }
    if (!b) {
        if (g->n_blocks == GPU_MAX_BLOCKS)
            return err_set(e, ST_RUNTIME, "more than %d memory blocks (GPU_MAX_BLOCKS)",
                           GPU_MAX_BLOCKS);
        uint64_t usual = MIN(limit, kind == GPU_MEM_DEVICE ? GPU_DEVICE_BLOCK : GPU_HOST_BLOCK);
        b = &g->blocks[g->n_blocks];
        /* A block of the usual size when it fits, else one just as big as the request. */
        int st = need < usual ? vk_block_create(g, usual, kind, b, NULL) : ST_RUNTIME;
        if (st) st = vk_block_create(g, need, kind, b, e);
        if (st) return st;
        g->n_blocks++;
    }
    uint64_t off = vk_align_up(b->used, GPU_ALIGN);
    b->used = off + need;
    g->allocated[kind] += need;
    *out = vk_block_range(b, off, size);
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
 * Mark and release (gpu.h): shard after shard in one process. */

void gpu_mark(const struct gpu *g, struct gpu_mark *m)
{
    m->n_blocks = g->n_blocks;
    for (int i = 0; i < g->n_blocks; i++) m->used[i] = g->blocks[i].used;
    m->allocated[0] = g->allocated[0];
    m->allocated[1] = g->allocated[1];
}

void gpu_release(struct gpu *g, const struct gpu_mark *m)
{
    CHECK(!g->recording && m->n_blocks <= g->n_blocks);
    /* Blocks made since the mark are kept, emptied, for the next allocations: freeing and
     * allocating device memory again for every stage of a --stages run measured kernels slower
     * stage after stage on an H100 (bench/38), as the driver's physical placement fragments. */
    for (int i = 0; i < g->n_blocks; i++) g->blocks[i].used = i < m->n_blocks ? m->used[i] : 0;
    g->allocated[0] = m->allocated[0];
    g->allocated[1] = m->allocated[1];
}
