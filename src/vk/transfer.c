/* transfer.c - uploads, downloads and fills through the staging buffer. */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

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
int vk_fence_wait(struct gpu *g, VkFence fence, const char *what, struct err *e)
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
int vk_submit(struct gpu *g, VkCommandBuffer cb, VkFence fence, struct err *e)
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
    int st = vk_submit(g, s->cb, s->fence, e);
    s->busy = st == ST_OK;
    return st;
}

static int slot_wait(struct gpu *g, struct xfer_slot *s, struct err *e)
{
    if (!s->busy) return ST_OK;
    s->busy = false;
    return vk_fence_wait(g, s->fence, "GPU transfer", e);
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
