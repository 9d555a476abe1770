/* plan_rule.h - which plan a serving engine runs at a width and weight type (the `auto` plan), as
 * plain rules with no GPU: the choice is data (STYLE.md), the kernels only execute it.
 *
 * The rule is the wide plan's own: its tiled matrix products (gemm.comp) serve a step of at least
 * plan_rule_gemm_min_cols(dtype) columns; below that the wide plan runs the batch plan's
 * matrix-vector kernels for every matrix product, so a serving engine runs the batch plan there and
 * the wide plan above it (kernels.h k_gemm_min_cols, measured in bench/23). */
#ifndef LFM2_PLAN_RULE_H
#define LFM2_PLAN_RULE_H

#include "loader.h"
#include "plan.h"

/* The narrowest step the wide plan gives its tiled matrix products: 6 columns, 5 for Q4_0, 16 for
 * F32 (not measured). */
int plan_rule_gemm_min_cols(enum dtype t);

/* The auto plan for a step of `cols` columns whose matrix products start tiling at gemm_min_cols
 * (plan_rule_gemm_min_cols of the shard's dominant weight type, or a tuning override):
 * PLAN_WIDE from gemm_min_cols columns on, PLAN_BATCH below. Never PLAN_SPEC (a verify is a
 * different step, not a faster way to run this one). */
enum plan_kind plan_rule_auto(int cols, int gemm_min_cols);

/* Whether `plan` at `cols` columns runs its matrix products with the batch plan's kernels although
 * it is not the batch plan: the wide plan below gemm_min_cols. */
bool plan_rule_wide_as_batch(enum plan_kind plan, int cols, int gemm_min_cols);

#endif
