/* families.c - the plan table of every family that has an engine (plan_<family>.c). Adding a
 * family's engine is one line here; the executor itself never names a family. */
#include "engine.h"

extern const struct family_plan plan_lfm2, plan_qwen35, plan_glm;

const struct family_plan *family_plan_get(enum family f)
{
    static const struct family_plan *const plans[] = {&plan_lfm2, &plan_qwen35, &plan_glm};
    for (size_t i = 0; i < ARRAY_LEN(plans); i++)
        if (plans[i]->family == f) return plans[i];
    return NULL;
}
