/* loader.h - model files over mmap: safetensors (one file or a sharded index), GGUF v2/v3,
 * config.json. Whatever the format, a file's tensors come out as one list of tensor views.
 *
 * Every check of docs/formats.md happens at open; a malformed file is ST_USAGE with a message naming
 * the file (and tensor or key) and what was expected. Nothing is copied: views point into the
 * mappings, which live until source_close. */
#ifndef LFM2_LOADER_H
#define LFM2_LOADER_H

#include <cjson/cJSON.h>

#include "common.h"

/* Element types. Weights: F32 F16 BF16 Q8_0 Q4_0. Golden files and masks: I32 I64 U8 I8. */
enum dtype {
    DT_F32,
    DT_F16,
    DT_BF16,
    DT_Q8_0, /* blocks of 32 along the row: f16 d, 32 x i8 q; value q*d (34 bytes) */
    DT_Q4_0, /* blocks of 32: f16 d, 16 bytes; elem j<16 low nibble of byte j, j+16 high; (q-8)*d */
    DT_I32,
    DT_I64,
    DT_U8,
    DT_I8,
    DT_COUNT
};
const char *dtype_name(enum dtype t);      /* "F32", "BF16", "Q4_0", ... */
int dtype_block(enum dtype t);             /* elements per block: 32 for Q8_0/Q4_0, else 1 */
int dtype_block_bytes(enum dtype t);       /* bytes per block */
/* Bytes of n elements (n a multiple of the block size), or UINT64_MAX on overflow. */
uint64_t dtype_bytes(enum dtype t, uint64_t n);

#define TENSOR_MAX_DIMS 4
#define TENSOR_FILE_MAX_DIMS 8 /* ranks a file may hold (above 4: folded, see below) */

/* One tensor inside a mapped file. */
struct tensor_view {
    const char *name;              /* as in the file */
    enum dtype dtype;
    int n_dims;                    /* 0..4 */
    int64_t shape[TENSOR_MAX_DIMS]; /* torch order, outermost first (GGUF ne[] reversed) */
    const uint8_t *data;           /* into the mapping; NOT aligned */
    uint64_t n_bytes;
    const char *file;              /* path of the file it lives in */
    uint64_t file_offset;          /* where data starts in that file (weights are pread from it) */
    int rank;                      /* dims as the file gives them (> n_dims when folded) */
    int64_t file_shape[TENSOR_FILE_MAX_DIMS]; /* those dims, torch order */
};
int64_t tensor_numel(const struct tensor_view *t);
/* "[a, b, c]": the shape as the file gives it (every dim, also of a folded rank-5 tensor). */
void tensor_shape_str(const struct tensor_view *t, char *buf, size_t n);

/* GGUF metadata value types (on-disk u32). */
enum gguf_type {
    GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3, GGUF_U32 = 4, GGUF_I32 = 5, GGUF_F32 = 6,
    GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_U64 = 10, GGUF_I64 = 11, GGUF_F64 = 12,
};
/* One GGUF key/value. For arrays, type is GGUF_ARRAY, elem_type and count say what is inside and
 * data points at the first element (strings inside arrays are skipped, never copied). */
struct gguf_kv {
    const char *key;
    enum gguf_type type;
    enum gguf_type elem_type;
    uint64_t count;
    const uint8_t *data;  /* the value's bytes in the mapping */
};

struct mapping {
    char *path;
    const uint8_t *base;
    uint64_t size;
};

enum source_kind { SOURCE_SAFETENSORS, SOURCE_GGUF };

/* An opened model (or golden) file set. */
struct model_source {
    enum source_kind kind;
    char *path;                    /* what was given: folder, .gguf or .safetensors */
    struct mapping *maps;
    int n_maps;
    struct tensor_view *tensors;   /* sorted by nothing in particular */
    int n_tensors;
    cJSON *config;                 /* config.json of a checkpoint folder, else NULL */
    cJSON *st_metadata;            /* __metadata__ of the (first) safetensors file, or NULL */
    struct gguf_kv *kv;            /* GGUF metadata, or NULL */
    int n_kv;
    uint32_t gguf_version;
    /* private: name storage etc. */
    void *priv;
};

/* Opens a checkpoint folder (config.json + model.safetensors or model.safetensors.index.json), a
 * .gguf file, or a single .safetensors file (golden files; config stays NULL). */
int source_open(struct model_source *s, const char *path, struct err *e);
void source_close(struct model_source *s);
const struct tensor_view *source_find(const struct model_source *s, const char *name);

/* Copies bytes [at, at + n) of tensor v into out with pread from its file, never through the
 * mapping: a file that shrank since it was opened gives ST_RUNTIME and a message, not SIGBUS. */
int tensor_read(const struct tensor_view *v, uint64_t at, uint64_t n, void *out, struct err *e);

/* GGUF metadata lookups. Return NULL / false when the key is missing or of another type. */
const struct gguf_kv *gguf_find(const struct model_source *s, const char *key);
bool gguf_get_u32(const struct model_source *s, const char *key, uint32_t *v);   /* any int type */
bool gguf_get_i64(const struct model_source *s, const char *key, int64_t *v);   /* any int type */
bool gguf_get_f32(const struct model_source *s, const char *key, float *v);      /* f32 or f64 */
bool gguf_get_str(const struct model_source *s, const char *key, char *buf, size_t n);
/* Element i of an integer or bool array, widened to int64. */
bool gguf_array_i64(const struct gguf_kv *kv, uint64_t i, int64_t *v);

/* (loaders) Value layout of a struct gguf_kv: a scalar has count 1 and data at its bytes; a
 * GGUF_STRING has data at its bytes (no terminator) and count = its length in bytes; an array of
 * strings has data at the first element's u64 length. Safetensors ranks above TENSOR_MAX_DIMS
 * (vision towers only) fold their innermost dims into shape[TENSOR_MAX_DIMS - 1]. */

/* Low-level parsers (also used by tests on in-memory broken files). They append to s, which must
 * be zeroed (or filled by earlier parses); source_close(s) frees it whether they succeed or not. */
int safetensors_parse(const char *path, const uint8_t *base, uint64_t size, struct model_source *s,
                      struct err *e);
int gguf_parse(const char *path, const uint8_t *base, uint64_t size, struct model_source *s,
               struct err *e);

#endif
