/* test_report_outputs.c - outputs under faults (issue 39, docs/outputs.md): every file output is
 * all or nothing (a full disk or `ulimit -f` leaves the old file and no temporary), two spellings
 * of one file are one file, paths that cannot be outputs are refused up front, and a report lost
 * on standard output is exit 1. The fault runs use `ulimit -f` and /dev/full (no mount, no root)
 * through the binary ($LFM2_BIN) on its no-GPU path: --compare A --current B --json OUT. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "outfile.h"
#include "profile.h"
#include "synth_profile.h"
#include "testutil.h"

static const char *tmp;

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmp, name);
}

/* Entries of folder dir whose name starts with a dot (the temporaries), "." and ".." aside. */
static int hidden_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static bool file_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return f && !strcmp(buf, text);
}

static void write_text(const char *path, const char *text)
{
    T_CHECK(t_write_file(path, text, strlen(text)) == 0, "write %s", path);
}

/* ---- the helper itself */

static void test_commit_abort(void)
{
    char p[600];
    path_in(p, sizeof p, "a.txt");
    write_text(p, "OLD");
    struct outfile o;
    struct err e;
    T_CHECK(outfile_open(&o, "--x", p, &e) == ST_OK, "%s", e.msg);
    T_CHECK(outfile_write(&o, "NEW", 3, &e) == ST_OK, "%s", e.msg);
    T_CHECK(file_is(p, "OLD"), "the target changes only at commit");
    T_CHECK(hidden_files(tmp) == 1, "one temporary beside the target while writing");
    outfile_abort(&o);
    T_CHECK(file_is(p, "OLD") && hidden_files(tmp) == 0, "abort: target untouched, temporary gone");

    T_CHECK(outfile_open(&o, "--x", p, &e) == ST_OK, "%s", e.msg);
    T_CHECK(outfile_write(&o, "NEW", 3, &e) == ST_OK, "%s", e.msg);
    T_CHECK(outfile_commit(&o, &e) == ST_OK, "%s", e.msg);
    T_CHECK(file_is(p, "NEW") && hidden_files(tmp) == 0, "commit: replaced, no temporary");
    struct stat st;
    T_CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0644, "the file keeps its mode (%o)",
            st.st_mode & 0777);
}

/* A write past RLIMIT_FSIZE: EFBIG (SIGXFSZ ignored), the old file kept, no temporary. */
static void test_file_size_limit(void)
{
    char p[600];
    path_in(p, sizeof p, "limited.json");
    write_text(p, "OLD");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    T_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    static char big[100000];
    memset(big, 'x', sizeof big);
    struct outfile o;
    struct err e = {{0}};
    int st = outfile_open(&o, "--json", p, &e);
    if (!st) st = outfile_write(&o, big, sizeof big, &e);
    if (!st)
        st = outfile_commit(&o, &e);
    else
        outfile_abort(&o);
    setrlimit(RLIMIT_FSIZE, &old);
    T_CHECK(st == ST_RUNTIME && strstr(e.msg, "--json") && strstr(e.msg, strerror(EFBIG)) &&
                strstr(e.msg, "left as it was"),
            "over the file size limit: %d \"%s\"", st, e.msg);
    T_CHECK(file_is(p, "OLD") && hidden_files(tmp) == 0, "target kept, temporary removed");
}

static void test_same(void)
{
    char a[600], b[600], sub[600], link[600], link2[600];
    path_in(a, sizeof a, "out.json");
    snprintf(b, sizeof b, "%s/./out.json", tmp);
    T_CHECK(outfile_same(a, b), "./ spelling (file absent)");
    path_in(sub, sizeof sub, "sub");
    mkdir(sub, 0755);
    snprintf(b, sizeof b, "%s/sub/../out.json", tmp);
    T_CHECK(outfile_same(a, b), "sub/.. spelling");
    path_in(link, sizeof link, "link.json");
    T_CHECK(symlink("out.json", link) == 0, "symlink");
    T_CHECK(outfile_same(a, link), "a dangling symlink to the target");
    snprintf(link2, sizeof link2, "%s/sub/link2.json", tmp);
    T_CHECK(symlink("../link.json", link2) == 0, "symlink");
    T_CHECK(outfile_same(link2, a), "a chain of relative symlinks");
    write_text(a, "x");
    T_CHECK(outfile_same(a, link) && outfile_same(b, link2), "the same, the file existing");
    path_in(b, sizeof b, "other.json");
    T_CHECK(!outfile_same(a, b) && !outfile_same(link, b), "two files differ");
    snprintf(b, sizeof b, "%s/sub/out.json", tmp);
    T_CHECK(!outfile_same(a, b), "the same name in another folder differs");
    T_CHECK(outfile_same("-", "/dev/stdout"), "- and /dev/stdout");
}

static void expect_check(const char *label, const char *path, int want, const char *what)
{
    struct err e = {{0}};
    int st = outfile_check("--json", path, &e);
    T_CHECK(st == want && (!what || strstr(e.msg, what)), "%s: %d \"%s\" (want %d, \"%s\")", label,
            st, e.msg, want, what ? what : "");
}

static void test_check(void)
{
    char p[600], long_name[600];
    path_in(p, sizeof p, "fifo");
    T_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    expect_check("fifo", p, ST_USAGE, "is a FIFO, not a regular file");
    expect_check("dev_null", "/dev/null", ST_USAGE, "character device");
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    snprintf(long_name, sizeof long_name, "%s/%s", tmp, name);
    expect_check("long_name", long_name, ST_USAGE, "the file name is 299 bytes, over the");
    path_in(p, sizeof p, "dangling");
    T_CHECK(symlink("/nonexistent/dir/out.json", p) == 0, "symlink");
    expect_check("dangling", p, ST_USAGE, "the symlink points to /nonexistent/dir/out.json");
    path_in(p, sizeof p, "dangling_here");
    T_CHECK(symlink("made.json", p) == 0, "symlink");
    expect_check("dangling_in_folder", p, ST_OK, NULL);
    expect_check("proc", "/proc/version", ST_USAGE, "not writable");
    expect_check("folder", tmp, ST_USAGE, "is a folder");
    path_in(p, sizeof p, "new.json");
    expect_check("new", p, ST_OK, NULL);
    T_CHECK(hidden_files(tmp) == 0, "the check leaves nothing behind");
}

/* ---- the binary: --compare A --current B writes the comparison without a GPU */

static char base_json[600], cur_json[600];

/* Runs the comparison with args; redir applies to its stdout alone (stderr is captured). */
static int run_bin(const char *args, const char *redir, char *out, size_t n)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "( timeout 60 %s --compare %s --current %s %s %s )",
             getenv("LFM2_BIN"), base_json, cur_json, args, redir);
    int rc = t_run(cmd, out, n);
    if (getenv("T_VERBOSE")) fprintf(stderr, "%s\n-> %d %s\n", cmd, rc, out);
    return rc;
}

static void test_bin_faults(void)
{
    char target[600], out[4096], args[1500];
    path_in(target, sizeof target, "cmp.json");
    write_text(target, "OLD");
    /* ulimit -f 1: 512 or 1024 bytes, far below the comparison's JSON */
    snprintf(args, sizeof args, "--json %s", target);
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 1; exec \"$0\" \"$@\"' %s --compare %s --current %s "
             "--json %s",
             getenv("LFM2_BIN"), base_json, cur_json, target);
    int rc = t_run(cmd, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "--json") && strstr(out, strerror(EFBIG)),
            "ulimit -f: exit %d \"%s\" (want 1 naming the error)", rc, out);
    T_CHECK(file_is(target, "OLD") && hidden_files(tmp) == 0,
            "ulimit -f: old file kept, no temporary");

    rc = run_bin(args, "", out, sizeof out);
    T_CHECK(rc == 0 || rc == 3, "comparison: exit %d %s", rc, out);
    cJSON *j = t_json_file(target);
    T_CHECK(j && hidden_files(tmp) == 0, "written whole, no temporary");
    cJSON_Delete(j);

    /* a symlink is written through: the file it points to is made or replaced, the link kept */
    char link[600], real[600];
    path_in(link, sizeof link, "via.json");
    path_in(real, sizeof real, "real.json");
    T_CHECK(symlink("real.json", link) == 0, "symlink");
    for (int pass = 0; pass < 2; pass++) {
        snprintf(args, sizeof args, "--json %s", link);
        rc = run_bin(args, "", out, sizeof out);
        struct stat ls;
        j = t_json_file(real);
        T_CHECK((rc == 0 || rc == 3) && j && lstat(link, &ls) == 0 && S_ISLNK(ls.st_mode),
                "through a symlink (pass %d): exit %d, target %s", pass, rc,
                j ? "written" : "absent");
        cJSON_Delete(j);
    }

    /* standard output lost: exit 1 with a message */
    rc = run_bin("", "> /dev/full", out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "standard output"), "stdout on /dev/full: exit %d \"%s\"", rc,
            out);
    /* the report redirected to a file past `ulimit -f`: EFBIG, not a death by SIGXFSZ */
    snprintf(cmd, sizeof cmd,
             "sh -c 'ulimit -f 1; exec \"$0\" \"$@\" > %s/report.txt' %s --compare %s --current %s",
             tmp, getenv("LFM2_BIN"), base_json, cur_json);
    rc = t_run(cmd, out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "standard output") && strstr(out, strerror(EFBIG)),
            "stdout to a file past ulimit -f: exit %d \"%s\"", rc, out);
    rc = run_bin("", ">&-", out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "standard output"), "stdout closed: exit %d \"%s\"", rc, out);
    rc = run_bin("--json -", "> /dev/full", out, sizeof out);
    T_CHECK(rc == 1 && strstr(out, "standard output"), "--json - on /dev/full: exit %d \"%s\"", rc,
            out);
}

/* stdout a pipe nobody reads: the tool ends by SIGPIPE, as a Unix filter does, and the output
 * file is either whole or absent, never cut, and no temporary is left. */
static void test_bin_closed_pipe(void)
{
    char target[600];
    path_in(target, sizeof target, "piped.json");
    unlink(target);
    int fds[2];
    T_CHECK(pipe(fds) == 0, "pipe");
    close(fds[0]);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDERR_FILENO);
        signal(SIGPIPE, SIG_IGN); /* inherited ignored: the tool restores the default */
        execl(getenv("LFM2_BIN"), "lfm2-profile-stage", "--compare", base_json, "--current",
              cur_json, "--json", target, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE, "closed pipe: status %#x", status);
    cJSON *j = t_json_file(target);
    T_CHECK(access(target, F_OK) != 0 || j, "the output is whole or absent");
    cJSON_Delete(j);
    T_CHECK(hidden_files(tmp) == 0, "no temporary after SIGPIPE");
}

static void test_bin_paths(void)
{
    char out[4096], args[1500], p[600];
    path_in(p, sizeof p, "fifo");
    snprintf(args, sizeof args, "--json %s", p);
    int rc = run_bin(args, "", out, sizeof out);
    T_CHECK(rc == 2 && strstr(out, "a FIFO"), "--json FIFO: exit %d \"%s\"", rc, out);
    rc = run_bin("--json /proc/version", "", out, sizeof out);
    T_CHECK(rc == 2 && strstr(out, "not writable") && !strstr(out, "disk full"),
            "--json /proc/version: exit %d \"%s\"", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    umask(022);
    tmp = t_tmpdir();
    T_CHECK(tmp != NULL, "mkdtemp");
    if (!tmp) return t_finish();
    test_commit_abort();
    test_file_size_limit();
    test_same();
    test_check();
    if (getenv("LFM2_BIN")) {
        struct profile a, b;
        struct err e;
        synth_profile(&a, 7, 3);
        synth_profile(&b, 8, 3);
        snprintf(base_json, sizeof base_json, "%s/../%s-base.json", tmp, strrchr(tmp, '/') + 1);
        snprintf(cur_json, sizeof cur_json, "%s/../%s-cur.json", tmp, strrchr(tmp, '/') + 1);
        T_CHECK(report_json_write(base_json, &a, &e) == ST_OK, "%s", e.msg);
        T_CHECK(report_json_write(cur_json, &b, &e) == ST_OK, "%s", e.msg);
        profile_free(&a);
        profile_free(&b);
        test_bin_faults();
        test_bin_closed_pipe();
        test_bin_paths();
        unlink(base_json);
        unlink(cur_json);
    }
    char cmd[700], out[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    t_run(cmd, out, sizeof out);
    return t_finish();
}
