/* fuzz_safetensors.c - a safetensors file (header and data) -> tensor views -> the small LFM2
 * config's description -> shard binding. */
#include "fuzz_common.h"

#include "input.h"

static cJSON *config; /* data/lfm2/config.json */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!config) {
        struct err e;
        if (input_json_object(FUZZ_DIR "/data/lfm2/config.json", "config.json", &config, &e)) abort();
    }
    struct model_source s;
    struct err e = {{0}};
    memset(&s, 0, sizeof s);
    /* an exact-size copy: ASan sees any read past the end */
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    int st = safetensors_parse("fuzz.safetensors", copy, size, &s, &e);
    fuzz_check(st, &e);
    if (!st) {
        char shape[128];
        for (int i = 0; i < s.n_tensors; i++) {
            const struct tensor_view *t = &s.tensors[i];
            if (t->data < copy || t->data + t->n_bytes > copy + size) abort();
            tensor_shape_str(t, shape, sizeof shape);
        }
        s.path = strdup("fuzz");
        s.config = config;
        st = fuzz_describe_bind(&s, &e);
        fuzz_check(st, &e);
        s.config = NULL;
    }
    source_close(&s);
    free(copy);
    return 0;
}
