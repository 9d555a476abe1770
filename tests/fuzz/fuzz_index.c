/* fuzz_index.c - model.safetensors.index.json text in a folder with config.json and two shards of
 * the small LFM2 -> source_open (shard list, shard files, both-way checks) -> describe -> bind. */
#include "fuzz_common.h"

#include <sys/stat.h>

static char dir[256];

static void link_into(const char *file)
{
    char from[512], to[512];
    snprintf(from, sizeof from, FUZZ_DIR "/data/sharded/%s", file);
    snprintf(to, sizeof to, "%s/%s", dir, file);
    if (symlink(from, to) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/lfm2fuzz.%d.index", access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm",
                 (int)getpid());
        mkdir(dir, 0755);
        link_into("config.json");
        link_into("model-00001-of-00002.safetensors");
        link_into("model-00002-of-00002.safetensors");
    }
    char idx[512];
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(idx, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size)) abort();
    fclose(f);
    struct model_source s;
    struct err e = {{0}};
    int st = source_open(&s, dir, &e);
    fuzz_check(st, &e);
    if (!st) {
        st = fuzz_describe_bind(&s, &e);
        fuzz_check(st, &e);
        source_close(&s);
    }
    return 0;
}
