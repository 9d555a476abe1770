/* fuzz_config.c - config.json text -> strict JSON -> the description of the family it names,
 * against that family's small model tensors (data/<family>/model.safetensors) -> binding. */
#include "fuzz_common.h"

#include "input.h"

static struct model_source models[3]; /* lfm2, qwen35, glm */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[3] = {"lfm2", "qwen35", "glm"};
    struct err e = {{0}};
    if (!models[0].path)
        for (int i = 0; i < 3; i++) {
            char p[512];
            snprintf(p, sizeof p, FUZZ_DIR "/data/%s", names[i]);
            if (source_open(&models[i], p, &e)) abort();
            cJSON_Delete(models[i].config);
            models[i].config = NULL;
        }
    cJSON *root = NULL;
    int st = input_json_parse("config.json", "config.json", (const char *)data, size, &root, &e);
    fuzz_check(st, &e);
    if (st) return 0;
    /* the family's tensors: by model_type when it names one, else LFM2's */
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "model_type"));
    int m = type && !strncmp(type, "qwen", 4) ? 1 : type && !strncmp(type, "glm", 3) ? 2 : 0;
    models[m].config = root;
    st = fuzz_describe_bind(&models[m], &e);
    fuzz_check(st, &e);
    models[m].config = NULL;
    cJSON_Delete(root);
    return 0;
}
