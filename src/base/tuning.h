/* tuning.h - the environment switches that remain, read once, in one place: the validation layer
 * and test hooks that make a failure, a slowdown or a device without a feature reproducible.
 * Geometry overrides are no environment switches: they are --tune keys (tune.h), recorded in the
 * JSON and the report's header.
 *
 *   LFM2_VALIDATION=1               enable the Khronos validation layer (a warning when missing)
 *   LFM2_VALIDATION=require         the same, and fail when the layer is not installed (every ctest)
 *   LFM2_TEST_NO_COOPMAT=1          run the gemm's FMA twin on a device with cooperative matrices
 *                                   (lavapipe has none: exercised on a GPU by bench/h200.sh)
 *   LFM2_TEST_NO_TIMESTAMPS         behave as a device without timestamps (test_profile_e2e)
 *   LFM2_TEST_DROP_LAST_DISPATCH    golden: drop the step's last dispatch (golden_unwritten_output_fails)
 *   LFM2_TEST_SKIP_SNAPSHOT         spec: shortconv, dn.conv, dn.recurrent write no snapshot
 *                                   (golden_spec[_qwen]_broken_snapshot_fails: a broken rollback)
 *   LFM2_TEST_SLOW=KIND=F,...       record each dispatch of KIND (a kind, a prefix ending in '*',
 *                                   or '*' for all) F times in a row (integer F 1..64): a known
 *                                   slowdown on any device, to measure the --compare gate (cli_gate_*,
 *                                   bench/gate_rates.sh; a factor between two runs, e.g. 1.5x: F=2
 *                                   against F=3); wrong results */
#ifndef LFM2_TUNING_H
#define LFM2_TUNING_H

#include <stdbool.h>
#include <stddef.h>

struct tuning {
    bool test_no_coopmat;
    bool test_no_timestamps;
    bool test_drop_last_dispatch;
    bool test_skip_snapshot;
    bool validation;
    bool validation_required; /* LFM2_VALIDATION=require */
};

/* The environment's switches, read on the first call. */
const struct tuning *tuning(void);

/* The test hooks set in the environment, as "NAME=value,NAME" ("" when none): a run under one is
 * a test run, and its report and JSON say so (test_hooks). */
void tuning_describe(char *buf, size_t n);

/* LFM2_TEST_SLOW: how many times the test hook records each dispatch of `kind` (1: not slowed). */
int tuning_test_slow(const char *kind);

#endif
