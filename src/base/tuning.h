/* tuning.h - the environment switches that remain, read once, in one place: the validation layer
 * and test hooks that make a failure or a device without a feature reproducible. Geometry
 * overrides are no environment switches: they are --tune keys (tune.h), recorded in the JSON.
 *
 *   LFM2_VALIDATION=1               enable the Khronos validation layer (every GPU test)
 *   LFM2_TEST_NO_COOPMAT=1          run the gemm's FMA twin on a device with cooperative matrices
 *                                   (no test: lavapipe has no cooperative
 *                                   matrices; on an H100/H200 it runs the twin's tests there)
 *   LFM2_TEST_NO_TIMESTAMPS         behave as a device without timestamps (test_profile_e2e)
 *   LFM2_TEST_DROP_LAST_DISPATCH    golden: drop the step's last dispatch (golden_unwritten_output_fails)
 *   LFM2_TEST_SKIP_SNAPSHOT         spec: shortconv, dn.conv, dn.recurrent write no snapshot
 *                                   (golden_spec[_qwen]_broken_snapshot_fails: a broken rollback) */
#ifndef LFM2_TUNING_H
#define LFM2_TUNING_H

#include <stdbool.h>

struct tuning {
    bool test_no_coopmat;
    bool test_no_timestamps;
    bool test_drop_last_dispatch;
    bool test_skip_snapshot;
    bool validation;
};

/* The environment's switches, read on the first call. */
const struct tuning *tuning(void);

#endif
