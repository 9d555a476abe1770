/* source.c - element types, and opening a model source: a checkpoint folder (config.json plus
 * model.safetensors or a sharded model.safetensors.index.json), a .gguf file, or a single
 * .safetensors file. Files are mapped read-only; the parsers in safetensors.c and gguf.c turn a
 * mapping into tensor views. */
#include "loader_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPECT_SOURCE                                                                              \
    "expected a checkpoint folder with config.json and model.safetensors, a .gguf file, or a "     \
    "built-in model name"

/* ---- element types ----------------------------------------------------------------------------
 */

static const struct {
    const char *name;
    int block;       /* elements per block */
    int block_bytes; /* bytes per block */
} dtype_info[DT_COUNT] = {
    [DT_F32] = {"F32", 1, 4},     [DT_F16] = {"F16", 1, 2},     [DT_BF16] = {"BF16", 1, 2},
    [DT_Q8_0] = {"Q8_0", 32, 34}, [DT_Q4_0] = {"Q4_0", 32, 18}, [DT_I32] = {"I32", 1, 4},
    [DT_I64] = {"I64", 1, 8},     [DT_U8] = {"U8", 1, 1},       [DT_I8] = {"I8", 1, 1},
};

const char *dtype_name(enum dtype t)
{
    return (unsigned)t < DT_COUNT ? dtype_info[t].name : "?";
}
int dtype_block(enum dtype t)
{
    return (unsigned)t < DT_COUNT ? dtype_info[t].block : 0;
}
int dtype_block_bytes(enum dtype t)
{
    return (unsigned)t < DT_COUNT ? dtype_info[t].block_bytes : 0;
}

/* UINT64_MAX also when n is not a whole number of blocks or t is not a type. */
uint64_t dtype_bytes(enum dtype t, uint64_t n)
{
    if ((unsigned)t >= DT_COUNT) return UINT64_MAX;
    uint64_t block = (uint64_t)dtype_info[t].block, bytes = (uint64_t)dtype_info[t].block_bytes;
    if (n % block) return UINT64_MAX;
    uint64_t blocks = n / block;
    if (blocks > (UINT64_MAX - 1) / bytes) return UINT64_MAX;
    return blocks * bytes;
}

int64_t tensor_numel(const struct tensor_view *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->n_dims; i++)
        n *= t->shape[i];
    return n;
}

/* ---- storage owned by a source ------------------------------------------------------------------
 */

static struct source_priv *priv_of(struct model_source *s)
{
    if (!s->priv) s->priv = calloc(1, sizeof(struct source_priv));
    return s->priv;
}

const char *src_strndup(struct model_source *s, const char *p, size_t n)
{
    struct source_priv *pv = priv_of(s);
    if (!pv) return NULL;
    char **strs = realloc(pv->strs, (size_t)(pv->n_strs + 1) * sizeof *strs);
    if (!strs) return NULL;
    pv->strs = strs;
    char *c = malloc(n + 1);
    if (!c) return NULL;
    if (n) memcpy(c, p, n);
    c[n] = 0;
    pv->strs[pv->n_strs++] = c;
    return c;
}

int src_keep_json(struct model_source *s, cJSON *json)
{
    struct source_priv *pv = priv_of(s);
    cJSON **js = pv ? realloc(pv->json, (size_t)(pv->n_json + 1) * sizeof *js) : NULL;
    if (!js) {
        cJSON_Delete(json);
        return -1;
    }
    pv->json = js;
    pv->json[pv->n_json++] = json;
    return 0;
}

int src_add_tensor(struct model_source *s, const struct tensor_view *t)
{
    struct tensor_view *ts = realloc(s->tensors, (size_t)(s->n_tensors + 1) * sizeof *ts);
    if (!ts) return -1;
    s->tensors = ts;
    s->tensors[s->n_tensors++] = *t;
    return 0;
}

struct named {
    const char *name;
    int idx;
};

static int cmp_named(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

int find_duplicate(const char *const *names, int n, int *i, int *j)
{
    if (n < 2) return 0;
    struct named *v = malloc((size_t)n * sizeof *v);
    if (!v) return -1;
    for (int k = 0; k < n; k++)
        v[k] = (struct named){names[k], k};
    qsort(v, (size_t)n, sizeof *v, cmp_named);
    int found = 0;
    for (int k = 1; k < n && !found; k++) {
        if (strcmp(v[k - 1].name, v[k].name) == 0) {
            *i = v[k - 1].idx;
            *j = v[k].idx;
            found = 1;
        }
    }
    free(v);
    return found;
}

/* ---- files
 * --------------------------------------------------------------------------------------- */

/* Maps path read-only into s->maps; *out is the mapping (an empty file maps to base NULL). */
static int map_file(struct model_source *s, const char *path, const struct mapping **out,
                    struct err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(e, ST_USAGE, "%s: cannot open: %s (expected a readable file)", path,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(e, ST_USAGE, "%s: not a regular file (expected a model file)", path);
    }
    const uint8_t *base = NULL;
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int code = errno == ENOMEM ? ST_RUNTIME : ST_USAGE;
            close(fd);
            return err_set(e, code, "%s: mmap of %lld bytes failed: %s", path,
                           (long long)st.st_size, strerror(errno));
        }
        base = p;
    }
    close(fd);
    struct mapping *maps = realloc(s->maps, (size_t)(s->n_maps + 1) * sizeof *maps);
    char *copy = strdup(path);
    if (!maps || !copy) {
        free(copy);
        if (maps) s->maps = maps;
        if (base) munmap((void *)base, (size_t)st.st_size);
        return err_set(e, ST_RUNTIME, "%s: out of memory", path);
    }
    s->maps = maps;
    s->maps[s->n_maps] = (struct mapping){copy, base, (uint64_t)st.st_size};
    *out = &s->maps[s->n_maps++];
    return ST_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* One model file: GGUF by magic or extension, safetensors otherwise. */
static int open_file(struct model_source *s, const char *path, struct err *e)
{
    const struct mapping *m = NULL;
    int rc = map_file(s, path, &m, e);
    if (rc) return rc;
    bool gguf = ends_with(path, ".gguf") || (m->size >= 4 && memcmp(m->base, "GGUF", 4) == 0);
    return gguf ? gguf_parse(path, m->base, m->size, s, e)
                : safetensors_parse(path, m->base, m->size, s, e);
}

/* Reads a whole JSON file; *out is its tree (the caller owns it). */
static int read_json(const char *path, cJSON **out, struct err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(e, ST_USAGE, "%s: cannot open: %s (expected a readable JSON file)", path,
                       strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return err_set(e, ST_RUNTIME, "%s: out of memory", path);
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    bool io_error = ferror(f);
    fclose(f);
    if (io_error) {
        free(buf);
        return err_set(e, ST_USAGE, "%s: read error (expected a readable JSON file)", path);
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(buf, n, &end, false);
    size_t at = end ? (size_t)(end - buf) : 0;
    free(buf);
    if (!j)
        return err_set(e, ST_USAGE, "%s: invalid JSON near byte %zu (expected a JSON object)", path,
                       at);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return err_set(e, ST_USAGE, "%s: top level is not a JSON object (expected a JSON object)",
                       path);
    }
    *out = j;
    return ST_OK;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- sharded checkpoints
 * ------------------------------------------------------------------------- */

struct shard {
    const char *file; /* as named in weight_map */
    int first, end;   /* its tensors in s->tensors */
};

static int find_shard(const struct shard *sh, int n, const char *file)
{
    for (int i = 0; i < n; i++)
        if (strcmp(sh[i].file, file) == 0) return i;
    return -1;
}

/* Lists the distinct shards of weight_map in first-seen order. */
static int list_shards(const char *index, const cJSON *map, struct shard **out, int *n_out,
                       struct err *e)
{
    struct shard *sh = NULL;
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        if (!cJSON_IsString(it) || !it->valuestring[0] || strstr(it->valuestring, "..")) {
            free(sh);
            return err_set(e, ST_USAGE,
                           "%s: weight_map entry for tensor %s is not a shard file name (expected "
                           "a file name in the folder)",
                           index, it->string);
        }
        if (find_shard(sh, n, it->valuestring) >= 0) continue;
        struct shard *g = realloc(sh, (size_t)(n + 1) * sizeof *g);
        if (!g) {
            free(sh);
            return err_set(e, ST_RUNTIME, "%s: out of memory", index);
        }
        sh = g;
        sh[n++] = (struct shard){it->valuestring, 0, 0};
    }
    *out = sh;
    *n_out = n;
    return ST_OK;
}

/* Each tensor once across shards, and each weight_map entry present in the shard it names. */
static int check_shards(struct model_source *s, const char *index, const cJSON *map,
                        const struct shard *sh, int n_sh, struct err *e)
{
    const char **names = malloc((size_t)MAX(s->n_tensors, 1) * sizeof *names);
    if (!names) return err_set(e, ST_RUNTIME, "%s: out of memory", index);
    for (int i = 0; i < s->n_tensors; i++)
        names[i] = s->tensors[i].name;
    int a = 0, b = 0, dup = find_duplicate(names, s->n_tensors, &a, &b);
    free(names);
    if (dup < 0) return err_set(e, ST_RUNTIME, "%s: out of memory", index);
    if (dup)
        return err_set(e, ST_USAGE,
                       "%s: tensor %s is in both %s and %s (expected each tensor in one shard)",
                       index, s->tensors[a].name, s->tensors[a].file, s->tensors[b].file);
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        const struct shard *h = &sh[find_shard(sh, n_sh, it->valuestring)];
        bool found = false;
        for (int i = h->first; i < h->end && !found; i++)
            found = strcmp(s->tensors[i].name, it->string) == 0;
        if (!found)
            return err_set(e, ST_USAGE,
                           "%s: weight_map puts tensor %s in %s, but that shard has no such tensor "
                           "(expected the index to match its shards)",
                           index, it->string, h->file);
    }
    return ST_OK;
}

static int open_sharded(struct model_source *s, const char *dir, const char *index, struct err *e)
{
    cJSON *root = NULL;
    int rc = read_json(index, &root, e);
    if (rc) return rc;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    struct shard *sh = NULL;
    int n_sh = 0;
    if (!cJSON_IsObject(map) || !map->child)
        rc = err_set(e, ST_USAGE,
                     "%s: no weight_map (expected {\"weight_map\": {tensor: shard file}})", index);
    else
        rc = list_shards(index, map, &sh, &n_sh, e);
    for (int i = 0; i < n_sh && !rc; i++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, sh[i].file) < 0) {
            rc = err_set(e, ST_RUNTIME, "%s: out of memory", index);
            break;
        }
        if (!file_exists(path)) {
            rc = err_set(e, ST_USAGE,
                         "%s: weight_map names shard %s, which does not exist (expected %s)", index,
                         sh[i].file, path);
        } else {
            sh[i].first = s->n_tensors;
            rc = open_file(s, path, e);
            sh[i].end = s->n_tensors;
            if (!rc && s->kind != SOURCE_SAFETENSORS)
                rc = err_set(e, ST_USAGE,
                             "%s: shard %s is not safetensors (expected safetensors shards)", index,
                             path);
        }
        free(path);
    }
    if (!rc) rc = check_shards(s, index, map, sh, n_sh, e);
    free(sh);
    cJSON_Delete(root);
    return rc;
}

/* ---- folders and the public entry points
 * ---------------------------------------------------------- */

static int open_folder(struct model_source *s, const char *dir, struct err *e)
{
    char *cfg = NULL, *single = NULL, *index = NULL;
    int rc = ST_OK;
    if (asprintf(&cfg, "%s/config.json", dir) < 0) cfg = NULL;
    if (asprintf(&single, "%s/model.safetensors", dir) < 0) single = NULL;
    if (asprintf(&index, "%s/model.safetensors.index.json", dir) < 0) index = NULL;
    if (!cfg || !single || !index)
        rc = err_set(e, ST_RUNTIME, "%s: out of memory", dir);
    else if (!file_exists(cfg))
        rc = err_set(e, ST_USAGE, "%s: no config.json in folder %s (" EXPECT_SOURCE ")", dir, dir);
    else
        rc = read_json(cfg, &s->config, e);
    if (!rc) {
        if (file_exists(single))
            rc = open_file(s, single, e);
        else if (file_exists(index))
            rc = open_sharded(s, dir, index, e);
        else
            rc = err_set(e, ST_USAGE,
                         "%s: no model.safetensors or model.safetensors.index.json in folder %s "
                         "(" EXPECT_SOURCE ")",
                         dir, dir);
        if (!rc && s->kind != SOURCE_SAFETENSORS)
            rc = err_set(e, ST_USAGE,
                         "%s: weights are not safetensors (expected model.safetensors)", dir);
    }
    free(cfg);
    free(single);
    free(index);
    return rc;
}

int source_open(struct model_source *s, const char *path, struct err *e)
{
    memset(s, 0, sizeof *s);
    s->path = strdup(path);
    if (!s->path) return err_set(e, ST_RUNTIME, "%s: out of memory", path);
    struct stat st;
    int rc;
    if (stat(path, &st) != 0)
        rc = err_set(e, ST_USAGE, "%s: %s (" EXPECT_SOURCE ")", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = open_folder(s, path, e);
    else
        rc = open_file(s, path, e);
    if (rc) source_close(s);
    return rc;
}

void source_close(struct model_source *s)
{
    for (int i = 0; i < s->n_maps; i++) {
        if (s->maps[i].base) munmap((void *)s->maps[i].base, (size_t)s->maps[i].size);
        free(s->maps[i].path);
    }
    free(s->maps);
    free(s->tensors);
    free(s->kv);
    struct source_priv *pv = s->priv;
    if (pv) {
        for (int i = 0; i < pv->n_json; i++)
            cJSON_Delete(pv->json[i]);
        for (int i = 0; i < pv->n_strs; i++)
            free(pv->strs[i]);
        free(pv->json);
        free(pv->strs);
        free(pv);
    }
    cJSON_Delete(s->config);
    cJSON_Delete(s->st_metadata);
    free(s->path);
    memset(s, 0, sizeof *s);
}

const struct tensor_view *source_find(const struct model_source *s, const char *name)
{
    for (int i = 0; i < s->n_tensors; i++)
        if (strcmp(s->tensors[i].name, name) == 0) return &s->tensors[i];
    return NULL;
}
