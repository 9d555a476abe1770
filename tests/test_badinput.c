/* test_badinput.c - malformed model files must give ST_USAGE with a message naming the file, and
 * never crash. The corpus is made here: a tiny safetensors writer and a tiny GGUF writer produce
 * valid files, which are then broken one way at a time (header fields patched, structure varied,
 * files truncated or extended), and opened both through source_open and from an exact-size heap
 * copy (so AddressSanitizer sees any overread). A seeded fuzz loop then flips bytes and truncates.
 * Folders cover config.json and sharded-index errors, and one valid sharded checkpoint. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden.h"
#include "input.h"
#include "kernels.h"
#include "loader.h"
#include "model.h"
#include "profile.h"
#include "synth_profile.h"
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
    expect_bad("st_truncated_header", false, b, "not a safetensors file: header length");
    b = st_valid();
    patch_u64(&b, 0, b.n);
    expect_bad("st_header_past_end", false, b, "exceeds the file size");
    b = st_valid();
    patch_u64(&b, 0, 100000001);
    expect_bad("st_header_huge", false, b, "exceeds the file size");
    b = st_valid();
    patch_u64(&b, 0, UINT64_MAX);
    expect_bad("st_header_max", false, b, "expected a checkpoint folder, .safetensors, .gguf");
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

/* ---- hostile input (issue 11)
 * ------------------------------------------------------------------------------ */

static const char *fixtures;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL test_badinput: a case hung (alarm): an open or read blocked\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

/* Opens dir (folder or file) and, when it opens, describes and binds it whole; returns the first
 * failing status with e filled. */
static int open_describe(const char *path, struct err *e)
{
    struct model_source s;
    struct model_desc d;
    struct shard sh;
    int rc = source_open(&s, path, e);
    if (rc) return rc;
    rc = model_describe(&s, &d, e);
    if (!rc) rc = shard_bind(&s, &d, 0, d.n_layers, &sh, e);
    if (!rc) shard_free(&sh);
    source_close(&s);
    return rc;
}

static void expect_open(const char *label, const char *path, int want, const char *what)
{
    struct err e;
    strcpy(e.msg, "(poison)");
    int rc = open_describe(path, &e);
    if (getenv("T_VERBOSE")) fprintf(stderr, "%-22s %s\n", label, e.msg);
    T_CHECK(rc == want && (!what || strstr(e.msg, what)), "%s: rc %d msg \"%s\" (want %d, \"%s\")",
            label, rc, e.msg, want, what ? what : "");
}

/* A folder named label with model.safetensors -> the fixture's and config.json = text. */
static const char *model_folder(const char *label, const char *fixture, const char *config_text)
{
    const char *dir = mkfolder(label);
    char p[700], target[700];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    snprintf(target, sizeof target, "%s/%s/model.safetensors", fixtures, fixture);
    unlink(p);
    T_CHECK(symlink(target, p) == 0, "symlink %s", p);
    snprintf(p, sizeof p, "%s/config.json", dir);
    unlink(p);
    write_text(p, config_text);
    return dir;
}

/* The fixture's config.json with key (dotted: "rope_parameters.rope_theta") set to the JSON text
 * value ("null" removes nothing: it writes null). */
static char *config_with(const char *fixture, const char *key, const char *value)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s/config.json", fixtures, fixture);
    cJSON *root = t_json_file(p), *obj = root;
    char k[128];
    snprintf(k, sizeof k, "%s", key);
    char *dot = strchr(k, '.');
    if (dot) {
        *dot = 0;
        obj = cJSON_GetObjectItemCaseSensitive(root, k);
    }
    const char *leaf = dot ? dot + 1 : k;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, leaf);
    cJSON_AddItemToObject(obj, leaf, value[0] == '@' ? cJSON_CreateString(value + 1)
                                                     : cJSON_Parse(value));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

static void test_special_files(void)
{
    char p[700], fifo[700];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmp);
    T_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    expect_open("fifo_model_file", fifo, ST_USAGE, "not a regular file");

    /* a FIFO as model.safetensors, as config.json; /dev/zero as config.json */
    const char *d1 = mkfolder("fifo_weights");
    snprintf(p, sizeof p, "%s/config.json", d1);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    snprintf(p, sizeof p, "%s/model.safetensors", d1);
    T_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_open("fifo_model_safetensors", d1, ST_USAGE, "not a regular file");

    const char *d2 = mkfolder("fifo_config");
    snprintf(p, sizeof p, "%s/config.json", d2);
    T_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_open("fifo_config", d2, ST_USAGE, "not a regular file");

    const char *d3 = mkfolder("zero_config");
    snprintf(p, sizeof p, "%s/config.json", d3);
    T_CHECK(symlink("/dev/zero", p) == 0, "symlink");
    expect_open("dev_zero_config", d3, ST_USAGE, "character device");

    /* a FIFO as an index shard and as the index */
    const char *d4 = mkfolder("fifo_shard");
    snprintf(p, sizeof p, "%s/config.json", d4);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(d4);
    write_index(d4, GOOD_MAP ", \"h\": \"fifo.safetensors\"");
    snprintf(p, sizeof p, "%s/fifo.safetensors", d4);
    T_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_open("fifo_shard", d4, ST_USAGE, "not a regular file");
    const char *d5 = mkfolder("fifo_index");
    snprintf(p, sizeof p, "%s/config.json", d5);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d5);
    T_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_open("fifo_index", d5, ST_USAGE, "not a regular file");

    /* JSON over the cap: refused by size, before reading (sparse file) */
    const char *d6 = mkfolder("huge_config");
    snprintf(p, sizeof p, "%s/config.json", d6);
    FILE *f = fopen(p, "w");
    T_CHECK(f && ftruncate(fileno(f), (off_t)(65ll << 20)) == 0, "sparse config");
    if (f) fclose(f);
    write_shards(d6);
    expect_open("huge_config", d6, ST_USAGE, "64 MiB cap");

    /* --compare inputs go through the same reader */
    struct profile prof;
    struct err e;
    int rc = report_json_read(fifo, &prof, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "not a regular file"), "compare fifo: %d %s", rc, e.msg);
    rc = report_json_read("/dev/zero", &prof, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "character device"), "compare /dev/zero: %d %s", rc,
            e.msg);
}

static void test_strict_json(void)
{
    static const struct {
        const char *label, *text, *what;
    } cases[] = {
        {"cfg_trailing", "{\"model_type\": \"lfm2\"} x", "more after its JSON value"},
        {"cfg_two_objects", "{\"model_type\": \"lfm2\"}{\"model_type\": \"lfm2\"}",
         "more after its JSON value"},
        {"cfg_dup_key", "{\"model_type\": \"lfm2\", \"model_type\": \"qwen3_5\"}",
         "\"model_type\" twice"},
        {"cfg_dup_nested", "{\"model_type\": \"lfm2\", \"r\": {\"a\": 1, \"b\": 2, \"a\": 3}}",
         "\"a\" twice"},
        {"cfg_nul", "{\"model_type\": \"lfm2\"}\0", "more after"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *dir = mkfolder(cases[i].label);
        char p[700];
        snprintf(p, sizeof p, "%s/config.json", dir);
        size_t n = strlen(cases[i].text) + (strstr(cases[i].label, "nul") ? 1 : 0);
        T_CHECK(t_write_file(p, cases[i].text, n) == 0, "write");
        write_shards(dir);
        expect_open(cases[i].label, dir, ST_USAGE, cases[i].what);
    }
    const char *dir = mkfolder("index_dup");
    char p[700];
    snprintf(p, sizeof p, "%s/config.json", dir);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(dir);
    write_index(dir, GOOD_MAP ", \"a\": \"" SH1 "\"");
    expect_open("index_dup_key", dir, ST_USAGE, "\"a\" twice");
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    write_text(p, "{\"weight_map\": {" GOOD_MAP "}} {}");
    expect_open("index_trailing", dir, ST_USAGE, "more after");
}

static void test_config_keys(void)
{
    static const struct {
        const char *fixture, *key, *value, *what;
    } cases[] = {
        {"lfm2-tiny", "full_attn_idxs", "[2.9, 4.2]", "2.9"},
        {"lfm2-tiny", "conv_L_cache", "3.5", "'conv_L_cache' is 3.5"},
        {"lfm2-tiny", "norm_eps", "@1e-5", "'norm_eps' is a string"},
        {"lfm2-tiny", "vocab_size", "@1000", "'vocab_size' is a string"},
        {"lfm2-tiny", "vocab_size", "0", "'vocab_size' is 0"},
        {"lfm2-tiny", "norm_eps", "0", "'norm_eps' is 0"},
        {"lfm2-tiny", "norm_eps", "-1e-5", "'norm_eps' is -1e-05"},
        {"lfm2-tiny", "norm_eps", "1e300", "'norm_eps' is 1e+300"},
        {"lfm2-tiny", "rope_parameters.rope_theta", "0", "'rope_theta' is 0"},
        {"lfm2-tiny", "rope_parameters.rope_theta", "-10000", "'rope_theta' is -10000"},
        {"lfm2-tiny", "rope_parameters.rope_theta", "1e300", "'rope_theta' is 1e+300"},
        {"lfm2-tiny", "hidden_size", "2147483648", "'hidden_size' is 2147483648"},
        {"lfm2-tiny", "num_hidden_layers", "5.5", "not an integer"},
        {"lfm2-tiny", "tie_word_embeddings", "@yes", "'tie_word_embeddings' is a string"},
        {"lfm2-tiny", "tie_word_embeddings", "0", "'tie_word_embeddings' is a number (expected a boolean"},
        {"lfm2-tiny", "layer_types", "@conv", "'layer_types' is a string"},
        {"lfm2-tiny", "max_position_embeddings", "4.5", "'max_position_embeddings' is 4.5"},
        {"lfm2-tiny", "text_config", "5", "'text_config' is a number"},
        {"lfm2-tiny", "rope_parameters", "@x", "'rope_parameters' is a string"},
        {"qwen35-tiny", "text_config.partial_rotary_factor", "1e300", "'partial_rotary_factor'"},
        {"qwen35-tiny", "text_config.rms_norm_eps", "1e300", "'rms_norm_eps' is 1e+300"},
        {"qwen35-tiny", "text_config.full_attention_interval", "2.5", "full_attention_interval"},
        {"glm-ocr-tiny", "text_config.rms_norm_eps", "@1e-5", "'rms_norm_eps' is a string"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char label[64];
        snprintf(label, sizeof label, "cfg_key_%zu", i);
        char *text = config_with(cases[i].fixture, cases[i].key, cases[i].value);
        /* full_attn_idxs counts only when layer_types is absent */
        if (strstr(cases[i].key, "full_att")) {
            cJSON *j = cJSON_Parse(text), *tc = cJSON_GetObjectItemCaseSensitive(j, "text_config");
            cJSON_DeleteItemFromObjectCaseSensitive(tc ? tc : j, "layer_types");
            free(text);
            text = cJSON_Print(j);
            cJSON_Delete(j);
        }
        const char *dir = model_folder(label, cases[i].fixture, text);
        free(text);
        expect_open(label, dir, ST_USAGE, cases[i].what);
    }
    /* the fixtures themselves (null keys included) still load */
    const char *names[] = {"lfm2-tiny", "qwen35-tiny", "glm-ocr-tiny"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", fixtures, names[i]);
        expect_open(names[i], p, ST_OK, NULL);
    }
}

/* The fixture lfm2-tiny/model-f16.gguf read whole, for patching. */
static struct buf gguf_fixture(struct model_source *s)
{
    char p[600];
    snprintf(p, sizeof p, "%s/lfm2-tiny/model-f16.gguf", fixtures);
    struct buf b = {0};
    FILE *f = fopen(p, "rb");
    T_CHECK(f != NULL, "open %s", p);
    if (!f) return b;
    fseek(f, 0, SEEK_END);
    b.n = b.cap = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = malloc(b.n);
    T_CHECK(fread(b.p, 1, b.n, f) == b.n, "read");
    fclose(f);
    struct err e;
    T_CHECK(source_open(s, p, &e) == ST_OK, "%s", e.msg);
    return b;
}

static size_t kv_at(const struct model_source *s, const char *key)
{
    const struct gguf_kv *kv = gguf_find(s, key);
    CHECK(kv);
    return (size_t)(kv->data - s->maps[0].base);
}

static void expect_gguf(const char *label, struct buf *b, const char *what)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s.gguf", tmp, label);
    T_CHECK(t_write_file(p, b->p, b->n) == 0, "write");
    expect_open(label, p, ST_USAGE, what);
}

static void test_gguf_describe(void)
{
    struct model_source s;
    struct buf b = gguf_fixture(&s);
    if (!b.p) return;
    struct buf c = {malloc(b.n), b.n, b.n};
    float nan = NAN, inf = INFINITY, zero = 0;

#define GG_CASE(label, what, stmt)                                                                 \
    do {                                                                                           \
        memcpy(c.p, b.p, b.n);                                                                     \
        c.n = b.n;                                                                                 \
        stmt;                                                                                      \
        expect_gguf(label, &c, what);                                                              \
    } while (0)
    GG_CASE("gg_vocab0", "'lfm2.vocab_size' is 0", patch_u32(&c, kv_at(&s, "lfm2.vocab_size"), 0));
    GG_CASE("gg_eps_nan", "layer_norm_rms_epsilon' is nan",
            memcpy(c.p + kv_at(&s, "lfm2.attention.layer_norm_rms_epsilon"), &nan, 4));
    GG_CASE("gg_eps_zero", "layer_norm_rms_epsilon' is 0",
            memcpy(c.p + kv_at(&s, "lfm2.attention.layer_norm_rms_epsilon"), &zero, 4));
    GG_CASE("gg_theta_inf", "freq_base' is inf",
            memcpy(c.p + kv_at(&s, "lfm2.rope.freq_base"), &inf, 4));
    GG_CASE("gg_ctx_type", "context_length' has value type",
            patch_u32(&c, kv_at(&s, "lfm2.context_length") - 4, GGUF_F32));
    /* 4 heads, kv heads 3 on the attention layers: not a multiple */
    GG_CASE("gg_heads", "not a multiple of 3 kv heads", {
        patch_u32(&c, kv_at(&s, "lfm2.attention.head_count"), 4);
        size_t at = kv_at(&s, "lfm2.attention.head_count_kv");
        for (int l = 0; l < 6; l++)
            if (rd_u32(c.p + at + 4 * l)) patch_u32(&c, at + 4 * l, 3);
    });
    /* a 100-byte architecture: 96 bytes spliced into the string keep the data section aligned */
    {
        size_t at = kv_at(&s, "general.architecture"); /* its bytes; the u64 length before */
        struct buf d = {0};
        put(&d, b.p, at - 8);
        put_u64(&d, 100);
        for (int i = 0; i < 100; i++)
            put(&d, "x", 1);
        put(&d, b.p + at + 4, b.n - at - 4);
        expect_gguf("gg_arch100", &d, "is 100 bytes long");
        free(d.p);
    }
#undef GG_CASE
    free(c.p);
    free(b.p);
    source_close(&s);

    /* tensors whose data overlap: one offset shared, and every offset 0 */
    struct gg_pos pos;
    b = gg_write(GG_VALID, &pos);
    patch_u64(&b, pos.offset[3], rd_u64(b.p + pos.offset[2]));
    expect_bad("gg_overlap", true, b, "overlaps tensor");
    b = gg_write(GG_VALID, &pos);
    for (int i = 0; i < 6; i++)
        patch_u64(&b, pos.offset[i], 0);
    expect_bad("gg_all_zero_offsets", true, b, "overlaps tensor");
}

static void test_index_hostile(void)
{
    char p[700];
    /* a tensor in a shard that weight_map does not list */
    const char *d1 = mkfolder("index_unlisted");
    snprintf(p, sizeof p, "%s/config.json", d1);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(d1);
    write_index(d1, "\"a\": \"" SH1 "\", \"e\": \"" SH1 "\", \"c\": \"" SH2 "\", \"d\": \"" SH2
                    "\", \"f\": \"" SH2 "\", \"g\": \"" SH2 "\"");
    expect_bad_folder(d1, "tensor b", "does not list");
    /* a tensor mapped to the other shard */
    write_index(d1, "\"a\": \"" SH1 "\", \"e\": \"" SH1 "\", \"b\": \"" SH2 "\", \"c\": \"" SH2
                    "\", \"d\": \"" SH2 "\", \"f\": \"" SH2 "\", \"g\": \"" SH2 "\"");
    expect_bad_folder(d1, "tensor b", "but it is in");
    /* a shard outside the numbered list: 3 of 2 */
    write_index(d1, GOOD_MAP ", \"zz\": \"model-00003-of-00002.safetensors\"");
    expect_bad_folder(d1, "model-00003-of-00002.safetensors", "not in the list of 2 shards");
    /* a .gguf (or a path outside the folder) listed as a shard */
    const char *d2 = mkfolder("index_gguf_shard");
    snprintf(p, sizeof p, "%s/config.json", d2);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(d2);
    struct buf g = gg_write(GG_VALID, NULL);
    write_in(d2, "x.gguf", &g);
    write_in(d2, "gguf-inside.safetensors", &g);
    write_index(d2, GOOD_MAP ", \"zz\": \"x.gguf\"");
    expect_bad_folder(d2, "x.gguf", "expected the name of a .safetensors file");
    write_index(d2, GOOD_MAP ", \"zz\": \"sub/x.safetensors\"");
    expect_bad_folder(d2, "sub/x.safetensors", "expected the name of a .safetensors file");
    /* GGUF bytes under a .safetensors name: read as safetensors (and refused), nothing leaks */
    write_index(d2, GOOD_MAP ", \"zz\": \"gguf-inside.safetensors\"");
    expect_bad_folder(d2, "gguf-inside.safetensors", "header length");
    free(g.p);
    /* a GGUF never joins other parsed files */
    struct model_source s = {0};
    struct err e;
    g = gg_write(GG_VALID, NULL);
    T_CHECK(gguf_parse("a.gguf", g.p, g.n, &s, &e) == ST_OK, "%s", e.msg);
    T_CHECK(gguf_parse("b.gguf", g.p, g.n, &s, &e) == ST_USAGE && strstr(e.msg, "cannot join"),
            "second GGUF into one source: %s", e.msg);
    source_close(&s);
    free(g.p);
}

/* A folded rank-5 tensor prints its file shape, never the folded one. */
static void test_rank5(void)
{
    struct buf b = st_raw("{\"v\": {\"dtype\": \"U8\", \"shape\": [2, 3, 4, 5, 6], "
                          "\"data_offsets\": [0, 720]}}",
                          720);
    struct model_source s = {0};
    struct err e;
    T_CHECK(safetensors_parse("r5.safetensors", b.p, b.n, &s, &e) == ST_OK, "%s", e.msg);
    const struct tensor_view *v = source_find(&s, "v");
    char shape[96] = "";
    if (v) tensor_shape_str(v, shape, sizeof shape);
    T_CHECK(v && !strcmp(shape, "[2, 3, 4, 5, 6]") && v->rank == 5, "rank-5 shape prints %s",
            shape);
    source_close(&s);
    free(b.p);
    b = st_raw("{\"v\": {\"dtype\": \"U8\", \"shape\": [1,1,1,1,1,1,1,1,2], \"data_offsets\": [0, "
               "2]}}",
               2);
    expect_bad("st_rank9", false, b, "more than 8 dims");
}

/* 300 k tensors or keys load in linear time (the ASan build took minutes when arrays grew one
 * element at a time and lookups were linear). */
static void test_many(void)
{
    const int n = 300000;
    struct buf h = {0};
    put(&h, "{", 1);
    for (int i = 0; i < n; i++) {
        char ent[128];
        int k = snprintf(ent, sizeof ent,
                         "%s\"t%d\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [%d, %d]}",
                         i ? ", " : "", i, i, i + 1);
        put(&h, ent, (size_t)k);
    }
    put(&h, "}", 1);
    put(&h, "", 1);
    struct buf b = st_raw((const char *)h.p, (uint64_t)n);
    free(h.p);
    const char *dir = mkfolder("many");
    char p[700];
    snprintf(p, sizeof p, "%s/config.json", dir);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_in(dir, "model-1.safetensors", &b);
    free(b.p);
    struct buf idx = {0};
    put(&idx, "{\"weight_map\": {", 16);
    for (int i = 0; i < n; i++) {
        char ent[64];
        int k = snprintf(ent, sizeof ent, "%s\"t%d\": \"model-1.safetensors\"", i ? ", " : "", i);
        put(&idx, ent, (size_t)k);
    }
    put(&idx, "}}", 2);
    write_in(dir, "model.safetensors.index.json", &idx);
    free(idx.p);
    double t0 = now_us();
    struct model_source s;
    struct err e;
    int rc = source_open(&s, dir, &e);
    double sec = (now_us() - t0) * 1e-6;
    T_CHECK(rc == ST_OK && s.n_tensors == n, "300k-tensor index: rc %d %s", rc, e.msg);
    if (rc == ST_OK) source_close(&s);
    T_CHECK(sec < 60, "300k tensors through an index took %.1f s (expected linear time)", sec);
    if (getenv("T_VERBOSE")) fprintf(stderr, "300k index: %.2f s\n", sec);

    /* GGUF: 300 k metadata keys */
    struct buf g = {0};
    put(&g, "GGUF", 4);
    put_u32(&g, 3);
    put_u64(&g, 0);
    put_u64(&g, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "k.%d", i);
        put_str(&g, key);
        put_u32(&g, GGUF_U32);
        put_u32(&g, (uint32_t)i);
    }
    t0 = now_us();
    rc = parse_mem(true, "many.gguf", &g, &e, &s);
    sec = (now_us() - t0) * 1e-6;
    T_CHECK(rc == ST_OK && sec < 60, "300k GGUF keys: rc %d %.1f s %s", rc, sec, e.msg);
    free(g.p);
}

/* A golden is checked before the GPU: finite, not all zero, S/T bounded. */
static void test_golden_files(void)
{
    char model[600], gold[600];
    snprintf(model, sizeof model, "%s/lfm2-tiny", fixtures);
    snprintf(gold, sizeof gold, "%s/lfm2-tiny/golden.safetensors", fixtures);
    struct model_source s, gs;
    struct model_desc d;
    struct shard sh;
    struct err e;
    if (source_open(&s, model, &e) || model_describe(&s, &d, &e) ||
        shard_bind(&s, &d, 0, d.n_layers, &sh, &e)) {
        T_CHECK(0, "lfm2-tiny: %s", e.msg);
        return;
    }
    T_CHECK(golden_validate(gold, &d, &sh, &e) == ST_OK, "the fixture golden: %s", e.msg);
    T_CHECK(source_open(&gs, gold, &e) == ST_OK, "%s", e.msg);
    struct buf b = {0};
    put(&b, gs.maps[0].base, gs.maps[0].size);
    const struct tensor_view *lg = source_find(&gs, "logits");
    size_t at = (size_t)(lg->data - gs.maps[0].base), n = lg->n_bytes / 4;
    source_close(&gs);
    char p[600];
    snprintf(p, sizeof p, "%s/gold-bad.safetensors", tmp);
    float nan = NAN, inf = -INFINITY, zero = 0;
    struct {
        const char *label;
        const float *value;
        size_t from, count;
        const char *what;
    } cases[] = {
        {"all_nan", &nan, 0, n, "tensor 'logits' holds nan"},
        {"one_inf", &inf, n / 2, 1, "tensor 'logits' holds -inf"},
        {"seq0_zero", &zero, 0, n / 3, "tensor 'logits' is all zeros in sequence 0"},
    };
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        struct buf x = {malloc(b.n), b.n, b.n};
        memcpy(x.p, b.p, b.n);
        for (size_t i = cases[c].from; i < cases[c].from + cases[c].count; i++)
            memcpy(x.p + at + 4 * i, cases[c].value, 4);
        T_CHECK(t_write_file(p, x.p, x.n) == 0, "write");
        strcpy(e.msg, "(poison)");
        int rc = golden_validate(p, &d, &sh, &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, cases[c].what), "golden %s: rc %d %s", cases[c].label,
                rc, e.msg);
        free(x.p);
    }
    free(b.p);
    /* token tables too large for one step or for the model's positions */
    static const int64_t shapes[][2] = {{1, 100000}, {65536, 2}, {64, 100}};
    for (size_t c = 0; c < ARRAY_LEN(shapes); c++) {
        char hdr[256];
        uint64_t bytes = (uint64_t)(shapes[c][0] * shapes[c][1] * 4);
        snprintf(hdr, sizeof hdr,
                 "{\"tokens\": {\"dtype\": \"I32\", \"shape\": [%lld, %lld], \"data_offsets\": [0, "
                 "%llu]}}",
                 (long long)shapes[c][0], (long long)shapes[c][1], (unsigned long long)bytes);
        struct buf x = st_raw(hdr, bytes);
        T_CHECK(t_write_file(p, x.p, x.n) == 0, "write");
        int rc = golden_validate(p, &d, &sh, &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, "too large"), "golden tokens [%lld, %lld]: rc %d %s",
                (long long)shapes[c][0], (long long)shapes[c][1], rc, e.msg);
        free(x.p);
    }
    shard_free(&sh);
    source_close(&s);
}

/* --compare files: strict JSON, integers where integers are meant, typed optional fields,
 * bounded counts. */
/* An escaped NUL (\u0000) in a JSON string: cJSON would end the string there and accept the
 * part before it ("BF16\u0000" as BF16), so every JSON reader refuses it, naming the key. */
static void test_nul_strings(void)
{
    expect_bad("st_dtype_nul", false,
               st_raw("{\"a\":{\"dtype\":\"F32\\u0000\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
               "escaped NUL (\\u0000) in a string at byte");
    expect_bad("st_key_nul", false,
               st_raw("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
               "key \"a\\u0000b\"");

    char p[700];
    snprintf(p, sizeof p, "%s/lfm2-tiny/config.json", fixtures);
    FILE *f = fopen(p, "r");
    char cfg[16384];
    size_t n = f ? fread(cfg, 1, sizeof cfg - 1, f) : 0;
    if (f) fclose(f);
    cfg[n] = 0;
    char *at = strstr(cfg, "\"model_type\": \"lfm2\"");
    T_CHECK(at && n < sizeof cfg - 16, "fixture config has model_type");
    if (at) {
        char text[16400];
        int k = (int)(at - cfg);
        snprintf(text, sizeof text, "%.*s\"model_type\": \"lfm2\\u0000\"%s", k, cfg,
                 at + strlen("\"model_type\": \"lfm2\""));
        const char *dir = model_folder("cfg_model_type_nul", "lfm2-tiny", text);
        expect_open("cfg_model_type_nul", dir, ST_USAGE, "key \"model_type\"");
    }

    const char *d = mkfolder("index_nul");
    snprintf(p, sizeof p, "%s/config.json", d);
    write_text(p, "{\"model_type\": \"lfm2\"}");
    write_shards(d);
    write_index(d, GOOD_MAP ", \"zz\": \"" SH1 "\\u0000../x\"");
    expect_bad_folder(d, "key \"zz\"", "escaped NUL");

    struct profile prof;
    struct err e;
    snprintf(p, sizeof p, "%s/profile_nul.json", tmp);
    write_text(p, "{\"tool\": \"lfm2-profile-stage\\u0000\"}");
    int rc = report_json_read(p, &prof, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "escaped NUL") && strstr(e.msg, "key \"tool\""),
            "compare file with a NUL: %d %s", rc, e.msg);
    /* an escaped backslash before u0000 is no NUL */
    size_t nul_at;
    char key[32];
    static const char ok[] = "{\"a\": \"x\\\\u0000\"}";
    T_CHECK(!input_json_nul(ok, sizeof ok - 1, &nul_at, key, sizeof key), "\\\\u0000 is text");
}

/* Shapes no kernel runs are refused with the model description, before any GPU opens. */
static void test_kernel_shapes(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/lfm2-tiny", fixtures);
    struct model_source src;
    struct model_desc d;
    struct shard s;
    struct err e = {{0}};
    if (source_open(&src, p, &e) || model_describe(&src, &d, &e) || shard_bind(&src, &d, 0, d.n_layers, &s, &e)) {
        T_CHECK(0, "load lfm2-tiny: %s", e.msg);
        return;
    }
    T_CHECK(k_model_check(&d, &s, &e) == ST_OK, "lfm2-tiny runs: %s", e.msg);
    struct model_desc bad = d;
    bad.head_dim = 6;
    bad.rope_dims = 6;
    int rc = k_model_check(&bad, &s, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "head dim 6") && strstr(e.msg, "cannot run"),
            "head dim 6: %d %s", rc, e.msg);
    bad = d;
    bad.n_kv_heads = d.n_heads + 1;
    rc = k_model_check(&bad, &s, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "kv heads"), "kv heads: %d %s", rc, e.msg);
    for (int i = 0; i < s.n; i++)
        if (s.t[i].layer >= 0 && s.t[i].role == W_FFN_DOWN) {
            s.t[i].shape[1] = 12; /* BF16: whole slots of 8 */
            rc = k_model_check(&d, &s, &e);
            T_CHECK(rc == ST_USAGE && strstr(e.msg, "k must be a multiple of 8"), "k 12: %d %s", rc, e.msg);
            break;
        }
    struct model_desc q = {0};
    struct shard qs = {0};
    q.n_layers = 1;
    q.kind[0] = LAYER_DELTANET;
    q.dn_nk = 2, q.dn_nv = 2, q.dn_dk = 6, q.dn_dv = 8, q.dn_conv = 4;
    qs.a = 0, qs.b = 1;
    rc = k_model_check(&q, &qs, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "key head dim 6"), "dk 6: %d %s", rc, e.msg);
    shard_free(&s);
    source_close(&src);
}

static void test_compare_files(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/profile.json", tmp);
    struct profile prof;
    synth_profile(&prof, 7, 3);
    struct err e;
    T_CHECK(report_json_write(p, &prof, &e) == ST_OK, "%s", e.msg);
    profile_free(&prof);
    cJSON *good = t_json_file(p);
    struct {
        const char *label, *path, *value, *what;
    } cases[] = {
        {"cols_4.7", "shape.cols", "4.7", "shape.cols"},
        {"n_layers_str", "model.n_layers", "\"6\"", "model.n_layers"},
        {"copy_gbps_str", "device.copy_gbps", "\"fast\"", "device.copy_gbps"},
        {"has_ts_num", "device.has_timestamps", "1", "device.has_timestamps"},
        {"tok_s_str", "tok_s", "\"x\"", "tok_s"},
    };
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        cJSON *j = cJSON_Duplicate(good, 1), *obj = j;
        char k[64];
        snprintf(k, sizeof k, "%s", cases[c].path);
        char *dot = strchr(k, '.');
        if (dot) *dot = 0, obj = cJSON_GetObjectItemCaseSensitive(j, k);
        const char *leaf = dot ? dot + 1 : k;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, leaf);
        cJSON_AddItemToObject(obj, leaf, cJSON_Parse(cases[c].value));
        char *text = cJSON_Print(j);
        cJSON_Delete(j);
        write_text(p, text);
        free(text);
        int rc = report_json_read(p, &prof, &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, cases[c].what), "compare %s: rc %d %s",
                cases[c].label, rc, e.msg);
        if (!rc) profile_free(&prof);
    }
    char *text = cJSON_PrintUnformatted(good);
    size_t len = strlen(text);
    struct {
        const char *label, *suffix, *what;
    } tails[] = {{"trailing", " x", "more after"}, {"two_objects", "{}", "more after"}};
    for (size_t c = 0; c < ARRAY_LEN(tails); c++) {
        char *t2 = malloc(len + 8);
        snprintf(t2, len + 8, "%s%s", text, tails[c].suffix);
        write_text(p, t2);
        free(t2);
        int rc = report_json_read(p, &prof, &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, tails[c].what), "compare %s: rc %d %s",
                tails[c].label, rc, e.msg);
    }
    /* a duplicate key: "tool" twice */
    char *t3 = malloc(len + 32);
    snprintf(t3, len + 32, "{\"tool\": \"x\", %s", text + 1);
    write_text(p, t3);
    free(t3);
    int rc = report_json_read(p, &prof, &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "\"tool\" twice"), "compare dup key: rc %d %s", rc,
            e.msg);
    free(text);
    /* 200 k reps and 100 k dispatches are refused before anything is allocated */
    cJSON *j = cJSON_Duplicate(good, 1);
    cJSON *reps = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "busy_us"),
                                                   "reps");
    for (int i = 0; i < 200000; i++) cJSON_AddItemToArray(reps, cJSON_CreateNumber(1));
    text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    write_text(p, text);
    free(text);
    double t0 = now_us();
    rc = report_json_read(p, &prof, &e);
    double sec = (now_us() - t0) * 1e-6;
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "busy_us.reps") && strstr(e.msg, "at most 100000"),
            "200k reps: rc %d %s", rc, e.msg);
    j = cJSON_Duplicate(good, 1);
    cJSON *ds = cJSON_GetObjectItemCaseSensitive(j, "dispatches");
    for (int i = 0; i < 100000; i++)
        cJSON_AddItemToArray(ds, cJSON_Duplicate(ds->child, 1));
    text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    write_text(p, text);
    free(text);
    t0 = now_us();
    rc = report_json_read(p, &prof, &e);
    sec += (now_us() - t0) * 1e-6;
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "dispatches") && strstr(e.msg, "at most 65536"),
            "100k dispatches: rc %d %s", rc, e.msg);
    T_CHECK(sec < 60, "reading the hostile compare files took %.1f s", sec);
    if (getenv("T_VERBOSE")) fprintf(stderr, "hostile compare reads: %.2f s\n", sec);
    cJSON_Delete(good);
}

static void test_hostile(const char *fixture_dir)
{
    static char abs_dir[4096];
    fixtures = realpath(fixture_dir, abs_dir) ? abs_dir : fixture_dir; /* symlinks point at it */
    signal(SIGALRM, on_alarm);
    alarm(600); /* a hang is a failure, not a stuck CI job */
    test_special_files();
    test_strict_json();
    test_config_keys();
    test_gguf_describe();
    test_index_hostile();
    test_rank5();
    test_many();
    test_golden_files();
    test_compare_files();
    test_nul_strings();
    test_kernel_shapes();
    alarm(0);
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
    t_init(argc, argv);
    t_rng_seed(&rng, 20240611);
    tmp = t_tmpdir();
    T_CHECK(tmp != NULL, "mkdtemp");
    if (!tmp) return t_finish();
    T_CASE("st_valid", "safetensors", test_st_valid());
    T_CASE("st_bad", "safetensors", test_st_bad());
    T_CASE("gguf_valid", "gguf", test_gguf_valid());
    T_CASE("gguf_bad", "gguf", test_gguf_bad());
    T_CASE("folders", "", test_folders());
    if (argc > 1) T_CASE("hostile", "", test_hostile(argv[1]));
    /* FUZZ_ITERS=N runs a longer campaign by hand; ctest runs 1000 of each. */
    int iters = getenv("FUZZ_ITERS") ? atoi(getenv("FUZZ_ITERS")) : 1000;
    T_CASE("fuzz_safetensors", "fuzz safetensors", fuzz(false, iters));
    T_CASE("fuzz_gguf", "fuzz gguf", fuzz(true, iters));
    char cmd[600], out[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    t_run(cmd, out, sizeof out);
    return t_finish();
}
