/* input.c - input files opened without hanging, read with a cap, JSON parsed strictly (input.h). */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

int input_open(const char *path, const char *what, int *fd, uint64_t *size, struct err *e)
{
    /* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting forever */
    int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f < 0)
        return err_set(e, ST_USAGE, "%s: cannot open %s: %s (expected a readable file)", path, what,
                       strerror(errno));
    struct stat st;
    if (fstat(f, &st) != 0) {
        int err = errno;
        close(f);
        return err_set(e, ST_USAGE, "%s: cannot stat %s: %s", path, what, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return err_set(e, ST_USAGE, "%s: %s is not a regular file (it is %s; expected a file)",
                       path, what, file_kind(st.st_mode));
    }
    *fd = f;
    *size = (uint64_t)st.st_size;
    return ST_OK;
}

int input_read(const char *path, const char *what, uint64_t cap, char **text, size_t *len,
               struct err *e)
{
    int fd;
    uint64_t size;
    int st = input_open(path, what, &fd, &size, e);
    if (st) return st;
    if (size > cap) {
        close(fd);
        return err_set(e, ST_USAGE, "%s: %s is %llu bytes, over the %llu MiB cap for %s", path,
                       what, (unsigned long long)size, (unsigned long long)(cap >> 20), what);
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        close(fd);
        return err_set(e, ST_RUNTIME, "%s: out of memory reading %llu bytes", path,
                       (unsigned long long)size);
    }
    size_t n = 0;
    while (n < size) {
        ssize_t got = pread(fd, buf + n, (size_t)size - n, (off_t)n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            int err = got < 0 ? errno : 0;
            close(fd);
            free(buf);
            return err_set(e, ST_USAGE, "%s: reading %s failed after %zu of %llu bytes: %s", path,
                           what, n, (unsigned long long)size,
                           err ? strerror(err) : "the file shrank");
        }
        n += (size_t)got;
    }
    close(fd);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return ST_OK;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that appears twice in one object of the tree, or NULL; *oom on allocation
 * failure. Linear in the keys (plus a sort per object). */
static const char *json_duplicate(const cJSON *j, bool *oom)
{
    for (const cJSON *c = j; c; c = c->next) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
        if (cJSON_IsObject(c) && c->child && c->child->next) {
            size_t n = 0;
            for (const cJSON *k = c->child; k; k = k->next) n++;
            const char **keys = malloc(n * sizeof *keys);
            if (!keys) {
                *oom = true;
                return NULL;
            }
            n = 0;
            for (const cJSON *k = c->child; k; k = k->next) keys[n++] = k->string ? k->string : "";
            qsort(keys, n, sizeof *keys, cmp_str_ptr);
            const char *dup = NULL;
            for (size_t i = 1; i < n && !dup; i++)
                if (!strcmp(keys[i - 1], keys[i])) dup = keys[i];
            free(keys);
            if (dup) return dup;
        }
        const char *d = json_duplicate(c->child, oom);
        if (d || *oom) return d;
    }
    return NULL;
}

static bool is_nul_escape(const char *u)
{
    return u[0] == 'u' && u[1] == '0' && u[2] == '0' && u[3] == '0' && u[4] == '0';
}

/* The first byte at or after i that is not JSON whitespace (len when none). */
static size_t skip_ws(const char *text, size_t len, size_t i)
{
    while (i < len && strchr(" \t\r\n", text[i]) && text[i]) i++;
    return i;
}

bool input_json_nul(const char *text, size_t len, size_t *at, char *key, size_t key_size)
{
    const char *k = "", *s = NULL; /* the last key seen; the string being read */
    size_t k_len = 0;
    for (size_t i = 0; i < len; i++) {
        if (!s) {
            if (text[i] == '"') s = text + i + 1;
            continue;
        }
        if (text[i] == '\\') {
            if (i + 5 < len && is_nul_escape(text + i + 1)) {
                /* name the string itself when it is a key, else the key it is the value of */
                size_t j = i + 1;
                while (j < len && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
                size_t after = skip_ws(text, len, j + 1);
                if (after < len && text[after] == ':') {
                    k = s;
                    k_len = (size_t)(text + j - s);
                }
                *at = i;
                snprintf(key, key_size, "%.*s", (int)k_len, k);
                return true;
            }
            i++;
            continue;
        }
        if (text[i] != '"') continue;
        size_t after = skip_ws(text, len, i + 1);
        if (after < len && text[after] == ':') {
            k = s;
            k_len = (size_t)(text + i - s);
        }
        s = NULL;
    }
    return false;
}

int input_json_parse(const char *path, const char *what, const char *text, size_t len,
                     cJSON **root, struct err *e)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, false);
    size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    if (!j) {
        const char *where = cJSON_GetErrorPtr();
        if (where && where >= text && where <= text + len) at = (size_t)(where - text);
        return err_set(e, ST_USAGE, "%s: invalid JSON in %s near byte %zu (expected JSON)", path,
                       what, at);
    }
    size_t rest = at;
    while (rest < len && strchr(" \t\r\n", text[rest]) && text[rest]) rest++;
    if (rest < len) {
        cJSON_Delete(j);
        return err_set(e, ST_USAGE,
                       "%s: %s has more after its JSON value at byte %zu (expected one JSON value "
                       "and nothing after it)",
                       path, what, rest);
    }
    char key[128];
    if (input_json_nul(text, len, &at, key, sizeof key)) {
        cJSON_Delete(j);
        return err_set(e, ST_USAGE,
                       "%s: %s has an escaped NUL (\\u0000) in a string at byte %zu, key \"%s\" "
                       "(expected text without NUL characters)",
                       path, what, at, key);
    }
    bool oom = false;
    const char *dup = json_duplicate(j, &oom);
    if (oom || dup) {
        int rc = oom ? err_set(e, ST_RUNTIME, "%s: out of memory checking %s", path, what)
                     : err_set(e, ST_USAGE,
                               "%s: %s has the key \"%.200s\" twice in one object (expected "
                               "unique keys)",
                               path, what, dup);
        cJSON_Delete(j);
        return rc;
    }
    *root = j;
    return ST_OK;
}

int input_json_object(const char *path, const char *what, cJSON **root, struct err *e)
{
    char *text = NULL;
    size_t len = 0;
    int st = input_read(path, what, INPUT_JSON_MAX, &text, &len, e);
    if (st) return st;
    st = input_json_parse(path, what, text, len, root, e);
    free(text);
    if (st) return st;
    if (!cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        return err_set(e, ST_USAGE, "%s: top level of %s is not a JSON object (expected {...})",
                       path, what);
    }
    return ST_OK;
}
