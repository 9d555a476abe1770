/* source.c - element types, and opening a model source: a checkpoint folder (config.json plus
 * model.safetensors or a sharded model.safetensors.index.json), a .gguf file, or a single
 * .safetensors file. Files are mapped read-only; the parsers in safetensors.c and gguf.c turn a
 * mapping into tensor views. */
#include "loader_priv.h"

#include "input.h"

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

void tensor_shape_str(const struct tensor_view *t, char *buf, size_t n)
{
    int rank = t->rank > t->n_dims ? MIN(t->rank, TENSOR_FILE_MAX_DIMS) : t->n_dims;
    const int64_t *dims = t->rank > t->n_dims ? t->file_shape : t->shape;
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* ---- storage owned by a source ------------------------------------------------------------------
 */

static struct source_priv *priv_of(struct model_source *s)
{
    if (!s->priv) s->priv = calloc(1, sizeof(struct source_priv));
    return s->priv;
}

bool grow_array(void **arr, int n, int *cap, size_t elem)
{
    if (n < *cap) return true;
    if (*cap > INT32_MAX / 2) return false;
    int want = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)want * elem);
    if (!p) return false;
    *arr = p;
    *cap = want;
    return true;
}

const char *src_strndup(struct model_source *s, const char *p, size_t n)
{
    struct source_priv *pv = priv_of(s);
    if (!pv || !grow_array((void **)&pv->strs, pv->n_strs, &pv->cap_strs, sizeof *pv->strs))
        return NULL;
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
    if (!pv || !grow_array((void **)&pv->json, pv->n_json, &pv->cap_json, sizeof *pv->json)) {
        cJSON_Delete(json);
        return -1;
    }
    pv->json[pv->n_json++] = json;
    return 0;
}

int src_add_tensor(struct model_source *s, const struct tensor_view *t)
{
    struct source_priv *pv = priv_of(s);
    if (!pv || !grow_array((void **)&s->tensors, s->n_tensors, &pv->cap_tensors, sizeof *t))
        return -1;
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
    int fd;
    uint64_t size;
    int rc = input_open(path, "the file", &fd, &size, e);
    if (rc) return rc;
    const uint8_t *base = NULL;
    if (size > 0) {
        void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int code = errno == ENOMEM ? ST_RUNTIME : ST_USAGE;
            close(fd);
            return err_set(e, code, "%s: mmap of %llu bytes failed: %s", path,
                           (unsigned long long)size, strerror(errno));
        }
        base = p;
    }
    close(fd);
    struct source_priv *pv = priv_of(s);
    char *copy = strdup(path);
    if (!pv || !copy || !grow_array((void **)&s->maps, s->n_maps, &pv->cap_maps, sizeof *s->maps)) {
        free(copy);
        if (base) munmap((void *)base, (size_t)size);
        return err_set(e, ST_RUNTIME, "%s: out of memory", path);
    }
    s->maps[s->n_maps] = (struct mapping){copy, base, size};
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

/* Reads a whole JSON file (capped, strict); *out is its tree (the caller owns it). */
static int read_json(const char *path, const char *what, cJSON **out, struct err *e)
{
    return input_json_object(path, what, out, e);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- sharded checkpoints
 * ------------------------------------------------------------------------- */

/* One weight_map entry: tensor -> shard file. Sorted copies give linear-time lookups both ways
 * (300 k tensors load in a blink, not in a quadratic crawl). */
struct map_entry {
    const char *tensor, *file;
    int order; /* position in weight_map */
    int shard; /* index into the shard list */
};

struct shard {
    const char *file; /* as named in weight_map */
    int first, end;   /* its tensors in s->tensors */
};

static int cmp_entry_file(const void *a, const void *b)
{
    const struct map_entry *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int cmp_entry_tensor(const void *a, const void *b)
{
    return strcmp(((const struct map_entry *)a)->tensor, ((const struct map_entry *)b)->tensor);
}

static int cmp_shard_first(const void *a, const void *b)
{
    const struct map_entry *x = *(const struct map_entry *const *)a;
    const struct map_entry *y = *(const struct map_entry *const *)b;
    return (x->order > y->order) - (x->order < y->order);
}

/* A shard is a plain .safetensors file name in the folder: no folders, no "..", no GGUF. */
static bool shard_name_ok(const char *f)
{
    return f[0] && f[0] != '.' && !strchr(f, '/') && strlen(f) < 256 &&
           ends_with(f, ".safetensors");
}

/* "<stem>-NNNNN-of-MMMMM.safetensors" -> NNNNN and MMMMM; false for other names. */
static bool shard_number(const char *f, long *i, long *n)
{
    const char *of = strstr(f, "-of-");
    if (!of) return false;
    const char *p = of;
    while (p > f && p[-1] >= '0' && p[-1] <= '9') p--;
    if (p == of || p == f || p[-1] != '-') return false;
    char *end;
    *i = strtol(p, NULL, 10);
    *n = strtol(of + 4, &end, 10);
    return end != of + 4 && !strcmp(end, ".safetensors");
}

/* Numbered shards ("model-00003-of-00004.safetensors") agree on the count and lie in 1..count: a
 * shard outside the list its names give is an index error, not a file to go looking for. */
static int check_shard_numbers(const char *index, const struct shard *sh, int n, struct err *e)
{
    long count = -1;
    for (int k = 0; k < n; k++) {
        long i, c;
        if (!shard_number(sh[k].file, &i, &c)) continue;
        if (count < 0) count = c;
        if (c != count || i < 1 || i > c)
            return err_set(e, ST_USAGE,
                           "%s: weight_map names shard %s, which is not in the list of %ld shards "
                           "its names give (expected %s 1..%ld of %ld)",
                           index, sh[k].file, count, c != count ? "one count," : "numbers", count,
                           count);
    }
    return ST_OK;
}

/* weight_map -> entries (sorted by tensor name) and the distinct shards in first-seen order. */
static int list_shards(const char *index, const cJSON *map, struct map_entry **out_e, int *n_e,
                       struct shard **out_sh, int *n_sh, struct err *e)
{
    int n = 0;
    for (const cJSON *it = map->child; it; it = it->next) n++;
    struct map_entry *en = malloc((size_t)n * sizeof *en);
    const struct map_entry **heads = malloc((size_t)n * sizeof *heads);
    struct shard *sh = NULL;
    int rc = en && heads ? ST_OK : err_set(e, ST_RUNTIME, "%s: out of memory", index);
    int k = 0;
    for (const cJSON *it = map->child; it && !rc; it = it->next, k++) {
        if (!cJSON_IsString(it) || !shard_name_ok(it->valuestring))
            rc = err_set(e, ST_USAGE,
                         "%s: weight_map entry for tensor %.200s is %s%.200s%s (expected the name "
                         "of a .safetensors file in the folder)",
                         index, it->string, cJSON_IsString(it) ? "\"" : "not a string",
                         cJSON_IsString(it) ? it->valuestring : "", cJSON_IsString(it) ? "\"" : "");
        else
            en[k] = (struct map_entry){it->string, it->valuestring, k, -1};
    }
    int n_heads = 0;
    if (!rc) {
        qsort(en, (size_t)n, sizeof *en, cmp_entry_file);
        for (int i = 0; i < n; i++)
            if (i == 0 || strcmp(en[i - 1].file, en[i].file)) heads[n_heads++] = &en[i];
        qsort(heads, (size_t)n_heads, sizeof *heads, cmp_shard_first);
        sh = malloc((size_t)n_heads * sizeof *sh);
        if (!sh) rc = err_set(e, ST_RUNTIME, "%s: out of memory", index);
    }
    for (int i = 0; i < n_heads && !rc; i++) {
        sh[i] = (struct shard){heads[i]->file, 0, 0};
        /* heads[i] starts its group in the file-sorted array: mark the whole group */
        for (struct map_entry *g = (struct map_entry *)heads[i];
             g < en + n && !strcmp(g->file, heads[i]->file); g++)
            g->shard = i;
    }
    free(heads);
    if (!rc) rc = check_shard_numbers(index, sh, n_heads, e);
    if (rc) {
        free(en);
        free(sh);
        return rc;
    }
    qsort(en, (size_t)n, sizeof *en, cmp_entry_tensor);
    *out_e = en;
    *n_e = n;
    *out_sh = sh;
    *n_sh = n_heads;
    return ST_OK;
}

/* Each tensor once across shards, each shard tensor listed in weight_map under its own shard,
 * and each weight_map entry present in the shard it names. */
static int check_shards(struct model_source *s, const char *index, struct map_entry *en, int n_e,
                        const struct shard *sh, int n_sh, struct err *e)
{
    const char **names = malloc((size_t)MAX(s->n_tensors, 1) * sizeof *names);
    bool *seen = calloc((size_t)MAX(n_e, 1), sizeof *seen);
    if (!names || !seen) {
        free(names);
        free(seen);
        return err_set(e, ST_RUNTIME, "%s: out of memory", index);
    }
    for (int i = 0; i < s->n_tensors; i++)
        names[i] = s->tensors[i].name;
    int a = 0, b = 0, dup = find_duplicate(names, s->n_tensors, &a, &b);
    free(names);
    int rc = ST_OK;
    if (dup < 0) rc = err_set(e, ST_RUNTIME, "%s: out of memory", index);
    if (dup > 0)
        rc = err_set(e, ST_USAGE,
                     "%s: tensor %s is in both %s and %s (expected each tensor in one shard)",
                     index, s->tensors[a].name, s->tensors[a].file, s->tensors[b].file);
    for (int k = 0; k < n_sh && !rc; k++) {
        for (int i = sh[k].first; i < sh[k].end && !rc; i++) {
            struct map_entry key = {.tensor = s->tensors[i].name};
            struct map_entry *m = bsearch(&key, en, (size_t)n_e, sizeof *en, cmp_entry_tensor);
            if (!m)
                rc = err_set(e, ST_USAGE,
                             "%s: shard %s holds tensor %s, which weight_map does not list "
                             "(expected the index to list every tensor of its shards)",
                             index, sh[k].file, s->tensors[i].name);
            else if (m->shard != k)
                rc = err_set(e, ST_USAGE,
                             "%s: weight_map puts tensor %s in %s, but it is in %s (expected the "
                             "index to match its shards)",
                             index, m->tensor, m->file, sh[k].file);
            else
                seen[m - en] = true;
        }
    }
    for (int i = 0; i < n_e && !rc; i++)
        if (!seen[i])
            rc = err_set(e, ST_USAGE,
                         "%s: weight_map puts tensor %s in %s, but that shard has no such tensor "
                         "(expected the index to match its shards)",
                         index, en[i].tensor, en[i].file);
    free(seen);
    return rc;
}

/* One shard of an index: safetensors whatever its bytes say (never GGUF). */
static int open_shard(struct model_source *s, const char *index, const char *file, const char *path,
                      struct err *e)
{
    if (!file_exists(path))
        return err_set(e, ST_USAGE,
                       "%s: weight_map names shard %s, which does not exist (expected %s)", index,
                       file, path);
    const struct mapping *m = NULL;
    int rc = map_file(s, path, &m, e);
    return rc ? rc : safetensors_parse(path, m->base, m->size, s, e);
}

static int open_sharded(struct model_source *s, const char *dir, const char *index, struct err *e)
{
    cJSON *root = NULL;
    int rc = read_json(index, "the index", &root, e);
    if (rc) return rc;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    struct shard *sh = NULL;
    struct map_entry *en = NULL;
    int n_sh = 0, n_e = 0;
    if (!cJSON_IsObject(map) || !map->child)
        rc = err_set(e, ST_USAGE,
                     "%s: no weight_map (expected {\"weight_map\": {tensor: shard file}})", index);
    else
        rc = list_shards(index, map, &en, &n_e, &sh, &n_sh, e);
    for (int i = 0; i < n_sh && !rc; i++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, sh[i].file) < 0) {
            rc = err_set(e, ST_RUNTIME, "%s: out of memory", index);
            break;
        }
        sh[i].first = s->n_tensors;
        rc = open_shard(s, index, sh[i].file, path, e);
        sh[i].end = s->n_tensors;
        free(path);
    }
    if (!rc) rc = check_shards(s, index, en, n_e, sh, n_sh, e);
    free(sh);
    free(en);
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
        rc = read_json(cfg, "config.json", &s->config, e);
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

int tensor_read(const struct tensor_view *v, uint64_t at, uint64_t n, void *out, struct err *e)
{
    if (at > v->n_bytes || n > v->n_bytes - at)
        return err_set(e, ST_RUNTIME, "%s: tensor %s: bytes %llu..%llu asked of %llu", v->file,
                       v->name, (unsigned long long)at, (unsigned long long)(at + n),
                       (unsigned long long)v->n_bytes);
    int fd;
    uint64_t size;
    int st = input_open(v->file, "the file", &fd, &size, e);
    if (st) return ST_RUNTIME; /* it was there when it was opened */
    uint64_t done = 0;
    while (done < n) {
        ssize_t got = pread(fd, (char *)out + done, (size_t)(n - done),
                            (off_t)(v->file_offset + at + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            int err = got < 0 ? errno : 0;
            close(fd);
            return err_set(e, ST_RUNTIME,
                           "%s: reading tensor %s failed at byte %llu of %llu: %s (was the file "
                           "changed while the tool ran?)",
                           v->file, v->name, (unsigned long long)(at + done),
                           (unsigned long long)v->n_bytes,
                           err ? strerror(err) : "the file ends there now");
        }
        done += (uint64_t)got;
    }
    close(fd);
    return ST_OK;
}

const struct tensor_view *source_find(const struct model_source *s, const char *name)
{
    for (int i = 0; i < s->n_tensors; i++)
        if (strcmp(s->tensors[i].name, name) == 0) return &s->tensors[i];
    return NULL;
}
