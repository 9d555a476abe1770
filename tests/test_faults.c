/* test_faults.c - faults while the tool runs (issue 11): a model file that shrinks after it was
 * opened must give ST_RUNTIME with a message (weights are pread, never read through the mapping,
 * which would raise SIGBUS), and running out of device memory names what was allocated, how much
 * and how much the device has. Needs a Vulkan device (lavapipe in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "model.h"
#include "testutil.h"
#include "weights.h"

static int copy_file(const char *from, const char *to)
{
    char cmd[4200], out[256];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return t_run(cmd, out, sizeof out);
}

static void test_shrinking_model(const char *fixtures)
{
    const char *dir = t_tmpdir();
    char from[1024], to[1024];
    snprintf(from, sizeof from, "%s/lfm2-tiny/config.json", fixtures);
    snprintf(to, sizeof to, "%s/config.json", dir);
    T_CHECK(copy_file(from, to) == 0, "copy config");
    snprintf(from, sizeof from, "%s/lfm2-tiny/model.safetensors", fixtures);
    snprintf(to, sizeof to, "%s/model.safetensors", dir);
    T_CHECK(copy_file(from, to) == 0, "copy model");

    struct model_source src;
    struct model_desc d;
    struct shard s;
    struct err e = {{0}};
    if (source_open(&src, dir, &e) || model_describe(&src, &d, &e) ||
        shard_bind(&src, &d, 0, d.n_layers, &s, &e)) {
        T_CHECK(0, "load: %s", e.msg);
        return;
    }
    /* the file loses its second half while it is mapped */
    T_CHECK(truncate(to, (off_t)(src.maps[0].size / 2)) == 0, "truncate");
    struct gpu g;
    if (gpu_open(&g, -1, &e) == ST_OK) {
        struct dev_weights w;
        strcpy(e.msg, "(poison)");
        int st = weights_upload(&g, &s, 0, false, &w, &e);
        T_CHECK(st == ST_RUNTIME && strstr(e.msg, "model.safetensors") &&
                    strstr(e.msg, "changed while the tool ran"),
                "shrunk model: st %d \"%s\" (want ST_RUNTIME naming the file)", st, e.msg);
        weights_free(&w);
        T_CHECK(gpu_close(&g, &e) == ST_OK, "validation after a failed upload: %s", e.msg);
    } else {
        T_CHECK(0, "gpu_open: %s", e.msg);
    }
    shard_free(&s);
    source_close(&src);
    char cmd[1200], out[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    t_run(cmd, out, sizeof out);
}

static void test_out_of_memory(void)
{
    struct gpu g;
    struct err e = {{0}};
    if (gpu_open(&g, -1, &e) != ST_OK) {
        T_CHECK(0, "gpu_open: %s", e.msg);
        return;
    }
    struct gpu_buf b;
    int st = gpu_alloc(&g, g.max_alloc + 1, GPU_MEM_DEVICE, &b, &e);
    T_CHECK(st == ST_RUNTIME && strstr(e.msg, "out of device memory: asked") &&
                strstr(e.msg, "largest allocation of"),
            "oversized allocation: %d \"%s\"", st, e.msg);
    T_CHECK(gpu_close(&g, &e) == ST_OK, "validation: %s", e.msg);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    const char *fixtures = argc > 1 ? argv[1] : "tests/fixtures";
    T_CASE("shrinking_model", "", test_shrinking_model(fixtures));
    T_CASE("out_of_memory", "", test_out_of_memory());
    return t_finish();
}
