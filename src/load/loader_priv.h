/* loader_priv.h - what source.c, safetensors.c and gguf.c share and nobody else needs:
 * the storage a model_source owns besides its arrays (model_source.priv), and small helpers. */
#ifndef LFM2_LOADER_PRIV_H
#define LFM2_LOADER_PRIV_H

#include "loader.h"

/* model_source.priv: everything the views' strings live in. */
struct source_priv {
    cJSON **json; /* parsed safetensors headers: tensor names point into them */
    int n_json, cap_json;
    char **strs; /* owned strings: GGUF keys and names, file paths */
    int n_strs, cap_strs;
    int cap_maps;
    int cap_tensors; /* room in model_source.tensors (arrays grow by doubling: loads stay linear) */
};

/* Room for one more element in *arr (n used, *cap allocated, elem bytes each), doubling; false
 * when out of memory. */
bool grow_array(void **arr, int n, int *cap, size_t elem);

/* NUL-terminated copy of p[0..n) owned by s (freed by source_close); NULL when out of memory. */
const char *src_strndup(struct model_source *s, const char *p, size_t n);
/* Hands a parsed JSON tree to s (freed by source_close); -1 when out of memory (tree is freed). */
int src_keep_json(struct model_source *s, cJSON *json);
/* Appends a copy of *t to s->tensors; -1 when out of memory. */
int src_add_tensor(struct model_source *s, const struct tensor_view *t);

/* Finds two equal strings among names[0..n): returns 1 and their indices (*i < *j), 0 when all
 * differ, -1 when out of memory. */
int find_duplicate(const char *const *names, int n, int *i, int *j);

#endif
