/* outfile.h - every file the tool writes (--json, --trace, and any later output) goes through
 * here, so each output is all or nothing (docs/outputs.md):
 *
 *   outfile_check   up front, before any GPU work: the path can be written (folder exists and is
 *                   writable, name within the file system's limit, not a folder, FIFO, device or
 *                   dangling symlink); "-" is standard output
 *   outfile_same    two output paths that name one file, however spelled
 *   outfile_open    a temporary file in the target's folder ("-": standard output, no temporary)
 *   outfile_write   checked writes
 *   outfile_commit  flush, fsync, rename over the target: the target changes only here
 *   outfile_abort   the temporary removed, the target untouched
 *
 * A write past `ulimit -f` is a write error (EFBIG): outfile_open ignores SIGXFSZ.
 * Functions return ST_OK, ST_USAGE (a path that cannot be an output) or ST_RUNTIME (a write that
 * failed), with a message naming the flag, the path and the system's reason. */
#ifndef LFM2_OUTFILE_H
#define LFM2_OUTFILE_H

#include <stdio.h>

#include "common.h"

struct outfile {
    FILE *f;          /* the temporary file, or stdout for "-" */
    const char *flag; /* e.g. "--json", for messages */
    const char *path; /* as the user gave it */
    char *target;     /* the file renamed over at commit: path with a symlink resolved */
    char *tmp;        /* the temporary's path; NULL for stdout */
    bool failed;      /* a write failed: commit fails */
    int err;          /* errno of the first failed write */
};

/* Checks that path can be an output of flag ("-" is standard output); nothing is created. */
int outfile_check(const char *flag, const char *path, struct err *e);
/* True when a and b name the same file: the same existing file (device and inode), or the same
 * name in the same folder (folder device and inode), after resolving symlinks; "-" is the file
 * standard output is. */
bool outfile_same(const char *a, const char *b);

/* Opens a temporary beside path (or stdout for "-"); stdout is flushed first. On failure nothing
 * is left behind. */
int outfile_open(struct outfile *o, const char *flag, const char *path, struct err *e);
/* Writes n bytes; a failure is remembered and reported by outfile_commit (and returned here). */
int outfile_write(struct outfile *o, const void *data, size_t n, struct err *e);
/* Flushes and renames the temporary over the target; on any failure removes the temporary and
 * leaves the target as it was. Frees o either way. */
int outfile_commit(struct outfile *o, struct err *e);
/* Removes the temporary; the target is untouched. Frees o. Safe on a zeroed struct. */
void outfile_abort(struct outfile *o);

/* The whole of data[0..n) as the output of flag at path (open, write, commit; abort on failure). */
int outfile_save(const char *flag, const char *path, const void *data, size_t n, struct err *e);

/* At start: a closed standard stream (`>&-`) is held by /dev/null opened read-only, so no file
 * the tool opens becomes fd 1 and takes the report, and every report write fails visibly;
 * SIGPIPE gets its default action (a closed pipe ends the tool as it ends any Unix filter) and
 * SIGXFSZ is ignored (stdout redirected to a file past `ulimit -f` is a lost report, exit 1). */
void outfile_std_init(void);
/* Flushes and closes standard output at exit: ST_RUNTIME when any report line was lost (a full
 * disk, /dev/full, a closed stdout). */
int outfile_stdout_close(struct err *e);

#endif
