/* fuzz_golden.c - a golden file -> golden_validate against the small LFM2 (whole model and the
 * shard 1:2): tensor shapes, token range, S/T bounds, finite non-zero references. */
#include "fuzz_common.h"

#include "golden.h"

static struct model_source src;
static struct model_desc d;
static struct shard whole, tail;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err e = {{0}};
    if (!src.path) {
        if (source_open(&src, FUZZ_DIR "/data/lfm2", &e) || model_describe(&src, &d, &e) ||
            shard_bind(&src, &d, 0, d.n_layers, &whole, &e) || shard_bind(&src, &d, 1, 2, &tail, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            abort();
        }
    }
    const char *path = fuzz_scratch("golden.safetensors", data, size);
    int st = golden_validate(path, &d, &whole, &e);
    fuzz_check(st, &e);
    st = golden_validate(path, &d, &tail, &e);
    fuzz_check(st, &e);
    return 0;
}
