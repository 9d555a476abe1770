/* test_gpu_mark.c - gpu_mark / gpu_release (what --stages frees between shards, the engine's
 * kernel scratch with the rest) and the device -> host-visible transfer probe, on whatever device
 * is there (validation on). */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "testutil.h"

#define MiB (1ull << 20)

int main(void)
{
    struct gpu g;
    struct err e;
    if (gpu_open(&g, -1, &e)) {
        fprintf(stderr, "no device: %s\n", e.msg);
        return 1;
    }
    struct gpu_buf small, big, big2, again;
    T_CHECK(!gpu_alloc(&g, 1 * MiB, GPU_MEM_DEVICE, &small, &e), "alloc: %s", e.msg);
    struct gpu_mark m;
    gpu_mark(&g, &m);
    int blocks = g.n_blocks;
    uint64_t dev = g.allocated[GPU_MEM_DEVICE];
    /* one range in a block that existed (its fill level grows), two blocks of their own */
    T_CHECK(!gpu_alloc(&g, 4 * MiB, GPU_MEM_DEVICE, &again, &e), "alloc: %s", e.msg);
    uint64_t first_addr = again.addr;
    uint64_t huge = MIN(g.max_alloc, g.max_buffer) / 2 + MiB; /* two of them cannot share a block */
    huge = MIN(huge, 600 * MiB);
    T_CHECK(!gpu_alloc(&g, huge, GPU_MEM_DEVICE, &big, &e), "alloc: %s", e.msg);
    T_CHECK(!gpu_alloc(&g, huge, GPU_MEM_DEVICE, &big2, &e), "alloc: %s", e.msg);
    T_CHECK(!gpu_alloc(&g, 1 * MiB, GPU_MEM_HOST, &big2, &e), "alloc: %s", e.msg);
    T_CHECK(g.n_blocks > blocks, "new blocks made: %d -> %d", blocks, g.n_blocks);
    int made = g.n_blocks;
    uint64_t big_addr = big.addr;
    gpu_release(&g, &m);
    /* the blocks made since the mark stay, empty, for the next allocations (not freed) */
    T_CHECK(g.n_blocks == made, "blocks kept: %d, want %d", g.n_blocks, made);
    for (int i = blocks; i < g.n_blocks; i++) T_CHECK(g.blocks[i].used == 0, "block %d emptied", i);
    T_CHECK(g.allocated[GPU_MEM_DEVICE] == dev, "allocated back to %llu: %llu", (unsigned long long)dev,
            (unsigned long long)g.allocated[GPU_MEM_DEVICE]);
    /* the released range is handed out again, and works */
    T_CHECK(!gpu_alloc(&g, 4 * MiB, GPU_MEM_DEVICE, &again, &e) && again.addr == first_addr,
            "the first range after the mark again");
    struct gpu_buf big3;
    T_CHECK(!gpu_alloc(&g, huge, GPU_MEM_DEVICE, &big3, &e) && big3.addr == big_addr && g.n_blocks == made,
            "a block kept from before the release serves the same request again, no new block");
    uint32_t *h = malloc(4 * MiB), *back = malloc(4 * MiB);
    for (uint32_t i = 0; i < MiB; i++) h[i] = i * 2654435761u;
    T_CHECK(!gpu_upload(&g, &again, 0, h, 4 * MiB, &e) && !gpu_download(&g, &again, 0, back, 4 * MiB, &e) &&
                !memcmp(h, back, 4 * MiB), "upload and download through the reused range");
    free(h);
    free(back);
    double bps = 0;
    T_CHECK(!gpu_copy_bandwidth_d2h(&g, 2, &bps, &e) && bps > 0, "device -> host bandwidth: %g (%s)", bps, e.msg);
    T_CHECK(g.n_blocks == made, "the probe leaves no block: %d", g.n_blocks);
    T_CHECK(!gpu_close(&g, &e), "close (validation): %s", e.msg);
    return t_finish();
}
