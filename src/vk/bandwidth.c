/* bandwidth.c - the copy bandwidth every weight-reading kernel is compared with (the roofline). */
#include "vk_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

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

int vk_time_dispatch(struct gpu *g, const struct gpu_pipeline *p, const void *push, uint32_t push_size,
                     uint32_t groups, double *seconds, struct err *e)
{
    bool ts = g->timestamp_valid_bits > 0;
    int st = gpu_cmd_begin(g, e);
    if (st) return st;
    if (ts) st = gpu_cmd_reset_timestamps(g, 0, 2, e);
    if (ts && st == ST_OK) gpu_cmd_timestamp(g, 0);
    if (st == ST_OK) gpu_cmd_dispatch(g, p, push, push_size, groups, 1, 1);
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

/* Seconds of one copy of n 16-byte words from a to b. */
static int time_copy(struct gpu *g, const struct gpu_pipeline *p, const struct gpu_block *a,
                     const struct gpu_block *b, uint64_t words, double *seconds, struct err *e)
{
    struct {
        uint64_t src, dst;
        uint32_t n;
    } push = {a->addr, b->addr, (uint32_t)words};
    uint32_t groups =
        (uint32_t)MIN((words + 255) / 256, g->props.limits.maxComputeWorkGroupCount[0]);
    return vk_time_dispatch(g, p, &push, sizeof push, groups, seconds, e);
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
        st = vk_block_create(g, size, GPU_MEM_DEVICE, &a, e);
        if (st == ST_OK) {
            st = vk_block_create(g, size, GPU_MEM_DEVICE, &b, e);
            if (st) vk_block_destroy(g, &a);
        }
        if (st == ST_OK) break;
        if (size <= (1ull << 20)) return err_wrap(e, st, "copy bandwidth");
        size /= 2;
    }
    struct gpu_buf src = vk_block_range(&a, 0, size), dst = vk_block_range(&b, 0, size);
    st = gpu_fill(g, &src, 0x3f800000u, e);
    if (st == ST_OK) st = gpu_fill(g, &dst, 0, e);
    double best = 0;
    for (int i = 0; st == ST_OK && i < MAX(reps, 1); i++) {
        double s = 0;
        st = time_copy(g, p, &a, &b, size / 16, &s, e);
        if (st == ST_OK && s > 0 && (best == 0 || s < best)) best = s;
    }
    vk_block_destroy(g, &a);
    vk_block_destroy(g, &b);
    if (st) return err_wrap(e, st, "copy bandwidth");
    if (best <= 0)
        return err_set(e, ST_RUNTIME, "copy bandwidth: the copy took no measurable time");
    *bytes_per_s = 2.0 * (double)size / best;
    return ST_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Device to host-visible transfer: what activations cross between two GPUs staged through the
 * host (one hop of two; a peer-to-peer link is faster). */

/* Seconds of one transfer of n bytes from a to b: timestamps when there are, else wall. */
static int time_transfer(struct gpu *g, const struct gpu_buf *a, const struct gpu_buf *b, uint64_t n,
                         double *seconds, struct err *e)
{
    bool ts = g->timestamp_valid_bits > 0;
    int st = gpu_cmd_begin(g, e);
    if (st) return st;
    if (ts) st = gpu_cmd_reset_timestamps(g, 0, 2, e);
    if (st) {
        vkEndCommandBuffer(g->cmd);
        g->recording = false;
        return st;
    }
    if (ts) gpu_cmd_timestamp(g, 0);
    gpu_cmd_copy(g, a, 0, b, 0, n);
    if (ts) gpu_cmd_timestamp(g, 1);
    double wall = 0;
    if ((st = gpu_submit_wait(g, &wall, e))) return st;
    *seconds = wall * 1e-6;
    if (ts) {
        uint64_t t[2];
        if ((st = gpu_read_timestamps(g, 0, 2, t, e))) return st;
        *seconds = (double)(t[1] - t[0]) * g->timestamp_period * 1e-9;
    }
    return ST_OK;
}

int gpu_copy_bandwidth_d2h(struct gpu *g, int reps, double *bytes_per_s, struct err *e)
{
    *bytes_per_s = 0;
    if (g->recording) return err_set(e, ST_RUNTIME, "gpu_copy_bandwidth_d2h: a step is being recorded");
    uint64_t size = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 32ull << 20 : 256ull << 20;
    size = MIN(size, MIN(g->max_alloc, g->max_buffer)) & ~((1ull << 20) - 1);
    struct gpu_block a, b;
    int st = vk_block_create(g, size, GPU_MEM_DEVICE, &a, e);
    if (st) return err_wrap(e, st, "device-to-host bandwidth");
    if ((st = vk_block_create(g, size, GPU_MEM_HOST, &b, e))) {
        vk_block_destroy(g, &a);
        return err_wrap(e, st, "device-to-host bandwidth");
    }
    struct gpu_buf src = vk_block_range(&a, 0, size), dst = vk_block_range(&b, 0, size);
    st = gpu_fill(g, &src, 0x3f800000u, e);
    double best = 0;
    for (int i = 0; st == ST_OK && i < MAX(reps, 1); i++) {
        double s = 0;
        st = time_transfer(g, &src, &dst, size, &s, e);
        if (st == ST_OK && s > 0 && (best == 0 || s < best)) best = s;
    }
    vk_block_destroy(g, &a);
    vk_block_destroy(g, &b);
    if (st) return err_wrap(e, st, "device-to-host bandwidth");
    if (best <= 0) return err_set(e, ST_RUNTIME, "device-to-host bandwidth: the copy took no measurable time");
    *bytes_per_s = (double)size / best;
    return ST_OK;
}
