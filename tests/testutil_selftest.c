/* testutil_selftest.c - the harness's case filter and its zero-check rule, run by the unit tests
 * testutil_* (CMakeLists.txt) through expect.sh: case "one" (tag "tagged") makes one check, case
 * "empty" makes none. */
#include "testutil.h"

int main(int argc, char **argv)
{
    t_init(argc, argv);
    T_CASE("one", "tagged", T_CHECK(1, "never fails"));
    T_CASE("empty", "", (void)0);
    return t_finish();
}
