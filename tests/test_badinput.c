/* test_badinput.c - malformed model files must give ST_USAGE with a message naming the file, and
 * never crash. The corpus is made here: a tiny safetensors writer and a tiny GGUF writer produce
 * valid files, which are then broken one way at a time (header fields patched, structure varied,
 * files truncated or extended), and opened both through source_open and from an exact-size heap
 * copy (so AddressSanitizer sees any overread). A seeded fuzz loop then flips bytes and truncates.
 * Folders cover config.json and sharded-index errors, and one valid sharded checkpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader.h"
#include "testutil.h"

static const char *tmp;
static struct t_rng rng;

/* ---- a growable byte buffer
 * ------------------------------------------------------------------------ */

struct buf {
    uint8_t *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    if (n) memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(struct buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}
static void put_u64(struct buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}
static void put_str(struct buf *b, const char *s)
{
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}
static void put_random(struct buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t x = (uint8_t)t_rng_u32(&rng);
        put(b, &x, 1);
    }
}
static void patch_u32(struct buf *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->p[at + i] = (uint8_t)(v >> 8 * i);
}
static void patch_u64(struct buf *b, size_t at, uint64_t v)
{
    patch_u32(b, at, (uint32_t)v);
    patch_u32(b, at + 4, (uint32_t)(v >> 32));
}

/* ---- safetensors writer
 * -------------------------------------------------------------------------- */

struct st_tensor {
    const char *name, *dtype;
    int n_dims;
    uint64_t shape[5];
    uint64_t begin, end; /* data_offsets */
};

static uint64_t st_elem_size(const char *dtype)
{
    static const struct {
        const char *n;
        uint64_t size;
    } sizes[] = {{"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I32", 4},
                 {"I64", 8}, {"U8", 1},  {"I8", 1},   {"F64", 8}};
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++)
        if (strcmp(sizes[i].n, dtype) == 0) return sizes[i].size;
    return 1;
}

/* Contiguous offsets in list order; returns the data size. */
static uint64_t st_layout(struct st_tensor *t, int n)
{
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        uint64_t numel = 1;
        for (int k = 0; k < t[i].n_dims; k++)
            numel *= t[i].shape[k];
        t[i].begin = at;
        t[i].end = at += numel * st_elem_size(t[i].dtype);
    }
    return at;
}

/* u64 N, header text padded with spaces to a multiple of 8, data_len random bytes. */
static struct buf st_raw(const char *header, uint64_t data_len)
{
    struct buf b = {0};
    size_t n = strlen(header), padded = (n + 7) / 8 * 8;
    put_u64(&b, padded);
    put(&b, header, n);
    for (size_t i = n; i < padded; i++)
        put(&b, " ", 1);
    put_random(&b, data_len);
    return b;
}

static struct buf st_write(const struct st_tensor *t, int n, uint64_t data_len)
{
    struct buf h = {0};
    char item[512];
    const char *meta = "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"test\"}";
    put(&h, meta, strlen(meta));
    for (int i = 0; i < n; i++) {
        int k = snprintf(item, sizeof item, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t[i].name,
                         t[i].dtype);
        for (int d = 0; d < t[i].n_dims; d++)
            k += snprintf(item + k, sizeof item - (size_t)k, "%s%llu", d ? "," : "",
                          (unsigned long long)t[i].shape[d]);
        k += snprintf(item + k, sizeof item - (size_t)k, "],\"data_offsets\":[%llu,%llu]}",
                      (unsigned long long)t[i].begin, (unsigned long long)t[i].end);
        put(&h, item, (size_t)k);
    }
    put(&h, "}", 2); /* with the terminator */
    struct buf b = st_raw((const char *)h.p, data_len);
    free(h.p);
    return b;
}

/* The valid base: odd sizes (unaligned starts), rank 0, a zero-size tensor, every accepted dtype.
 */
#define ST_BASE_N 7
static void st_base(struct st_tensor t[ST_BASE_N])
{
    const struct st_tensor base[ST_BASE_N] = {
        {"a", "F32", 2, {4, 8}, 0, 0}, {"e", "F16", 2, {3, 5}, 0, 0}, {"b", "BF16", 1, {17}, 0, 0},
        {"c", "I32", 0, {0}, 0, 0},    {"d", "U8", 2, {0, 5}, 0, 0},  {"f", "I8", 1, {7}, 0, 0},
        {"g", "I64", 1, {2}, 0, 0},
    };
    memcpy(t, base, sizeof base);
}

static struct buf st_valid(void)
{
    struct st_tensor t[ST_BASE_N];
    st_base(t);
    return st_write(t, ST_BASE_N, st_layout(t, ST_BASE_N));
}

/* ---- GGUF writer
 * ----------------------------------------------------------------------------------- */

enum gg_variant {
    GG_VALID,
    GG_DUP_KEY,
    GG_EMPTY_KEY,
    GG_DUP_TENSOR,
    GG_ALIGN0,
    GG_ALIGN3,
    GG_ALIGN_TYPE,
    GG_NDIMS5,
    GG_BAD_BLOCK,
    GG_LONG_NAME,
    GG_DIM_OVERFLOW,
    GG_NEG_DIM,
    GG_VERSION2,
};

/* Where patchable fields landed. */
struct gg_pos {
    size_t version, n_tensors, n_kv, first_key_len, name_str_len, first_kv_type, arr_elem_type,
        arr_count;
    size_t type[8], offset[8];
    size_t data_start; /* where the data section begins */
    int n_tensors_written;
};

struct gg_tensor {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[5];
    uint32_t type;
};

static uint64_t gg_bytes(const struct gg_tensor *t)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->n_dims; i++)
        n *= t->ne[i];
    switch (t->type) {
    case 0:
        return n * 4;
    case 1:
    case 30:
        return n * 2;
    case 2:
        return n / 32 * 18;
    case 8:
        return n / 32 * 34;
    default:
        return n;
    }
}

static struct buf gg_write(enum gg_variant v, struct gg_pos *pos)
{
    struct gg_tensor ts[6] = {
        {"token_embd.weight", 2, {64, 10}, 2},
        {"output_norm.weight", 1, {64}, 0},
        {"blk.0.attn_q.weight", 2, {32, 3}, 8},
        {"blk.0.f16", 2, {5, 3}, 1},
        {"blk.0.bf16", 1, {7}, 30},
        {"scalar", 0, {0}, 0},
    };
    int n_t = 6;
    if (v == GG_DUP_TENSOR) ts[3].name = ts[1].name;
    if (v == GG_NDIMS5) ts[1] = (struct gg_tensor){"five", 5, {1, 1, 1, 1, 64}, 0};
    if (v == GG_BAD_BLOCK) ts[2].ne[0] = 33;
    if (v == GG_LONG_NAME)
        ts[4].name =
            "blk.0.a_name_that_is_much_too_long_for_ggml_because_ggml_names_hold_at_most_63_bytes";
    if (v == GG_DIM_OVERFLOW) ts[3].ne[0] = ts[3].ne[1] = 1ull << 40;
    if (v == GG_NEG_DIM) ts[3].ne[1] = (uint64_t)-3;
    uint32_t align = v == GG_ALIGN0 ? 0 : v == GG_ALIGN3 ? 3 : 32;

    struct buf b = {0};
    struct gg_pos p = {0};
    put(&b, "GGUF", 4);
    p.version = b.n;
    put_u32(&b, v == GG_VERSION2 ? 2 : 3);
    p.n_tensors = b.n;
    put_u64(&b, (uint64_t)n_t);
    p.n_kv = b.n;
    put_u64(&b, 0); /* patched below */
    uint64_t n_kv = 0;
    /* general.architecture = "lfm2" */
    p.first_key_len = b.n;
    put_str(&b, v == GG_EMPTY_KEY ? "" : "general.architecture");
    p.first_kv_type = b.n;
    put_u32(&b, GGUF_STRING);
    put_str(&b, "lfm2"), n_kv++;
    put_str(&b, "general.name"), put_u32(&b, GGUF_STRING);
    p.name_str_len = b.n;
    put_str(&b, "tiny"), n_kv++;
    put_str(&b, "general.alignment"), put_u32(&b, v == GG_ALIGN_TYPE ? GGUF_I32 : GGUF_U32),
        put_u32(&b, align), n_kv++;
    put_str(&b, v == GG_DUP_KEY ? "general.name" : "lfm2.block_count"), put_u32(&b, GGUF_U32),
        put_u32(&b, 6), n_kv++;
    put_str(&b, "t.i8"), put_u32(&b, GGUF_I8), put(&b, "\xff", 1), n_kv++;
    put_str(&b, "t.u16"), put_u32(&b, GGUF_U16), put(&b, "\x34\x12", 2), n_kv++;
    put_str(&b, "t.u64"), put_u32(&b, GGUF_U64), put_u64(&b, 7), n_kv++;
    put_str(&b, "t.u64big"), put_u32(&b, GGUF_U64), put_u64(&b, 1ull << 40), n_kv++;
    put_str(&b, "t.f64"), put_u32(&b, GGUF_F64);
    double d = 0.25;
    put(&b, &d, 8), n_kv++;
    put_str(&b, "t.bool"), put_u32(&b, GGUF_BOOL), put(&b, "\x01", 1), n_kv++;
    put_str(&b, "lfm2.attention.head_count_kv"), put_u32(&b, GGUF_ARRAY);
    p.arr_elem_type = b.n;
    put_u32(&b, GGUF_I32), put_u64(&b, 6);
    for (int i = 0; i < 6; i++)
        put_u32(&b, i == 2 || i == 4 ? 1u : 0u);
    n_kv++;
    put_str(&b, "t.bools"), put_u32(&b, GGUF_ARRAY), put_u32(&b, GGUF_BOOL), put_u64(&b, 3),
        put(&b, "\x01\x00\x01", 3), n_kv++;
    put_str(&b, "tokenizer.ggml.tokens"), put_u32(&b, GGUF_ARRAY), put_u32(&b, GGUF_STRING);
    p.arr_count = b.n;
    put_u64(&b, 50);
    for (int i = 0; i < 50; i++) {
        char tok[16];
        snprintf(tok, sizeof tok, "<tok%d>", i);
        put_str(&b, tok);
    }
    n_kv++;
    patch_u64(&b, p.n_kv, n_kv);

    uint64_t off = 0, a = align && !(align & (align - 1)) ? align : 32;
    for (int i = 0; i < n_t; i++) {
        put_str(&b, ts[i].name);
        put_u32(&b, ts[i].n_dims);
        for (uint32_t k = 0; k < ts[i].n_dims; k++)
            put_u64(&b, ts[i].ne[k]);
        p.type[i] = b.n;
        put_u32(&b, ts[i].type);
        p.offset[i] = b.n;
        put_u64(&b, off);
        if (v != GG_DIM_OVERFLOW && v != GG_NEG_DIM) off += (gg_bytes(&ts[i]) + a - 1) / a * a;
    }
    while (b.n % a)
        put(&b, "\0", 1);
    p.data_start = b.n;
    put_random(&b, (size_t)off);
    p.n_tensors_written = n_t;
    if (pos) *pos = p;
    return b;
}

/* ---- running a case
 * -------------------------------------------------------------------------------- */

static int write_tmp(const char *name, const struct buf *b, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmp, name);
    return t_write_file(path, b->p ? (const void *)b->p : "", b->n);
}

/* Parses b from an exact-size heap copy (ASan sees any overread); returns the status. */
static int parse_mem(bool gguf, const char *path, const struct buf *b, struct err *e,
                     struct model_source *s)
{
    uint8_t *copy = malloc(b->n ? b->n : 1);
    if (b->n) memcpy(copy, b->p, b->n);
    memset(s, 0, sizeof *s);
    int rc = gguf ? gguf_parse(path, copy, b->n, s, e) : safetensors_parse(path, copy, b->n, s, e);
    /* views must lie inside the buffer when parsing succeeds */
    for (int i = 0; rc == ST_OK && i < s->n_tensors; i++) {
        const struct tensor_view *t = &s->tensors[i];
        T_CHECK(t->data >= copy && (uint64_t)(t->data - copy) + t->n_bytes <= b->n,
                "%s: view %s outside buffer", path, t->name);
    }
    source_close(s);
    free(copy);
    return rc;
}

/* b is broken: both source_open and the in-memory parser reject it, naming the file and `what`. */
static void expect_bad(const char *label, bool gguf, struct buf b, const char *what)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s", tmp, label, gguf ? ".gguf" : ".safetensors");
    T_CHECK(t_write_file(path, b.n ? (const void *)b.p : "", b.n) == 0, "write %s", path);
    struct model_source s;
    struct err e;
    strcpy(e.msg, "(poison)");
    int rc = source_open(&s, path, &e);
    if (getenv("T_VERBOSE")) fprintf(stderr, "%-22s %s\n", label, e.msg);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, path) && strstr(e.msg, what) && !strchr(e.msg, '\n'),
            "%s: source_open rc %d msg \"%s\" (want ST_USAGE naming the file and \"%s\")", label,
            rc, e.msg, what);
    strcpy(e.msg, "(poison)");
    rc = parse_mem(gguf, path, &b, &e, &s);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, path) && strstr(e.msg, what),
            "%s: in-memory rc %d msg \"%s\" (want ST_USAGE and \"%s\")", label, rc, e.msg, what);
    free(b.p);
}

/* ---- safetensors cases
 * ----------------------------------------------------------------------------- */

static void test_st_valid(void)
{
    struct buf b = st_valid();
    char path[512];
    write_tmp("valid.safetensors", &b, path, sizeof path);
    struct model_source s;
    struct err e = {{0}};
    int rc = source_open(&s, path, &e);
    T_CHECK(rc == ST_OK && s.n_tensors == ST_BASE_N && s.config == NULL,
            "valid safetensors: rc %d %s", rc, e.msg);
    if (rc == ST_OK) {
        uint64_t n = rd_u64(b.p);
        const struct tensor_view *c = source_find(&s, "c"), *d = source_find(&s, "d"),
                                 *bb = source_find(&s, "b");
        T_CHECK(c && c->n_dims == 0 && tensor_numel(c) == 1 && c->n_bytes == 4 &&
                    c->dtype == DT_I32,
                "rank-0 tensor");
        T_CHECK(d && d->n_dims == 2 && tensor_numel(d) == 0 && d->n_bytes == 0 && d->dtype == DT_U8,
                "zero-size tensor");
        /* b starts right after a (128 bytes) and e (30 bytes): unaligned, and must be the file's
         * bytes */
        T_CHECK(bb && bb->data == s.maps[0].base + 8 + n + 158 &&
                    memcmp(bb->data, b.p + 8 + n + 158, 34) == 0,
                "BF16 view at its data offset");
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(s.st_metadata, "note");
        T_CHECK(cJSON_IsString(note) && strcmp(note->valuestring, "test") == 0,
                "__metadata__ kept");
        T_CHECK(source_find(&s, "__metadata__") == NULL && source_find(&s, "zz") == NULL,
                "no such tensors");
        source_close(&s);
    }
    free(b.p);
}

static struct buf st_mutated(void (*edit)(struct st_tensor *t), uint64_t extra_data)
{
    struct st_tensor t[ST_BASE_N];
    st_base(t);
    uint64_t n = st_layout(t, ST_BASE_N);
    edit(t);
    return st_write(t, ST_BASE_N, n + extra_data);
}
static void ed_overlap(struct st_tensor *t)
{
    t[2].begin -= 4, t[2].end -= 4;
}
static void ed_gap(struct st_tensor *t)
{
    for (int i = 2; i < ST_BASE_N; i++)
        t[i].begin += 4, t[i].end += 4;
}
static void ed_first(struct st_tensor *t)
{
    for (int i = 0; i < ST_BASE_N; i++)
        t[i].begin += 8, t[i].end += 8;
}
static void ed_size(struct st_tensor *t)
{
    t[0].shape[1] = 9;
}
static void ed_dup(struct st_tensor *t)
{
    t[5].name = "a";
}
static void ed_backwards(struct st_tensor *t)
{
    t[6].begin = t[6].end + 16;
}
static void ed_overflow(struct st_tensor *t)
{
    t[0] = (struct st_tensor){"a", "F32", 3, {1ull << 40, 1ull << 40, 1ull << 40}, 0, 128};
}
static void ed_big_bytes(struct st_tensor *t)
{
    t[0] = (struct st_tensor){"a", "I64", 2, {1ull << 31, 1ull << 31}, 0, 128};
}
static void ed_f64(struct st_tensor *t)
{
    t[1].dtype = "F64";
}
static void ed_unknown(struct st_tensor *t)
{
    t[1].dtype = "Q9_X";
}
static void ed_nothing(struct st_tensor *t)
{
    (void)t;
}

static void test_st_bad(void)
{
    expect_bad("st_overlap", false, st_mutated(ed_overlap, 0), "overlap");
    expect_bad("st_gap", false, st_mutated(ed_gap, 4), "gap");
    expect_bad("st_first", false, st_mutated(ed_first, 8), "expected 0");
    expect_bad("st_size", false, st_mutated(ed_size, 0), "need");
    expect_bad("st_dup", false, st_mutated(ed_dup, 0), "duplicate tensor name a");
    expect_bad("st_backwards", false, st_mutated(ed_backwards, 0), "< begin");
    expect_bad("st_overflow", false, st_mutated(ed_overflow, 0), "overflow");
    expect_bad("st_big_bytes", false, st_mutated(ed_big_bytes, 0), "overflow");
    expect_bad("st_f64", false, st_mutated(ed_f64, 0), "unsupported dtype F64 for tensor e");
    expect_bad("st_unknown_dtype", false, st_mutated(ed_unknown, 0),
               "unknown dtype Q9_X for tensor e");
    expect_bad("st_trailing", false, st_mutated(ed_nothing, 3), "trailing bytes");

    struct buf b = st_valid();
    b.n -= 5;
    expect_bad("st_truncated", false, b, "truncated");
    b = st_valid();
    b.n = rd_u64(b.p) + 8 - 10; /* inside the header */
    expect_bad("st_truncated_header", false, b, "runs past the end");
    b = st_valid();
    patch_u64(&b, 0, b.n);
    expect_bad("st_header_past_end", false, b, "runs past the end");
    b = st_valid();
    patch_u64(&b, 0, 100000001);
    expect_bad("st_header_huge", false, b, "100000000");
    b = st_valid();
    patch_u64(&b, 0, UINT64_MAX);
    expect_bad("st_header_max", false, b, "100000000");
    b = st_valid();
    b.n = 5;
    expect_bad("st_short", false, b, "shorter than");
    b = st_valid();
    b.n = 0;
    expect_bad("st_empty", false, b, "0 bytes");

    expect_bad("st_bad_json", false, st_raw("{\"a\": {\"dtype\": \"F32\", ", 0), "not valid JSON");
    expect_bad("st_json_tail", false, st_raw("{} x", 0), "not valid JSON");
    expect_bad("st_empty_header", false, st_raw("", 0), "not valid JSON");
    expect_bad("st_not_object", false, st_raw("[1, 2]", 0), "not a JSON object");
    expect_bad("st_utf8", false, st_raw("{\"\xff\xfe\": 1}", 0), "UTF-8");
    expect_bad("st_overlong_utf8", false, st_raw("{\"\xc0\xaf\": 1}", 0), "UTF-8");
    expect_bad("st_no_dtype", false,
               st_raw("{\"x\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4), "dtype");
    expect_bad(
        "st_neg_shape", false,
        st_raw("{\"x\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4),
        "shape");
    expect_bad(
        "st_frac_shape", false,
        st_raw("{\"x\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", 4),
        "shape");
    expect_bad(
        "st_offsets3", false,
        st_raw("{\"x\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4, 8]}}", 4),
        "data_offsets");
    expect_bad("st_entry_type", false, st_raw("{\"x\": 5}", 0), "not an object");
    expect_bad("st_meta", false, st_raw("{\"__metadata__\": {\"k\": 1}}", 0), "__metadata__");
}

/* ---- GGUF cases
 * ------------------------------------------------------------------------------------ */

static void test_gguf_valid(void)
{
    struct gg_pos pos;
    struct buf b = gg_write(GG_VALID, &pos);
    char path[512];
    write_tmp("valid.gguf", &b, path, sizeof path);
    struct model_source s;
    struct err e = {{0}};
    int rc = source_open(&s, path, &e);
    T_CHECK(rc == ST_OK && s.n_tensors == 6 && s.n_kv == 13 && s.gguf_version == 3,
            "valid gguf: rc %d %s", rc, e.msg);
    if (rc == ST_OK) {
        uint32_t u = 0;
        float f = 0;
        int64_t x = -9;
        T_CHECK(gguf_get_u32(&s, "t.u64", &u) && u == 7, "u64 that fits reads as u32");
        T_CHECK(gguf_get_u32(&s, "t.u16", &u) && u == 0x1234, "u16 reads as u32");
        T_CHECK(!gguf_get_u32(&s, "t.u64big", &u) && !gguf_get_u32(&s, "t.i8", &u) &&
                    !gguf_get_u32(&s, "t.bool", &u),
                "values that do not fit u32 (or are not integers) are refused");
        T_CHECK(gguf_get_f32(&s, "t.f64", &f) && f == 0.25f, "f64 reads as f32");
        const struct gguf_kv *bools = gguf_find(&s, "t.bools");
        T_CHECK(gguf_array_i64(bools, 2, &x) && x == 1 && gguf_array_i64(bools, 1, &x) && x == 0,
                "bool array");
        T_CHECK(!gguf_array_i64(gguf_find(&s, "tokenizer.ggml.tokens"), 0, &x),
                "string array is not an integer array");
        const struct tensor_view *q = source_find(&s, "token_embd.weight"),
                                 *sc = source_find(&s, "scalar");
        T_CHECK(q && q->dtype == DT_Q4_0 && q->n_dims == 2 && q->shape[0] == 10 &&
                    q->shape[1] == 64 && q->n_bytes == 360,
                "Q4_0 tensor in torch order");
        T_CHECK(q && (q->data - s.maps[0].base) % 32 == 0, "data section aligned to 32");
        T_CHECK(sc && sc->n_dims == 0 && sc->n_bytes == 4, "rank-0 GGUF tensor");
        T_CHECK(source_find(&s, "blk.0.bf16") && source_find(&s, "blk.0.bf16")->dtype == DT_BF16,
                "BF16 tensor");
        source_close(&s);
    }
    free(b.p);
    b = gg_write(GG_VERSION2, NULL);
    struct model_source s2;
    T_CHECK(parse_mem(true, "v2.gguf", &b, &e, &s2) == ST_OK, "GGUF v2 accepted: %s", e.msg);
    free(b.p);
}

static void test_gguf_bad(void)
{
    struct gg_pos pos;
    struct buf b;
#define PATCHED(label, what, stmt)                                                                 \
    do {                                                                                           \
        b = gg_write(GG_VALID, &pos);                                                              \
        stmt;                                                                                      \
        expect_bad(label, true, b, what);                                                          \
    } while (0)
    PATCHED("gg_magic", "magic", b.p[0] = 'X');
    PATCHED("gg_version1", "version", patch_u32(&b, pos.version, 1));
    PATCHED("gg_version4", "version", patch_u32(&b, pos.version, 4));
    PATCHED("gg_tensor_count", "cannot fit", patch_u64(&b, pos.n_tensors, UINT64_MAX));
    PATCHED("gg_kv_count", "cannot fit", patch_u64(&b, pos.n_kv, 1ull << 61));
    PATCHED("gg_kv_count_more", "expected", patch_u64(&b, pos.n_kv, 14));
    PATCHED("gg_tensor_count_more", "expected", patch_u64(&b, pos.n_tensors, 40));
    PATCHED("gg_key_len", "needs", patch_u64(&b, pos.first_key_len, (uint64_t)b.n * 2));
    PATCHED("gg_str_len", "needs", patch_u64(&b, pos.name_str_len, UINT64_MAX - 3));
    PATCHED("gg_kv_type", "unknown value type 13", patch_u32(&b, pos.first_kv_type, 13));
    PATCHED("gg_nested", "array of arrays", patch_u32(&b, pos.arr_elem_type, GGUF_ARRAY));
    PATCHED("gg_arr_elem", "unknown array element type", patch_u32(&b, pos.arr_elem_type, 77));
    PATCHED("gg_arr_count", "runs past the end", patch_u64(&b, pos.arr_count, 1ull << 60));
    PATCHED("gg_arr_count_more", "expected", patch_u64(&b, pos.arr_count, 51));
    /* enough bytes left for 50 lengths, not for 50 strings: the per-string bound must catch it */
    PATCHED("gg_arr_string_cut", "of the array runs past the end", b.n = pos.arr_count + 8 + 450);
    PATCHED("gg_type_unknown", "unknown ggml type 99 for tensor output_norm.weight",
            patch_u32(&b, pos.type[1], 99));
    PATCHED("gg_type_removed", "unknown ggml type 4", patch_u32(&b, pos.type[1], 4));
    PATCHED("gg_q4_k", "unsupported type Q4_K for tensor token_embd.weight",
            patch_u32(&b, pos.type[0], 12));
    PATCHED("gg_q6_k", "unsupported type Q6_K for tensor", patch_u32(&b, pos.type[0], 14));
    PATCHED("gg_q5_1", "unsupported type Q5_1 for tensor", patch_u32(&b, pos.type[2], 7));
    PATCHED("gg_past_end", "past the end",
            patch_u64(&b, pos.offset[4], rd_u64(b.p + pos.offset[4]) + 4096));
    PATCHED("gg_offset_align", "multiple of the alignment",
            patch_u64(&b, pos.offset[4], rd_u64(b.p + pos.offset[4]) + 1));
    PATCHED("gg_truncated_data", "past the end", b.n -= 40);
    PATCHED("gg_truncated_infos", "needs", b.n = pos.offset[3]);
    PATCHED("gg_truncated_header", "needs", b.n = 20);
    PATCHED("gg_short", "magic", b.n = 3);
    PATCHED("gg_empty", "magic", b.n = 0);
#undef PATCHED
    static const struct {
        enum gg_variant v;
        const char *label, *what;
    } variants[] = {
        {GG_DUP_KEY, "gg_dup_key", "duplicate metadata key general.name"},
        {GG_EMPTY_KEY, "gg_empty_key", "empty metadata key"},
        {GG_DUP_TENSOR, "gg_dup_tensor", "duplicate tensor name output_norm.weight"},
        {GG_ALIGN0, "gg_align0", "power of two"},
        {GG_ALIGN3, "gg_align3", "power of two"},
        {GG_ALIGN_TYPE, "gg_align_type", "general.alignment"},
        {GG_NDIMS5, "gg_ndims5", "5 dims"},
        {GG_BAD_BLOCK, "gg_bad_block", "not a multiple of the Q8_0 block"},
        {GG_LONG_NAME, "gg_long_name", "expected under 64"},
        {GG_DIM_OVERFLOW, "gg_dim_overflow", "overflow"},
        {GG_NEG_DIM, "gg_neg_dim", "negative dim"},
    };
    for (size_t i = 0; i < ARRAY_LEN(variants); i++)
        expect_bad(variants[i].label, true, gg_write(variants[i].v, NULL), variants[i].what);
}

/* ---- folders
 * ----------------------------------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    T_CHECK(t_write_file(path, text, strlen(text)) == 0, "write %s", path);
}

static const char *mkfolder(const char *name)
{
    static char dir[8][512];
    static int k;
    char *d = dir[k++ % 8];
    snprintf(d, sizeof dir[0], "%s/%s", tmp, name);
    mkdir(d, 0755);
    return d;
}

static void write_in(const char *dir, const char *file, const struct buf *b)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    T_CHECK(t_write_file(p, b->p, b->n) == 0, "write %s", p);
}

/* Folder open fails with ST_USAGE; message names `names` and contains `what`. */
static void expect_bad_folder(const char *dir, const char *names, const char *what)
{
    struct model_source s;
    struct err e;
    strcpy(e.msg, "(poison)");
    int rc = source_open(&s, dir, &e);
    if (getenv("T_VERBOSE")) fprintf(stderr, "%-22s %s\n", "folder", e.msg);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, names) && strstr(e.msg, what),
            "folder %s: rc %d msg \"%s\" (want \"%s\")", dir, rc, e.msg, what);
}

/* Shard 1 holds a, e, b; shard 2 holds c, d, f, g. */
static void write_shards(const char *dir)
{
    struct st_tensor t[ST_BASE_N];
    st_base(t);
    uint64_t n1 = st_layout(t, 3), n2 = st_layout(t + 3, 4);
    struct buf s1 = st_write(t, 3, n1), s2 = st_write(t + 3, 4, n2);
    write_in(dir, "model-00001-of-00002.safetensors", &s1);
    write_in(dir, "model-00002-of-00002.safetensors", &s2);
    free(s1.p);
    free(s2.p);
}

static void write_index(const char *dir, const char *map_body)
{
    char p[600], text[2048];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    snprintf(text, sizeof text, "{\"metadata\": {\"total_size\": 1}, \"weight_map\": {%s}}",
             map_body);
    write_text(p, text);
}

#define SH1 "model-00001-of-00002.safetensors"
#define SH2 "model-00002-of-00002.safetensors"
#define GOOD_MAP                                                                                   \
    "\"a\": \"" SH1 "\", \"e\": \"" SH1 "\", \"b\": \"" SH1 "\", \"c\": \"" SH2                    \
    "\", \"d\": \"" SH2 "\", \"f\": \"" SH2 "\", \"g\": \"" SH2 "\""

static void test_folders(void)
{
    char p[600];
    struct buf st = st_valid();

    const char *nocfg = mkfolder("no_config");
    write_in(nocfg, "model.safetensors", &st);
    expect_bad_folder(nocfg, nocfg, "no config.json in folder");

    const char *badcfg = mkfolder("bad_config");
    write_in(badcfg, "model.safetensors", &st);
    snprintf(p, sizeof p, "%s/config.json", badcfg);
    write_text(p, "{\"model_type\": \"lfm2\", ");
    expect_bad_folder(badcfg, "config.json", "invalid JSON");

    const char *noweights = mkfolder("no_weights");
    snprintf(p, sizeof p, "%s/config.json", noweights);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    expect_bad_folder(noweights, noweights, "model.safetensors");

    const char *badst = mkfolder("bad_weights");
    snprintf(p, sizeof p, "%s/config.json", badst);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    struct buf trunc = st_valid();
    trunc.n -= 1;
    write_in(badst, "model.safetensors", &trunc);
    free(trunc.p);
    expect_bad_folder(badst, "bad_weights/model.safetensors", "truncated");

    snprintf(p, sizeof p, "%s/does-not-exist", tmp);
    expect_bad_folder(p, p, "built-in model name");

    /* A valid sharded checkpoint: every tensor once, each from its own shard file. */
    const char *sh = mkfolder("sharded");
    snprintf(p, sizeof p, "%s/config.json", sh);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(sh);
    write_index(sh, GOOD_MAP);
    struct model_source s;
    struct err e = {{0}};
    int rc = source_open(&s, sh, &e);
    T_CHECK(rc == ST_OK && s.n_tensors == ST_BASE_N && s.n_maps == 2 && s.config,
            "sharded open: rc %d %s", rc, e.msg);
    if (rc == ST_OK) {
        const struct tensor_view *b = source_find(&s, "b"), *g = source_find(&s, "g");
        T_CHECK(b && strstr(b->file, SH1) && g && strstr(g->file, SH2),
                "tensors come from their shards");
        T_CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s.st_metadata, "format")),
                "first shard's metadata");
        source_close(&s);
    }

    const char *missing = mkfolder("missing_shard");
    snprintf(p, sizeof p, "%s/config.json", missing);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(missing);
    write_index(missing, GOOD_MAP ", \"h\": \"model-00003-of-00003.safetensors\"");
    expect_bad_folder(missing, "model.safetensors.index.json", "model-00003-of-00003.safetensors");

    const char *absent = mkfolder("absent_tensor");
    snprintf(p, sizeof p, "%s/config.json", absent);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(absent);
    write_index(absent, GOOD_MAP ", \"zz\": \"" SH1 "\"");
    expect_bad_folder(absent, "model.safetensors.index.json", "tensor zz");

    const char *dup = mkfolder("dup_across_shards");
    snprintf(p, sizeof p, "%s/config.json", dup);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(dup);
    write_in(dup, "extra.safetensors", &st); /* holds a..g again */
    write_index(dup, GOOD_MAP ", \"zz\": \"extra.safetensors\"");
    expect_bad_folder(dup, "model.safetensors.index.json", "in both");

    const char *badidx = mkfolder("bad_index");
    snprintf(p, sizeof p, "%s/config.json", badidx);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", badidx);
    write_text(p, "{\"weight_map\": [1, 2]}");
    expect_bad_folder(badidx, "model.safetensors.index.json", "weight_map");
    free(st.p);
}

/* ---- fuzz
 * -------------------------------------------------------------------------------------------- */

static void fuzz(bool gguf, int iters)
{
    struct gg_pos pos;
    struct buf base = gguf ? gg_write(GG_VALID, &pos) : st_valid();
    /* the structure: GGUF up to the data section; safetensors the 8-byte length and the header */
    size_t hot = gguf ? pos.data_start : (size_t)rd_u64(base.p) + 8;
    int ok = 0, usage = 0, other = 0, unnamed = 0;
    const char *path = gguf ? "fuzz.gguf" : "fuzz.safetensors";
    for (int it = 0; it < iters; it++) {
        struct buf b = {malloc(base.n), base.n, base.n};
        memcpy(b.p, base.p, base.n);
        uint32_t mode = t_rng_u32(&rng) % 4;
        if (mode != 3) {
            int flips = 1 + (int)(t_rng_u32(&rng) % 4);
            for (int k = 0; k < flips; k++) {
                size_t at = t_rng_u32(&rng) % (mode == 2 ? b.n : hot);
                b.p[at] = mode == 0 ? (uint8_t)(b.p[at] ^ (1u << (t_rng_u32(&rng) % 8)))
                                    : (uint8_t)t_rng_u32(&rng);
            }
        }
        if (mode == 3 || t_rng_u32(&rng) % 8 == 0) b.n = t_rng_u32(&rng) % (b.n + 1);
        struct model_source s;
        struct err e;
        strcpy(e.msg, "(poison)");
        int rc = parse_mem(gguf, path, &b, &e, &s);
        ok += rc == ST_OK;
        usage += rc == ST_USAGE;
        other += rc != ST_OK && rc != ST_USAGE;
        unnamed += rc == ST_USAGE && !strstr(e.msg, path);
        free(b.p);
    }
    T_CHECK(other == 0 && unnamed == 0,
            "%s fuzz: %d other codes, %d messages without the file name", path, other, unnamed);
    T_CHECK(usage > iters / 4 && ok > 0,
            "%s fuzz: %d rejected, %d accepted of %d (mutations must both break and spare)", path,
            usage, ok, iters);
    free(base.p);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    t_rng_seed(&rng, 20240611);
    tmp = t_tmpdir();
    T_CHECK(tmp != NULL, "mkdtemp");
    if (!tmp) return t_finish();
    test_st_valid();
    test_st_bad();
    test_gguf_valid();
    test_gguf_bad();
    test_folders();
    /* FUZZ_ITERS=N runs a longer campaign by hand; ctest runs 1000 of each. */
    int iters = getenv("FUZZ_ITERS") ? atoi(getenv("FUZZ_ITERS")) : 1000;
    fuzz(false, iters);
    fuzz(true, iters);
    char cmd[600], out[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    t_run(cmd, out, sizeof out);
    return t_finish();
}
