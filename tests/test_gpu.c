/* test_gpu.c - the Vulkan core on whatever device is there (lavapipe in CI, validation on):
 * device choice, block allocation past 128 MiB, chunked staging transfers, the copy kernel over a
 * buffer larger than one storage binding, timestamps, barriers, error paths, copy bandwidth. */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "testutil.h"

#define MiB (1ull << 20)

/* Byte i of the upload_fn pattern (depends on the absolute position, so a wrong `at` shows). */
static uint8_t pattern_byte(uint64_t i)
{
    return (uint8_t)((i * 2654435761ull) >> 13 ^ i >> 7);
}

static void fill_pattern(void *ctx, uint64_t at, uint64_t n, void *out)
{
    uint64_t *calls = ctx;
    (*calls)++;
    uint8_t *o = out;
    for (uint64_t i = 0; i < n; i++)
        o[i] = pattern_byte(at + i);
}

/* Word i of the copy kernel's source. */
static uint32_t word_of(uint64_t i, uint32_t seed)
{
    return (uint32_t)(i * 0x9E3779B1u) ^ seed;
}

static void fill_words(void *ctx, uint64_t at, uint64_t n, void *out)
{
    uint32_t seed = *(uint32_t *)ctx;
    for (uint64_t i = 0; i < n / 4; i++)
        ((uint32_t *)out)[i] = word_of(at / 4 + i, seed);
}

static void test_device_out_of_range(void)
{
    static struct gpu g;
    struct err e = {{0}};
    int st = gpu_open(&g, 99, &e);
    T_CHECK(st == ST_USAGE, "gpu_open(99) returned %d: %s", st, e.msg);
    T_CHECK(strstr(e.msg, "--device 99") != NULL, "message: %s", e.msg);
    T_CHECK(g.device == VK_NULL_HANDLE && g.instance == VK_NULL_HANDLE, "not cleaned up");
    T_CHECK(gpu_close(&g, &e) == ST_OK, "close after failed open: %s", e.msg);
}

/* The messenger counts what the layer reports and gpu_close fails on it: a message submitted
 * through VK_EXT_debug_utils stands in for a real validation error (no undefined behaviour). */
static void test_validation_counting(void)
{
    static struct gpu g;
    struct err e = {{0}};
    T_CHECK(gpu_open(&g, -1, &e) == ST_OK, "%s", e.msg);
    if (!g.messenger) {
        printf("validation layer off: skipped the message-counting check\n");
        gpu_close(&g, &e);
        return;
    }
    VkDebugUtilsMessengerCallbackDataEXT data = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT,
        .pMessage = "test_gpu: this one warning is expected",
    };
    vkSubmitDebugUtilsMessageEXT(g.instance, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
    T_CHECK(g.validation_messages == 1, "%u messages counted", g.validation_messages);
    int st = gpu_close(&g, &e);
    T_CHECK(st == ST_RUNTIME && strstr(e.msg, "validation layer reported 1 messages"), "%d %s", st,
            e.msg);
}

static void test_info(struct gpu *g)
{
    printf("device %d: %s (%s), api %u.%u, subgroup %u (%u..%u), shared %u B, push %u B, "
           "max alloc %.0f MiB, device-local %.0f MiB, timestamps %.3f ns x %u bits, coopmat %d, "
           "budget %d\n",
           g->index, g->props.deviceName, g->driver_name, VK_API_VERSION_MAJOR(g->props.apiVersion),
           VK_API_VERSION_MINOR(g->props.apiVersion), g->subgroup_size, g->min_subgroup_size,
           g->max_subgroup_size, g->shared_mem, g->max_push, (double)g->max_alloc / MiB,
           (double)g->device_local_bytes / MiB, g->timestamp_period, g->timestamp_valid_bits,
           g->has_coopmat_nv, g->has_memory_budget);
    T_CHECK(g->subgroup_size >= 1 && g->subgroup_size <= 128, "subgroup %u", g->subgroup_size);
    T_CHECK(g->shared_mem >= 16384, "shared memory %u", g->shared_mem);
    T_CHECK(g->max_push >= 128, "push %u", g->max_push);
    T_CHECK(g->max_alloc >= 256 * MiB, "max alloc %llu", (unsigned long long)g->max_alloc);
    T_CHECK(g->device_local_bytes > 0, "no device-local heap");
    T_CHECK(g->driver_name[0] != 0, "no driver name");
    T_CHECK(g->staging.host != NULL && g->staging.size >= MiB, "staging %p %llu", g->staging.host,
            (unsigned long long)g->staging.size);
}

static void test_alloc(struct gpu *g)
{
    struct err e = {{0}};
    struct gpu_buf a, b, h;
    T_CHECK(gpu_alloc(g, 1000, GPU_MEM_DEVICE, &a, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_alloc(g, 3, GPU_MEM_DEVICE, &b, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_alloc(g, 4096, GPU_MEM_HOST, &h, &e) == ST_OK, "%s", e.msg);
    T_CHECK(a.size == 1000 && b.size == 3, "sizes %llu %llu", (unsigned long long)a.size,
            (unsigned long long)b.size);
    T_CHECK(a.addr % 256 == 0 && b.addr % 256 == 0 && a.offset % 256 == 0 && b.offset % 256 == 0,
            "alignment");
    T_CHECK(a.addr && b.addr && (b.addr >= a.addr + a.size || a.addr >= b.addr + b.size),
            "ranges overlap");
    T_CHECK(a.host == NULL && h.host != NULL, "host pointers %p %p", a.host, h.host);
    /* host memory is mapped and coherent: write through the pointer, read back via the GPU */
    uint32_t *hw = h.host, back[1024];
    for (int i = 0; i < 1024; i++)
        hw[i] = 0x5a5a0000u + (uint32_t)i * 7;
    memset(back, 0xcd, sizeof back);
    T_CHECK(gpu_download(g, &h, 0, back, sizeof back, &e) == ST_OK, "%s", e.msg);
    T_CHECK(memcmp(back, hw, sizeof back) == 0, "host buffer readback differs");

    struct gpu_buf s = gpu_sub(&a, 512, 256);
    T_CHECK(s.addr == a.addr + 512 && s.offset == a.offset + 512 && s.size == 256, "gpu_sub");
    /* gpu_fill of a sub-range */
    uint32_t words[250];
    T_CHECK(gpu_fill(g, &a, 0x11111111u, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_fill(g, &s, 0xabcdef01u, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_download(g, &a, 0, words, sizeof words, &e) == ST_OK, "%s", e.msg);
    T_CHECK(words[127] == 0x11111111u && words[128] == 0xabcdef01u && words[191] == 0xabcdef01u &&
                words[192] == 0x11111111u,
            "fill: %08x %08x %08x %08x", words[127], words[128], words[191], words[192]);
    T_CHECK(gpu_upload(g, &a, 999, words, 2, &e) == ST_RUNTIME, "upload past the end accepted");
}

/* Random bytes to the end of a 300 MiB buffer (past lavapipe's 128 MiB binding limit), more than
 * the staging buffer holds and at an odd offset, then back. */
static void test_big_roundtrip(struct gpu *g, struct t_rng *rng)
{
    struct err e = {{0}};
    struct gpu_buf big;
    uint64_t size = 300 * MiB;
    T_CHECK(gpu_alloc(g, size, GPU_MEM_DEVICE, &big, &e) == ST_OK, "%s", e.msg);
    if (!big.size) return;
    uint64_t n = g->staging.size + 12345, off = size - n;
    uint8_t *src = malloc(n), *dst = malloc(n);
    for (uint64_t i = 0; i < n; i += 4) {
        uint32_t r = t_rng_u32(rng);
        memcpy(src + i, &r, MIN(4, n - i));
    }
    memset(dst, 0xee, n);
    double t0 = now_us();
    T_CHECK(gpu_upload(g, &big, off, src, n, &e) == ST_OK, "%s", e.msg);
    double t1 = now_us();
    T_CHECK(gpu_download(g, &big, off, dst, n, &e) == ST_OK, "%s", e.msg);
    double t2 = now_us();
    printf("%.1f MiB: upload %.2f GB/s, download %.2f GB/s\n", (double)n / MiB,
           (double)n / (t1 - t0) * 1e-3, (double)n / (t2 - t1) * 1e-3);
    T_CHECK(memcmp(src, dst, n) == 0, "300 MiB buffer end region differs after round trip");
    /* the last byte alone */
    uint8_t last = 0;
    T_CHECK(gpu_download(g, &big, size - 1, &last, 1, &e) == ST_OK, "%s", e.msg);
    T_CHECK(last == src[n - 1], "last byte %u vs %u", last, src[n - 1]);
    free(src);
    free(dst);
}

static void test_upload_fn(struct gpu *g)
{
    struct err e = {{0}};
    struct gpu_buf buf;
    uint64_t n = g->staging.size + 3 * MiB + 7, off = 100;
    T_CHECK(gpu_alloc(g, n + off, GPU_MEM_DEVICE, &buf, &e) == ST_OK, "%s", e.msg);
    if (!buf.size) return;
    uint64_t calls = 0;
    T_CHECK(gpu_upload_fn(g, &buf, off, n, fill_pattern, &calls, &e) == ST_OK, "%s", e.msg);
    T_CHECK(calls >= 2, "%llu producer calls for %llu bytes", (unsigned long long)calls,
            (unsigned long long)n);
    uint8_t *back = malloc(n);
    memset(back, 0x77, n);
    T_CHECK(gpu_download(g, &buf, off, back, n, &e) == ST_OK, "%s", e.msg);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++)
        bad += back[i] != pattern_byte(i);
    T_CHECK(bad == 0, "%llu of %llu pattern bytes wrong", (unsigned long long)bad,
            (unsigned long long)n);
    free(back);
}

/* copy.comp from a 160 MiB buffer into another (poisoned) one through device addresses with a
 * grid smaller than the data (grid-stride), timestamps around it, then a barrier and a transfer
 * copy of the far end that must see the kernel's writes. */
static void test_copy_kernel(struct gpu *g, struct t_rng *rng)
{
    struct err e = {{0}};
    uint64_t size = 160 * MiB, tail = MiB;
    struct gpu_buf a, b, c;
    T_CHECK(gpu_alloc(g, size, GPU_MEM_DEVICE, &a, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_alloc(g, size, GPU_MEM_DEVICE, &b, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_alloc(g, tail, GPU_MEM_DEVICE, &c, &e) == ST_OK, "%s", e.msg);
    if (!a.size || !b.size || !c.size) return;
    uint32_t seed = t_rng_u32(rng) | 1;
    T_CHECK(gpu_upload_fn(g, &a, 0, size, fill_words, &seed, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_fill(g, &b, 0xdeadbeefu, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_fill(g, &c, 0xdeadbeefu, &e) == ST_OK, "%s", e.msg);

    const struct gpu_pipeline *p = NULL, *p2 = NULL;
    T_CHECK(gpu_pipeline(g, "copy", NULL, 0, &p, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_pipeline(g, "copy", NULL, 0, &p2, &e) == ST_OK && p2 == p, "pipeline not cached");
    if (!p) return;
    struct {
        uint64_t src, dst;
        uint32_t n, pad;
    } push = {a.addr, b.addr, (uint32_t)(size / 16), 0};
    bool ts = g->timestamp_valid_bits > 0;
    T_CHECK(gpu_cmd_begin(g, &e) == ST_OK, "%s", e.msg);
    if (ts) T_CHECK(gpu_cmd_reset_timestamps(g, 0, 3, &e) == ST_OK, "%s", e.msg);
    if (ts) gpu_cmd_timestamp(g, 0);
    gpu_cmd_dispatch(g, p, &push, sizeof push, 1000, 1, 1);
    if (ts) gpu_cmd_timestamp(g, 1);
    gpu_cmd_barrier(g);
    gpu_cmd_copy(g, &b, size - tail, &c, 0, tail);
    if (ts) gpu_cmd_timestamp(g, 2);
    double wall = -1;
    T_CHECK(gpu_submit_wait(g, &wall, &e) == ST_OK, "%s", e.msg);
    T_CHECK(wall > 0, "wall %f", wall);
    if (ts) {
        uint64_t t[3] = {0, 0, 0};
        T_CHECK(gpu_read_timestamps(g, 0, 3, t, &e) == ST_OK, "%s", e.msg);
        T_CHECK(t[1] > t[0] && t[2] >= t[1], "timestamps %llu %llu %llu", (unsigned long long)t[0],
                (unsigned long long)t[1], (unsigned long long)t[2]);
        printf("copy of %llu MiB: %.1f us by timestamps, %.1f us wall\n",
               (unsigned long long)(size / MiB), (double)(t[1] - t[0]) * g->timestamp_period * 1e-3,
               wall);
    } else {
        printf("device has no timestamps: skipped their checks\n");
    }

    uint32_t *back = malloc(tail);
    uint64_t bad = 0;
    /* the far end, through the transfer copy that followed the barrier */
    memset(back, 0x55, tail);
    T_CHECK(gpu_download(g, &c, 0, back, tail, &e) == ST_OK, "%s", e.msg);
    for (uint64_t i = 0; i < tail / 4; i++)
        bad += back[i] != word_of((size - tail) / 4 + i, seed);
    T_CHECK(bad == 0, "%llu wrong words at the far end (barrier + copy)", (unsigned long long)bad);
    /* samples of b across the whole range */
    bad = 0;
    for (int k = 0; k < 64; k++) {
        uint64_t w = (uint64_t)t_rng_u32(rng) % (size / 4 - 16);
        if (k == 0) w = size / 4 - 16;
        uint32_t got[16];
        memset(got, 0x55, sizeof got);
        T_CHECK(gpu_download(g, &b, w * 4, got, sizeof got, &e) == ST_OK, "%s", e.msg);
        for (int i = 0; i < 16; i++)
            bad += got[i] != word_of(w + (uint64_t)i, seed);
    }
    T_CHECK(bad == 0, "%llu wrong sampled words", (unsigned long long)bad);
    free(back);
}

/* Timestamps: the pool grows on demand; a reset range past it still works in a new step. */
static void test_timestamps(struct gpu *g)
{
    struct err e = {{0}};
    if (!g->timestamp_valid_bits) {
        T_CHECK(gpu_cmd_begin(g, &e) == ST_OK, "%s", e.msg);
        T_CHECK(gpu_cmd_reset_timestamps(g, 0, 2, &e) == ST_RUNTIME,
                "no-timestamp device accepted");
        T_CHECK(gpu_submit_wait(g, NULL, &e) == ST_OK, "%s", e.msg);
        return;
    }
    uint32_t first = 150, count = 100;
    T_CHECK(gpu_cmd_begin(g, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gpu_cmd_begin(g, &e) == ST_RUNTIME, "double begin accepted");
    T_CHECK(gpu_cmd_reset_timestamps(g, first, count, &e) == ST_OK, "%s", e.msg);
    T_CHECK(g->n_queries >= first + count, "pool of %u", g->n_queries);
    for (uint32_t i = 0; i < count; i++)
        gpu_cmd_timestamp(g, first + i);
    T_CHECK(gpu_submit_wait(g, NULL, &e) == ST_OK, "%s", e.msg);
    uint64_t *t = calloc(count, sizeof *t);
    T_CHECK(gpu_read_timestamps(g, first, count, t, &e) == ST_OK, "%s", e.msg);
    bool ordered = true;
    for (uint32_t i = 1; i < count; i++)
        ordered = ordered && t[i] >= t[i - 1];
    T_CHECK(ordered && t[0] > 0, "timestamps out of order or zero");
    T_CHECK(gpu_read_timestamps(g, g->n_queries, 1, t, &e) == ST_RUNTIME, "read past pool");
    free(t);
    T_CHECK(gpu_submit_wait(g, NULL, &e) == ST_RUNTIME, "submit without begin accepted");
}

static void test_errors(struct gpu *g)
{
    struct err e = {{0}};
    struct gpu_buf x;
    int st = gpu_alloc(g, 1ull << 40, GPU_MEM_DEVICE, &x, &e);
    printf("1 TiB: %s\n", e.msg);
    T_CHECK(st == ST_RUNTIME && strstr(e.msg, "out of device memory"), "%d %s", st, e.msg);
    /* fits one allocation but not what is left of the heap (we hold a 1 GiB block already); not on
     * a CPU device, whose heap size is nominal (gpu.c: lavapipe allocates host memory past it) */
    uint64_t limit = MIN(g->max_alloc, g->max_buffer);
    if (g->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && limit + 512 * MiB >= g->device_local_bytes) {
        uint64_t most = MIN(g->device_local_bytes, limit) - 256;
        e.msg[0] = 0;
        st = gpu_alloc(g, most, GPU_MEM_DEVICE, &x, &e);
        printf("%.0f MiB: %s\n", (double)most / MiB, e.msg);
        T_CHECK(st == ST_RUNTIME && strstr(e.msg, "out of device memory") &&
                    strstr(e.msg, "free of heap"),
                "%d %s", st, e.msg);
    }
    T_CHECK(gpu_alloc(g, 4096, GPU_MEM_DEVICE, &x, &e) == ST_OK, "alloc after failure: %s", e.msg);

    const struct gpu_pipeline *p = (const void *)1;
    st = gpu_pipeline(g, "no_such_kernel", NULL, 0, &p, &e);
    T_CHECK(st == ST_RUNTIME && p == NULL && strstr(e.msg, "no_such_kernel"), "%d %s", st, e.msg);
    uint32_t spec[GPU_MAX_SPEC + 1] = {0};
    T_CHECK(gpu_pipeline(g, "copy", spec, GPU_MAX_SPEC + 1, &p, &e) == ST_RUNTIME, "too many spec");
}

static void test_bandwidth(struct gpu *g)
{
    struct err e = {{0}};
    double bw = 0;
    T_CHECK(gpu_copy_bandwidth(g, 3, &bw, &e) == ST_OK, "%s", e.msg);
    T_CHECK(bw > 0, "bandwidth %f", bw);
    printf("copy bandwidth: %.2f GB/s (read + write)\n", bw * 1e-9);
}

/* The arithmetic roof: the path the gemm runs on (lavapipe: the FMA twin's), measured once and
 * kept (the second call returns the very same figure, measuring nothing). */
static void test_tensor_roof(struct gpu *g)
{
    struct err e = {{0}};
    double a = 0, b = 0;
    const char *pa = NULL, *pb = NULL;
    T_CHECK(gpu_tensor_roof(g, &a, &pa, &e) == ST_OK, "%s", e.msg);
    T_CHECK(a > 0 && pa && !strcmp(pa, g->gemm_nv ? "NV coopmat f16" : g->gemm_khr ? "KHR coopmat f16" : "f32 FMA"), "roof %g FLOP/s on %s", a,
            pa ? pa : "(null)");
    T_CHECK(gpu_tensor_roof(g, &b, &pb, &e) == ST_OK && b == a && pb == pa && g->tensor_roof == a,
            "the second call keeps the first figure: %g vs %g", b, a);
    printf("arithmetic roof: %.3g GFLOP/s (%s)\n", a * 1e-9, pa);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    struct err e = {{0}};
    struct t_rng rng;
    t_rng_seed(&rng, (uint64_t)now_us());

    T_CASE("device_out_of_range", "", test_device_out_of_range());
    T_CASE("validation_counting", "", test_validation_counting());
    T_CASE("list_devices", "", T_CHECK(gpu_list_devices(stdout, NULL, &e) == ST_OK, "%s", e.msg));

    static struct gpu g;
    int st = gpu_open(&g, -1, &e);
    T_CHECK(st == ST_OK, "gpu_open: %s", e.msg);
    if (st) return t_finish();
    T_CASE("info", "", test_info(&g));
    T_CASE("alloc", "", test_alloc(&g));
    T_CASE("big_roundtrip", "", test_big_roundtrip(&g, &rng));
    T_CASE("upload_fn", "", test_upload_fn(&g));
    T_CASE("copy_kernel", "", test_copy_kernel(&g, &rng));
    T_CASE("timestamps", "", test_timestamps(&g));
    T_CASE("errors", "", test_errors(&g));
    T_CASE("bandwidth", "", test_bandwidth(&g));
    T_CASE("tensor_roof", "", test_tensor_roof(&g));
    st = gpu_close(&g, &e);
    T_CHECK(st == ST_OK, "gpu_close: %s", e.msg);
    return t_finish();
}
