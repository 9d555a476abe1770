/* gguf.c - one GGUF v2/v3 file in memory -> metadata key/values and tensor views.
 *
 * Layout (little-endian): "GGUF", u32 version, u64 tensor_count, u64 kv_count; kv_count times
 * {string key, u32 type, value}; tensor_count times {string name, u32 n_dims, u64 ne[n_dims],
 * u32 ggml type, u64 offset}; padding to general.alignment; the data section. A string is u64
 * length + bytes. Every read is bounded by the bytes left, so a hostile count or length is an
 * error, never an overread or a huge allocation. */
#include "loader_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_NAME_MAX 64 /* tensor names must be shorter (ggml's GGML_MAX_NAME) */
#define GGUF_DEFAULT_ALIGN 32u
#define GGUF_MIN_KV_BYTES 14     /* key length 8 + key >= 1 + type 4 + value >= 1 */
#define GGUF_MIN_TENSOR_BYTES 25 /* name length 8 + name >= 1 + n_dims 4 + type 4 + offset 8 */

/* Bytes of one scalar of each metadata type; 0 for string and array. */
static const uint8_t gguf_scalar_size[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* ggml type ids (on-disk u32) that ggml knows; dtype < 0 = known but not read by us. */
static const struct {
    uint32_t id;
    const char *name;
    int dtype;
} ggml_types[] = {
    {0, "F32", DT_F32},    {1, "F16", DT_F16}, {2, "Q4_0", DT_Q4_0}, {3, "Q4_1", -1},
    {6, "Q5_0", -1},       {7, "Q5_1", -1},    {8, "Q8_0", DT_Q8_0}, {9, "Q8_1", -1},
    {10, "Q2_K", -1},      {11, "Q3_K", -1},   {12, "Q4_K", -1},     {13, "Q5_K", -1},
    {14, "Q6_K", -1},      {15, "Q8_K", -1},   {16, "IQ2_XXS", -1},  {17, "IQ2_XS", -1},
    {18, "IQ3_XXS", -1},   {19, "IQ1_S", -1},  {20, "IQ4_NL", -1},   {21, "IQ3_S", -1},
    {22, "IQ2_S", -1},     {23, "IQ4_XS", -1}, {24, "I8", -1},       {25, "I16", -1},
    {26, "I32", -1},       {27, "I64", -1},    {28, "F64", -1},      {29, "IQ1_M", -1},
    {30, "BF16", DT_BF16}, {34, "TQ1_0", -1},  {35, "TQ2_0", -1},    {39, "MXFP4", -1},
};
#define GGUF_ACCEPTED "F32, F16, BF16, Q8_0 or Q4_0"

/* A bounded reader over the file; every failure fills err with the file and what was read. */
struct reader {
    const char *path;
    const uint8_t *base;
    uint64_t size, pos;
    struct err *e;
};

static uint64_t left(const struct reader *r)
{
    return r->size - r->pos;
}

static int need(struct reader *r, uint64_t n, const char *what)
{
    if (n <= left(r)) return ST_OK;
    return err_set(r->e, ST_USAGE,
                   "%s: %s needs %llu bytes at offset %llu but the file has %llu left (expected a "
                   "complete file)",
                   r->path, what, (unsigned long long)n, (unsigned long long)r->pos,
                   (unsigned long long)left(r));
}

static int get_u32(struct reader *r, uint32_t *v, const char *what)
{
    int rc = need(r, 4, what);
    if (!rc) *v = rd_u32(r->base + r->pos), r->pos += 4;
    return rc;
}

static int get_u64(struct reader *r, uint64_t *v, const char *what)
{
    int rc = need(r, 8, what);
    if (!rc) *v = rd_u64(r->base + r->pos), r->pos += 8;
    return rc;
}

/* A string: *p points at its bytes in the mapping, *n is its length. */
static int get_str(struct reader *r, const uint8_t **p, uint64_t *n, const char *what)
{
    int rc = get_u64(r, n, what);
    if (!rc) rc = need(r, *n, what);
    if (!rc) *p = r->base + r->pos, r->pos += *n;
    return rc;
}

/* A key or tensor name: non-empty, no NUL, copied NUL-terminated into s. */
static int get_name(struct reader *r, struct model_source *s, const char **out, const char *what)
{
    const uint8_t *p;
    uint64_t n;
    int rc = get_str(r, &p, &n, what);
    if (rc) return rc;
    if (n == 0)
        return err_set(r->e, ST_USAGE, "%s: empty %s at offset %llu (expected a non-empty name)",
                       r->path, what, (unsigned long long)r->pos);
    if (memchr(p, 0, (size_t)n))
        return err_set(r->e, ST_USAGE, "%s: %s %.*s contains a NUL byte (expected text)", r->path,
                       what, (int)MIN(n, 64), (const char *)p);
    *out = src_strndup(s, (const char *)p, (size_t)n);
    return *out ? ST_OK : err_set(r->e, ST_RUNTIME, "%s: out of memory", r->path);
}

/* ---- metadata
 * ------------------------------------------------------------------------------------ */

/* Skips an array's elements (strings are length-checked one by one, never copied). */
static int skip_array(struct reader *r, struct gguf_kv *kv)
{
    uint32_t et;
    int rc = get_u32(r, &et, "array element type");
    if (!rc) rc = get_u64(r, &kv->count, "array length");
    if (rc) return rc;
    if (et == GGUF_ARRAY)
        return err_set(r->e, ST_USAGE,
                       "%s: key %s is an array of arrays (expected no nested arrays)", r->path,
                       kv->key);
    if (et > GGUF_F64)
        return err_set(r->e, ST_USAGE,
                       "%s: key %s has unknown array element type %u (expected 0..12)", r->path,
                       kv->key, et);
    kv->elem_type = (enum gguf_type)et;
    kv->data = r->base + r->pos;
    if (et != GGUF_STRING) {
        uint64_t size = gguf_scalar_size[et];
        if (kv->count > left(r) / size)
            return err_set(r->e, ST_USAGE,
                           "%s: key %s: array of %llu elements runs past the end of the file "
                           "(expected a complete array)",
                           r->path, kv->key, (unsigned long long)kv->count);
        r->pos += kv->count * size;
        return ST_OK;
    }
    if (kv->count > left(r) / 8)
        return err_set(r->e, ST_USAGE,
                       "%s: key %s: array of %llu strings runs past the end of the file (expected "
                       "a complete array)",
                       r->path, kv->key, (unsigned long long)kv->count);
    for (uint64_t i = 0; i < kv->count; i++) {
        const uint8_t *p;
        uint64_t n;
        if (get_str(r, &p, &n, "array string"))
            return err_set(r->e, ST_USAGE,
                           "%s: key %s: string %llu of the array runs past the end of the file "
                           "(expected a complete array)",
                           r->path, kv->key, (unsigned long long)i);
    }
    return ST_OK;
}

static int read_kv(struct reader *r, struct model_source *s, struct gguf_kv *kv)
{
    uint32_t type;
    int rc = get_name(r, s, &kv->key, "metadata key");
    if (!rc) rc = get_u32(r, &type, "metadata value type");
    if (rc) return rc;
    if (type > GGUF_F64)
        return err_set(r->e, ST_USAGE, "%s: key %s has unknown value type %u (expected 0..12)",
                       r->path, kv->key, type);
    kv->type = kv->elem_type = (enum gguf_type)type;
    if (type == GGUF_ARRAY) return skip_array(r, kv);
    if (type == GGUF_STRING) return get_str(r, &kv->data, &kv->count, "metadata string");
    kv->count = 1;
    kv->data = r->base + r->pos;
    rc = need(r, gguf_scalar_size[type], "metadata value");
    if (!rc) r->pos += gguf_scalar_size[type];
    return rc;
}

static int check_unique(const char *path, const char *what, const char **names, int n,
                        struct err *e)
{
    int a, b, dup = find_duplicate(names, n, &a, &b);
    if (dup < 0) return err_set(e, ST_RUNTIME, "%s: out of memory", path);
    if (dup)
        return err_set(e, ST_USAGE, "%s: duplicate %s %s (expected unique names)", path, what,
                       names[a]);
    return ST_OK;
}

static int read_metadata(struct reader *r, struct model_source *s, uint64_t n_kv)
{
    s->kv = calloc((size_t)MAX(n_kv, 1), sizeof *s->kv);
    const char **keys = malloc((size_t)MAX(n_kv, 1) * sizeof *keys);
    int rc = s->kv && keys ? ST_OK : err_set(r->e, ST_RUNTIME, "%s: out of memory", r->path);
    for (uint64_t i = 0; i < n_kv && !rc; i++) {
        rc = read_kv(r, s, &s->kv[i]);
        keys[i] = s->kv[i].key;
        s->n_kv = (int)i + 1;
    }
    if (!rc) rc = check_unique(r->path, "metadata key", keys, s->n_kv, r->e);
    free(keys);
    return rc;
}

static int read_alignment(const struct reader *r, const struct model_source *s, uint32_t *align)
{
    *align = GGUF_DEFAULT_ALIGN;
    const struct gguf_kv *kv = gguf_find(s, "general.alignment");
    if (!kv) return ST_OK;
    if (kv->type != GGUF_U32)
        return err_set(r->e, ST_USAGE, "%s: general.alignment has type %d (expected u32)", r->path,
                       (int)kv->type);
    *align = rd_u32(kv->data);
    if (*align == 0 || (*align & (*align - 1)))
        return err_set(r->e, ST_USAGE,
                       "%s: general.alignment is %u (expected a non-zero power of two)", r->path,
                       *align);
    return ST_OK;
}

/* ---- tensor infos
 * -------------------------------------------------------------------------------- */

static int lookup_type(const struct reader *r, const char *name, uint32_t id, enum dtype *dt)
{
    for (size_t i = 0; i < ARRAY_LEN(ggml_types); i++) {
        if (ggml_types[i].id != id) continue;
        if (ggml_types[i].dtype < 0)
            return err_set(r->e, ST_USAGE,
                           "%s: unsupported type %s for tensor %s (expected " GGUF_ACCEPTED ")",
                           r->path, ggml_types[i].name, name);
        *dt = (enum dtype)ggml_types[i].dtype;
        return ST_OK;
    }
    return err_set(r->e, ST_USAGE,
                   "%s: unknown ggml type %u for tensor %s (expected " GGUF_ACCEPTED ")", r->path,
                   id, name);
}

/* One tensor info; t->data holds the offset from the data section until the section is known. */
static int read_tensor_info(struct reader *r, struct model_source *s, struct tensor_view *t,
                            uint64_t *offset)
{
    uint32_t n_dims, type;
    int rc = get_name(r, s, &t->name, "tensor name");
    if (!rc) rc = get_u32(r, &n_dims, "tensor n_dims");
    if (rc) return rc;
    if (strlen(t->name) >= GGUF_NAME_MAX)
        return err_set(r->e, ST_USAGE, "%s: tensor name %s is %zu bytes (expected under %d)",
                       r->path, t->name, strlen(t->name), GGUF_NAME_MAX);
    if (n_dims > TENSOR_MAX_DIMS)
        return err_set(r->e, ST_USAGE, "%s: tensor %s has %u dims (expected at most %d)", r->path,
                       t->name, n_dims, TENSOR_MAX_DIMS);
    uint64_t ne[TENSOR_MAX_DIMS], numel = 1;
    for (uint32_t i = 0; i < n_dims; i++) {
        if ((rc = get_u64(r, &ne[i], "tensor dim"))) return rc;
        if (ne[i] > (uint64_t)INT64_MAX)
            return err_set(r->e, ST_USAGE,
                           "%s: tensor %s has negative dim ne[%u] (expected dims >= 0)", r->path,
                           t->name, i);
        if (ne[i] && numel > (uint64_t)INT64_MAX / ne[i])
            return err_set(
                r->e, ST_USAGE,
                "%s: tensor %s: element count overflows 64 bits (expected a representable size)",
                r->path, t->name);
        numel *= ne[i];
        t->shape[n_dims - 1 - i] = (int64_t)ne[i]; /* torch order: ne[0] is innermost */
    }
    t->n_dims = t->rank = (int)n_dims;
    if ((rc = get_u32(r, &type, "tensor type")) || (rc = lookup_type(r, t->name, type, &t->dtype)))
        return rc;
    uint64_t row = n_dims ? ne[0] : 1;
    if (row % (uint64_t)dtype_block(t->dtype))
        return err_set(r->e, ST_USAGE,
                       "%s: tensor %s has ne[0] = %llu, not a multiple of the %s block of %d "
                       "(expected whole blocks)",
                       r->path, t->name, (unsigned long long)row, dtype_name(t->dtype),
                       dtype_block(t->dtype));
    t->n_bytes = dtype_bytes(t->dtype, numel);
    if (t->n_bytes == UINT64_MAX)
        return err_set(r->e, ST_USAGE,
                       "%s: tensor %s: byte size overflows (expected a representable size)",
                       r->path, t->name);
    return get_u64(r, offset, "tensor offset");
}

struct extent {
    uint64_t begin, end; /* data section bytes [begin, end) */
    int i;
};

static int cmp_extent(const void *a, const void *b)
{
    const struct extent *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* No two tensors share a byte (empty tensors hold none). Sorted by offset: linear after the sort. */
static int check_overlap(const struct reader *r, const struct model_source *s,
                         const uint64_t *offsets)
{
    struct extent *x = malloc((size_t)MAX(s->n_tensors, 1) * sizeof *x);
    if (!x) return err_set(r->e, ST_RUNTIME, "%s: out of memory", r->path);
    int n = 0;
    for (int i = 0; i < s->n_tensors; i++)
        if (s->tensors[i].n_bytes)
            x[n++] = (struct extent){offsets[i], offsets[i] + s->tensors[i].n_bytes, i};
    qsort(x, (size_t)n, sizeof *x, cmp_extent);
    int rc = ST_OK;
    for (int k = 1; k < n && !rc; k++)
        if (x[k].begin < x[k - 1].end)
            rc = err_set(r->e, ST_USAGE,
                         "%s: tensor %s (data bytes %llu..%llu) overlaps tensor %s (data bytes "
                         "%llu..%llu) (expected each tensor its own bytes)",
                         r->path, s->tensors[x[k].i].name, (unsigned long long)x[k].begin,
                         (unsigned long long)x[k].end, s->tensors[x[k - 1].i].name,
                         (unsigned long long)x[k - 1].begin, (unsigned long long)x[k - 1].end);
    free(x);
    return rc;
}

/* Every tensor's bytes lie in the data section, at an aligned offset. */
static int place_tensors(const struct reader *r, struct model_source *s, const uint64_t *offsets,
                         uint32_t align)
{
    uint64_t start = (r->pos + align - 1) / align * align;
    for (int i = 0; i < s->n_tensors; i++) {
        struct tensor_view *t = &s->tensors[i];
        uint64_t off = offsets[i];
        if (off % align)
            return err_set(
                r->e, ST_USAGE,
                "%s: tensor %s has offset %llu (expected a multiple of the alignment %u)", r->path,
                t->name, (unsigned long long)off, align);
        if (start > r->size || off > r->size - start || t->n_bytes > r->size - start - off)
            return err_set(r->e, ST_USAGE,
                           "%s: tensor %s data (%llu bytes at data offset %llu) lies past the end "
                           "of the %llu-byte file (expected data inside the file)",
                           r->path, t->name, (unsigned long long)t->n_bytes,
                           (unsigned long long)off, (unsigned long long)r->size);
        t->data = r->base + start + off;
        t->file_offset = start + off;
    }
    return ST_OK;
}

static int read_tensors(struct reader *r, struct model_source *s, uint64_t n_t, uint32_t align)
{
    const char *file = src_strndup(s, r->path, strlen(r->path));
    s->tensors = calloc((size_t)MAX(n_t, 1), sizeof *s->tensors);
    struct source_priv *pv = s->priv;
    if (pv) pv->cap_tensors = (int)MAX(n_t, 1);
    uint64_t *offsets = malloc((size_t)MAX(n_t, 1) * sizeof *offsets);
    const char **names = malloc((size_t)MAX(n_t, 1) * sizeof *names);
    int rc = file && s->tensors && offsets && names
                 ? ST_OK
                 : err_set(r->e, ST_RUNTIME, "%s: out of memory", r->path);
    for (uint64_t i = 0; i < n_t && !rc; i++) {
        struct tensor_view *t = &s->tensors[i];
        rc = read_tensor_info(r, s, t, &offsets[i]);
        t->file = file;
        names[i] = t->name ? t->name : "";
        s->n_tensors = (int)i + 1;
    }
    if (!rc) rc = check_unique(r->path, "tensor name", names, s->n_tensors, r->e);
    if (!rc) rc = place_tensors(r, s, offsets, align);
    if (!rc) rc = check_overlap(r, s, offsets);
    free(offsets);
    free(names);
    return rc;
}

/* ---- entry point
 * ----------------------------------------------------------------------------------- */

static int read_header(struct reader *r, struct model_source *s, uint64_t *n_t, uint64_t *n_kv)
{
    if (r->size < 4 || memcmp(r->base, "GGUF", 4) != 0)
        return err_set(r->e, ST_USAGE, "%s: no GGUF magic in the first 4 bytes (expected \"GGUF\")",
                       r->path);
    r->pos = 4;
    int rc = get_u32(r, &s->gguf_version, "version");
    if (rc) return rc;
    if (s->gguf_version != 2 && s->gguf_version != 3)
        return err_set(r->e, ST_USAGE, "%s: GGUF version %u (expected 2 or 3)", r->path,
                       s->gguf_version);
    if ((rc = get_u64(r, n_t, "tensor_count")) || (rc = get_u64(r, n_kv, "kv_count"))) return rc;
    uint64_t rem = left(r);
    if (*n_kv > INT32_MAX || *n_t > INT32_MAX || *n_kv > rem / GGUF_MIN_KV_BYTES ||
        *n_t > (rem - *n_kv * GGUF_MIN_KV_BYTES) / GGUF_MIN_TENSOR_BYTES)
        return err_set(r->e, ST_USAGE,
                       "%s: tensor_count %llu and kv_count %llu cannot fit in the %llu bytes left "
                       "(expected counts the file can hold)",
                       r->path, (unsigned long long)*n_t, (unsigned long long)*n_kv,
                       (unsigned long long)rem);
    return ST_OK;
}

int gguf_parse(const char *path, const uint8_t *base, uint64_t size, struct model_source *s,
               struct err *e)
{
    struct reader r = {path, base, size, 0, e};
    uint64_t n_t = 0, n_kv = 0;
    uint32_t align = GGUF_DEFAULT_ALIGN;
    if (s->n_tensors || s->kv)
        return err_set(e, ST_USAGE,
                       "%s: a GGUF file cannot join other model files (expected one .gguf on its "
                       "own, or safetensors shards)",
                       path);
    s->kind = SOURCE_GGUF;
    int rc = read_header(&r, s, &n_t, &n_kv);
    if (!rc) rc = read_metadata(&r, s, n_kv);
    if (!rc) rc = read_alignment(&r, s, &align);
    if (!rc) rc = read_tensors(&r, s, n_t, align);
    return rc;
}

/* ---- lookups
 * ----------------------------------------------------------------------------------------- */

const struct gguf_kv *gguf_find(const struct model_source *s, const char *key)
{
    for (int i = 0; i < s->n_kv; i++)
        if (s->kv[i].key && strcmp(s->kv[i].key, key) == 0) return &s->kv[i];
    return NULL;
}

/* An integer of type t at p, widened; false for other types and u64 values above INT64_MAX. */
static bool int_at(enum gguf_type t, const uint8_t *p, int64_t *v)
{
    switch (t) {
    case GGUF_U8:
        *v = p[0];
        return true;
    case GGUF_I8:
        *v = (int8_t)p[0];
        return true;
    case GGUF_U16:
        *v = rd_u16(p);
        return true;
    case GGUF_I16:
        *v = (int16_t)rd_u16(p);
        return true;
    case GGUF_U32:
        *v = rd_u32(p);
        return true;
    case GGUF_I32:
        *v = (int32_t)rd_u32(p);
        return true;
    case GGUF_I64:
        *v = (int64_t)rd_u64(p);
        return true;
    case GGUF_U64: {
        uint64_t u = rd_u64(p);
        *v = (int64_t)u;
        return u <= (uint64_t)INT64_MAX;
    }
    default:
        return false;
    }
}

bool gguf_get_u32(const struct model_source *s, const char *key, uint32_t *v)
{
    const struct gguf_kv *kv = gguf_find(s, key);
    int64_t x;
    if (!kv || kv->type == GGUF_ARRAY || !int_at(kv->type, kv->data, &x) || x < 0 || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

bool gguf_get_i64(const struct model_source *s, const char *key, int64_t *v)
{
    const struct gguf_kv *kv = gguf_find(s, key);
    return kv && kv->type != GGUF_ARRAY && int_at(kv->type, kv->data, v);
}

bool gguf_get_f32(const struct model_source *s, const char *key, float *v)
{
    const struct gguf_kv *kv = gguf_find(s, key);
    if (!kv) return false;
    if (kv->type == GGUF_F32) {
        uint32_t bits = rd_u32(kv->data);
        memcpy(v, &bits, 4);
        return true;
    }
    if (kv->type == GGUF_F64) {
        uint64_t bits = rd_u64(kv->data);
        double d;
        memcpy(&d, &bits, 8);
        *v = (float)d;
        return true;
    }
    return false;
}

bool gguf_get_str(const struct model_source *s, const char *key, char *buf, size_t n)
{
    const struct gguf_kv *kv = gguf_find(s, key);
    if (!kv || kv->type != GGUF_STRING || kv->count >= n) return false;
    memcpy(buf, kv->data, (size_t)kv->count);
    buf[kv->count] = 0;
    return true;
}

bool gguf_array_i64(const struct gguf_kv *kv, uint64_t i, int64_t *v)
{
    if (!kv || kv->type != GGUF_ARRAY || i >= kv->count) return false;
    if (kv->elem_type == GGUF_BOOL) {
        *v = kv->data[i] != 0;
        return true;
    }
    if (kv->elem_type > GGUF_F64 || !gguf_scalar_size[kv->elem_type]) return false;
    return int_at(kv->elem_type, kv->data + i * gguf_scalar_size[kv->elem_type], v);
}
