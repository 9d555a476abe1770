/* record.c - command recording of a step: dispatches, barriers, copies, timestamps, submit. */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

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
    uint32_t range = vk_push_range(g);
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
    int st = vk_submit(g, g->cmd, g->fence, e);
    if (st == ST_OK) st = vk_fence_wait(g, g->fence, "GPU step", e);
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
