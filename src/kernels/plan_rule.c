/* plan_rule.c - the auto plan's rule (plan_rule.h). */
#include "plan_rule.h"

int plan_rule_gemm_min_cols(enum dtype t)
{
    return t == DT_Q4_0 ? 5 : t == DT_F32 ? 16 : 6;
}

enum plan_kind plan_rule_auto(int cols, int gemm_min_cols)
{
    return cols >= gemm_min_cols ? PLAN_WIDE : PLAN_BATCH;
}

bool plan_rule_wide_as_batch(enum plan_kind plan, int cols, int gemm_min_cols)
{
    return plan == PLAN_WIDE && cols < gemm_min_cols;
}
