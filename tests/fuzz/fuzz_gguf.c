/* fuzz_gguf.c - a GGUF file (metadata, tensor infos, data) -> key/values and tensor views ->
 * description from the metadata -> shard binding. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_source s;
    struct err e = {{0}};
    memset(&s, 0, sizeof s);
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    int st = gguf_parse("fuzz.gguf", copy, size, &s, &e);
    fuzz_check(st, &e);
    if (!st) {
        for (int i = 0; i < s.n_tensors; i++) {
            const struct tensor_view *t = &s.tensors[i];
            if (t->n_bytes && (t->data < copy || t->data + t->n_bytes > copy + size)) abort();
        }
        s.path = strdup("fuzz.gguf");
        st = fuzz_describe_bind(&s, &e);
        fuzz_check(st, &e);
    }
    source_close(&s);
    free(copy);
    return 0;
}
