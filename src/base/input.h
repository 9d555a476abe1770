/* input.h - opening what a user hands the tool, safely: input files (model files, config.json,
 * index, golden, --compare JSON) are opened without blocking (a FIFO never hangs the open),
 * checked to be regular files (never /dev/zero, a FIFO or a character device) and read with a
 * size cap; JSON is parsed strictly (one value, nothing after it, no duplicate keys, no escaped
 * NUL in a string). Output paths: outfile.h.
 *
 * Every function returns ST_OK or ST_USAGE (ST_RUNTIME when out of memory) and names the path
 * and, where given, the flag or role (`what`, e.g. "config.json" or "--compare"). */
#ifndef LFM2_INPUT_H
#define LFM2_INPUT_H

#include <cjson/cJSON.h>

#include "common.h"
#include "outfile.h" /* output paths: outfile_check, outfile_same */

/* Cap on a JSON input file (config.json, index, --compare): 64 MiB. */
#define INPUT_JSON_MAX (64ull << 20)

/* Opens path read-only and non-blocking, accepts regular files only. *fd and *size on success. */
int input_open(const char *path, const char *what, int *fd, uint64_t *size, struct err *e);
/* Reads a whole regular file of at most cap bytes into a NUL-terminated heap buffer. */
int input_read(const char *path, const char *what, uint64_t cap, char **text, size_t *len,
               struct err *e);
/* Parses text[0..len) as exactly one JSON value (whitespace around it only) whose objects have
 * no duplicate keys and whose strings no escaped NUL, at any depth. *root is the tree (caller frees). */
int input_json_parse(const char *path, const char *what, const char *text, size_t len,
                     cJSON **root, struct err *e);
/* True when a string of the JSON text[0..len) holds an escaped NUL (\u0000), which cJSON would
 * cut the string at: *at is its byte offset, key the key it is in or the value of ("" at the top
 * level), as written in the file. text must be valid JSON. */
bool input_json_nul(const char *text, size_t len, size_t *at, char *key, size_t key_size);
/* input_read (INPUT_JSON_MAX) + input_json_parse + the top level must be an object. */
int input_json_object(const char *path, const char *what, cJSON **root, struct err *e);
#endif
