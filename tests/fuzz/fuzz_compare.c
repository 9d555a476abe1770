/* fuzz_compare.c - a --compare JSON text -> report_json_parse (strict, bounded) -> compare_profiles
 * against the seed profile, both ways (output to /dev/null). */
#include "fuzz_common.h"

#include "profile.h"

static struct profile base;
static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err e = {{0}};
    if (!sink) {
        if (report_json_read(FUZZ_DIR "/corpus/compare/profile.json", &base, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            abort();
        }
        sink = fopen("/dev/null", "w");
    }
    struct profile p;
    int st = report_json_parse("fuzz.json", (const char *)data, size, &p, &e);
    fuzz_check(st, &e);
    if (st) return 0;
    /* a verdict (regression, undecided) is an answer, not a failure */
    st = compare_profiles(sink, &base, &p, 10.0, &e);
    if (st != ST_REGRESSION && st != ST_UNDECIDED) fuzz_check(st, &e);
    st = compare_profiles(sink, &p, &base, 10.0, &e);
    if (st != ST_REGRESSION && st != ST_UNDECIDED) fuzz_check(st, &e);
    profile_free(&p);
    return 0;
}
