/* outfile.c - outputs written all or nothing: a temporary in the target's folder, renamed over
 * the target once flushed and synced (outfile.h, docs/outputs.md). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_TMP_NAME ".lfm2-profile-stage.XXXXXX" /* short: fits any folder a target fits */
#define OUT_MAX_LINKS 40                          /* symlinks followed, as the kernel does */

/* What an output path names once symlinks in its last component are followed: the folder and
 * final name the file is (or would be) created under, and the file itself when it exists. */
struct out_place {
    char *dir, *name; /* heap; dir is "." for a bare name */
    bool linked;      /* path was a symlink */
    bool exists;      /* st is the file's */
    struct stat st;   /* the file, when it exists */
    int err;          /* errno of a failed resolution (ELOOP, ...), 0 when resolved */
};

static void place_free(struct out_place *p)
{
    free(p->dir);
    free(p->name);
    memset(p, 0, sizeof *p);
}

/* Splits path into a heap folder and name: "a/b" -> "a", "b"; "b" -> ".", "b"; "/b" -> "/", "b". */
static int split_path(const char *path, char **dir, char **name)
{
    const char *slash = strrchr(path, '/');
    *name = strdup(slash ? slash + 1 : path);
    *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (*dir && *name) return 0;
    free(*dir);
    free(*name);
    return -1;
}

/* Follows symlinks in the last component of path (a relative link target is taken from the
 * link's folder). -1 only when out of memory. */
static int place_of(const char *path, struct out_place *p)
{
    memset(p, 0, sizeof *p);
    char *cur = strdup(path);
    if (!cur) return -1;
    for (int hops = 0;; hops++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode)) break;
        if (hops == OUT_MAX_LINKS) {
            p->err = ELOOP;
            break;
        }
        char to[PATH_MAX];
        ssize_t n = readlink(cur, to, sizeof to - 1);
        if (n < 0) {
            p->err = errno;
            break;
        }
        to[n] = 0;
        p->linked = true;
        char *next;
        const char *slash = strrchr(cur, '/');
        if (to[0] == '/' || !slash) {
            next = strdup(to);
        } else {
            size_t dl = (size_t)(slash - cur) + 1;
            next = malloc(dl + (size_t)n + 1);
            if (next) {
                memcpy(next, cur, dl);
                memcpy(next + dl, to, (size_t)n + 1);
            }
        }
        free(cur);
        if (!(cur = next)) return -1;
    }
    /* the file itself as the system opens it (a link into /proc/self/fd names no path) */
    p->exists = stat(path, &p->st) == 0;
    int rc = split_path(cur, &p->dir, &p->name);
    free(cur);
    return rc;
}

static const char *node_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* Creates and removes a file in dir: the one test that write permission, a read-only mount or
 * a pseudo file system (/proc) let the temporary exist, whoever runs the tool. */
static int probe_folder(const char *dir)
{
    size_t n = strlen(dir) + sizeof "/" OUT_TMP_NAME;
    char *tmp = malloc(n);
    if (!tmp) return ENOMEM;
    snprintf(tmp, n, "%s/%s", dir, OUT_TMP_NAME);
    int fd = mkstemp(tmp);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    return err;
}

int outfile_check(const char *flag, const char *path, struct err *e)
{
    if (!path[0]) return err_set(e, ST_USAGE, "%s: empty file name (expected a path or -)", flag);
    if (!strcmp(path, "-")) return ST_OK;
    struct out_place p;
    if (place_of(path, &p) != 0) return err_set(e, ST_RUNTIME, "%s %s: out of memory", flag, path);
    /* where the file really goes, for messages about a symlink */
    char via[PATH_MAX + 64] = "";
    if (p.linked) snprintf(via, sizeof via, " (the symlink points to %s/%s)", p.dir, p.name);
    int rc = ST_OK, err;
    long name_max = -1;
    struct stat ds;
    if (p.err) {
        rc = err_set(e, ST_USAGE, "%s %s: cannot follow the symlink: %s (expected a file name)",
                     flag, path, strerror(p.err));
    } else if (p.exists && S_ISDIR(p.st.st_mode)) {
        rc = err_set(e, ST_USAGE, "%s %s: is a folder (expected a file name)%s", flag, path, via);
    } else if (p.exists && !S_ISREG(p.st.st_mode)) {
        rc =
            err_set(e, ST_USAGE,
                    "%s %s: is %s, not a regular file (expected a regular file or a new name; - is "
                    "standard output)%s",
                    flag, path, node_kind(p.st.st_mode), via);
    } else if (p.exists && access(path, W_OK) != 0) {
        rc = err_set(e, ST_USAGE, "%s %s: not writable: %s%s", flag, path, strerror(errno), via);
    } else if (stat(p.dir, &ds) != 0 || !S_ISDIR(ds.st_mode)) {
        rc = err_set(e, ST_USAGE, "%s %s: folder %s does not exist (expected an existing folder)%s",
                     flag, path, p.dir, via);
    } else if (!p.name[0] || !strcmp(p.name, ".") || !strcmp(p.name, "..")) {
        rc = err_set(e, ST_USAGE, "%s %s: names a folder (expected a file name)", flag, path);
    } else if ((name_max = pathconf(p.dir, _PC_NAME_MAX)) > 0 &&
               strlen(p.name) > (size_t)name_max) {
        rc = err_set(e, ST_USAGE,
                     "%s %s: the file name is %zu bytes, over the %ld-byte limit of folder %s%s",
                     flag, path, strlen(p.name), name_max, p.dir, via);
    } else if ((err = probe_folder(p.dir)) != 0) {
        rc = err_set(e, ST_USAGE, "%s %s: not writable: cannot create a file in folder %s: %s%s",
                     flag, path, p.dir, strerror(err), via);
    }
    place_free(&p);
    return rc;
}

/* Identity of an output: the file's (device, inode) when it exists; else its folder's
 * (device, inode) and name. */
struct out_id {
    bool ok, exists;
    dev_t dev;
    ino_t ino;
    char *name;
};

static struct out_id id_of(const char *path)
{
    struct out_id id = {0};
    struct stat st;
    if (!strcmp(path, "-")) {
        if (fstat(STDOUT_FILENO, &st) != 0) return id;
        id.ok = id.exists = true;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        return id;
    }
    struct out_place p;
    if (place_of(path, &p) != 0) return id;
    if (p.exists) {
        id.ok = id.exists = true;
        id.dev = p.st.st_dev;
        id.ino = p.st.st_ino;
    } else if (stat(p.dir, &st) == 0) {
        id.ok = true;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        id.name = p.name;
        p.name = NULL;
    }
    place_free(&p);
    return id;
}

bool outfile_same(const char *a, const char *b)
{
    if (!strcmp(a, b)) return true;
    struct out_id x = id_of(a), y = id_of(b);
    bool same = x.ok && y.ok && x.exists == y.exists && x.dev == y.dev && x.ino == y.ino &&
                (x.exists || !strcmp(x.name, y.name));
    free(x.name);
    free(y.name);
    return same;
}

/* The mode a new file gets from open(0666) under the process umask. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

int outfile_open(struct outfile *o, const char *flag, const char *path, struct err *e)
{
    memset(o, 0, sizeof *o);
    o->flag = flag;
    o->path = path;
    signal(SIGXFSZ, SIG_IGN); /* past `ulimit -f`, write fails with EFBIG instead of killing us */
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return ST_OK;
    }
    /* a closed pipe on stdout ends the run here, before a temporary exists (docs/outputs.md) */
    fflush(stdout);
    struct out_place p;
    if (place_of(path, &p) != 0) return err_set(e, ST_RUNTIME, "%s %s: out of memory", flag, path);
    size_t dl = strlen(p.dir), nl = strlen(p.name);
    o->target = malloc(dl + nl + 2);
    o->tmp = malloc(dl + sizeof "/" OUT_TMP_NAME);
    if (!o->target || !o->tmp) {
        place_free(&p);
        outfile_abort(o);
        return err_set(e, ST_RUNTIME, "%s %s: out of memory", flag, path);
    }
    snprintf(o->target, dl + nl + 2, "%s/%s", p.dir, p.name);
    snprintf(o->tmp, dl + sizeof "/" OUT_TMP_NAME, "%s/%s", p.dir, OUT_TMP_NAME);
    mode_t mode = p.exists && S_ISREG(p.st.st_mode) ? p.st.st_mode & 07777 : new_file_mode();
    place_free(&p);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int err = errno;
        free(o->tmp);
        o->tmp = NULL;
        outfile_abort(o);
        return err_set(e, ST_RUNTIME, "%s %s: cannot create a file beside it: %s", flag, path,
                       strerror(err));
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        outfile_abort(o);
        return err_set(e, ST_RUNTIME, "%s %s: cannot open a file beside it: %s", flag, path,
                       strerror(err));
    }
    return ST_OK;
}

static int write_failed(const struct outfile *o, struct err *e)
{
    const char *kept = o->tmp ? " (the file is left as it was)" : "";
    if (o->f == stdout)
        return err_set(e, ST_RUNTIME, "%s %s: writing to standard output failed: %s", o->flag,
                       o->path, o->err ? strerror(o->err) : "write error");
    return err_set(e, ST_RUNTIME, "%s %s: write failed: %s%s", o->flag, o->path,
                   o->err ? strerror(o->err) : "write error", kept);
}

int outfile_write(struct outfile *o, const void *data, size_t n, struct err *e)
{
    if (!o->failed && fwrite(data, 1, n, o->f) != n) {
        o->failed = true;
        o->err = errno;
    }
    return o->failed ? write_failed(o, e) : ST_OK;
}

static void note_failure(struct outfile *o)
{
    if (!o->failed) {
        o->failed = true;
        o->err = errno;
    }
}

int outfile_commit(struct outfile *o, struct err *e)
{
    if (o->f == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout)) note_failure(o);
        int rc = o->failed ? write_failed(o, e) : ST_OK;
        outfile_abort(o);
        return rc;
    }
    if (fflush(o->f) != 0 || ferror(o->f)) note_failure(o);
    if (!o->failed && fsync(fileno(o->f)) != 0) note_failure(o);
    int closed = fclose(o->f);
    o->f = NULL;
    if (closed != 0) note_failure(o);
    if (!o->failed && rename(o->tmp, o->target) != 0) note_failure(o);
    int rc = o->failed ? write_failed(o, e) : ST_OK;
    if (!o->failed) {
        free(o->tmp); /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    outfile_abort(o);
    return rc;
}

void outfile_abort(struct outfile *o)
{
    if (o->f && o->f != stdout) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->target);
    memset(o, 0, sizeof *o);
}

void outfile_std_init(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int got = open("/dev/null", O_RDONLY); /* the lowest free fd: this one */
            if (got >= 0 && got != fd) close(got);
        }
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_IGN); /* a report redirected to a file past `ulimit -f`: EFBIG, exit 1 */
}

int outfile_stdout_close(struct err *e)
{
    int err = 0;
    bool bad = ferror(stdout) != 0;
    if (fflush(stdout) != 0) {
        bad = true;
        err = errno;
    }
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        err = errno;
    }
    if (!bad) return ST_OK;
    return err_set(e, ST_RUNTIME, "standard output: write failed, the report is lost: %s",
                   err ? strerror(err) : "a write to it failed");
}

int outfile_save(const char *flag, const char *path, const void *data, size_t n, struct err *e)
{
    struct outfile f;
    int st = outfile_open(&f, flag, path, e);
    if (st) return st;
    if ((st = outfile_write(&f, data, n, e))) {
        outfile_abort(&f);
        return st;
    }
    return outfile_commit(&f, e);
}
