/* safetensors.c - one safetensors file in memory -> tensor views.
 *
 * Layout: u64 LE header length N, N bytes of UTF-8 JSON {name: {dtype, shape, data_offsets:
 * [begin, end)}, "__metadata__": {str: str}}, then the data; offsets count from byte 8 + N. Every
 * check of docs/formats.md is made here, before any view is handed out. */
#include "loader_priv.h"

#include "input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_MAX_HEADER 100000000ull
#define JSON_MAX_EXACT 9007199254740992.0 /* 2^53: larger JSON integers are not exact */

static const struct {
    const char *name;
    enum dtype dtype;
} st_dtypes[] = {
    {"F32", DT_F32}, {"F16", DT_F16}, {"BF16", DT_BF16}, {"I32", DT_I32},
    {"I64", DT_I64}, {"U8", DT_U8},   {"I8", DT_I8},
};
#define ST_ACCEPTED "F32, F16, BF16, I32, I64, U8 or I8"

/* Types the format defines that we do not read. */
static const char *const st_unsupported[] = {
    "F64",  "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4",  "F6_E2M3", "F6_E3M2",
    "BOOL", "U16",     "I16",     "U32",     "U64", "C64",
};

/* A tensor while its header entry is checked. */
struct st_entry {
    struct tensor_view v;
    uint64_t begin, end; /* data_offsets, relative to the data section */
};

/* Offset of the first byte that breaks UTF-8 (NUL counts as breaking: JSON never needs it), or n.
 */
static size_t utf8_bad_at(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len;
        uint32_t cp, min;
        if (c == 0) return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            len = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            len = 3, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            len = 4, cp = c & 0x07, min = 0x10000;
        else
            return i;
        if (len > n - i) return i;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80) return i;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
        i += len;
    }
    return n;
}

static bool json_u64(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= JSON_MAX_EXACT) || d != (double)(uint64_t)d) return false;
    *v = (uint64_t)d;
    return true;
}

static int parse_dtype(const char *path, const char *name, const cJSON *j, enum dtype *out,
                       struct err *e)
{
    if (!cJSON_IsString(j))
        return err_set(e, ST_USAGE,
                       "%s: tensor %s has no string dtype (expected \"dtype\": one of " ST_ACCEPTED
                       ")",
                       path, name);
    for (size_t i = 0; i < ARRAY_LEN(st_dtypes); i++) {
        if (strcmp(j->valuestring, st_dtypes[i].name) == 0) {
            *out = st_dtypes[i].dtype;
            return ST_OK;
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(st_unsupported); i++)
        if (strcmp(j->valuestring, st_unsupported[i]) == 0)
            return err_set(e, ST_USAGE,
                           "%s: unsupported dtype %s for tensor %s (expected " ST_ACCEPTED ")",
                           path, j->valuestring, name);
    return err_set(e, ST_USAGE, "%s: unknown dtype %.64s for tensor %s (expected " ST_ACCEPTED ")",
                   path, j->valuestring, name);
}

/* shape -> v->shape (ranks above TENSOR_MAX_DIMS fold their innermost dims into the last slot,
 * keeping numel and the outer dims; only vision towers we ignore have them) and the element count.
 */
static int parse_shape(const char *path, const char *name, const cJSON *j, struct tensor_view *v,
                       uint64_t *numel, struct err *e)
{
    if (!cJSON_IsArray(j))
        return err_set(e, ST_USAGE, "%s: tensor %s has no shape array (expected \"shape\": [dims])",
                       path, name);
    uint64_t n = 1;
    int rank = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, j)
    {
        uint64_t x;
        if (!json_u64(d, &x))
            return err_set(e, ST_USAGE,
                           "%s: tensor %s has a shape entry that is not a non-negative integer "
                           "(expected integers >= 0)",
                           path, name);
        if (x && n > (uint64_t)INT64_MAX / x)
            return err_set(e, ST_USAGE,
                           "%s: tensor %s: element count of its shape overflows 64 bits (expected "
                           "a representable size)",
                           path, name);
        if (rank == TENSOR_FILE_MAX_DIMS)
            return err_set(e, ST_USAGE, "%s: tensor %s has more than %d dims (expected at most %d)",
                           path, name, TENSOR_FILE_MAX_DIMS, TENSOR_FILE_MAX_DIMS);
        n *= x;
        v->file_shape[rank] = (int64_t)x;
        if (rank < TENSOR_MAX_DIMS)
            v->shape[rank] = (int64_t)x;
        else
            v->shape[TENSOR_MAX_DIMS - 1] *= (int64_t)x;
        rank++;
    }
    v->n_dims = MIN(rank, TENSOR_MAX_DIMS);
    v->rank = rank;
    *numel = n;
    return ST_OK;
}

static int parse_entry(const char *path, const cJSON *j, struct st_entry *t, struct err *e)
{
    const char *name = j->string;
    memset(t, 0, sizeof *t);
    t->v.name = name;
    if (!cJSON_IsObject(j))
        return err_set(
            e, ST_USAGE,
            "%s: entry for tensor %s is not an object (expected {dtype, shape, data_offsets})",
            path, name);
    uint64_t numel = 0;
    int rc = parse_dtype(path, name, cJSON_GetObjectItemCaseSensitive(j, "dtype"), &t->v.dtype, e);
    if (!rc)
        rc =
            parse_shape(path, name, cJSON_GetObjectItemCaseSensitive(j, "shape"), &t->v, &numel, e);
    if (rc) return rc;
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(j, "data_offsets");
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !json_u64(off->child, &t->begin) ||
        !json_u64(off->child->next, &t->end))
        return err_set(e, ST_USAGE,
                       "%s: tensor %s has bad data_offsets (expected [begin, end], integers >= 0)",
                       path, name);
    if (t->end < t->begin)
        return err_set(
            e, ST_USAGE,
            "%s: tensor %s has data_offsets end %llu < begin %llu (expected begin <= end)", path,
            name, (unsigned long long)t->end, (unsigned long long)t->begin);
    uint64_t bytes = dtype_bytes(t->v.dtype, numel);
    if (bytes == UINT64_MAX)
        return err_set(e, ST_USAGE,
                       "%s: tensor %s: byte size overflows (expected a representable size)", path,
                       name);
    if (t->end - t->begin != bytes)
        return err_set(e, ST_USAGE,
                       "%s: tensor %s spans %llu bytes but its shape and dtype %s need %llu "
                       "(expected equal sizes)",
                       path, name, (unsigned long long)(t->end - t->begin), dtype_name(t->v.dtype),
                       (unsigned long long)bytes);
    t->v.n_bytes = bytes;
    return ST_OK;
}

static int cmp_offsets(const void *a, const void *b)
{
    const struct st_entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Sorted by offset, tensors tile [0, data_size) exactly: no gap, no overlap, nothing after. */
static int check_layout(const char *path, struct st_entry *t, int n, uint64_t data_size,
                        struct err *e)
{
    qsort(t, (size_t)n, sizeof *t, cmp_offsets);
    uint64_t at = 0;
    const char *prev = NULL;
    for (int i = 0; i < n; i++) {
        if (t[i].begin != at) {
            const char *what = t[i].begin > at ? "gap" : "overlap";
            if (prev)
                return err_set(e, ST_USAGE,
                               "%s: %s: tensor %s starts at data byte %llu but tensor %s ends at "
                               "%llu (expected contiguous data_offsets)",
                               path, what, t[i].v.name, (unsigned long long)t[i].begin, prev,
                               (unsigned long long)at);
            return err_set(e, ST_USAGE,
                           "%s: %s: first tensor %s starts at data byte %llu (expected 0)", path,
                           what, t[i].v.name, (unsigned long long)t[i].begin);
        }
        at = t[i].end;
        prev = t[i].v.name;
    }
    if (at != data_size)
        return err_set(e, ST_USAGE,
                       "%s: tensors end at data byte %llu but the file holds %llu data bytes (%s; "
                       "expected the data to end the file)",
                       path, (unsigned long long)at, (unsigned long long)data_size,
                       at < data_size ? "trailing bytes" : "file truncated");
    return ST_OK;
}

static int check_metadata(const char *path, const cJSON *j, struct err *e)
{
    if (!cJSON_IsObject(j))
        return err_set(e, ST_USAGE, "%s: __metadata__ is not an object (expected {string: string})",
                       path);
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        if (!cJSON_IsString(it))
            return err_set(e, ST_USAGE,
                           "%s: __metadata__ value %s is not a string (expected {string: string})",
                           path, it->string);
    }
    return ST_OK;
}

/* Checks every entry of the header tree; *out receives the tensors (caller frees). */
static int parse_header(const char *path, cJSON *root, uint64_t data_size, struct st_entry **out,
                        int *n_out, struct err *e)
{
    int n = 0, cap = cJSON_GetArraySize(root), rc = ST_OK, n_meta = 0;
    struct st_entry *t = malloc((size_t)MAX(cap, 1) * sizeof *t);
    const char **names = malloc((size_t)MAX(cap, 1) * sizeof *names);
    if (!t || !names) rc = err_set(e, ST_RUNTIME, "%s: out of memory", path);
    const cJSON *it;
    for (it = root->child; it && !rc; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0) {
            rc = n_meta++ ? err_set(e, ST_USAGE,
                                    "%s: __metadata__ appears twice (expected it once)", path)
                          : check_metadata(path, it, e);
            continue;
        }
        rc = parse_entry(path, it, &t[n], e);
        names[n] = t[n].v.name;
        n++;
    }
    int a, b, dup = rc ? 0 : find_duplicate(names, n, &a, &b);
    if (dup < 0) rc = err_set(e, ST_RUNTIME, "%s: out of memory", path);
    if (dup > 0)
        rc = err_set(e, ST_USAGE, "%s: duplicate tensor name %s (expected unique names)", path,
                     names[a]);
    (void)b;
    if (!rc) rc = check_layout(path, t, n, data_size, e);
    free(names);
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    *n_out = n;
    return ST_OK;
}

/* What a file that is not a model should have been. */
#define ST_EXPECT_MODEL "expected a checkpoint folder, .safetensors, .gguf or a built-in name"

/* ", it starts with text \"...\"" when the file's first bytes are printable ASCII (a text file given
 * as a model), else "". */
static void starts_with_text(const uint8_t *base, uint64_t size, char *out, size_t cap)
{
    size_t n = 0;
    while (n < size && n < 16 && base[n] >= 0x20 && base[n] < 0x7f && base[n] != '"') n++;
    out[0] = 0;
    if (n >= 8) snprintf(out, cap, ", it starts with text \"%.*s\"", (int)n, (const char *)base);
}

int safetensors_parse(const char *path, const uint8_t *base, uint64_t size, struct model_source *s,
                      struct err *e)
{
    if (size < 8)
        return err_set(e, ST_USAGE,
                       "%s: not a safetensors file: %llu bytes, shorter than the 8-byte header length "
                       "(" ST_EXPECT_MODEL ")",
                       path, (unsigned long long)size);
    uint64_t n = rd_u64(base);
    char starts[48];
    starts_with_text(base, size, starts, sizeof starts);
    if (n > size - 8)
        return err_set(e, ST_USAGE,
                       "%s: not a safetensors file: header length %llu exceeds the file size %llu%s "
                       "(" ST_EXPECT_MODEL ")",
                       path, (unsigned long long)n, (unsigned long long)size, starts);
    if (n > ST_MAX_HEADER)
        return err_set(e, ST_USAGE,
                       "%s: not a safetensors file: header length %llu is over the 100000000-byte "
                       "limit%s (" ST_EXPECT_MODEL ")",
                       path, (unsigned long long)n, starts);
    size_t bad = utf8_bad_at(base + 8, (size_t)n);
    if (bad != n)
        return err_set(e, ST_USAGE,
                       "%s: header byte %zu is not UTF-8 text (expected a UTF-8 JSON header)", path,
                       bad);

    char *text = malloc((size_t)n + 1); /* NUL-terminated copy: cJSON never reads past it */
    if (!text) return err_set(e, ST_RUNTIME, "%s: out of memory", path);
    memcpy(text, base + 8, (size_t)n);
    text[n] = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, false);
    size_t at = end ? (size_t)(end - text) : 0;
    bool trailing = root && text[at + strspn(text + at, " \t\r\n")] != 0;
    char key[128];
    size_t nul_at = 0;
    bool nul = root && !trailing && input_json_nul(text, (size_t)n, &nul_at, key, sizeof key);
    free(text);
    if (!root || trailing) {
        cJSON_Delete(root);
        return err_set(e, ST_USAGE,
                       "%s: header is not valid JSON near byte %zu (expected a JSON object)", path,
                       at);
    }
    if (nul) {
        cJSON_Delete(root);
        return err_set(e, ST_USAGE,
                       "%s: header has an escaped NUL (\\u0000) in a string at byte %zu, key "
                       "\"%s\" (expected text without NUL characters)",
                       path, nul_at, key);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return err_set(
            e, ST_USAGE,
            "%s: header is not a JSON object (expected {tensor: {dtype, shape, data_offsets}})",
            path);
    }

    struct st_entry *t = NULL;
    int n_t = 0;
    int rc = parse_header(path, root, size - 8 - n, &t, &n_t, e);
    const char *file = rc ? NULL : src_strndup(s, path, strlen(path));
    if (!rc && (!file || src_keep_json(s, root) != 0)) {
        if (!file) cJSON_Delete(root);
        rc = err_set(e, ST_RUNTIME, "%s: out of memory", path);
    } else if (rc) {
        cJSON_Delete(root);
    }
    for (int i = 0; i < n_t && !rc; i++) {
        t[i].v.data = base + 8 + n + t[i].begin;
        t[i].v.file_offset = 8 + n + t[i].begin;
        t[i].v.file = file;
        if (src_add_tensor(s, &t[i].v) != 0) rc = err_set(e, ST_RUNTIME, "%s: out of memory", path);
    }
    free(t);
    if (rc) return rc;
    s->kind = SOURCE_SAFETENSORS;
    if (!s->st_metadata)
        s->st_metadata = cJSON_DetachItemFromObjectCaseSensitive(root, "__metadata__");
    return ST_OK;
}
